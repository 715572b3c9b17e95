"""The form a researcher creates a study with, and ``create_study``, which builds it in one go.

A study is made of an instrument (a preset installed on the spot, or an existing instrument), the episodes
that match a filter (optionally a reproducible random sample of them), overlap k, timing rules,
instructions, an annotator pool, and quality-control items:

- **gold** items keep their episode and have a known answer for the instrument's question whose truth
  comes from the episode's barrier (``truth="episode.barrier"``): the barrier condition the
  episode was actually played under;
- **attention** items carry an instruction inside the item ("for this item choose ‘None’ ...")
  and that instruction's answer as their key; they are drawn from episodes played under a
  barrier, so the instructed answer is never also the true one.

For pairwise questions, a study can pair each episode played under a barrier with its scenario's
barrier-free episode (``pair_with_baseline``); which of the two is shown first is decided by the seed.

ProMediate's per-intervention and snippet-comparison presets rate windows of episodes, not whole ones:
their items are made by ``annotator.windows`` (one per mediator intervention; seeded pairs of snippets).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, QuerySet

from benchmark.episodes.forms import EpisodeFilterForm
from benchmark.forms import RowsChoiceField, team_field
from benchmark.instruments import presets
from benchmark.instruments.kinds import get_kind
from benchmark.models import Barrier, Episode, Instrument, Question, Scenario, Team, TeamMember
from benchmark.models.teams import research_teams

from .models import ItemKey, Membership, Study, StudyItem
from .windows import DEFAULT_SNIPPET_LENGTH, INTERVENTION_PRESET, SNIPPETS_PRESET, window_items

BARRIER_TRUTH = "episode.barrier"
BASELINE = "none"  # the barrier key of episodes played without a barrier
ATTENTION_ANSWER = BASELINE  # what an attention check asks for: never the true answer of its episode
FILTER_FIELDS = ("source", "scenario", "barrier", "status", "tag")

DEFAULT_INSTRUCTIONS = {
    "socialveil": (
        "You will read conversations between two characters who each want something from the exchange.\n\n"
        "In some conversations one character talks under a communication barrier: their words are vague "
        "or ambiguous (semantic), rely on indirect, culture-bound ways of saying things (sociocultural), "
        "or are swamped by strong feelings (emotional). Others have no barrier at all.\n\n"
        "For each conversation: choose which barrier, if any, you think one character was under; rate how "
        "much confusion was still unresolved at the end (1 = a great deal, 5 = none left); and rate how "
        "well the two ended up understanding each other (1 = not at all, 5 = completely). The panel beside "
        "the transcript describes each barrier with an example. Your answers save as you go."
    ),
    "sotopia-eval": (
        "You will read conversations between two characters, each with a private goal.\n\n"
        "Score each character on seven dimensions: how far they reached their goal, how believable they "
        "were, how the relationship changed, what new knowledge they gained, whether they kept their "
        "secrets, whether they broke social rules or laws, and what they gained or lost materially. Each "
        "dimension has its own range, shown beside it; where the range has negative numbers, 0 means no "
        "change.\n\n"
        "Write a short reason for every score; pointing at the turn that decided it is enough. Your "
        "answers save as you go."
    ),
    "shrec-spans": (
        "You will read conversations and mark the moments that show social skill, or a lack of it.\n\n"
        "Select a stretch of turns (or part of one turn) and mark it as a social error, something that "
        "hurts the exchange, or a social competency, something handled well. Choose one or more social "
        "attributes it is about (hover over a name to read its definition) and explain your choice. For an "
        "error, also write what the character could have done instead.\n\n"
        "Spans may overlap, and a conversation may have many or none. Your work saves as you go."
    ),
    "promediate": (
        "You will compare two versions of the same conversation: the same people, the same situation, "
        "played out differently.\n\n"
        "Read both, then answer each question about which version handled the disagreement better: who "
        "moved the parties closer to an agreement, who kept the tone constructive, who noticed and repaired "
        "misunderstandings. Choose 'tie' only when you truly cannot tell them apart. Your answers save as "
        "you go."
    ),
    "promediate-intervention": (
        "You will read short stretches of a negotiation among several parties, each ending with a message from "
        "the Mediator, which is highlighted.\n\n"
        "Rate that message on four kinds of trouble a mediator may face: parties seeing the issues differently, "
        "strained feelings, muddled reasoning, and talk that has broken down. For each, first ask whether the "
        "trouble was there at all in the turns you read; if it was not, choose 'Not applicable'. Otherwise rate "
        "from 1 (the mediator missed it or made it worse) through 3 (noticed it but did not settle it) to 5 "
        "(dealt with it well). Rate only the highlighted message. Your answers save as you go."
    ),
    "promediate-snippets": (
        "You will read two excerpts of the same negotiation among several parties; the first comes earlier in "
        "the conversation than the second.\n\n"
        "Decide whether the parties agree more in the second excerpt than in the first, or less. Look at where "
        "they stand on the issues: proposals accepted or dropped, positions moving closer or further apart. "
        "There is no 'no change' answer: choose the direction that fits better. Your answers save as you go."
    ),
    "promediate-quality": (
        "You will read whole negotiations among several parties. Each was played in a named conflict style, "
        "shown above the conversation with a short description.\n\n"
        "Rate how natural and coherent the conversation reads (5: you could not tell it from people), and how "
        "strongly the parties show the named style (4: clearly shown; 5: so strong that it takes over). Your "
        "answers save as you go."
    ),
    "agentsense": (
        "You will read conversations among two or more characters. Each character pursues goals of their "
        "own and knows things the others do not.\n\n"
        "For every goal of every character, answer yes if the character had reached it by the end of the "
        "conversation and no otherwise, and write a sentence on why: the turn that settled it is enough. "
        "Then answer the multiple-choice questions about what the characters kept to themselves, going by "
        "what the conversation reveals. Your answers save as you go."
    ),
}
GENERIC_INSTRUCTIONS = (
    "Read each conversation carefully, then answer every question. Your answers save as you go, and you can "
    "come back to a submitted item to change it."
)


def default_instructions(preset: str) -> str:
    return DEFAULT_INSTRUCTIONS.get(preset, GENERIC_INSTRUCTIONS)


def is_default_instructions(text: str) -> bool:
    """Whether ``text`` is blank or one of the defaults, i.e. nothing the researcher wrote."""
    normalised = text.replace("\r\n", "\n").strip()
    return not normalised or normalised in {*DEFAULT_INSTRUCTIONS.values(), GENERIC_INSTRUCTIONS}


PREFILL_FIELDS = ("title", "slug", "preset", *FILTER_FIELDS)


def initial_from_query(query: dict[str, str]) -> dict[str, str]:
    """Starting values for a new study taken from a link's query string (e.g. a chat study's
    "Annotate these episodes" button: ``?tag=chat:demo-chat&status=finished&source=human_chat``).

    Only the study's name and its episode filters can be prefilled; anything else is ignored.
    """
    return {name: query[name] for name in PREFILL_FIELDS if query.get(name)}


def preset_choices() -> list[tuple[str, str]]:
    return [(key, preset.name) for key, preset in presets.PRESETS.items()]


def annotator_pool(teams: QuerySet[Team]) -> QuerySet[AbstractBaseUser]:
    """The annotators of ``teams``: people who joined one of their studies or were added to the team."""
    return (
        get_user_model()
        .objects.filter(
            is_active=True, team_memberships__team__in=teams, team_memberships__role=TeamMember.Role.ANNOTATOR
        )
        .distinct()
        .order_by("username")
    )


class StudyForm(forms.ModelForm):
    """Everything a new study needs; ``save(created_by=...)`` creates it, all or nothing."""

    preset = forms.ChoiceField(
        required=False, label="Instrument preset",
        help_text="A ready-made instrument, shared by every team. Leave empty to use an existing instrument instead.",
    )
    instrument = forms.ModelChoiceField(
        Instrument.objects.none(), required=False, label="or an existing instrument", empty_label="—",
        help_text="Your team's own instruments and the shared ones.",
    )
    # The episode browser's filters: same names, choices and labels.
    source = EpisodeFilterForm.base_fields["source"]
    scenario = EpisodeFilterForm.base_fields["scenario"]
    barrier = EpisodeFilterForm.base_fields["barrier"]
    status = EpisodeFilterForm.base_fields["status"]
    tag = EpisodeFilterForm.base_fields["tag"]
    limit = forms.IntegerField(
        required=False, min_value=1, label="At most",
        help_text="Take a random sample of this many matching episodes. Leave empty to take them all.",
    )
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=2**31 - 1, label="Random seed",
        help_text="Makes the sample, the quality items and each annotator's order reproducible. "
        "Leave empty for a random one (it is saved with the study).",
    )
    pool = RowsChoiceField(
        get_user_model().objects.none(), required=False, widget=forms.CheckboxSelectMultiple, label="Annotator pool",
        help_text="Your team's annotators (people who joined one of its studies). Others can join later with the "
        "invite link.",
    )
    overlap = forms.IntegerField(
        min_value=1, max_value=1000, initial=3, label="Overlap k",
        help_text="How many different annotators rate each regular item.",
    )
    lease_minutes = forms.IntegerField(
        min_value=1, max_value=24 * 60, initial=60, label="Lease (minutes)",
        help_text="An item claimed but not submitted within this time goes back to the pool.",
    )
    pair_with_baseline = forms.BooleanField(
        required=False, label="Pair each barrier episode with its barrier-free version",
        help_text="For pairwise questions: each item shows an episode played under a barrier beside the same "
        "scenario's episode without one, in a random order.",
    )
    context_turns = forms.IntegerField(
        required=False, min_value=1, max_value=200, label="Turns before each intervention",
        help_text="ProMediate per-intervention studies: how many turns to show before the mediator's message. "
        "Leave empty to show the turns since the mediator last spoke.",
    )
    snippet_length = forms.IntegerField(
        min_value=1, max_value=200, initial=DEFAULT_SNIPPET_LENGTH, required=False, label="Snippet length (turns)",
        help_text="ProMediate snippet comparisons: how many consecutive turns each of the two snippets holds.",
    )
    snippets_per_episode = forms.IntegerField(
        min_value=1, max_value=100, initial=1, required=False, label="Snippet pairs per episode",
        help_text="ProMediate snippet comparisons: how many pairs of snippets to draw from each episode.",
    )
    gold_items = forms.IntegerField(
        min_value=0, initial=0, label="Gold items",
        help_text="How many of the episodes get a known answer: the barrier they were played under.",
    )
    attention_items = forms.IntegerField(
        min_value=0, initial=0, label="Attention checks",
        help_text="How many episodes instead ask the annotator to choose a given answer.",
    )

    class Meta:
        model = Study
        fields = ["title", "slug", "instructions", "overlap", "lease_minutes", "min_seconds_per_item", "seed",
                  "max_annotators", "spans_need_rationale"]
        labels = {"min_seconds_per_item": "Minimum seconds per item",
                  "spans_need_rationale": "Spans need a rationale (and errors a correction)"}
        # The same words whoever has the slug: another team's study answers 404, so the form must not say it exists.
        error_messages = {"slug": {"unique": "This slug is not available; choose another."}}
        widgets = {"instructions": forms.Textarea(attrs={"rows": 8})}

    field_order = [
        "team", "title", "slug", "preset", "instrument", *FILTER_FIELDS, "limit", "seed", "pair_with_baseline",
        "context_turns", "snippet_length", "snippets_per_episode", "overlap", "lease_minutes", "min_seconds_per_item",
        "spans_need_rationale", "pool", "max_annotators", "gold_items", "attention_items",
        "instructions",
    ]

    def __init__(self, *args, user, **kwargs) -> None:
        """Every choice (team, instrument, episode filters, pool) comes from ``user``'s research teams."""
        super().__init__(*args, **kwargs)
        teams = research_teams(user)
        self.fields["team"] = team_field(user)
        self.fields["instrument"].queryset = Instrument.objects.owned_by(user)
        self.fields["pool"].queryset = annotator_pool(teams)
        self.fields["scenario"] = forms.ModelChoiceField(
            Scenario.objects.owned_by(user).only("codename"), required=False, empty_label="any scenario"
        )
        self.fields["barrier"] = forms.ModelChoiceField(
            Barrier.objects.owned_by(user), required=False, empty_label="any barrier"
        )
        self.order_fields(self.field_order)
        self.fields["preset"].choices = [("", "— none: use an existing instrument —"), *preset_choices()]
        tags = Episode.objects.owned_by(user).exclude(tag="").order_by("tag").values_list("tag", flat=True).distinct()
        self.fields["tag"].choices = [("", "any tag"), *((tag, tag) for tag in tags)]
        self.fields["instructions"].required = False
        self.fields["instructions"].help_text = (
            "Shown before the first item. Left empty, the preset's default text is used."
        )
        self.fields["slug"].help_text = "The study's address: letters, numbers, hyphens."
        for field in self.fields.values():
            if isinstance(field.widget, forms.NumberInput):  # styled like the other text boxes
                field.widget = forms.TextInput(attrs={"inputmode": "numeric", "size": 8})
        if not self.is_bound:
            preset = self.initial.setdefault("preset", next(iter(presets.PRESETS), ""))
            self.initial.setdefault("status", Episode.Status.FINISHED)
            self.initial.setdefault("instructions", default_instructions(preset))

    # Validation

    def clean(self) -> dict:
        data = super().clean()
        team = data.get("team")
        if team is None:
            return data
        self._check_team(team, data)
        preset, instrument = data.get("preset"), data.get("instrument")
        if preset and instrument:
            self.add_error("instrument", "Choose a preset or an existing instrument, not both.")
        elif not preset and not instrument and "instrument" not in self.errors:
            self.add_error("preset", "Choose an instrument preset or an existing instrument.")
        elif instrument and "instrument" not in self.errors:
            try:
                Study(instrument=instrument).clean()
            except ValidationError as problem:
                self.add_error(None, problem)

        overlap, pool = data.get("overlap"), data.get("pool")
        if overlap and pool and overlap > len(pool):
            self.add_error(
                "overlap",
                f"Overlap k is {overlap}, but the pool has only {len(pool)} annotator{'s' if len(pool) != 1 else ''}: "
                "lower k, choose more annotators, or leave the pool empty and invite people with the link.",
            )

        if any(field in self.errors for field in (*FILTER_FIELDS, "limit")):
            return data
        episodes = self.matching_episodes()
        total = episodes.count()
        if total == 0:
            self.add_error(None, "No episodes match these filters: a study needs at least one episode.")
            return data
        chosen = min(total, data["limit"]) if data.get("limit") else total
        gold, attention = data.get("gold_items") or 0, data.get("attention_items") or 0
        if gold + attention > chosen:
            self.add_error(
                "gold_items",
                f"{gold} gold and {attention} attention items need {gold + attention} episodes, "
                f"but the study has {chosen}.",
            )
        known = (preset or instrument) and "preset" not in self.errors and "instrument" not in self.errors
        if data.get("pair_with_baseline"):
            if gold or attention:
                self.add_error("pair_with_baseline", "Paired items cannot be gold or attention items.")
            if known and not any(get_kind(q.kind).compares_two for q in _questions(preset, instrument)):
                self.add_error(
                    "pair_with_baseline", "This instrument has no pairwise question to compare the pairs with."
                )
            if not episodes.exclude(barrier__key=BASELINE).exists():
                self.add_error("pair_with_baseline", "No matching episode was played under a barrier, so nothing "
                               "can be paired.")
        elif (gold or attention) and known:
            self._check_quality_items(preset, instrument, attention, episodes)
        if known:
            self._check_seats(preset or instrument.preset, episodes, total)
        if known and (preset or instrument.preset) in (INTERVENTION_PRESET, SNIPPETS_PRESET):
            self._check_windows(preset or instrument.preset, data, gold + attention)
        return data

    def _check_windows(self, preset: str, data: dict, quality_items: int) -> None:
        """Windowed items are made per intervention or per snippet pair; they take no gold, attention or pairing."""
        if quality_items:
            self.add_error("gold_items", "Items that show part of an episode cannot be gold or attention items.")
        if data.get("pair_with_baseline"):
            self.add_error("pair_with_baseline", "Items that show part of an episode are not paired with another.")
        made = window_items(
            preset, self.matching_episodes(), context=data.get("context_turns"),
            snippet_length=data.get("snippet_length") or DEFAULT_SNIPPET_LENGTH, rng=random.Random(0),
        )
        if not made:
            self.add_error(None, (
                "None of the matching episodes has a mediator intervention after the welcome, so there is nothing "
                "to rate: choose episodes played with a mediator." if preset == INTERVENTION_PRESET else
                "None of the matching episodes is long enough for two snippets of this length: shorten the "
                "snippets or choose longer episodes."
            ))

    def _check_seats(self, preset: str, episodes: QuerySet[Episode], total: int) -> None:
        """A preset that rates a mediator needs episodes that have one (``presets.preset_misfit``)."""
        seat_counts = episodes.annotate(seat_count=Count("seats")).values_list("seat_count", flat=True)
        reasons = [reason for seats in seat_counts if (reason := presets.preset_misfit(preset, seats))]
        if reasons:
            self.add_error(
                "instrument" if self.cleaned_data.get("instrument") else "preset",
                f"{presets.PRESETS[preset].name} needs episodes with a mediator: {reasons[0]}. {len(reasons)} of "
                f"the {total} matching episodes have too few seats: choose another instrument, or filter to "
                "multi-party episodes.",
            )

    def _check_team(self, team: Team, data: dict) -> None:
        """A researcher of several teams sees all their choices; what they pick must be the chosen team's."""
        teams = Team.objects.filter(pk=team.pk)
        if data.get("instrument") and not Instrument.objects.of_team(team).filter(pk=data["instrument"].pk).exists():
            self.add_error("instrument", f"This instrument belongs to another of your teams, not {team}.")
        if data.get("scenario") and data["scenario"].team_id != team.pk:
            self.add_error("scenario", f"This scenario belongs to another of your teams, not {team}.")
        if data.get("barrier") and data["barrier"].team_id not in (None, team.pk):
            self.add_error("barrier", f"This barrier belongs to another of your teams, not {team}.")
        strangers = set(data.get("pool") or ()) - set(annotator_pool(teams))
        if strangers:
            names = ", ".join(sorted(user.get_username() for user in strangers))
            self.add_error("pool", f"Not annotators of {team}: {names}.")

    def _check_quality_items(
        self, preset: str, instrument: Instrument | None, attention: int, episodes: QuerySet[Episode]
    ) -> None:
        """Gold and attention items need a barrier question (with a 'none' choice for attention checks)."""
        question = next((q for q in _questions(preset, instrument) if q.truth == BARRIER_TRUTH), None)
        if question is None:
            self.add_error(
                "gold_items",
                "This instrument has no question whose answer is the episode's barrier, so it cannot have gold or "
                "attention items.",
            )
            return
        if attention and ATTENTION_ANSWER not in _choice_labels(question):
            self.add_error(
                "attention_items", f"The barrier question has no '{ATTENTION_ANSWER}' choice to ask for."
            )
        elif attention and episodes.exclude(barrier__key=ATTENTION_ANSWER).count() < attention:
            self.add_error(
                "attention_items",
                "Attention checks are drawn from episodes played under a barrier, and too few of those match.",
            )

    # Reading the form

    def matching_episodes(self) -> QuerySet[Episode]:
        """Every episode of the chosen team the filters select (before sampling)."""
        lookups = {field: self.cleaned_data[field] for field in FILTER_FIELDS if self.cleaned_data.get(field)}
        return Episode.objects.of_team(self.cleaned_data["team"]).filter(**lookups).order_by("pk")

    def save(self, commit: bool = True, *, created_by: AbstractBaseUser | None = None) -> Study:
        if not commit:
            raise ValueError("A study is created with its items in one transaction; use save().")
        data = self.cleaned_data
        return create_study(
            team=data["team"], title=data["title"], slug=data["slug"], instructions=data["instructions"],
            preset=data.get("preset") or None, instrument=data.get("instrument"),
            episodes=self.matching_episodes(), limit=data.get("limit"), seed=data.get("seed"),
            overlap=data["overlap"], lease_minutes=data["lease_minutes"],
            min_seconds_per_item=data["min_seconds_per_item"], pool=list(data.get("pool") or []),
            gold_items=data.get("gold_items") or 0, attention_items=data.get("attention_items") or 0,
            pair_with_baseline=data.get("pair_with_baseline", False), created_by=created_by,
            context_turns=data.get("context_turns"),
            snippet_length=data.get("snippet_length") or DEFAULT_SNIPPET_LENGTH,
            snippets_per_episode=data.get("snippets_per_episode") or 1,
            spans_need_rationale=data.get("spans_need_rationale", False),
        )


