"""Benchmark results from the database: judge scores and transcripts into the plain table the statistics take.

``benchmark.stats.results`` does the arithmetic on a plain table; this module decides what goes
into that table, so the command line, the page and the downloads all report the same numbers:

- **Episodes**: those matching the filters (experiment tag, source, partner strategy, the template
  their scenario was instantiated from) that the chosen evaluator scored.
- **Evaluator**: one judge per report, since judges' scales differ. Given ``--evaluator`` (and
  optionally a prompt version) it is that one; otherwise the evaluator and prompt version with the
  most scores on the filtered episodes, leaving out imported ``human mean`` scores (the rule the
  agreement report uses to pick its judge); on a tie a model judge is preferred to the offline
  ``scripted`` heuristic, since ``load_demo`` scores every demo episode with it.
- **Rows**: one per (episode, seat). A seat is the ``barrier`` seat when it carries the barrier
  (also under ``none``, where it is marked so conditions stay comparable) and a ``partner``
  otherwise; an episode with no barrier seat counts all its seats as partners. Per-seat scores
  go on their seat's row; episode-level scores are repeated on every row of the episode.
- **Linguistic features**: of the barrier seat's speech and of the whole transcript (spoken turns
  only), from ``benchmark.stats.linguistic``.

Every query is a fixed one, so the cost grows with rows fetched, not with round trips.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from ..agents.llm import is_scripted
from ..dimensions import DIMENSIONS
from ..exporting import timestamp
from ..models import ActionType, Barrier, Episode, Evaluation, Seat, Turn
from ..stats import results as stats
from ..stats.bootstrap import DEFAULT_RESAMPLES
from ..stats.linguistic import FEATURE_LABELS, FEATURES, signature
from ..stats.linguistic import METHOD as LINGUISTIC_METHOD
from ..stats.plain import plain_report

SCHEMA_VERSION = 1
HUMAN_EVALUATOR = "human mean"
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


class ResultsProblem(ValueError):
    """Filters that cannot give a report (say, an evaluator with no scores): the message names what."""


@dataclass(frozen=True)
class ResultFilters:
    """Which episodes and which judge a report covers; empty strings mean 'any' / 'choose'."""

    tag: str = ""
    source: str = ""
    strategy: str = ""
    evaluator: str = ""
    prompt_version: str | None = None
    seat_role: str = stats.PARTNER
    template: str = ""  # a template scenario's id: only episodes of scenarios instantiated from it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EvaluatorChoice:
    evaluator: str
    prompt_version: str
    scores: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    return episodes


def evaluator_choices(filters: ResultFilters, episodes: QuerySet[Episode]) -> list[EvaluatorChoice]:
    """Every (evaluator, prompt version) with scores on the filtered episodes, most scores first."""
    rows = (
        Evaluation.objects.filter(episode__in=filtered_episodes(filters, episodes).values("pk"))
        .values("evaluator", "prompt_version")
        .annotate(scores=Count("pk"))
        .order_by("-scores", "evaluator", "prompt_version")
    )
    return [EvaluatorChoice(row["evaluator"], row["prompt_version"], row["scores"]) for row in rows]


def choose_evaluator(filters: ResultFilters, choices: list[EvaluatorChoice]) -> EvaluatorChoice | None:
    """The judge of the report: the one asked for, else the one with the most scores (never 'human mean').

    On a tie a model judge wins over the offline scripted heuristic, then names decide (alphabetically).
    """
    if filters.evaluator:
        matching = [c for c in choices if c.evaluator == filters.evaluator]
        if filters.prompt_version is not None:
            matching = [c for c in matching if c.prompt_version == filters.prompt_version]
        if not matching:
            version = "" if filters.prompt_version is None else f" with prompt version {filters.prompt_version!r}"
            known = ", ".join(sorted({c.evaluator for c in choices})) or "none"
            raise ResultsProblem(
                f"evaluator {filters.evaluator!r}{version} has no scores on the selected episodes "
                f"(evaluators with scores: {known})"
            )
        return matching[0]
    judges = [c for c in choices if c.evaluator.lower() != HUMAN_EVALUATOR]
    if filters.prompt_version is not None:
        judges = [c for c in judges if c.prompt_version == filters.prompt_version]
    # A model judge that scored the same episodes as the offline heuristic ties with it: prefer the model.
    judges.sort(key=lambda c: (-c.scores, is_scripted(c.evaluator), c.evaluator, c.prompt_version))
    return judges[0] if judges else None


def _seat_rows(episode_ids: list[int]) -> dict[int, list[tuple[int, str, str, bool, str]]]:
    seats: dict[int, list[tuple[int, str, str, bool, str]]] = defaultdict(list)
    rows = Seat.objects.filter(episode_id__in=episode_ids).order_by("episode_id", "position").values_list(
        "episode_id", "position", "model", "strategy", "carries_barrier", "player"
    )
    for episode_id, position, model, strategy, carries, player in rows:
        name = model or (HUMAN_PLAYER if player == HUMAN_PLAYER else UNKNOWN_MODEL)
        seats[episode_id].append((position, name, strategy, carries, player))
    return seats


def _speech(episode_ids: list[int]) -> dict[int, list[tuple[int, str]]]:
    spoken: dict[int, list[tuple[int, str]]] = defaultdict(list)
    rows = Turn.objects.filter(episode_id__in=episode_ids, action_type=ActionType.SPEAK).order_by(
        "episode_id", "index"
    ).values_list("episode_id", "seat__position", "content")
    for episode_id, position, content in rows:
        spoken[episode_id].append((position, content))
    return spoken


def _features(lines: list[tuple[int, str]], barrier_seat: int | None) -> dict[str, float | None]:
    transcript = signature(content for _, content in lines)
    barrier = signature(content for position, content in lines if position == barrier_seat)
    values: dict[str, float | None] = {}
    for feature in FEATURES:
        values[f"barrier_speech.{feature}"] = getattr(barrier, feature) if barrier_seat is not None else None
        values[f"transcript.{feature}"] = getattr(transcript, feature)
    return values


def table_columns() -> list[str]:
    """The columns of a results table, in order."""
    return [
        stats.EPISODE, "episode_label", stats.SEAT, stats.SEAT_ROLE, stats.MODEL, stats.PARTNER_MODEL,
        stats.BARRIER_MODEL, stats.CONDITION, stats.SCENARIO, "scenario_label", "template", stats.DIFFICULTY,
        stats.STRATEGY,
        "tag", "source", stats.EVALUATOR, stats.PROMPT_VERSION, *DIMENSIONS,
        *(f"{source}.{feature}" for source in stats.FEATURE_SOURCES for feature in FEATURES),
    ]


def results_table(filters: ResultFilters, judge: EvaluatorChoice | None, episodes: QuerySet[Episode]) -> pd.DataFrame:
    """One row per (episode, seat) of the filtered episodes the judge scored (see the module docstring)."""
    columns = table_columns()
    if judge is None:
        return pd.DataFrame(columns=columns)
    scores = Evaluation.objects.filter(
        episode__in=filtered_episodes(filters, episodes).values("pk"), evaluator=judge.evaluator,
        prompt_version=judge.prompt_version,
    ).values_list("episode_id", "seat__position", "dimension", "score")
    by_episode: dict[int, dict[tuple[int | None, str], float]] = defaultdict(dict)
    for episode_id, position, dimension, score in scores:
        by_episode[episode_id][(position, dimension)] = score
    episode_ids = sorted(by_episode)
    episodes = Episode.objects.filter(pk__in=episode_ids).order_by("pk").values_list(
        "pk", "external_id", "barrier__key", "scenario_id", "scenario__codename", "scenario__difficulty", "tag",
        "source", "scenario__template_id", "scenario__template__codename",
    )
    seats = _seat_rows(episode_ids)
    speech = _speech(episode_ids)
    records = []
    for pk, external_id, condition, scenario_id, codename, difficulty, tag, source, template_id, template in episodes:
        episode_seats = seats.get(pk, [])
        barrier_seat = next((s for s in episode_seats if s[3]), None)
        partners = [s for s in episode_seats if not s[3]] or episode_seats
        partner_model = ", ".join(sorted({s[1] for s in partners}))
        strategy = ", ".join(sorted({s[2] for s in partners}))
        features = _features(speech.get(pk, []), barrier_seat[0] if barrier_seat else None)
        given = by_episode[pk]
        for position, model, _, carries, _ in episode_seats:
            record = {
                stats.EPISODE: pk,
                "episode_label": external_id or f"episode {pk}",
                stats.SEAT: position,
                stats.SEAT_ROLE: stats.BARRIER if carries else stats.PARTNER,
                stats.MODEL: model,
                stats.PARTNER_MODEL: partner_model,
                stats.BARRIER_MODEL: barrier_seat[1] if barrier_seat else "",
                stats.CONDITION: condition,
                stats.SCENARIO: str(scenario_id),
                "scenario_label": codename or f"scenario {scenario_id}",
                "template": (template or f"scenario {template_id}") if template_id else "",
                stats.DIFFICULTY: difficulty,
                stats.STRATEGY: strategy,
                "tag": tag,
                "source": source,
                stats.EVALUATOR: judge.evaluator,
                stats.PROMPT_VERSION: judge.prompt_version,
                **features,
            }
            for key, dimension in DIMENSIONS.items():
                record[key] = given.get((position if dimension.per_seat else None, key), np.nan)
            records.append(record)
    table = pd.DataFrame.from_records(records, columns=columns)
    for key in DIMENSIONS:
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
    choices = evaluator_choices(filters, episodes)
    judge = choose_evaluator(filters, choices)
    table = results_table(filters, judge, episodes)
    order, names = condition_order(episodes)
    analysis = stats.results_report(
        table, dimensions=list(DIMENSIONS), seat_role=filters.seat_role, conditions=order, resamples=resamples,
        seed=seed,
    )
    notes = list(analysis.pop("notes"))
    if judge is None:
        notes.insert(0, "no judge scores on the selected episodes: run `manage.py evaluate` on them first")
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": timestamp(timezone.now(), "seconds"),
        "filters": filters.to_dict(),
        "evaluator": judge.to_dict() if judge else None,
        "other_evaluators": [c.to_dict() for c in choices if c != judge],
        "condition_labels": {key: names.get(key, key) for key in analysis["conditions"]},
        "dimension_info": {
            key: {"label": d.label, "low": d.low, "high": d.high, "per_seat": d.per_seat}
            for key, d in DIMENSIONS.items()
        },
        "feature_labels": {
            f"{source}.{feature}": f"{FEATURE_LABELS[feature]}, {SOURCE_LABELS[source]}"
            for source in stats.FEATURE_SOURCES for feature in FEATURES
        },
        **analysis,
    }
    report["methods"] = {**report["methods"], "linguistic": LINGUISTIC_METHOD, "selection": SELECTION_METHOD}
    return plain_report(report, notes), table
