"""How far people agree with ProMediate's automatic measures (spec §1.6, PM-27): the human-validation numbers.

Three studies check three things, each with its own preset:

- **Snippet comparison** (``promediate-snippets``): each item shows two windows of one episode; an annotator
  says whether agreement increased or decreased from the first to the second. The tracker's side is the
  sign of mean(c over window 2) − mean(c over window 1), where c is the overall consensus series of the
  episode's stored trace (``PairAgreement`` rows, through ``benchmark.stats.promediate.consensus_series``)
  and "c over a window" is the value after each of its utterances (point k + 1 for turn k). A difference
  of exactly zero has no direction: that item is left out and counted (``ties_excluded``), as is an item
  whose episode has no trace (``no_trace``). Cohen's κ is reported over every (annotator, tracker) pair,
  per annotator, and for the annotators' majority per item (items without a strict majority are counted
  as ``split``). The paper reports κ = 0.63 without saying how its two labels per item became one, so all
  three are given.
- **Per-intervention ratings** (``promediate-intervention``): each human answer to one dimension of one
  intervention is paired with the J3 judge's answer to the same question about the same turn. Pairs where
  either said "not applicable" have no number and are left out and counted. Accuracy is reported exact and
  after grouping the 1–5 scale as {1–2},{3},{4–5} and {1–2},{3–5} (the paper's 0.73 and 0.98), per
  dimension and over all four.
- **Conversation quality** (``promediate-quality``): naturalness and mode expression, mean and n (the paper's
  4.18 and 3.61), overall and per conflict mode (the episode's barrier).

Every function reads the latest submitted version of each assignment on regular items
(``annotator.reports.build.latest_submitted``) and returns plain, JSON-ready dicts: the ProMediate results report
(``benchmark.results.promediate``, through the source ``annotator.apps`` registers) puts them in its
human-validation section. The statistics are the pure ones of ``benchmark.stats`` (Cohen's κ, grouped
accuracy); nothing is computed twice.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from statistics import fmean
from typing import Any

from django.db.models import QuerySet

from benchmark.instruments.answers import respondent_answers
from benchmark.instruments.interventions import mediator_position
from benchmark.instruments.presets import PROMEDIATE_QUALITY_PRESET, PROMEDIATE_SNIPPETS_PRESET
from benchmark.instruments.respondents import pseudonym
from benchmark.models import Answer, Episode, PairAgreement, Question, Respondent, Seat, Team, Turn
from benchmark.stats.accuracy import MI_GROUPS_COARSE, MI_GROUPS_FINE, grouped_accuracy
from benchmark.stats.consensus import PairReading, consensus_series
from benchmark.stats.kappa import cohen_kappa_from_table

from ..models import Study, StudyItem
from ..windows import INTERVENTION_PRESET
from .build import latest_submitted

INCREASED, DECREASED = "increased", "decreased"
DIRECTIONS = (INCREASED, DECREASED)
SNIPPET_QUESTION = "agreement_direction"
MI_DIMENSIONS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")
QUALITY_QUESTIONS = ("naturalness", "mode_expression")
EXACT_GROUPS = ((1,), (2,), (3,), (4,), (5,))
GROUPINGS = {"exact": EXACT_GROUPS, "three_groups": MI_GROUPS_FINE, "two_groups": MI_GROUPS_COARSE}
_TIE = 1e-12


# ----- reading annotators' answers


def _human_answers(
    studies: Iterable[Study], keys: Sequence[str], episodes: QuerySet[Episode] | None = None
) -> list[tuple[Any, ...]]:
    """(item pk, annotator pk, episode pk, question key, turn, value, number) of every latest submitted answer to
    ``keys`` on the studies' regular items (about ``episodes`` only, when given)."""
    rows: list[tuple[Any, ...]] = []
    for study in studies:
        answers = Answer.objects.filter(
            response__annotation__in=latest_submitted(study),
            response__annotation__assignment__item__kind=StudyItem.Kind.REGULAR,
            question__key__in=keys,
        )
        if episodes is not None:
            answers = answers.filter(response__episode__in=episodes.values("pk"))
        rows.extend(
            answers.order_by("pk").values_list(
                "response__annotation__assignment__item_id",
                "response__annotation__assignment__annotator_id",
                "response__episode_id",
                "question__key",
                "turn",
                "value",
                "number",
            )
        )
    return rows