@dataclass(frozen=True)
class _Candidate:
    pk: int
    scenario: int
    baseline: bool  # played without a barrier


def create_study(
    *,
    team: Team,
    title: str,
    slug: str,
    episodes: QuerySet[Episode],
    preset: str | None = None,
    instrument: Instrument | None = None,
    instructions: str = "",
    limit: int | None = None,
    seed: int | None = None,
    overlap: int = 3,
    lease_minutes: int = 60,
    min_seconds_per_item: int = 30,
    pool: Sequence[AbstractBaseUser] = (),
    gold_items: int = 0,
    attention_items: int = 0,
    pair_with_baseline: bool = False,
    created_by: AbstractBaseUser | None = None,
    context_turns: int | None = None,
    snippet_length: int = DEFAULT_SNIPPET_LENGTH,
    snippets_per_episode: int = 1,
    spans_need_rationale: bool = True,
) -> Study:
    """Create a study of ``team`` with ``instrument`` (or preset ``preset``, installed if need be), its items,
    known answers and pool,
    atomically. The episodes must be the team's; the pool joins the team as its annotators.

    ``episodes`` are sampled down to ``limit`` with ``seed`` (a random seed when None, stored on
    the study). Raises ``ValueError`` when the quality items asked for cannot be made.

    A ProMediate per-intervention or snippet-comparison instrument gets windowed items
    (``annotator.windows``): ``context_turns`` turns before each intervention (None: since the mediator last
    spoke), ``snippets_per_episode`` seeded pairs of ``snippet_length``-turn snippets per episode.
    ``spans_need_rationale``: whether a span question's form requires a rationale and, for an error, a correction.
    """
    seed = secrets.randbelow(2**31) if seed is None else seed
    rng = random.Random(seed)
    candidates = [
        _Candidate(pk, scenario, barrier == BASELINE)
        for pk, barrier, scenario in episodes.order_by("pk").values_list("pk", "barrier__key", "scenario_id")
    ]
    if limit is not None and limit < len(candidates):
        candidates = sorted(rng.sample(candidates, limit), key=lambda candidate: candidate.pk)

    with transaction.atomic():
        if preset:
            instrument = presets.install_preset(preset)
        if instrument is None:
            raise ValueError("A study needs an instrument or a preset.")
        study = Study.objects.create(
            team=team, title=title, slug=slug, instrument=instrument, overlap=overlap, lease_minutes=lease_minutes,
            min_seconds_per_item=min_seconds_per_item, seed=seed, created_by=created_by,
            spans_need_rationale=spans_need_rationale,
            instructions=instructions.strip() or default_instructions(instrument.preset),
        )
        windowed = window_items(
            instrument.preset, Episode.objects.filter(pk__in=[candidate.pk for candidate in candidates]).order_by("pk"),
            context=context_turns, snippet_length=snippet_length, snippets_per_episode=snippets_per_episode, rng=rng,
        )
        if windowed is not None:
            _add_window_items(study, windowed, quality_items=gold_items + attention_items, paired=pair_with_baseline)
        else:
            items = (_pairs(team, candidates, rng) if pair_with_baseline
                     else [(candidate, None) for candidate in candidates])
            if not items:
                raise ValueError("None of the episodes could be paired with a barrier-free version of its scenario.")
            StudyItem.objects.bulk_create(
                StudyItem(study=study, episode_id=first.pk, compared_episode_id=second, position=position)
                for position, (first, second) in enumerate(items)
            )
        if gold_items or attention_items:
            _add_quality_items(study, list(instrument.questions.all()), gold_items, attention_items, rng)
        if pool:
            Membership.objects.bulk_create(Membership(study=study, annotator=user) for user in pool)
            join_team_as_annotators(team, pool)
    return study


