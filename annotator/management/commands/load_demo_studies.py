"""Create the demo annotation studies over ``load_demo``'s episodes: one per preset that fits them.

The two-party episodes (tag ``demo``) get the SocialVeil, Sotopia-EVAL and SHREC studies and one
that rates each agent turn ("Rate each reply", ratings stored per turn); the
episodes of three and four parties (tag ``demo-groups``, already interviewed and judged on every
goal by ``load_demo``) get the AgentSense study, whose report sets the annotators' goal verdicts
against the agents' own (self), each other's (other) and the scripted goal judge's (external),
and their probe accuracy beside the agents' attacker and blind accuracy; the ProMediate negotiations
(tag ``demo-promediate``) get a study of the mediator's interventions, one item per intervention with
the turns since the mediator last spoke, compared with the scripted MI judge's answers; the synthetic SHREC
recordings (tag ``demo-shrec``, each with an audio track) get a SHREC spans study whose annotators mark spans on
the player, and SHREC's benchmark is built from their imported annotators' spans, answered by the scripted
answerer and, in a human-baseline study, by generated people (``annotator.demo_shrec``), so the SHREC results
open with numbers.

Each study is then partly rated by the demo annotators with generated ratings
(``annotator.demo_ratings``: written by the offline scripted model and labelled as such wherever they
appear), so its agreement report shows real numbers on first open while every demo annotator still
has items to rate. One item of the SocialVeil study is adjudicated into gold (``annotator.demo_gold``).
Each study is found again by its slug and rated only once, so running this twice
changes nothing. It needs the demo
episodes and accounts; without them it says to run ``load_demo`` first and exits non-zero.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from benchmark.demo.accounts import ANNOTATOR_NAMES, RESEARCHER
from benchmark.demo.content import CONDITIONS, GROUP_SCENARIOS, SCENARIOS
from benchmark.demo.group_templates import CASTS_PER_TEMPLATE, TEMPLATES
from benchmark.demo.negotiations import MEDIATORS
from benchmark.demo.negotiations import MODES as NEGOTIATION_MODES
from benchmark.demo.negotiations import TAG as NEGOTIATION_TAG
from benchmark.demo.shrec_recordings import TAG as SHREC_TAG
from benchmark.demo.shrec_recordings import VIDEOS as SHREC_VIDEOS
from benchmark.instruments import presets
from benchmark.management.commands.load_demo import DEMO_TAG, GROUP_TAG
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Episode, Respondent

from ... import demo_ratings, demo_shrec
from ...demo_gold import GOLD_DEMO_STUDY, adjudicate_demo_item
from ...forms import create_study
from ...human_baseline.generated import GENERATED_BY
from ...models import Study
from ...permissions import ANNOTATORS


@dataclass(frozen=True)
class DemoStudy:
    slug: str
    title: str
    preset: str
    overlap: int
    limit: int | None = None
    gold_items: int = 0
    attention_items: int = 0
    seed: int = 2025
    tag: str = DEMO_TAG  # the demo episodes it rates
    compare: tuple[str, ...] = ()  # respondent kinds the printed report link compares with (none: no link)
    generated: bool = True  # partly rated by the demo annotators with generated ratings


DEMO_STUDIES = (
    DemoStudy("demo-socialveil", "SocialVeil barrier rating", "socialveil", overlap=3, gold_items=2, attention_items=2),
    DemoStudy("demo-sotopia-eval", "Sotopia-EVAL rating", "sotopia-eval", overlap=2, limit=12),
    DemoStudy("demo-shrec-spans", "SHREC spans", "shrec-spans", overlap=2, limit=12),
    DemoStudy(
        "demo-agentsense", "AgentSense goals and probes", presets.AGENTSENSE_PRESET, overlap=3, tag=GROUP_TAG,
        compare=(Respondent.Kind.JUDGE, Respondent.Kind.AGENT),  # external, self and other
    ),
    # Last, so the studies above keep the items and claim orders they had before it.
    DemoStudy("demo-turn-rating", "Rate each reply", presets.TURN_RATING_PRESET, overlap=2, limit=8),
    DemoStudy(
        "demo-promediate-interventions", "ProMediate: the mediator's interventions",
        presets.PROMEDIATE_INTERVENTION_PRESET, overlap=2, tag=NEGOTIATION_TAG,
        compare=(Respondent.Kind.JUDGE,),  # the scripted MI judge answered every intervention
    ),
    # The SHREC recordings, for marking spans on the player by hand: nothing generated.
    DemoStudy(
        "demo-shrec-recordings", "SHREC spans on the recordings", "shrec-spans", overlap=2, tag=SHREC_TAG,
        generated=False,
    ),
)
# How many finished episodes of each tag load_demo makes.
EXPECTED = {
    DEMO_TAG: len(SCENARIOS) * len(CONDITIONS),
    GROUP_TAG: len(GROUP_SCENARIOS) * len(CONDITIONS) + len(TEMPLATES) * CASTS_PER_TEMPLATE,
    NEGOTIATION_TAG: len(NEGOTIATION_MODES) * len(MEDIATORS),
    SHREC_TAG: SHREC_VIDEOS,
}
# Presets with no demo study of their own that need a seat more than the two-party episodes have (the
# mediated negotiations have their own study) are left out for the reason the study form would give.
SKIPPED = {
    key: reason
    for key in presets.PRESETS
    if key not in {spec.preset for spec in DEMO_STUDIES} and (reason := presets.preset_misfit(key, 2))
}


class Command(BaseCommand):
    help = "Create the demo annotation studies (one per fitting preset) over the demo episodes; run load_demo first."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000",
            help="Where the site is served, for the printed dashboard and invite links (default: %(default)s).",
        )
        add_team_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        team = team_from_options(options)
        researcher, pool = self._accounts()
        episodes = {
            tag: Episode.objects.of_team(team).filter(tag=tag, status=Episode.Status.FINISHED) for tag in EXPECTED
        }
        for tag, expected in EXPECTED.items():
            found = episodes[tag].count()
            if found < expected:
                raise CommandError(
                    f"Found {found} of the {expected} finished demo episodes tagged {tag!r}: run "
                    "`python manage.py load_demo` first."
                )

        base_url = options["base_url"].rstrip("/")
        created = 0
        for spec in DEMO_STUDIES:
            study = Study.objects.filter(slug=spec.slug).first()
            state = "already there"
            if study is None:
                study = create_study(
                    team=team, title=spec.title, slug=spec.slug, preset=spec.preset, episodes=episodes[spec.tag],
                    limit=spec.limit, seed=spec.seed, overlap=spec.overlap, pool=pool, gold_items=spec.gold_items,
                    attention_items=spec.attention_items, created_by=researcher,
                )
                state = "created"
                created += 1
            items = study.items.count()
            rated = demo_ratings.generate(study, pool, seed=spec.seed) if spec.generated else 0
            ratings = (
                f"{rated} ratings {demo_ratings.GENERATED_NOTE}" if rated
                else "generated ratings already there" if spec.generated else "for you to rate"
            )
            self.stdout.write(
                f"{study.title} ({items} items, k={study.overlap}): {state}; {ratings}\n"
                f"    dashboard {base_url}{reverse('annotator:dashboard', args=[study.slug])}\n"
                f"    invite    {base_url}{reverse('annotator:join', args=[study.invite_token])}"
            )
            if spec.slug == GOLD_DEMO_STUDY and (gold := adjudicate_demo_item(study, researcher)) is not None:
                self.stdout.write(f"    gold      item {gold.item.position + 1} adjudicated: "
                                  f"{base_url}{reverse('annotator:item-review', args=[study.slug, gold.item_id])}")
            if spec.compare:
                query = urlencode({"compare": [str(kind) for kind in spec.compare]}, doseq=True)
                self.stdout.write(f"    report    {base_url}{reverse('annotator:report', args=[study.slug])}?{query}")
        self._shrec(team, pool, researcher, base_url)
        for preset, reason in SKIPPED.items():
            self.stdout.write(f"No {preset} study: {reason}.")
        self.stdout.write(self.style.SUCCESS(
            f"Demo studies ready: {len(DEMO_STUDIES)} studies ({created} new), pool {', '.join(ANNOTATOR_NAMES)}."
        ))

    def _shrec(self, team: Any, pool: list[Any], researcher: Any, base_url: str) -> None:
        """SHREC's benchmark over the demo recordings: tasks, scripted answers, a human baseline with generated ones."""
        started = time.monotonic()
        try:
            demo = demo_shrec.install_shrec_benchmark(team, pool, researcher)
        except demo_shrec.DemoShrecMissing as missing:
            raise CommandError(f"{missing}.") from missing
        task_set, study = demo.task_set, demo.human_study
        generated = f"{demo.generated} {GENERATED_BY}" if demo.generated else "generated answers already there"
        state = "built" if demo.built else "already there"
        self.stdout.write(
            f"SHREC tasks {task_set.name!r}: {task_set.items.count()} items ({state}), {demo.answered} newly "
            f"answered by the scripted answerer, in {time.monotonic() - started:.1f}s\n"
            f"{study.title} ({study.items.count()} items, k={study.overlap}): {generated}\n"
            f"    dashboard {base_url}{reverse('annotator:dashboard', args=[study.slug])}\n"
            f"    results   {base_url}{reverse('benchmark:results-shrec')}?task_set={task_set.pk}"
        )

    def _accounts(self) -> tuple[Any, list[Any]]:
        """The demo researcher and annotators, who must exist (and annotate) already."""
        User = get_user_model()
        names = [RESEARCHER, *ANNOTATOR_NAMES]
        users = {user.username: user for user in User.objects.filter(username__in=names)}
        missing = [name for name in names if name not in users]
        if missing:
            raise CommandError(
                f"The demo account(s) {', '.join(missing)} do not exist: run `python manage.py load_demo` "
                "(without --skip-accounts) first."
            )
        pool = [users[name] for name in ANNOTATOR_NAMES]
        in_group = set(
            User.objects.filter(pk__in=[user.pk for user in pool], groups__name=ANNOTATORS).values_list("pk", flat=True)
        )
        if len(in_group) < len(pool):
            raise CommandError("The demo annotators are not in the annotators group: run `python manage.py load_demo`.")
        return users[RESEARCHER], pool
