"""Read a long-format CSV of ratings into the table `report.agreement_report` takes, checking it first.

One row per rating: the columns `item`, `annotator`, `question` and `value` are required;
`cluster` (e.g. the scenario), `truth` (the known answer), `condition` (e.g. the barrier type)
and `judge` (an automated judge's score for that item and question) are optional, and any other
column is ignored. The header is row 1; names are matched without regard to case or surrounding
spaces. Cells are stripped of surrounding spaces; a blank `value` means no rating and the row is
skipped, a blank optional cell means "not known".

A question is numeric when it is declared so (`numeric`, or a `scales` entry) or, undeclared,
when every value is a number; categorical when declared so (`categorical`, or a `categories`
entry) or when no value is a number. An undeclared question with both numbers and text is an
error, because a stray "n/a" or "3,5" would otherwise turn a rating scale into categories
silently. Anything wrong raises `CsvProblem`, which names the file, the row and the column.

Every number must be finite. A value, truth or judge score spelled ``inf``, ``-inf``,
``Infinity`` or ``nan`` (as Python's ``float`` and pandas would read it), or written with too
large an exponent (``1e400`` overflows to infinity), is refused at its row and column: one
infinite rating makes every mean, variance and correlation it touches infinite or undefined. Such
spellings count as numbers when a question's kind is inferred, so a question of ``nan`` cells is
refused rather than read as one category ``nan``; declare it `categorical` if those are its answers.

Pure: no Django, no database; `benchmark/stats/` statistics only ever see a checked table.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np
import pandas as pd

from .coded import CodedRatings
from .csv_columns import REQUIRED_COLUMNS, Column, CsvProblem, read_columns
from .tables import ANNOTATOR, CLUSTER, CONDITION, ITEM, JUDGE, QUESTION, TRUTH, VALUE

__all__ = ["REQUIRED_COLUMNS", "CsvProblem", "OptionProblem", "ReportOptions", "read_coded_csv", "read_long_csv"]
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# What float() also reads as a number, none of it finite.
_NOT_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


class OptionProblem(ValueError):
    """An option that is malformed (`parse_*`) or contradicts another option or the data."""


@dataclass(frozen=True)
class ReportOptions:
    """What the reader settled about each question, ready for `agreement_report(**as_arguments())`.

    `categorical` and `numeric` list every question of the file by kind (declared or inferred);
    `blank_values` counts rows skipped because their value was blank; `blank_questions` lists the
    questions whose every value was blank, so the report can still name them. Such a question
    has no value to infer its kind from: it is categorical when declared so, else numeric.
    """

    categorical: tuple[str, ...] = ()
    numeric: tuple[str, ...] = ()
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    blank_values: int = 0
    blank_questions: tuple[str, ...] = ()

    def as_arguments(self) -> dict[str, Any]:
        """Keyword arguments for `benchmark.stats.report.agreement_report`."""
        return {
            "categorical": self.categorical,
            "categories": self.categories,
            "scales": self.scales,
            "blank_questions": self.blank_questions,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record of the settings, for a report to say how it was computed."""
        return {
            "categorical": list(self.categorical),
            "numeric": list(self.numeric),
            "categories": {question: list(values) for question, values in self.categories.items()},
            "scales": {question: list(scale) for question, scale in self.scales.items()},
            "blank_values": self.blank_values,
            "blank_questions": list(self.blank_questions),
        }


# Option strings, as the command line gives them.


def parse_number(text: str) -> float | None:
    """The finite number a text holds (decimal point, optional exponent), or None.

    "nan", "inf", "1,5" are not numbers, and neither is "1e400", which is too large to be finite.
    """
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


def _too_large(text: str) -> bool:
    """A decimal number whose size overflows a float to infinity, e.g. 1e400."""
    text = text.strip()
    return bool(_NUMBER.fullmatch(text)) and not math.isfinite(float(text))


def parse_question_list(text: str) -> list[str]:
    """``q1,q2`` -> ["q1", "q2"]."""
    names = [name.strip() for name in text.split(",")]
    if not text.strip() or not all(names):
        raise OptionProblem(f"expected QUESTION[,QUESTION...], e.g. barrier,goal; got {text!r}")
    return names