def _kappa(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Cohen's κ of (human, tracker) direction pairs, with n."""
    table = [[sum(1 for pair in pairs if pair == (row, column)) for column in DIRECTIONS] for row in DIRECTIONS]
    kappa = cohen_kappa_from_table(table)
    return {"kappa": kappa.value, "n": len(pairs), "notes": kappa.notes}


# ----- snippet comparison


def tracker_direction(overall: Sequence[float], first: tuple[int, int], second: tuple[int, int]) -> str | None:
    """ "increased" or "decreased": the sign of the mean consensus after the second window's utterances minus that
    after the first's (turns ``(first, last)``, inclusive; c(k + 1) follows turn k); None for a tie."""
    before = fmean(overall[first[0] + 1 : first[1] + 2])
    after = fmean(overall[second[0] + 1 : second[1] + 2])
    if abs(after - before) <= _TIE:
        return None
    return INCREASED if after > before else DECREASED


def overall_series(
    episode: Episode, *, judge: str | None = None, prompt_version: str | None = None, pair_score: str = "llm_overall"
) -> list[float] | None:
    """The episode's overall consensus series from one judge's stored trace (by default the latest judge to score
    it); None when it has none."""
    rows = PairAgreement.objects.filter(episode=episode)
    if judge is None:
        latest = rows.order_by("-pk").values_list("judge", "prompt_version").first()
        if latest is None:
            return None
        judge, prompt_version = latest
    rows = rows.filter(judge=judge)
    if prompt_version is not None:
        rows = rows.filter(prompt_version=prompt_version)
    readings = [
        PairReading(point, topic, str(a), str(b), overall, tuple(dims))
        for point, topic, a, b, overall, *dims in rows.values_list(
            "point", "topic__title", "seat_a__position", "seat_b__position", "overall", *PairAgreement.DIMENSIONS
        )
    ]
    if not readings:
        return None
    mediator = mediator_position(episode)
    seats = Seat.objects.filter(episode=episode).exclude(position=mediator).order_by("position")
    parties = [str(position) for position in seats.values_list("position", flat=True)]
    topics = list(episode.scenario.topics.order_by("position").values_list("title", flat=True))
    points = Turn.objects.filter(episode=episode).count() + 1
    return consensus_series(parties, topics, points, readings, pair_score=pair_score).overall


def snippet_agreement(
    studies: Iterable[Study],
    *,
    judge: str | None = None,
    prompt_version: str | None = None,
    pair_score: str = "llm_overall",
    episodes: QuerySet[Episode] | None = None,
) -> dict[str, Any]:
    """Cohen's κ between annotators' snippet directions and the consensus tracker's (module docstring);
    ``episodes`` narrows the items to those of these episodes."""
    rows = _human_answers(studies, [SNIPPET_QUESTION], episodes)
    items = StudyItem.objects.in_bulk({row[0] for row in rows})
    series: dict[int, list[float] | None] = {}
    tracker: dict[int, str | None] = {}
    for item in items.values():
        if item.second_first_turn is None:
            continue
        if item.episode_id not in series:
            series[item.episode_id] = overall_series(
                item.episode, judge=judge, prompt_version=prompt_version, pair_score=pair_score
            )
        overall = series[item.episode_id]
        if overall is not None:
            first, second = item.windows()
            tracker[item.pk] = tracker_direction(overall, first, second)
    pairs: list[tuple[str, str]] = []
    by_annotator: dict[str, list[tuple[str, str]]] = defaultdict(list)
    by_item: dict[int, list[str]] = defaultdict(list)
    ties = no_trace = 0
    for item_pk, annotator, _episode, _key, _turn, value, _number in rows:
        if item_pk not in tracker:
            no_trace += 1
            continue
        if tracker[item_pk] is None:
            ties += 1
            continue
        pairs.append((value, tracker[item_pk]))
        by_annotator[pseudonym(annotator)].append((value, tracker[item_pk]))
        by_item[item_pk].append(value)
    majority: list[tuple[str, str]] = []
    split = 0
    for item_pk, values in by_item.items():
        (top, count), *rest = Counter(values).most_common()
        if rest and rest[0][1] == count:
            split += 1
        else:
            majority.append((top, tracker[item_pk]))
    return {
        **_kappa(pairs),
        "ties_excluded": ties,
        "no_trace": no_trace,
        "per_annotator": {name: _kappa(own) for name, own in sorted(by_annotator.items())},
        "majority": {**_kappa(majority), "split": split},
    }


# ----- per-intervention ratings


def intervention_accuracy(
    studies: Iterable[Study],
    *,
    judge: str | None = None,
    prompt_version: str | None = None,
    episodes: QuerySet[Episode] | None = None,
) -> dict[str, Any]:
    """Accuracy of annotators' per-intervention scores against the J3 judge's for the same turn (module docstring).

    ``judge`` is the judge's model (``scripted``, ``upstream``, a model name); by default the judge with the most
    answers about these episodes."""
    rows = [row for row in _human_answers(studies, MI_DIMENSIONS, episodes) if row[4] is not None]
    questions = list(Question.objects.filter(instrument__preset=INTERVENTION_PRESET, key__in=MI_DIMENSIONS))
    episodes = {row[2] for row in rows}
    answers = [
        answer
        for answer in respondent_answers(episodes, questions, kinds=(Respondent.Kind.JUDGE,))
        if answer.target.turn is not None
        and (judge is None or answer.respondent == judge)
        and (prompt_version is None or answer.prompt_version == prompt_version)
    ]
    if judge is None and answers:
        counts = Counter((answer.respondent, answer.prompt_version) for answer in answers)
        judge, prompt_version = min(counts, key=lambda key: (-counts[key], key))
        answers = [
            answer for answer in answers if (answer.respondent, answer.prompt_version) == (judge, prompt_version)
        ]
    keys = {question.pk: question.key for question in questions}
    judged = {(answer.episode_id, answer.target.turn, keys.get(answer.question_id)): answer for answer in answers}
    pairs: dict[str, list[tuple[int, int]]] = defaultdict(list)
    not_applicable = unjudged = 0
    for _item, _annotator, episode, key, turn, _value, number in rows:
        theirs = judged.get((episode, turn, key))
        if theirs is None:
            unjudged += 1
        elif number is None or theirs.number is None:
            not_applicable += 1
        else:
            pairs[key].append((round(number), round(theirs.number)))
    everything = [pair for key in MI_DIMENSIONS for pair in pairs[key]]
    return {
        **_accuracies(everything),
        "not_applicable": not_applicable,
        "unjudged": unjudged,
        "judge": judge,
        "prompt_version": prompt_version,
        "per_dimension": {key: _accuracies(pairs[key]) for key in MI_DIMENSIONS},
    }


def _accuracies(pairs: Sequence[tuple[int, int]]) -> dict[str, Any]:
    return {**{name: grouped_accuracy(pairs, groups) for name, groups in GROUPINGS.items()}, "n": len(pairs)}


# ----- conversation quality


def quality_means(studies: Iterable[Study], *, episodes: QuerySet[Episode] | None = None) -> dict[str, Any]:
    """Mean naturalness and mode expression with n, overall and per conflict mode (the episode's barrier key)."""
    rows = [row for row in _human_answers(studies, QUALITY_QUESTIONS, episodes) if row[6] is not None]
    modes = dict(Episode.objects.filter(pk__in={row[2] for row in rows}).values_list("pk", "barrier__key"))
    result: dict[str, Any] = {}
    for key in QUALITY_QUESTIONS:
        numbers = [(modes[row[2]], row[6]) for row in rows if row[3] == key]
        by_mode: dict[str, list[float]] = defaultdict(list)
        for mode, number in numbers:
            by_mode[mode].append(number)
        result[key] = {
            **_mean([number for _, number in numbers]),
            "by_mode": {mode: _mean(values) for mode, values in sorted(by_mode.items())},
        }
    return result


def _mean(numbers: Sequence[float]) -> dict[str, Any]:
    return {"mean": fmean(numbers) if numbers else None, "n": len(numbers)}


# ----- all three

PRESETS = (PROMEDIATE_SNIPPETS_PRESET, INTERVENTION_PRESET, PROMEDIATE_QUALITY_PRESET)


def human_validation(
    studies: Iterable[Study],
    *,
    episodes: QuerySet[Episode] | None = None,
    judge: str | None = None,
    prompt_version: str | None = None,
) -> dict[str, Any]:
    """The three checks over ``studies`` (each check reads the studies of its preset), on the items of ``episodes``
    when given. ``judge`` and ``prompt_version`` pick the consensus trace and the J3 judge compared (by default the
    latest trace and the judge with the most answers)."""
    of = {preset: [study for study in studies if study.instrument.preset == preset] for preset in PRESETS}
    judged = {"judge": judge, "prompt_version": prompt_version, "episodes": episodes}
    return {
        "snippets": snippet_agreement(of[PROMEDIATE_SNIPPETS_PRESET], **judged),
        "interventions": intervention_accuracy(of[INTERVENTION_PRESET], **judged),
        "quality": quality_means(of[PROMEDIATE_QUALITY_PRESET], episodes=episodes),
        "studies": {preset: [study.slug for study in chosen] for preset, chosen in of.items()},
    }


def team_validation(team: Team, **judge: Any) -> dict[str, Any]:
    """``human_validation`` over every study of ``team``."""
    return human_validation(Study.objects.filter(team=team).select_related("instrument"), **judge)


def validation_of_episodes(episodes: QuerySet[Episode]) -> dict[str, Any] | None:
    """``human_validation`` of the studies that rate some of ``episodes``, on those episodes' items only; None when
    no ProMediate study rates any of them. The shape the results report's human-validation section takes
    (``benchmark.results.promediate.build.register_human_validation``)."""
    studies = list(
        Study.objects.filter(instrument__preset__in=PRESETS, items__episode__in=episodes.values("pk"))
        .distinct()
        .select_related("instrument")
        .order_by("pk")
    )
    if not studies:
        return None
    return human_validation(studies, episodes=episodes)
