"""Each annotator's agreement with the others and with gold, and their MACE competence, question by question.

What counts is what the agreement report counts: each assignment's latest submitted version on a regular
item (``build.latest_submitted``), so training, qualification, gold and attention items never do, nor do
drafts. A rated unit is the report's (``units``): an item, or an item's seat, goal or turn. Gold is the
study's adjudicated answers: the answers of the final curation of each regular item (``Curation``, a
response of the study's ``gold`` respondent), which never count as an annotator's.

Questions whose answer is one choice (categorical, yes/no, multiple choice, pairwise, per-item choice) are
nominal; Likert and slider questions are numeric (their number; "not applicable" left out); other kinds
(spans, free text, multi-label, rankings) get no per-annotator figure. The figures themselves, with their
formulas and references, are ``benchmark.stats.annotator_agreement``'s; MACE's is ``benchmark.stats.mace``.

``study_annotator_agreement`` reads and computes (two or three queries, then one computation per question); the
report's section (``report_section``, pseudonyms) and the dashboard's rows (``annotator_quality_rows``, names)
are two views of it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.respondents import pseudonym
from benchmark.instruments.targets import COLUMNS, Target
from benchmark.models import Answer, Question
from benchmark.stats.annotator_agreement import (
    METHODS,
    coded_annotator_agreement,
    first_answers,
    gold_answers,
    nominal_labels,
)

from ..models import Annotation, Curation, Study, StudyItem
from .units import unit_target


@dataclass
class QuestionAgreement:
    """One question's per-annotator figures, by annotator id."""

    key: str
    prompt: str
    numeric: bool
    annotators: dict[int, dict[str, Any]]
    methods: dict[str, str]
    notes: list[str] = field(default_factory=list)


@dataclass
class StudyAnnotatorAgreement:
    questions: list[QuestionAgreement]
    gold_items: int  # regular items whose final curation answers one of these questions


def _kind_of(question: Question) -> str | None:
    kind = get_kind(question.kind)
    if kind.multi_valued:
        return None
    if kind.numeric:
        return "numeric"
    return "nominal" if kind.single_choice else None


def study_annotator_agreement(
    study: Study, latest: QuerySet[Annotation], questions: Iterable[Question] | None = None, *, seed: int = 0,
    rows: Iterable[tuple[Any, ...]] | None = None,
) -> StudyAnnotatorAgreement:
    """Every rated question's per-annotator figures in ``study``, from ``latest``, each assignment's latest
    submitted annotation (``build.latest_submitted``; see the module docstring). ``questions``: the study's
    instrument's, in order, when the caller has them. ``rows``: the answers of ``latest`` on regular items when
    the caller has read them (the report: ``build.StudyData.answer_rows``), in the order given, each as annotator
    id, item pk, question key, text, number and target columns; one query then (for gold), else two or three."""
    if questions is None:
        questions = study.instrument.questions.order_by("position")
    questions = [question for question in questions if _kind_of(question)]
    keys = [question.key for question in questions]
    if rows is None:
        regular = latest.filter(assignment__item__kind=StudyItem.Kind.REGULAR)
        rows = Answer.objects.filter(response__in=regular.values("response_id"), question__key__in=keys).values_list(
            "response__annotation__assignment__annotator_id", "response__annotation__assignment__item_id",
            "question__key", "value", "number", *COLUMNS,
        ).order_by("pk")
    gold_rows = Answer.objects.filter(
        response__curation__item__study=study, response__curation__item__kind=StudyItem.Kind.REGULAR,
        response__curation__status=Curation.Status.FINAL, question__key__in=keys,
    ).values_list(
        "response__curation__item_id", "question__key", "value", "number", *COLUMNS,
    ).order_by("pk")
    gold_rows = list(gold_rows)
    answers: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    gold: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in rows:
        answers[row[2]].append(row)
    for row in gold_rows:
        gold[row[1]].append(row)
    numeric = {question.key for question in questions if _kind_of(question) == "numeric"}
    adjudicated = {row[0] for row in gold_rows if _given(row[2], row[3], row[1] in numeric)}
    return StudyAnnotatorAgreement(
        [_question(question, answers[question.key], gold[question.key], seed) for question in questions],
        len(adjudicated),
    )


def _given(value: str, number: float | None, numeric: bool) -> bool:
    """Whether an answer has a value to compare: a number for a numeric question (not "not applicable"),
    else a text that is not blank."""
    return number is not None and number == number if numeric else value is not None and value != ""


class _Units:
    """A question's rated units as integers (the item's id and the code of its ``units.unit_target``), the target
    worked out once per distinct target columns rather than a unit named per answer: the same units, as the
    statistics only tell them apart."""

    SPAN = 1 << 20  # unit target codes per item: more than any item has seats, goals or turns

    def __init__(self, question: Question) -> None:
        self.question = question
        self.of_columns: dict[tuple[Any, ...], int] = {}  # target columns -> unit target code
        self.codes: dict[Target, int] = {}

    def keys(self, item_ids: Sequence[int], targets: list[tuple[Any, ...]]) -> np.ndarray:
        """One integer per row naming its unit."""
        for columns in set(targets) - self.of_columns.keys():
            unit = unit_target(self.question, Target.from_columns(*columns))
            self.of_columns[columns] = self.codes.setdefault(unit, len(self.codes))
        codes = np.array([self.of_columns[columns] for columns in targets], dtype=np.int64)
        return np.asarray(item_ids, dtype=np.int64).reshape(-1) * self.SPAN + codes


