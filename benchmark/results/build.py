"""Benchmark results from the database: answers and transcripts into the plain table the statistics take.

``benchmark.stats.results`` does the arithmetic on a plain table; this module decides what goes
into that table, so the command line, the page and the downloads all report the same numbers:

- **Scores**: numeric answers to questions that measure a ``dimension`` (the judge's presets, or
  any instrument asked per seat or per episode), by respondents of one kind (``judge`` by
  default; annotator, participant or agent on request), on the episodes matching the filters
  (experiment tag, source, partner strategy, the template their scenario was instantiated from, the
  scenario's difficulty, the scenarios named by id, external id or codename).
  Each dimension's range and scope come from its question; the judge presets' nine dimensions are
  always reported, in their order.
- **Evaluator**: one per report, since scales differ between judges. Given ``--evaluator`` (and
  optionally a prompt version) it is that respondent, or ``majority``: the median of every
  respondent of the kind (of that prompt version, if given), per episode, seat and dimension
  (``benchmark.evaluation.majority``). Otherwise it is the respondent with the most scores on the
  filtered episodes; on a tie a model judge is preferred to the offline ``scripted`` heuristic,
  since ``load_demo`` scores every demo episode with it.
- **Every evaluator in brief**: the report also sets each respondent of the kind, and their
  majority when there are two or more, side by side: mean per condition and dimension.
- **Rows**: one per (episode, seat). A seat is the ``barrier`` seat when it carries the barrier
  (also under ``none``, where it is marked so conditions stay comparable) and a ``partner``
  otherwise; an episode with no barrier seat counts all its seats as partners. Per-seat scores
  go on their seat's row; episode-level scores are repeated on every row of the episode. A row's
  model for its own role is its seat's model, so the two seats of a pairwise run (Sotopia's
  ``gpt-3.5-turbo`` against ``gpt-4``) give one row each to their own model.
- **Linguistic features**: of the barrier seat's speech and of the whole transcript (spoken turns
  only), from ``benchmark.stats.linguistic``, each turn's stored once (``turn_features``).

Every query is a fixed one, so the cost grows with rows fetched, not with round trips.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Q, QuerySet
from django.utils import timezone

from ..agents.llm import is_scripted
from ..evaluation import majority
from ..exporting import timestamp
from ..instruments import kinds, rubrics
from ..instruments.respondents import respondent_name
from ..models import Answer, Barrier, Episode, Question, Respondent, Seat
from ..stats import results as stats
from ..stats.bootstrap import DEFAULT_RESAMPLES
from ..stats.linguistic import FEATURE_LABELS, FEATURES, Utterance, combine
from ..stats.linguistic import METHOD as LINGUISTIC_METHOD
from ..stats.plain import plain_report
from .turn_features import spoken_features

SCHEMA_VERSION = 2  # 2: a deviation's percent is deviation_percent (apart from percent_change)
MAJORITY = "majority"
RESPONDENT_KINDS = tuple(Respondent.Kind.values)
HUMAN_PLAYER = "human"
UNKNOWN_MODEL = "unknown model"  # a seat imported without a model name
SOURCE_LABELS = {"barrier_speech": "barrier seat's speech", "transcript": "whole transcript"}
SELECTION_METHOD = (
    "Episodes matching the filters that the evaluator scored. The evaluator is the one named, or else the "
    "(evaluator, prompt version) with the most scores on those episodes, leaving out imported 'human mean' "
    "scores; on a tie a model judge is preferred to the offline scripted heuristic. The barrier seat is the "
    "seat that carries the barrier (marked under 'none' too); the others are partners. Linguistic features "
    "use spoken turns only."
)
RESPONDENTS_METHOD = (
    "A score is a respondent's numeric answer to a question that measures a dimension. The report reads one "
    "kind of respondent: automated judges unless another kind is asked for, or unless the evaluator named "
    "is of another kind (the imported 'human mean' is an annotator). 'majority' takes, for each episode, "
    "seat and dimension, the median of every respondent of that kind (of the prompt version asked for, if "
    "any)."
)


class ResultsProblem(ValueError):
    """Filters that cannot give a report (say, an evaluator with no scores): the message names what."""


@dataclass(frozen=True)
class ResultFilters:
    """Which episodes and which evaluator a report covers; empty strings mean 'any' / 'choose'."""

    tag: str = ""
    source: str = ""
    strategy: str = ""
    respondent_kind: str = ""  # empty: judges, or the kind of the evaluator named
    evaluator: str = ""
    prompt_version: str | None = None
    seat_role: str = stats.PARTNER
    template: str = ""  # a template scenario's id: only episodes of scenarios instantiated from it
    difficulty: str = ""  # only episodes of scenarios of this difficulty (hard: SocialVeil's Sotopia-Hard)
    scenarios: tuple[str, ...] = ()  # only episodes of these scenarios: ids, external ids or codenames

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EvaluatorChoice:
    """A respondent with scores on the selected episodes, or the majority of several (``members``)."""

    evaluator: str
    prompt_version: str
    scores: int
    kind: str = Respondent.Kind.JUDGE.value
    members: tuple[tuple[str, str], ...] = ()  # (evaluator, prompt version) of each member of a majority

    @property
    def is_majority(self) -> bool:
        return self.evaluator == MAJORITY

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "members": [{"evaluator": name, "prompt_version": version} for name, version in self.members],
        }


@dataclass
class Scores:
    """The numeric answers of one kind of respondent on the filtered episodes, and their dimensions.

    ``named`` counts the scores of every respondent of any kind, by the one name it has everywhere
    (a model, a label, a person's pseudonym): the evaluators a report can be asked for by name.
    """

    kind: str
    rows: list[tuple[str, str, int, int | None, str, float]] = field(default_factory=list)
    scales: dict[str, stats.Scale] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    named: list[EvaluatorChoice] = field(default_factory=list)

    @property
    def dimensions(self) -> list[str]:
        return list(self.scales)


def filtered_episodes(filters: ResultFilters, episodes: QuerySet[Episode]) -> QuerySet[Episode]:
    """The episodes the filters select among ``episodes`` (a team's), before the evaluator is applied."""
    if filters.tag:
        episodes = episodes.filter(tag=filters.tag)
    if filters.source:
        episodes = episodes.filter(source=filters.source)
    if filters.strategy:
        episodes = episodes.filter(seats__carries_barrier=False, seats__strategy=filters.strategy).distinct()
    if filters.template:
        episodes = episodes.filter(scenario__template_id=int(filters.template))
    if filters.difficulty:
        episodes = episodes.filter(scenario__difficulty=filters.difficulty)
    if filters.scenarios:
        episodes = episodes.filter(scenario_selection(filters.scenarios, "scenario__"))
    return episodes


def scenario_selection(selectors: tuple[str, ...], prefix: str = "") -> Q:
    """Scenarios named by id, external id or codename, as ``simulate --scenarios`` names them."""
    ids = {int(selector) for selector in selectors if selector.isdigit()}
    return (Q(**{f"{prefix}pk__in": ids}) | Q(**{f"{prefix}codename__in": selectors})
            | Q(**{f"{prefix}external_id__in": selectors}))


def unknown_scenarios(selectors: tuple[str, ...], scenarios: QuerySet) -> list[str]:
    """The selectors that name none of ``scenarios`` (a team's)."""
    found = list(scenarios.filter(scenario_selection(selectors)).values_list("pk", "codename", "external_id"))
    return [
        selector for selector in selectors
        if not any((selector.isdigit() and pk == int(selector)) or selector in (codename, external_id)
                   for pk, codename, external_id in found)
    ]


def score_answers(episodes: QuerySet[Episode]) -> QuerySet[Answer]:
    """The answers on ``episodes`` that count as scores: numbers answering a dimension, per seat or episode."""
    return Answer.objects.filter(
        response__episode__in=episodes.values("pk"),
        question__kind__in=kinds.names(lambda kind: kind.numeric),
        question__scope__in=[Question.Scope.SEAT, Question.Scope.EPISODE],
        number__isnull=False,
    ).exclude(question__dimension="")


def _kind_of_named(filters: ResultFilters, named: list[EvaluatorChoice]) -> str:
    """The kind a report reads: the one asked for; else that of the evaluator named (a judge first); else judge."""
    if filters.respondent_kind:
        return filters.respondent_kind
    if filters.evaluator and filters.evaluator != MAJORITY:
        kinds = {c.kind for c in named if c.evaluator == filters.evaluator
                 and (filters.prompt_version is None or c.prompt_version == filters.prompt_version)}
        if kinds and Respondent.Kind.JUDGE not in kinds:
            return min(kinds, key=RESPONDENT_KINDS.index)
    return Respondent.Kind.JUDGE.value


def read_scores(filters: ResultFilters, episodes: QuerySet[Episode]) -> Scores:
    """Every numeric answer to a dimension by respondents of the kind the report reads (``_kind_of_named``)
    on the filtered episodes: (name, prompt version, episode, seat, dimension, number) rows, the
    dimensions' scales, and the evaluators with scores that may be named."""
    if filters.respondent_kind not in ("", *RESPONDENT_KINDS):
        raise ResultsProblem(
            f"respondent kind must be one of {', '.join(RESPONDENT_KINDS)}, not {filters.respondent_kind!r}"
        )
    found = list(score_answers(filtered_episodes(filters, episodes)).values_list(
        "response__respondent_id", "response__respondent__kind", "response__respondent__user_id",
        "response__respondent__model", "response__respondent__label", "response__respondent__prompt_version",
        "response__episode_id", "seat_position", "question_id", "number",
    ))
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    for _, kind, user, model, label, version, *_ in found:
        counts[(respondent_name(model, label, user), version, kind)] += 1
    # Models and labelled respondents first, then people (by their pseudonyms); most scores first in each.
    people = {respondent_name(model, label, user) for _, _, user, model, label, *_ in found if user is not None}
    named = [EvaluatorChoice(name, version, n, kind) for (name, version, kind), n in sorted(
        counts.items(), key=lambda item: (item[0][0] in people, -item[1], item[0]))]
    analysed = _kind_of_named(filters, named)
    presets = Q(instrument__team__isnull=True, instrument__preset__in=[r.preset for r in rubrics.JUDGE_RUBRICS])
    questions = Question.objects.filter(presets | Q(pk__in={row[8] for row in found})).order_by(
        "instrument_id", "position"
    ).values_list("pk", "dimension", "scope", "low", "high", "label", "key")
    scores = Scores(analysed, named=named)
    dimension_of = {}
    for pk, dimension, scope, low, high, label, key in questions:
        dimension = dimension or key
        dimension_of[pk] = dimension
        if dimension not in scores.scales and low is not None and high is not None:
            scores.scales[dimension] = stats.Scale(low, high, scope == Question.Scope.SEAT)
            scores.labels[dimension] = label or dimension
    for _, kind, user, model, label, version, episode_id, seat, question_id, number in found:
        dimension = dimension_of[question_id]
        if kind == analysed and dimension in scores.scales:
            name = respondent_name(model, label, user)
            per_seat = scores.scales[dimension].per_seat
            scores.rows.append((name, version, episode_id, seat if per_seat else None, dimension, number))
    return scores


def evaluator_choices(filters: ResultFilters, scores: Scores) -> list[EvaluatorChoice]:
    """Every respondent with scores, most scores first; then their majority when there are two or more
    (of the filters' prompt version, if one is given)."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for name, version, *_ in scores.rows:
        counts[(name, version)] += 1
    choices = [
        EvaluatorChoice(name, version, n, scores.kind)
        for (name, version), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    members = [c for c in choices if filters.prompt_version is None or c.prompt_version == filters.prompt_version]
    if len(members) >= 2:
        pairs = tuple((c.evaluator, c.prompt_version) for c in members)
        choices.append(EvaluatorChoice(MAJORITY, "", len(_majority_scores(scores, set(pairs))), scores.kind, pairs))
    return choices


def choose_evaluator(
    filters: ResultFilters, choices: list[EvaluatorChoice], named: list[EvaluatorChoice] | None = None
) -> EvaluatorChoice | None:
    """The evaluator of the report: the one asked for (or their majority), else the one with the most scores.

    ``choices`` are those of the kind the report reads; ``named`` every evaluator with scores that may be
    named (for the message when the one asked for has none). On a tie a model judge wins over the offline
    scripted heuristic, then names decide (alphabetically).
    """
    kind = filters.respondent_kind or (choices[0].kind if choices else Respondent.Kind.JUDGE.value)
    if filters.evaluator == MAJORITY:
        found = next((c for c in choices if c.is_majority), None)
        if found is None:
            named = len([c for c in choices if not c.is_majority])
            raise ResultsProblem(
                f"a majority needs at least two {kind}s with scores on the selected episodes"
                f"{'' if filters.prompt_version is None else f' under prompt version {filters.prompt_version!r}'}"
                f"; there {'is' if named == 1 else 'are'} {named}"
            )
        return found
    singles = [c for c in choices if not c.is_majority]
    if filters.evaluator:
        matching = [c for c in singles if c.evaluator == filters.evaluator]
        if filters.prompt_version is not None:
            matching = [c for c in matching if c.prompt_version == filters.prompt_version]
        if not matching:
            version = "" if filters.prompt_version is None else f" with prompt version {filters.prompt_version!r}"
            known = ", ".join(sorted({c.evaluator for c in (named if named is not None else singles)})) or "none"
            raise ResultsProblem(
                f"evaluator {filters.evaluator!r}{version} has no scores on the selected episodes "
                f"(evaluators with scores: {known})"
            )
        return matching[0]
    if filters.prompt_version is not None:
        singles = [c for c in singles if c.prompt_version == filters.prompt_version]
    # A model judge that scored the same episodes as the offline heuristic ties with it: prefer the model.
    singles.sort(key=lambda c: (-c.scores, is_scripted(c.evaluator), c.evaluator, c.prompt_version))
    return singles[0] if singles else None


def _majority_scores(
    scores: Scores, members: set[tuple[str, str]]
) -> dict[tuple[int, int | None, str], float]:
    numbers: dict[tuple[int, int | None, str], list[float]] = defaultdict(list)
    for name, version, episode_id, seat, dimension, number in scores.rows:
        if (name, version) in members:
            numbers[(episode_id, seat, dimension)].append(number)
    return {key: majority.majority_number(values) for key, values in numbers.items()}


def scores_of(scores: Scores, choice: EvaluatorChoice) -> dict[tuple[int, int | None, str], float]:
    """{(episode, seat or None, dimension): score} of one evaluator (or of the majority)."""
    if choice.is_majority:
        return _majority_scores(scores, set(choice.members))
    return {
        (episode_id, seat, dimension): number
        for name, version, episode_id, seat, dimension, number in scores.rows
        if (name, version) == (choice.evaluator, choice.prompt_version)
    }


def _seat_rows(episode_ids: list[int]) -> dict[int, list[tuple[int, str, str, bool, str]]]:
    seats: dict[int, list[tuple[int, str, str, bool, str]]] = defaultdict(list)
    rows = Seat.objects.filter(episode_id__in=episode_ids).order_by("episode_id", "position").values_list(
        "episode_id", "position", "model", "strategy", "carries_barrier", "player"
    )
    for episode_id, position, model, strategy, carries, player in rows:
        name = model or (HUMAN_PLAYER if player == HUMAN_PLAYER else UNKNOWN_MODEL)
        seats[episode_id].append((position, name, strategy, carries, player))
    return seats


def _features(lines: list[tuple[int, Utterance]], barrier_seat: int | None) -> dict[str, float | None]:
    transcript = combine(found for _, found in lines)
    barrier = combine(found for position, found in lines if position == barrier_seat)
    values: dict[str, float | None] = {}
    for feature in FEATURES:
        values[f"barrier_speech.{feature}"] = getattr(barrier, feature) if barrier_seat is not None else None
        values[f"transcript.{feature}"] = getattr(transcript, feature)
    return values


def table_columns(dimensions: list[str]) -> list[str]:
    """The columns of a results table, in order."""
    return [
        stats.EPISODE, "episode_label", stats.SEAT, stats.SEAT_ROLE, stats.MODEL, stats.PARTNER_MODEL,
        stats.BARRIER_MODEL, stats.CONDITION, stats.SCENARIO, "scenario_label", "template", stats.DIFFICULTY,
        stats.STRATEGY, "tag", "source", stats.EVALUATOR, stats.PROMPT_VERSION, *dimensions,
        *(f"{source}.{feature}" for source in stats.FEATURE_SOURCES for feature in FEATURES),
    ]


def seat_records(episode_ids: list[int]) -> list[dict[str, Any]]:
    """One record per (episode, seat) of ``episode_ids`` (in order), without scores: read once a report."""
    episodes = Episode.objects.filter(pk__in=episode_ids).order_by("pk").values_list(
        "pk", "external_id", "barrier__key", "scenario_id", "scenario__codename", "scenario__difficulty", "tag",
        "source", "scenario__template_id", "scenario__template__codename",
    )
    seats = _seat_rows(episode_ids)
    speech = spoken_features(episode_ids)
    records = []
    for pk, external_id, condition, scenario_id, codename, difficulty, tag, source, template_id, template in episodes:
        episode_seats = seats.get(pk, [])
        barrier_seat = next((s for s in episode_seats if s[3]), None)
        partners = [s for s in episode_seats if not s[3]] or episode_seats
        partner_model = ", ".join(sorted({s[1] for s in partners}))
        strategy = ", ".join(sorted({s[2] for s in partners}))
        features = _features(speech.get(pk, []), barrier_seat[0] if barrier_seat else None)
        for position, model, _, carries, _ in episode_seats:
            # The analysed seat's own model: a partner row names its partner, a barrier row its barrier seat.
            own_partner = model if not carries else partner_model
            own_barrier = model if carries else (barrier_seat[1] if barrier_seat else "")
            records.append({
                stats.EPISODE: pk,
                "episode_label": external_id or f"episode {pk}",
                stats.SEAT: position,
                stats.SEAT_ROLE: stats.BARRIER if carries else stats.PARTNER,
                stats.MODEL: model,
                stats.PARTNER_MODEL: own_partner,
                stats.BARRIER_MODEL: own_barrier,
                stats.CONDITION: condition,
                stats.SCENARIO: str(scenario_id),
                "scenario_label": codename or f"scenario {scenario_id}",
                "template": (template or f"scenario {template_id}") if template_id else "",
                stats.DIFFICULTY: difficulty,
                stats.STRATEGY: strategy,
                "tag": tag,
                "source": source,
                **features,
            })
    return records


def results_table(
    scores: Scores, choice: EvaluatorChoice | None, records: list[dict[str, Any]] | None = None
) -> pd.DataFrame:
    """One row per (episode, seat) of the filtered episodes the evaluator scored (see the module docstring).

    ``records`` are the seat records of (at least) those episodes, from :func:`seat_records`.
    """
    columns = table_columns(scores.dimensions)
    if choice is None:
        return pd.DataFrame(columns=columns)
    given = scores_of(scores, choice)
    scored = {episode_id for episode_id, _, _ in given}
    if records is None:
        records = seat_records(sorted(scored))
    rows = []
    for record in records:
        episode_id = record[stats.EPISODE]
        if episode_id not in scored:
            continue
        row = {**record, stats.EVALUATOR: choice.evaluator, stats.PROMPT_VERSION: choice.prompt_version}
        for key, scale in scores.scales.items():
            row[key] = given.get((episode_id, record[stats.SEAT] if scale.per_seat else None, key), np.nan)
        rows.append(row)
    table = pd.DataFrame.from_records(rows, columns=columns)
    for key in scores.dimensions:
        table[key] = table[key].astype(float)
    return table


def condition_order(episodes: QuerySet[Episode]) -> tuple[list[str], dict[str, str]]:
    """The keys of the barriers these episodes use (the built-in ones always), in display order with
    the baseline first, and their names."""
    used = Barrier.objects.filter(Q(team__isnull=True) | Q(pk__in=episodes.values("barrier_id")))
    rows = list(used.order_by("position", "key").values_list("key", "name"))
    keys = [key for key, _ in rows]
    if stats.BASELINE in keys:
        keys.remove(stats.BASELINE)
        keys.insert(0, stats.BASELINE)
    return keys, dict(rows)


def build_results(
    filters: ResultFilters,
    episodes: QuerySet[Episode],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The results report over ``episodes`` (the asking researcher's or a team's) as a JSON-ready
    dict (no NaN; docs/results-schema.md) and the table behind it."""
    if filters.seat_role not in stats.SEAT_ROLES:
        raise ResultsProblem(f"seat must be partner or barrier, not {filters.seat_role!r}")
    scores = read_scores(filters, episodes)
    choices = evaluator_choices(filters, scores)
    judge = choose_evaluator(filters, choices, scores.named)
    records = seat_records(sorted({row[2] for row in scores.rows}))
    table = results_table(scores, judge, records)
    order, names = condition_order(episodes)
    analysis = stats.results_report(
        table, scales=scores.scales, dimensions=scores.dimensions, seat_role=filters.seat_role, conditions=order,
        resamples=resamples, seed=seed,
    )
    notes = list(analysis.pop("notes"))
    if judge is None:
        hint = ": run `manage.py evaluate` on them first" if scores.kind == Respondent.Kind.JUDGE else ""
        notes.insert(0, f"no {scores.kind} scores on the selected episodes{hint}")
    evaluators = [
        {**choice.to_dict(), "means": stats.pooled_means(
            table if choice == judge else results_table(scores, choice, records), scales=scores.scales,
            dimensions=scores.dimensions, seat_role=filters.seat_role, conditions=order,
        )}
        for choice in choices
    ]
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": timestamp(timezone.now(), "seconds"),
        "filters": filters.to_dict(),
        "respondent_kind": scores.kind,
        "evaluator": judge.to_dict() if judge else None,
        "other_evaluators": [c.to_dict() for c in scores.named if c != judge],
        "evaluators": evaluators,
        "condition_labels": {key: names.get(key, key) for key in analysis["conditions"]},
        "dimension_info": {
            key: {"label": scores.labels[key], "low": _plain_number(scale.low), "high": _plain_number(scale.high),
                  "per_seat": scale.per_seat}
            for key, scale in scores.scales.items()
        },
        "feature_labels": {
            f"{source}.{feature}": f"{FEATURE_LABELS[feature]}, {SOURCE_LABELS[source]}"
            for source in stats.FEATURE_SOURCES for feature in FEATURES
        },
        **analysis,
    }
    report["methods"] = {
        **report["methods"], "linguistic": LINGUISTIC_METHOD, "selection": SELECTION_METHOD,
        "respondents": RESPONDENTS_METHOD, "majority": majority.METHOD,
    }
    return plain_report(report, notes), table


def _plain_number(value: float) -> int | float:
    """A bound as it was written: ``10`` rather than ``10.0``."""
    return int(value) if float(value).is_integer() else value
