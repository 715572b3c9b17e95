"""A long table of ratings as integer codes, made once per report: what `report` computes on.

Every statistic needs the same few columns as numbers: which item, which annotator, which value,
which cluster and condition. Turning strings into such codes is the costly part of a report of a
million ratings, so it is done once, here (`from_frame` for any long table, or `csv_input` straight
from a file's distinct cells), and every question's statistics get plain integer and float arrays.

Codes keep the orders the statistics rely on: items, annotators and clusters are numbered in
order of first appearance (as `pd.factorize` numbers strings), so bootstraps draw the same units;
conditions in sorted order of their names, so the means per condition come out in the same order.
A missing cell (None, NaN or an empty string) is code -1; a missing number is NaN.

Pure: no Django, no database.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from .tables import ANNOTATOR, CLUSTER, CONDITION, ITEM, JUDGE, QUESTION, TRUTH, VALUE


@dataclass
class CodedRatings:
    """One row per rating. `labels[column][code]` is what a code stands for."""

    item: np.ndarray
    question: np.ndarray
    value: np.ndarray  # code of the value as given (text, or a number of a numeric question)
    number: np.ndarray  # the value as a float, NaN when it is not a number
    labels: dict[str, np.ndarray]
    annotator: np.ndarray | None = None
    cluster: np.ndarray | None = None
    condition: np.ndarray | None = None
    truth: np.ndarray | None = None  # code of the truth as given, -1 when blank
    judge: np.ndarray | None = None
    # Whether the table's value and truth columns held numbers (accuracy then compares numbers, not text).
    numeric_values: bool = False
    numeric_truths: bool = False

    def __len__(self) -> int:
        return len(self.item)

    def take(self, rows: np.ndarray) -> CodedRatings:
        """The ratings at `rows` (a mask or positions); the labels are shared."""
        if rows.dtype == bool and rows.all():
            return self
        arrays = {
            f.name: getattr(self, f.name)[rows]
            for f in fields(self)
            if isinstance(getattr(self, f.name), np.ndarray)
        }
        return replace(self, **arrays)

    def texts(self, column: str) -> np.ndarray:
        """The column's cells as objects (None where blank)."""
        codes = getattr(self, _FIELD.get(column, column))
        labels = np.append(self.labels[column].astype(object), None)
        return labels[codes]

    def to_frame(self) -> pd.DataFrame:
        """The long table (`read_long_csv`'s shape): values and truths as typed, blanks None, judge as floats."""
        table = pd.DataFrame({ITEM: self.texts(ITEM), ANNOTATOR: self.texts(ANNOTATOR), QUESTION: self.texts(QUESTION)})
        table[VALUE] = pd.Series(self.texts(VALUE), dtype=object)
        for column in (CLUSTER, CONDITION, TRUTH):
            if getattr(self, column) is not None:
                table[column] = pd.Series(self.texts(column), dtype=object)
        if self.judge is not None:
            table[JUDGE] = self.judge
        return table[[c for c in (ITEM, ANNOTATOR, QUESTION, VALUE, CLUSTER, CONDITION, TRUTH, JUDGE) if c in table]]


_FIELD = {VALUE: "value"}


def encode(values: Any, *, sort: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Codes and distinct labels of a column; None, NaN and "" are -1. Sorted labels when `sort` (and they sort)."""
    series = values if isinstance(values, pd.Series) else pd.Series(values, dtype=object)
    codes, uniques = pd.factorize(series, sort=False)
    labels = np.asarray(uniques, dtype=object)
    blank = np.fromiter((isinstance(label, str) and label == "" for label in labels), dtype=bool, count=len(labels))
    if sort and len(labels):
        try:
            order = np.array(sorted(range(len(labels)), key=lambda i: labels[i]), dtype=np.intp)
        except TypeError:
            order = np.arange(len(labels))
        rank = np.empty(len(labels), dtype=np.intp)
        rank[order] = np.arange(len(labels))
        labels, blank = labels[order], blank[order]
        codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
    lookup = np.append(np.where(blank, -1, np.arange(len(labels))), -1)
    return lookup[codes].astype(np.intp), labels


def numbers_of(labels: np.ndarray) -> np.ndarray:
    """Each label as a float where `pd.to_numeric` reads it as a number, else NaN."""
    if not len(labels):
        return np.zeros(0)
    return pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce").to_numpy(dtype=float)


def from_frame(table: pd.DataFrame) -> CodedRatings:
    """Code a long table (columns item, question, value; optionally annotator, cluster, truth, condition, judge)."""
    labels: dict[str, np.ndarray] = {}
    coded: dict[str, Any] = {}
    question = table[QUESTION] if QUESTION in table.columns else pd.Series([""] * len(table), dtype=object)
    for column, source, sort in (
        (ITEM, table[ITEM], False), (QUESTION, question, False), (VALUE, table[VALUE], False),
        (ANNOTATOR, table.get(ANNOTATOR), False), (CLUSTER, table.get(CLUSTER), False),
        (CONDITION, table.get(CONDITION), True), (TRUTH, table.get(TRUTH), False),
    ):
        if source is None:
            continue
        if column in (ANNOTATOR, QUESTION):  # an empty name is still a name; only None and NaN are missing
            codes, uniques = pd.factorize(source, sort=False)
            codes, labels[column] = codes.astype(np.intp), np.asarray(uniques, dtype=object)
        else:
            codes, labels[column] = encode(source, sort=sort)
        coded[_FIELD.get(column, column)] = codes
    value_numbers = numbers_of(labels[VALUE])
    numbers = np.append(value_numbers, np.nan)[coded["value"]]
    judge = None
    if JUDGE in table.columns:
        judge = pd.to_numeric(table[JUDGE].replace("", np.nan), errors="coerce").to_numpy(dtype=float)
    return CodedRatings(
        item=coded[ITEM], question=coded[QUESTION], value=coded["value"], number=numbers, labels=labels,
        annotator=coded.get(ANNOTATOR), cluster=coded.get(CLUSTER), condition=coded.get(CONDITION),
        truth=coded.get(TRUTH), judge=judge,
        numeric_values=pd.api.types.is_numeric_dtype(table[VALUE].dtype),
        numeric_truths=TRUTH in table.columns and pd.api.types.is_numeric_dtype(table[TRUTH].dtype),
    )