def _add_window_items(study: Study, windowed: list[dict[str, Any]], *, quality_items: int, paired: bool) -> None:
    """The items of a study that rates windows of episodes (``annotator.windows``), in episode order."""
    if quality_items or paired:
        raise ValueError("Items that show part of an episode cannot be gold, attention or paired items.")
    if not windowed:
        what = ("a mediator intervention after the welcome" if study.instrument.preset == INTERVENTION_PRESET
                else "enough turns for two snippets")
        raise ValueError(f"None of the episodes has {what}, so the study would have no items.")
    StudyItem.objects.bulk_create(
        StudyItem(study=study, position=position, **values) for position, values in enumerate(windowed)
    )


def join_team_as_annotators(team: Team, users: Sequence[AbstractBaseUser]) -> None:
    """Make ``users`` annotators of ``team`` (those already in it keep their role)."""
    TeamMember.objects.bulk_create(
        [TeamMember(team=team, user=user, role=TeamMember.Role.ANNOTATOR) for user in users], ignore_conflicts=True
    )


def _pairs(team: Team, candidates: list[_Candidate], rng: random.Random) -> list[tuple[_Candidate, int | None]]:
    """Each episode under a barrier with its scenario's barrier-free episode, in a seeded order."""
    baselines = dict(
        Episode.objects.of_team(team).filter(
            scenario_id__in={candidate.scenario for candidate in candidates},
            barrier__key=BASELINE, status=Episode.Status.FINISHED,
        ).order_by("-pk").values_list("scenario_id", "pk")
    )  # the lowest pk per scenario wins: later rows overwrite earlier ones
    pairs = []
    for candidate in candidates:
        baseline = baselines.get(candidate.scenario)
        if candidate.baseline or baseline is None:
            continue
        if rng.random() < 0.5:
            pairs.append((candidate, baseline))
        else:
            pairs.append((_Candidate(baseline, candidate.scenario, True), candidate.pk))
    return pairs


