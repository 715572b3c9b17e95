"""Build a study's agreement report: read the submitted annotations, hand long tables to the statistics.

The statistics themselves live in ``benchmark.stats`` (plain tables in, plain dicts out); this
module decides what goes into those tables:

- **What counts**: the latest submitted version of each assignment, on regular items only. Gold
  and attention items are there to check annotators (their answers are steered by a known key or
  an instruction), so their annotations are counted in ``counts`` and left out of every statistic.
- **Units**: an item is one episode of the study, named by its number (``"12"``, as in the
  exports). A per-seat question rates each character separately, so each (item, seat) is its own
  rated unit, named ``"<item>:<seat>"`` (``"12:0"``, ``"12:1"``); seats of one episode are
  different targets, as in Sotopia's ratings of each agent; per turn and per goal likewise
  (``annotator.reports.units``).
- **Truth**: a categorical question with ``truth = "episode.barrier"`` is scored against the
  barrier of the item's episode; its bootstrap resamples scenarios (the episode's scenario is
  the cluster). Classes are the question's choices, so chance is one over the number of choices.
- **Clusters**: every question's table carries the episode's scenario as its cluster, so Fleiss'
  kappa resamples scenarios too, and the ICC, means per condition and the alignment with the
  judge, whose intervals treat units as independent, say that they do not account for it.
- **Judge**: a Likert or slider question is compared with other respondents' answers about the
  item's episode (and seat) to the same question or to any question measuring its ``dimension``,
  read by ``benchmark.instruments.answers.respondent_answers`` for the respondent kinds asked for
  (``judge`` by default; interviewed agents, participants or other studies' annotators too), this
  study's own annotations left out; ``annotator.reports.comparison`` picks "the judge" among them.
  The condition for the means per condition is the episode's barrier.
- **Spans**: spans of the same item are paired across the annotators who submitted it, by
  intersection over union of their positions in turns (see ``span_position``).

Every query is a fixed one (no query per item or per annotation), so the cost stays flat in the
number of database round trips however large the study.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Exists, Max, OuterRef, Q, QuerySet
from django.utils import timezone

from benchmark.exporting import timestamp
from benchmark.instruments.answers import RespondentAnswer, respondent_answers
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.kinds.base import NOT_APPLICABLE
from benchmark.instruments.respondents import pseudonym
from benchmark.instruments.targets import COLUMNS
from benchmark.models import Answer, Episode, Question, Respondent, Response
from benchmark.stats import cluster_bootstrap_accuracy, coded_question, question_report, span_question_report
from benchmark.stats.bootstrap import DEFAULT_RESAMPLES
from benchmark.stats.plain import plain_report
from benchmark.stats.spans import DEFAULT_MIN_IOU
from benchmark.stats.tables import ANNOTATOR, ITEM, VALUE

from ..models import Annotation, Study, StudyItem
from .agentsense import agentsense_report
from .annotators import report_section
from .coding import AnswerRow, CodedQuestion, coded_rows
from .comparison import judge_of, judge_scores
from .item_truths import scored_by_item
from .methods import study_methods
from .reviews import review_note, review_outcome
from .spans import read_spans, span_continua
from .units import unit_kind

BARRIER_TRUTH = "episode.barrier"
CLUSTER = "scenario"
DEFAULT_RESPONDENTS = (Respondent.Kind.JUDGE,)
# Whom a report can compare the annotators with, in the order pages offer them.
COMPARABLE = {
    Respondent.Kind.JUDGE: "automated judges",
    Respondent.Kind.AGENT: "interviewed agents",
    Respondent.Kind.PARTICIPANT: "participants",
    Respondent.Kind.ANNOTATOR: "annotators of other studies",
    Respondent.Kind.GOLD: "adjudicated gold",  # this study's final curations (annotator.gold), never other studies'
}
SCHEMA_VERSION = 1



def latest_submitted(study: Study) -> QuerySet[Annotation]:
    """Each assignment's latest submitted annotation version in ``study`` (drafts never count)."""
    newer = Annotation.objects.filter(
        assignment=OuterRef("assignment"), status=Annotation.Status.SUBMITTED, version__gt=OuterRef("version")
    )
    return Annotation.objects.filter(
        assignment__item__study=study, status=Annotation.Status.SUBMITTED
    ).exclude(Exists(newer))