def _question(question: Question, rows: list[tuple[Any, ...]], gold_rows: list[tuple[Any, ...]], seed: int
              ) -> QuestionAgreement:
    """One question's figures from its answer rows (annotator, item, key, value, number, target columns) and its
    gold rows (item, key, value, number, target columns), each in the order answered: coded as
    ``annotator_agreement`` codes the long table of (unit name, annotator, value) these rows stand for."""
    numeric = _kind_of(question) == "numeric"
    choices = [str(choice["value"]) for choice in get_kind(question.kind).choices(question) if "value" in choice]
    units = _Units(question)
    width = 5 + len(COLUMNS)
    columns = list(zip(*rows, strict=True)) or [()] * width
    numbers = np.asarray(columns[4], dtype=float).reshape(-1)  # None (not applicable) is NaN
    texts = np.asarray(columns[3], dtype=object).reshape(-1)
    given = ~np.isnan(numbers) if numeric else (texts != "") & pd.notna(texts)  # as ``_given`` tells
    unit = units.keys(columns[1], list(zip(*columns[5:], strict=True)))[given]
    annotator_ids = np.asarray(columns[0], dtype=np.int64).reshape(-1)[given]
    names = sorted(set(annotator_ids.tolist()), key=str)
    by_id = np.array(sorted(names), dtype=np.int64)
    position = np.array([names.index(annotator_id) for annotator_id in by_id.tolist()], dtype=np.intp)
    annotator = position[np.searchsorted(by_id, annotator_ids)]
    first = first_answers(pd.factorize(unit)[0], annotator)
    item, item_units = pd.factorize(unit[first])
    annotator = annotator[first]
    labels: list[Any] = []
    if numeric:
        value = numbers[given][first]
    else:
        codes, used = pd.factorize(texts[given][first])
        labels = nominal_labels(choices or None, list(used))
        value = np.array([labels.index(label) for label in used], dtype=np.intp)[codes]
    gold_by_unit: dict[int, Any] = {}  # the first gold answer given to each unit
    gold_columns = list(zip(*gold_rows, strict=True)) or [()] * (width - 1)
    gold_units = units.keys(gold_columns[0], list(zip(*gold_columns[4:], strict=True)))
    for key, text, number in zip(gold_units.tolist(), gold_columns[2], gold_columns[3], strict=True):
        if key not in gold_by_unit and _given(text, number, numeric):
            gold_by_unit[key] = float(number) if numeric else text
    gold, gold_labels = gold_answers([gold_by_unit.get(key) for key in item_units.tolist()], numeric, labels)
    figures = coded_annotator_agreement(
        item, annotator, value, names=names, numeric=numeric, labels=labels, gold=gold, gold_labels=gold_labels,
        seed=seed,
    )
    return QuestionAgreement(question.key, question.prompt, numeric, figures.annotators, figures.methods,
                             figures.notes)


def report_section(
    study: Study, latest: QuerySet[Annotation], questions: Iterable[Question], *, seed: int = 0,
    rows: Iterable[tuple[Any, ...]] | None = None,
) -> dict[str, Any]:
    """The report's ``annotators`` section: per question, each annotator's figures by pseudonym; the notes.
    ``rows``: the answers the report has read (see ``study_annotator_agreement``)."""
    agreement = study_annotator_agreement(study, latest, questions, seed=seed, rows=rows)
    return {
        "gold_items": agreement.gold_items,
        "questions": {
            question.key: {
                "type": "numeric" if question.numeric else "nominal",
                "annotators": {pseudonym(annotator): figures for annotator, figures in question.annotators.items()},
                "methods": question.methods,
                "notes": question.notes,
            }
            for question in agreement.questions
        },
    }


def _pooled(figures: Iterable[dict[str, Any]], side: str) -> tuple[float | None, int]:
    """The share of equal answers over several questions (each question's share weighted by its pairs or items)."""
    weight = "pairs" if side == "others" else "items"
    pairs = [(entry[side]["agreement"], entry[side][weight]) for entry in figures if entry[side][weight]]
    total = sum(count for _, count in pairs)
    return (sum(share * count for share, count in pairs) / total if total else None), total


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def annotator_quality_rows(study: Study, latest: QuerySet[Annotation], *, seed: int = 0) -> dict[str, Any]:
    """The dashboard's figures: one dict per annotator (``rows``: name, export id, pooled agreement with the
    others and with gold over every question, mean kappas and MACE competence over nominal questions, and
    ``questions``, the figures question by question), the questions, the number of gold items."""
    agreement = study_annotator_agreement(study, latest, seed=seed)
    ids = sorted({annotator for question in agreement.questions for annotator in question.annotators})
    users = get_user_model().objects.select_related("external_annotator").in_bulk(ids)
    rows = []
    for annotator in ids:
        user = users[annotator]
        external = getattr(user, "external_annotator", None)
        mine = [(question, question.annotators[annotator]) for question in agreement.questions
                if annotator in question.annotators]
        nominal = [figures for question, figures in mine if not question.numeric]
        others, pairs = _pooled((figures for _, figures in mine), "others")
        with_gold, graded = _pooled((figures for _, figures in mine), "gold")
        rows.append({
            "annotator_id": annotator,
            "name": f"external {external.number}" if external else user.get_username(),
            "pseudonym": pseudonym(annotator),
            "answers": sum(figures["answers"] for _, figures in mine),
            "others_agreement": others,
            "others_pairs": pairs,
            "others_kappa": _mean(figures["others"].get("kappa") for figures in nominal),
            "gold_agreement": with_gold,
            "gold_answers": graded,
            "gold_kappa": _mean(figures["gold"].get("kappa") for figures in nominal),
            "competence": _mean(figures.get("competence") for figures in nominal),
            "questions": [{"key": question.key, "numeric": question.numeric, **figures} for question, figures in mine],
        })
    return {
        "rows": sorted(rows, key=lambda row: row["name"]),
        "questions": agreement.questions,
        "gold_items": agreement.gold_items,
        "methods": METHODS,
    }