def _add_quality_items(
    study: Study, questions: list[Question], gold: int, attention: int, rng: random.Random
) -> None:
    question = next((q for q in questions if q.truth == BARRIER_TRUTH), None)
    if question is None:
        raise ValueError("The instrument has no question whose answer is the episode's barrier.")
    items = list(study.items.select_related("episode__barrier").order_by("position"))
    under_barrier = [item for item in items if item.episode.barrier.key != ATTENTION_ANSWER]
    if len(under_barrier) < attention or len(items) < gold + attention:
        raise ValueError("Too few episodes for the gold and attention items asked for.")
    checks = rng.sample(under_barrier, attention)
    rest = [item for item in items if item not in checks]
    golds = rng.sample(rest, gold)
    label = _choice_labels(question).get(ATTENTION_ANSWER, ATTENTION_ANSWER)
    instruction = (
        f"This item checks that you are reading the instructions. Whatever you think of the conversation, "
        f"choose “{label}” for “{question.prompt}”, then answer the other questions as usual."
    )
    for item in checks:
        item.kind, item.attention_instruction = StudyItem.Kind.ATTENTION, instruction
    for item in golds:
        item.kind = StudyItem.Kind.GOLD
    StudyItem.objects.bulk_update([*checks, *golds], ["kind", "attention_instruction"])
    seat = 0 if question.per_seat else None
    ItemKey.objects.bulk_create(
        [ItemKey(item=item, question=question, seat_position=seat, value=ATTENTION_ANSWER) for item in checks]
        + [ItemKey(item=item, question=question, seat_position=seat, value=item.episode.barrier.key) for item in golds]
    )