@dataclass
class Unit:
    """A regular item, with what the statistics need to know about its episode."""

    name: str
    episode_id: int
    scenario: str
    barrier: str
    last_turn: int | None = None  # the episode's highest turn index
    seconds: float | None = None  # its recording's length, or its last timed turn's end when later
    task_item_id: int | None = None  # the SHREC task item a human-baseline item answers


@dataclass
class StudyData:
    """Everything read from the database for one report, in plain Python."""

    units: dict[int, Unit]  # regular items by StudyItem pk
    annotations: dict[int, tuple[int, str]]  # annotation pk -> (item pk, annotator pseudonym), regular items
    excluded: Counter[str]  # latest submitted annotations on gold / attention items
    other_instruments: int
    generated: Counter[str]  # regular items' annotations no person gave, by what generated them
    answers: list[tuple[int, str, tuple[Any, ...], str, float | None]]  # annotation, key, target columns, text, number
    spans: list[dict[str, Any]]
    automated: list[RespondentAnswer]  # other respondents' answers to compare with (``comparison.judge_of``)
    conditions: dict[str, str] = field(default_factory=dict)
    respondent_kinds: Sequence[str] = DEFAULT_RESPONDENTS
    external: set[str] = field(default_factory=set)  # pseudonyms of annotators whose ratings were imported
    # The answers again, in the order given (pk) and as ``annotators.study_annotator_agreement`` reads them:
    # annotator id, item pk, key, text, number, target columns.
    answer_rows: list[tuple[Any, ...]] | None = None


def compared_kinds(asked: Iterable[str]) -> list[str]:
    """The respondent kinds of ``asked`` (say, a query string's ``compare`` values) in their usual order;
    automated judges when none is a kind."""
    kinds = [str(kind) for kind in COMPARABLE if kind in set(asked)]
    return kinds or [str(kind) for kind in DEFAULT_RESPONDENTS]


def _read(study: Study, questions: list[Question], respondent_kinds: Sequence[str]) -> StudyData:
    latest = latest_submitted(study)
    items = (
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR)
        .values_list(
            "pk", "position", "episode_id", "episode__scenario_id", "episode__barrier__key", "episode__barrier__name",
            "episode__recording__duration_s", "task_item_id",
        )
        .annotate(last_turn=Max("episode__turns__index"), last_end=Max("episode__turns__end_s"))
        .order_by("position")
    )
    units: dict[int, Unit] = {}
    conditions: dict[str, str] = {}
    for row in items:
        pk, position, episode_id, scenario_id, barrier_key, barrier_name, duration, task_item, last_turn, last_end = row
        seconds = max((value for value in (duration, last_end) if value is not None), default=None)
        units[pk] = Unit(
            str(position + 1), episode_id, str(scenario_id), barrier_key, last_turn, seconds or None, task_item
        )
        conditions[barrier_key] = barrier_name

    annotations: dict[int, tuple[int, str]] = {}
    excluded: Counter[str] = Counter()
    other_instruments = 0
    generated: Counter[str] = Counter()
    annotation_of: dict[int, int] = {}  # response pk -> annotation pk
    annotator_of: dict[int, int] = {}  # response pk -> annotator (user) id
    item_of: dict[int, int] = {}  # response pk -> study item pk
    external: set[str] = set()
    rows = latest.values_list(
        "pk", "response_id", "assignment__item_id", "assignment__item__kind", "assignment__annotator_id",
        "response__instrument_id", "generated_by", "assignment__annotator__external_annotator__number",
    )
    for pk, response_id, item_id, kind, annotator_id, instrument_id, generated_by, external_number in rows:
        if kind != StudyItem.Kind.REGULAR:
            excluded[kind] += 1
            continue
        annotations[pk] = (item_id, pseudonym(annotator_id))
        if external_number is not None:
            external.add(pseudonym(annotator_id))
        annotation_of[response_id] = pk
        annotator_of[response_id], item_of[response_id] = annotator_id, item_id
        other_instruments += instrument_id != study.instrument_id
        if generated_by:
            generated[generated_by] += 1

    regular = latest.filter(assignment__item__kind=StudyItem.Kind.REGULAR)
    keys = [question.key for question in questions]
    rows = list(
        Answer.objects.filter(response__in=regular.values("response_id"), question__key__in=keys)
        .order_by("response__annotation", "question__position", "seat_position", "pk")  # as before the move
        .values_list("response_id", "question__key", "value", "number", *COLUMNS, "pk")
    )
    answers = [
        (annotation_of[response_id], key, tuple(target), value, number)
        for response_id, key, value, number, *target, _ in rows
    ]
    # The same rows as the annotators section reads them (``annotators.study_annotator_agreement``), in its order.
    rows.sort(key=itemgetter(-1))
    answer_rows = [
        (annotator_of[response_id], item_of[response_id], key, value, number, *target)
        for response_id, key, value, number, *target, _ in rows
    ]
    spans = read_spans(
        regular, [q.key for q in questions if get_kind(q.kind).agreement == "spans"], units, annotations
    )

    automated: list[RespondentAnswer] = []
    numeric = [question for question in questions if get_kind(question.kind).numeric]
    if numeric and units:
        automated = respondent_answers(  # the units' episodes as a subquery: a list of thousands of ids is slow
            Episode.objects.filter(study_items__study=study, study_items__kind=StudyItem.Kind.REGULAR), numeric,
            kinds=respondent_kinds,
            exclude_responses=Response.objects.filter(
                Q(annotation__assignment__item__study=study)
                | Q(respondent__kind=Respondent.Kind.GOLD) & ~Q(curation__item__study=study)
            ),
        )
    return StudyData(
        units, annotations, excluded, other_instruments, generated, answers, spans, automated, conditions,
        respondent_kinds, external, answer_rows,
    )