def parse_categories(text: str) -> tuple[str, tuple[str, ...]]:
    """``q=a,b,c`` -> ("q", ("a", "b", "c")): the categories annotators could choose, in order."""
    question, equals, rest = text.partition("=")
    question = question.strip()
    values = tuple(value.strip() for value in rest.split(","))
    if not equals or not question or not rest.strip() or not all(values):
        raise OptionProblem(
            f"expected QUESTION=CATEGORY,CATEGORY[,...], e.g. barrier=none,semantic,emotional; got {text!r}"
        )
    if len(values) < 2:
        raise OptionProblem(f"{text!r} gives one category; a categorical question needs at least two")
    repeated = sorted({value for value in values if values.count(value) > 1})
    if repeated:
        raise OptionProblem(f"{text!r} repeats the category {', '.join(repeated)}")
    return question, values


def parse_scale(text: str) -> tuple[str, tuple[float, float]]:
    """``q=1:5`` -> ("q", (1.0, 5.0)): the ends of a numeric rating scale."""
    question, equals, rest = text.rpartition("=")
    question = question.strip()
    low_text, colon, high_text = rest.partition(":")
    low, high = parse_number(low_text), parse_number(high_text)
    too_large = [end.strip() for end in (low_text, high_text) if _too_large(end)]
    if equals and colon and too_large:
        raise OptionProblem(f"{text!r}: {too_large[0]} is too large; the ends of a scale must be finite numbers")
    if not equals or not question or not colon or low is None or high is None:
        raise OptionProblem(f"expected QUESTION=LOW:HIGH, e.g. goal=0:10; got {text!r}")
    if not high > low:
        raise OptionProblem(f"{text!r}: the scale's high end must be above its low end")
    return question, (low, high)


def collect(pairs: Iterable[tuple[str, Any]], option: str) -> dict[str, Any]:
    """Pairs from a repeated option into a dict; a question given twice is an error."""
    out: dict[str, Any] = {}
    for question, value in pairs:
        if question in out:
            raise OptionProblem(f"{option} gives question {question!r} twice")
        out[question] = value
    return out


# The file.