def _choice_labels(question: Question | presets.QuestionSpec) -> dict[str, str]:
    """A choice question's labels by value (empty for other kinds)."""
    choices = question.options.get("choices", [])
    return {str(choice["value"]): choice.get("label", choice["value"]) for choice in choices}


def _questions(preset: str, instrument: Instrument | None) -> list[Question] | tuple[presets.QuestionSpec, ...]:
    return list(instrument.questions.all()) if instrument else presets.PRESETS[preset].questions


class RatingsFileForm(forms.Form):
    """A ratings file to import into a study (``annotator.external_ratings``): uploaded to be checked, or named
    by the token of the file just checked, which waits on the server (``external_ratings.uploads``), so
    importing it sends no file back."""

    MAX_BYTES = 50 * 1024 * 1024

    file = forms.FileField(
        required=False, label="Ratings file", allow_empty_file=True,  # an empty file is told by the import
        help_text="A long CSV or JSON Lines file (episode_id, annotator_id, question, value, and optionally "
        "rationale, seat, goal) or a wide CSV with one column per question key.",
    )
    upload = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("file")
        if upload is not None and upload.size > self.MAX_BYTES:
            raise forms.ValidationError(f"The file is larger than {self.MAX_BYTES // (1024 * 1024)} MB.")
        if upload is None and not data.get("upload") and not self.errors:
            raise forms.ValidationError("Choose a ratings file to check.")
        return data