def build_report(
    study: Study,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    respondent_kinds: Sequence[str] = DEFAULT_RESPONDENTS,
) -> dict[str, Any]:
    """The agreement report of ``study`` as a JSON-ready dict (no NaN; every undefined value is null).

    Keys: ``schema_version``, ``study``, ``generated_at``, ``resamples``, ``seed``,
    ``compared_with`` (the respondent kinds human answers are compared with), ``counts``,
    ``conditions`` (barrier key -> name), ``questions`` (per question key: the statistics of
    ``benchmark.stats.report`` plus ``question`` and ``judge``), ``skipped_questions``,
    ``agentsense`` (goals and probes against self, other and external answers, ``reports.agentsense``;
    null when the study asks neither), ``annotators`` (each annotator's agreement with the others and with
    gold, and MACE competence, per question, ``reports.annotators``), ``span_review`` (a span review study's
    persistent disagreement, ``reports.reviews``; null for other studies), ``methods`` and ``notes``.
    docs/report-schema.md describes every key.
    """
    instrument = study.instrument
    questions = list(instrument.questions.order_by("position"))
    respondent_kinds = [str(kind) for kind in respondent_kinds]
    data = _read(study, questions, respondent_kinds)
    review = review_outcome(study, latest_submitted(study))
    annotators = {annotator for _, annotator in data.annotations.values()}
    rated_items = {item_id for item_id, _ in data.annotations.values()}
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "study": {
            "slug": study.slug,
            "title": study.title,
            "scheme": instrument.name,
            "scheme_version": instrument.version,
            "k": study.overlap,
        },
        "generated_at": timestamp(timezone.now(), "seconds"),
        "resamples": resamples,
        "seed": seed,
        "compared_with": respondent_kinds,
        "counts": {
            "items": len(data.units),
            "items_rated": len(rated_items),
            "annotations": len(data.annotations),
            "annotators": len(annotators),
            "answers": len(data.answers),
            "spans": len(data.spans),
            "excluded_annotations": {"gold": data.excluded["gold"], "attention": data.excluded["attention"]},
            "generated_annotations": sum(data.generated.values()),
        },
        "conditions": dict(sorted(data.conditions.items())),
        "questions": {},
        "skipped_questions": {},
        "agentsense": None,
        "span_review": review,
        "annotators": report_section(study, latest_submitted(study), questions, seed=seed, rows=data.answer_rows),
        "methods": study_methods(resamples, seed),
        "notes": _study_notes(data) + review_note(review),
    }
    if not data.annotations:
        report["notes"].append("No submitted annotations on regular items yet: there is nothing to report.")
        return plain_report(report)

    answers_by_question: dict[str, list[AnswerRow]] = defaultdict(list)
    for annotation_id, key, target, value, number in data.answers:
        answers_by_question[key].append((annotation_id, target, value, number))
    coders = pd.DataFrame(
        [(data.units[item_id].name, annotator) for item_id, annotator in data.annotations.values()],
        columns=["item", "annotator"],
    )
    for question in questions:
        agreement = get_kind(question.kind).agreement  # the statistic that fits the kind
        if agreement == "categorical":
            entry = _categorical(question, answers_by_question[question.key], data, resamples, seed)
        elif agreement == "numeric":
            entry = _numeric(question, answers_by_question[question.key], data, resamples, seed)
        elif agreement == "spans":
            entry = _spans(question, data, coders)
        elif agreement == "own":  # the kind computes its statistic (a ranking: Kendall's W)
            table, blank = _rows(question, answers_by_question[question.key], data, numeric=False)
            entry = {"notes": [], "methods": {}, "n_annotators": int(table["annotator"].nunique()),
                     **get_kind(question.kind).agreement_statistic(question, table)}
            _blank_note(entry, blank)
            entry.update(question=_question_info(question, "item:seat" if question.per_seat else "item"), judge=None)
        elif question.scope == Question.Scope.GOAL and get_kind(question.kind).boolean:
            report["skipped_questions"][question.key] = "asked per goal: see agentsense.goals"
            continue
        else:
            report["skipped_questions"][question.key] = f"{question.get_kind_display()}: no agreement statistic applies"
            continue
        report["questions"][question.key] = entry
    report["agentsense"] = agentsense_report(
        latest_submitted(study), questions, respondent_kinds, exclude_study=study, resamples=resamples, seed=seed
    )
    return plain_report(report)