def read_long_csv(
    source: str | os.PathLike[str] | TextIO,
    *,
    name: str | None = None,
    categorical: Collection[str] = (),
    numeric: Collection[str] = (),
    categories: Mapping[str, Sequence[str]] | None = None,
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> tuple[pd.DataFrame, ReportOptions]:
    """Read and check a long-format CSV of ratings; return the table and the settled options.

    `source` is a path, CSV text (a string with a line break) or an open text stream; `name` is
    the file name used in messages (default: the path's name). `categorical`/`numeric` declare
    question kinds, `categories` a categorical question's options in order, `scales` a numeric
    question's (low, high). Values come back as strings for categorical questions and floats
    for numeric ones; `truth` follows its question's kind, `judge` is a float, `cluster` and
    `condition` strings, blanks None (NaN for `judge`). Raises `CsvProblem` for the earliest bad
    row (or `OptionProblem` when options contradict each other or name a question the file lacks).
    """
    coded, options = read_coded_csv(
        source, name=name, categorical=categorical, numeric=numeric, categories=categories, scales=scales
    )
    return coded.to_frame(), options


def read_coded_csv(
    source: str | os.PathLike[str] | TextIO,
    *,
    name: str | None = None,
    categorical: Collection[str] = (),
    numeric: Collection[str] = (),
    categories: Mapping[str, Sequence[str]] | None = None,
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> tuple[CodedRatings, ReportOptions]:
    """`read_long_csv`, the table as integer codes (`coded.CodedRatings`), ready for `agreement_report`."""
    categories = {question: tuple(values) for question, values in (categories or {}).items()}
    scales = dict(scales or {})
    declared_categorical = set(categorical) | set(categories)
    declared_numeric = set(numeric) | set(scales)
    clash = sorted(declared_categorical & declared_numeric)
    if clash:
        raise OptionProblem(
            f"question {', '.join(repr(q) for q in clash)} is declared both categorical (--categorical or "
            "--categories) and numeric (--numeric or --scale)"
        )

    cells, rows, file = read_columns(source, name)
    layout = _Checks(file, rows)
    for column in (ITEM, ANNOTATOR, QUESTION):
        layout.first(
            cells[column].blank(), column, lambda _, column=column: f"the {column} is empty; every rating needs one"
        )
    _check_duplicates(cells, layout)
    rated = ~cells[VALUE].blank()
    if not rated.any():
        _raise_earliest(layout)
        raise CsvProblem("has no ratings: every row below the header is blank or has a blank value", file=file)
    questions = sorted(_present(cells[QUESTION]))
    cells, rows = {column: values.take(rated) for column, values in cells.items()}, rows[rated]
    content = _Checks(file, rows)
    numeric_questions = _numeric_questions(cells, content, declared_categorical, declared_numeric)
    coded = _typed(cells, content, numeric_questions, categories, scales, declared_numeric)
    _raise_earliest(layout, content)

    unknown = sorted((declared_categorical | declared_numeric) - set(questions))
    if unknown:
        raise OptionProblem(
            f"{file}: the options name question {', '.join(repr(q) for q in unknown)}, which the file does not have "
            f"(its questions: {', '.join(questions)})"
        )
    answered = _present(cells[QUESTION])
    blank = set(questions) - answered
    categorical_questions = (answered - numeric_questions) | (blank & declared_categorical)
    options = ReportOptions(
        categorical=tuple(sorted(categorical_questions)),
        numeric=tuple(sorted(numeric_questions | (blank - declared_categorical))),
        categories=categories,
        scales=scales,
        blank_values=int((~rated).sum()),
        blank_questions=tuple(sorted(blank)),
    )
    return coded, options


def _present(column: Column) -> set[str]:
    """The distinct cells of the rows."""
    return set(column.labels[np.bincount(column.codes, minlength=len(column.labels)) > 0])


class _Checks:
    """Collects the first offending row of each check; the earliest of them is the one reported."""

    def __init__(self, file: str, rows: np.ndarray) -> None:
        self.file = file
        self.rows = rows
        self.found: list[CsvProblem] = []

    def first(self, bad: np.ndarray, column: str, message: Callable[[int], str]) -> None:
        """`bad` marks offending rows; `message` gets the position of the first one."""
        positions = np.flatnonzero(bad)
        if len(positions):
            position = int(positions[0])
            self.at(position, column, message(position))

    def at(self, position: int, column: str, message: str) -> None:
        self.found.append(CsvProblem(message, file=self.file, row=int(self.rows[position]), column=column))


def _raise_earliest(*checks: _Checks) -> None:
    """Report the problem on the earliest row, so fixing a file goes from top to bottom."""
    found = [problem for check in checks for problem in check.found]
    if found:
        raise min(found, key=lambda problem: problem.row or 0)


def _check_duplicates(cells: dict[str, Column], check: _Checks) -> None:
    """The first row that repeats an earlier row's item, annotator and question (found on their codes)."""
    key = np.zeros(len(check.rows), dtype=np.int64)
    size = 1
    for column in (ITEM, ANNOTATOR, QUESTION):
        width = max(len(cells[column].labels), 1)
        if size * width >= 2**62:  # too many combinations for one number: compare the three codes
            keys = pd.DataFrame({column: cells[column].codes for column in (ITEM, ANNOTATOR, QUESTION)})
            repeated = keys.duplicated(keep="first").to_numpy()
            break
        key = key * width + cells[column].codes
        size *= width
    else:
        if size <= 8 * len(key) + 1024 and np.bincount(key, minlength=size).max(initial=0) < 2:
            return
        repeated = pd.Series(key).duplicated(keep="first").to_numpy()
    positions = np.flatnonzero(repeated)
    if not len(positions):
        return
    position = int(positions[0])
    same = np.ones(len(check.rows), dtype=bool)
    for column in (ITEM, ANNOTATOR, QUESTION):
        same &= cells[column].codes == cells[column].codes[position]
    earlier = int(np.flatnonzero(same)[0])
    item, annotator, question = (cells[column].text(position) for column in (ITEM, ANNOTATOR, QUESTION))
    check.at(
        position,
        VALUE,
        f"annotator {annotator!r} rated item {item!r} on question {question!r} already at row "
        f"{check.rows[earlier]}; give one rating per item, annotator and question",
    )


def _is_number(column: Column) -> np.ndarray:
    """Per distinct cell: whether it reads as a number (decimal, or spelled inf / nan, refused later as not finite)."""
    number, not_finite = _NUMBER.fullmatch, _NOT_FINITE.fullmatch
    labels = column.labels
    return np.fromiter(
        (number(label) is not None or not_finite(label) is not None for label in labels), dtype=bool, count=len(labels)
    )


def _to_float(column: Column, is_number: np.ndarray) -> np.ndarray:
    """Per distinct cell: its float where it is a number, else NaN."""
    return np.array([float(label) if ok else np.nan for label, ok in zip(column.labels, is_number, strict=True)])


def _not_finite_text(text: str) -> str:
    if _NUMBER.fullmatch(text):
        return f"{text!r} is not a finite number (it is too large, and reads as infinity)"
    return f"{text!r} is not a finite number"


def _numeric_questions(
    cells: dict[str, Column], check: _Checks, declared_categorical: set[str], declared_numeric: set[str]
) -> set[str]:
    """Questions to treat as numbers; an undeclared question mixing numbers and text is an error."""
    question, value = cells[QUESTION], cells[VALUE]
    number = _is_number(value)[value.codes]
    size = len(question.labels)
    with_numbers = set(question.labels[np.bincount(question.codes[number], minlength=size) > 0])
    with_text = set(question.labels[np.bincount(question.codes[~number], minlength=size) > 0])
    declared = declared_categorical | declared_numeric
    mixed = (with_numbers & with_text) - declared
    if mixed:

        def message(position: int) -> str:
            example = int(np.flatnonzero((question.codes == question.codes[position]) & number)[0])
            asked = question.text(position)
            return (
                f"{value.text(position)!r} is not a number, but question {asked!r} has numbers too "
                f"(row {check.rows[example]}: {value.text(example)!r}); correct the value, leave it blank for no "
                f"rating, or pass --categorical {asked} if its answers are categories"
            )

        check.first(question.marks(mixed) & ~number, VALUE, message)
    inferred = with_numbers - with_text - declared
    return inferred | declared_numeric


def _typed(
    cells: dict[str, Column],
    check: _Checks,
    numeric_questions: set[str],
    categories: dict[str, tuple[str, ...]],
    scales: dict[str, tuple[float, float]],
    declared_numeric: Collection[str],
) -> CodedRatings:
    """Values (and truths) as finite numbers for numeric questions; every cell checked against the options."""
    question, value = cells[QUESTION], cells[VALUE]
    is_numeric = question.marks(numeric_questions)
    value_is_number = _is_number(value)
    value_number = value_is_number[value.codes]
    check.first(
        is_numeric & ~value_number,
        VALUE,
        lambda p: f"{value.text(p)!r} is not a number, and question {question.text(p)!r} is numeric "
        "(declared with --numeric or --scale); leave the value blank for no rating",
    )
    numbers = np.where(is_numeric, _to_float(value, value_is_number)[value.codes], np.nan)
    check.first(
        is_numeric & value_number & ~np.isfinite(numbers),
        VALUE,
        lambda p: f"{_not_finite_text(value.text(p))}; a rating must be a finite number: correct the value, or "
        "leave it blank for no rating"
        + ("" if question.text(p) in declared_numeric else f", or pass --categorical {question.text(p)} if its "
           "answers are categories"),
    )
    for name, (low, high) in scales.items():
        with np.errstate(invalid="ignore"):
            outside = question.marks([name]) & ((numbers < low) | (numbers > high))
        check.first(
            outside,
            VALUE,
            lambda p, low=low, high=high: f"{value.text(p)} is outside the scale {low:g}:{high:g} given for "
            f"question {question.text(p)!r}",
        )
    for name, allowed in categories.items():
        check.first(
            question.marks([name]) & ~value.marks(allowed),
            VALUE,
            lambda p, allowed=allowed: f"{value.text(p)!r} is not one of the categories given for question "
            f"{question.text(p)!r} ({', '.join(allowed)})",
        )
    labels = {column: cells[column].labels for column in (ITEM, ANNOTATOR, QUESTION)}
    value_codes, labels[VALUE] = _typed_values(value, is_numeric, numbers)
    coded: dict[str, Any] = {}
    for column in (CLUSTER, CONDITION):
        if column in cells:
            coded[column], labels[column] = _without_blank(cells[column], sort=column == CONDITION)
    if TRUTH in cells:
        coded[TRUTH], labels[TRUTH] = _typed_truth(cells[TRUTH], is_numeric, question, check)
    if JUDGE in cells:
        coded[JUDGE] = _judge(cells[JUDGE], check)
    return CodedRatings(
        item=cells[ITEM].codes, question=question.codes, value=value_codes, number=numbers,
        labels=labels, annotator=cells[ANNOTATOR].codes, **coded,
    )


def _typed_values(value: Column, is_numeric: np.ndarray, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value codes and labels: a categorical question's rows code their text, a numeric question's rows
    their number (labels past the texts: each distinct number, a Python float)."""
    positions, uniques = pd.factorize(pd.Series(numbers[is_numeric]), sort=False)
    labels = np.concatenate([value.labels, np.array([float(number) for number in uniques], dtype=object)])
    codes = value.codes.copy()
    codes[is_numeric] = len(value.labels) + positions
    return codes, labels


def _without_blank(column: Column, *, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    """Codes with -1 for a blank cell, and labels (sorted when `sort`)."""
    blank = column.labels == ""
    keep = np.flatnonzero(~blank)
    order = sorted(keep, key=lambda index: column.labels[index]) if sort else list(keep)
    lookup = np.full(len(column.labels) + 1, -1, dtype=np.intp)
    lookup[np.asarray(order, dtype=np.intp)] = np.arange(len(order))
    return lookup[column.codes], column.labels[np.asarray(order, dtype=np.intp)]


def _typed_truth(
    truth: Column, is_numeric: np.ndarray, question: Column, check: _Checks
) -> tuple[np.ndarray, np.ndarray]:
    """Truth codes (-1 blank) and labels: text, or on numeric questions finite numbers (checked)."""
    given = ~truth.blank()
    is_number = _is_number(truth)
    number = is_number[truth.codes]
    check.first(
        is_numeric & given & ~number,
        TRUTH,
        lambda p: f"{truth.text(p)!r} is not a number, and question {question.text(p)!r} is numeric",
    )
    floats = _to_float(truth, is_number)
    numeric_truth = is_numeric & number
    check.first(
        numeric_truth & ~np.isfinite(floats[truth.codes]),
        TRUTH,
        lambda p: f"{_not_finite_text(truth.text(p))}; the truth of numeric question {question.text(p)!r} must be a "
        "finite number, or blank when it is not known",
    )
    labels = np.concatenate([truth.labels, np.array([float(x) for x in floats], dtype=object)])
    codes = np.where(numeric_truth, truth.codes + len(truth.labels), truth.codes)
    codes[~given] = -1
    return codes.astype(np.intp), labels


def _judge(judge: Column, check: _Checks) -> np.ndarray:
    is_number = _is_number(judge)
    number = is_number[judge.codes]
    check.first(
        ~judge.blank() & ~number,
        JUDGE,
        lambda p: f"{judge.text(p)!r} is not a number; the judge column holds scores",
    )
    floats = _to_float(judge, is_number)[judge.codes]
    check.first(
        number & ~np.isfinite(floats),
        JUDGE,
        lambda p: f"{_not_finite_text(judge.text(p))}; the judge column holds scores, which must be finite "
        "numbers (leave the cell blank where the judge gave none)",
    )
    return floats
