"""One question's answer rows as the integer codes the statistics take, built straight from the rows (issue 28).

``build._read`` reads the answers as plain tuples (``values_list``: the annotation, the question's key, the
target's columns, the text and the number). Here each question's rows become a
``benchmark.stats.coded.CodedRatings`` in one pass, with no table of strings in between: rated units,
annotators, values, scenarios (the cluster) and barriers (the condition and the truth) are numbered exactly as
``benchmark.stats.coded.from_frame`` numbers the same long table, so every number of the report is unchanged:

- units, annotators, values, scenarios and truths by first appearance among the kept rows;
- conditions in the sorted order of their keys; a missing barrier is code -1;
- the values of a numeric question are the answers' numbers; of any other question, their texts (their
  ``number`` is the text read as a number where it is one, as ``coded.numbers_of`` reads it).

Blank answers (no number for a numeric question, an empty text for the others) are left out and counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmark.instruments.targets import Target
from benchmark.models import Question
from benchmark.stats.coded import CodedRatings, numbers_of
from benchmark.stats.tables import ANNOTATOR, CLUSTER, CONDITION, ITEM, QUESTION, TRUTH, VALUE

from .units import unit_name, unit_target

if TYPE_CHECKING:
    from .build import StudyData, Unit

# An answer row as ``build._read`` keeps it: annotation pk, the target's columns (``targets.COLUMNS``), text, number.
AnswerRow = tuple[int, tuple[Any, ...], str, float | None]


@dataclass
class CodedQuestion:
    """One question's kept rows as codes, with what the judge's comparison needs per row."""

    ratings: CodedRatings
    blank: int  # answers left out as blank
    units: list[Unit]  # each kept row's item (its episode, scenario, barrier, task item)
    targets: list[Target]  # each kept row's unit target (``units.unit_target``)


def coded_rows(question: Question, answers: Iterable[AnswerRow], data: StudyData, numeric: bool) -> CodedQuestion:
    """The kept rows of ``question`` as codes (blank answers dropped and counted)."""
    numberings: list[dict[Any, int]] = [{} for _ in range(6)]  # label -> code, in order of first appearance
    items, annotators, values, clusters, conditions, truths = numberings
    columns: dict[str, list[int]] = {name: [] for name in (ITEM, ANNOTATOR, VALUE, CLUSTER, CONDITION, TRUTH)}
    item, annotator, value, cluster, condition, truth = columns.values()
    units: list[Unit] = []
    targets: list[Target] = []
    units_of: dict[tuple[Any, ...], Target] = {}  # target columns -> the unit target (most answers share a few)
    blank = 0
    for annotation_id, target_columns, text, number in answers:
        answer: Any = number if numeric else text
        if answer is None or answer == "":
            blank += 1
            continue
        target = units_of.get(target_columns)
        if target is None:
            target = units_of[target_columns] = unit_target(question, Target.from_columns(*target_columns))
        item_id, name = data.annotations[annotation_id]
        unit = data.units[item_id]
        item.append(items.setdefault(unit_name(unit.name, target), len(items)))
        annotator.append(annotators.setdefault(name, len(annotators)))
        value.append(values.setdefault(answer, len(values)) if answer == answer else -1)  # NaN: missing, as in pandas
        cluster.append(clusters.setdefault(unit.scenario, len(clusters)) if unit.scenario != "" else -1)
        barrier = unit.barrier
        known = barrier is not None and barrier != ""
        condition.append(conditions.setdefault(barrier, len(conditions)) if known else -1)
        truth.append(truths.setdefault(barrier, len(truths)) if known else -1)
        units.append(unit)
        targets.append(target)
    labels = {
        ITEM: _labels(items), ANNOTATOR: _labels(annotators), QUESTION: _labels({question.key: 0} if item else {}),
        VALUE: _labels(values), CLUSTER: _labels(clusters), TRUTH: _labels(truths),
    }
    labels[CONDITION], condition_codes = _sorted(conditions, np.asarray(condition, dtype=np.intp))
    value_codes = np.asarray(value, dtype=np.intp)
    ratings = CodedRatings(
        item=np.asarray(item, dtype=np.intp), question=np.zeros(len(item), dtype=np.intp), value=value_codes,
        number=np.append(numbers_of(labels[VALUE]), np.nan)[value_codes], labels=labels,
        annotator=np.asarray(annotator, dtype=np.intp), cluster=np.asarray(cluster, dtype=np.intp),
        condition=condition_codes, truth=np.asarray(truth, dtype=np.intp), numeric_values=numeric,
        numeric_truths=False,
    )
    return CodedQuestion(ratings, blank, units, targets)


def _labels(numbering: dict[Any, int]) -> np.ndarray:
    """The labels in code order (a dict keeps the order codes were given in)."""
    labels = np.empty(len(numbering), dtype=object)
    labels[:] = list(numbering)
    return labels


def _sorted(numbering: dict[Any, int], codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels sorted (as ``coded.encode(sort=True)``: by first appearance when they do not sort) and codes to match."""
    labels = _labels(numbering)
    try:
        order = np.array(sorted(range(len(labels)), key=lambda index: labels[index]), dtype=np.intp)
    except TypeError:
        return labels, codes
    rank = np.empty(len(labels), dtype=np.intp)
    rank[order] = np.arange(len(labels))
    return labels[order], np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