def _study_notes(data: StudyData) -> list[str]:
    notes = [
        f"{count} of {len(data.annotations)} annotations were generated by {source}, not given by people."
        for source, count in sorted(data.generated.items())
    ]
    gold, attention = data.excluded["gold"], data.excluded["attention"]
    if gold or attention:
        notes.append(
            f"Left out of every statistic: {gold} annotation{'s' * (gold != 1)} of gold items and {attention} "
            f"of attention checks (they check annotators; their answers are steered by known keys)."
        )
    if data.external:
        everyone = len({annotator for _, annotator in data.annotations.values()})
        notes.append(
            f"{len(data.external)} of the {everyone} annotators rated outside Parley; their ratings were imported and "
            "count in every statistic like the others'."
        )
    if data.other_instruments:
        notes.append(
            f"{data.other_instruments} annotation{'s were' if data.other_instruments != 1 else ' was'} made under "
            "another version of the instrument; answers are pooled by question key."
        )
    return notes


def _question_info(question: Question, unit: str) -> dict[str, Any]:
    return {
        "key": question.key,
        "kind": question.kind,
        "prompt": question.prompt,
        "per_seat": question.per_seat,
        "unit": unit,
        "dimension": question.dimension or None,
        "truth": question.truth or None,
    }


def _rows(question: Question, answers: Iterable[AnswerRow], data: StudyData, numeric: bool) -> tuple[pd.DataFrame, int]:
    """The long table of one question (blank answers dropped and counted), for what reads a table: a kind's own
    statistic, the truths stored per item."""
    coded = coded_rows(question, answers, data, numeric)
    return _table(question, coded, numeric), coded.blank


def _table(question: Question, coded: CodedQuestion, numeric: bool) -> pd.DataFrame:
    """The coded rows of ``question`` as the long table of names they stand for."""
    ratings, units = coded.ratings, coded.units
    barriers = [unit.barrier for unit in units]
    return pd.DataFrame({
        "item": ratings.texts(ITEM), "annotator": ratings.texts(ANNOTATOR), "question": question.key,
        "value": ratings.number if numeric else ratings.texts(VALUE), CLUSTER: [unit.scenario for unit in units],
        "condition": barriers, "truth": barriers, "_episode": [unit.episode_id for unit in units],
        "_task_item": [unit.task_item_id for unit in units], "_target": coded.targets,
    }, columns=["item", "annotator", "question", "value", CLUSTER, "condition", "truth", "_episode", "_task_item",
                "_target"])


def _blank_note(entry: dict[str, Any], blank: int, not_applicable: int = 0) -> None:
    """Say how many answers are left out: blank ones, and "not applicable" ones (answers with no number)."""
    if blank:
        entry["notes"].insert(0, f"answers: {blank} left blank (optional question skipped) and left out")
    if not_applicable:
        entry["notes"].insert(0, f"answers: {not_applicable} not applicable and left out")


