"""Create the demo annotation studies over ``load_demo``'s episodes: one per preset that fits them.

Each study is then partly rated by the demo annotators with generated ratings
(``annotator.demo_ratings``: written by the offline scripted model and labelled as such wherever they
appear), so its agreement report shows real numbers on first open while every demo annotator still
has items to rate. Each study is found again by its slug and rated only once, so running this twice
changes nothing. It needs the demo
episodes and accounts; without them it says to run ``load_demo`` first and exits non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from benchmark.demo.content import CONDITIONS, SCENARIOS
from benchmark.instruments import presets
from benchmark.management.commands.load_demo import ANNOTATOR_NAMES, DEMO_TAG, RESEARCHER
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Episode

from ... import demo_ratings
from ...forms import create_study
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


DEMO_STUDIES = (
    DemoStudy("demo-socialveil", "SocialVeil barrier rating", "socialveil", overlap=3, gold_items=2, attention_items=2),
    DemoStudy("demo-sotopia-eval", "Sotopia-EVAL rating", "sotopia-eval", overlap=2, limit=12),
    DemoStudy("demo-shrec-spans", "SHREC spans", "shrec-spans", overlap=2, limit=12),
)
# The demo episodes are two-person conversations: presets that need more seats are left out, for
# the reason the study form would give.
SKIPPED = {key: reason for key in presets.PRESETS if (reason := presets.preset_misfit(key, 2))}


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
        episodes = Episode.objects.of_team(team).filter(tag=DEMO_TAG, status=Episode.Status.FINISHED)
        expected = len(SCENARIOS) * len(CONDITIONS)
        found = episodes.count()
        if found < expected:
            raise CommandError(
                f"Found {found} of the {expected} finished demo episodes: run `python manage.py load_demo` first."
            )

        base_url = options["base_url"].rstrip("/")
        created = 0
        for spec in DEMO_STUDIES:
            study = Study.objects.filter(slug=spec.slug).first()
            state = "already there"
            if study is None:
                study = create_study(
                    team=team, title=spec.title, slug=spec.slug, preset=spec.preset, episodes=episodes,
                    limit=spec.limit, seed=spec.seed, overlap=spec.overlap, pool=pool, gold_items=spec.gold_items,
                    attention_items=spec.attention_items, created_by=researcher,
                )
                state = "created"
                created += 1
            items = study.items.count()
            rated = demo_ratings.generate(study, pool, seed=spec.seed)
            ratings = f"{rated} ratings {demo_ratings.GENERATED_NOTE}" if rated else "generated ratings already there"
            self.stdout.write(
                f"{study.title} ({items} items, k={study.overlap}): {state}; {ratings}\n"
                f"    dashboard {base_url}{reverse('annotator:dashboard', args=[study.slug])}\n"
                f"    invite    {base_url}{reverse('annotator:join', args=[study.invite_token])}"
            )
        for preset, reason in SKIPPED.items():
            self.stdout.write(f"No {preset} study: {reason}.")
        self.stdout.write(self.style.SUCCESS(
            f"Demo studies ready: {len(DEMO_STUDIES)} studies ({created} new), pool {', '.join(ANNOTATOR_NAMES)}."
        ))

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