def _categorical(
    question: Question, answers: list[AnswerRow], data: StudyData,
    resamples: int, seed: int,
) -> dict[str, Any]:
    coded = coded_rows(question, answers, data, numeric=False)
    ratings, blank = coded.ratings, coded.blank
    options = (question.options or {}).get("choices", [])
    choices = [str(choice["value"]) for choice in options]
    unknown = sorted(set(ratings.labels[VALUE]) - set(choices))
    categories = choices + unknown
    entry = question_report(
        replace(ratings, condition=None, truth=None), kind="categorical", categories=categories, resamples=resamples,
        seed=seed,
    )
    if unknown and choices:
        outside = ", ".join(unknown)
        entry["notes"].append(f"categories: answers outside the question's choices counted as categories: {outside}")
    _blank_note(entry, blank)
    entry["question"] = _question_info(question, unit_kind(question))
    entry["question"]["categories"] = categories
    entry["question"]["labels"] = {str(c["value"]): str(c.get("label", c["value"])) for c in options}
    entry["judge"] = None
    # The truth: the episode's barrier, or the correct choice the item stores (a per-item choice).
    accuracy = None
    if question.truth == BARRIER_TRUTH:
        # scored on the codes; its clusters are the scenarios, named as the column of the tables is
        accuracy = replace(coded_question.accuracy(ratings, False, categories, resamples, seed), cluster=CLUSTER)
    elif not question.truth and (scored := scored_by_item(question, _table(question, coded, False))) is not None:
        accuracy = cluster_bootstrap_accuracy(
            scored, cluster=CLUSTER, labels=categories, resamples=resamples, seed=seed
        )
    if accuracy is not None:
        entry["notes"] = [note for note in entry["notes"] if note != "accuracy: no truth given"]
        entry["accuracy"] = accuracy.to_dict()
        entry["methods"]["accuracy"] = accuracy.method
        entry["notes"].extend(f"accuracy: {note}" for note in accuracy.notes)
    return entry


def _numeric(
    question: Question, answers: list[AnswerRow], data: StudyData,
    resamples: int, seed: int,
) -> dict[str, Any]:
    coded = coded_rows(question, answers, data, numeric=True)
    ratings = coded.ratings
    not_applicable = sum(1 for _, _, value, number in answers if number is None and value == NOT_APPLICABLE)
    blank = coded.blank - not_applicable  # an answer, with no point on the scale: not a skipped question
    scale = _scale(question)
    outside = scale is not None and bool(((ratings.number < scale[0]) | (ratings.number > scale[1])).any())
    judge = judge_of(question, data.automated)
    scored = None
    if judge is not None:
        scores = judge.pop("_scores")
        scored = np.array([scores.get((unit.episode_id, target)) for unit, target in zip(
            coded.units, coded.targets, strict=True
        )], dtype=float).reshape(-1)
    entry = question_report(
        replace(ratings, truth=None, judge=scored), kind="numeric", scale=None if outside else scale,
        resamples=resamples, seed=seed,
    )
    if outside:
        entry["notes"].append(f"binned_kappa: some ratings lie outside the scale {scale}; bins span the observed range")
    _blank_note(entry, blank, not_applicable)
    entry["question"] = _question_info(question, unit_kind(question))
    entry["question"]["scale"] = list(scale) if scale else None
    entry["judge"] = judge
    if judge is not None:
        entry["judge_scores"] = judge_scores(
            pd.DataFrame({"item": ratings.texts(ITEM), "value": ratings.number, "judge": scored})
        )
    else:
        measured = f"the dimension {question.dimension} or " if question.dimension else ""
        entry["notes"].append(
            f"alignment: no answers by {' or '.join(data.respondent_kinds) or 'any'} respondents to {measured}this "
            "question for these episodes"
        )
    return entry


def _scale(question: Question) -> tuple[float, float] | None:
    return get_kind(question.kind).scale(question.options or {})


def _spans(question: Question, data: StudyData, coders: pd.DataFrame) -> dict[str, Any]:
    columns = ["item", "annotator", "question", "label", "start", "end", "attributes", "start_s", "end_s"]
    rows = pd.DataFrame.from_records([s for s in data.spans if s["question"] == question.key], columns=columns)
    entry = span_question_report(rows, min_iou=DEFAULT_MIN_IOU, coders=coders, continua=span_continua(data.units))
    entry["question"] = _question_info(question, "item")
    entry["judge"] = None
    return entry
