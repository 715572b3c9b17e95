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

import csv
import io
import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from .tables import ANNOTATOR, CLUSTER, CONDITION, ITEM, JUDGE, QUESTION, TRUTH, VALUE

REQUIRED_COLUMNS = (ITEM, ANNOTATOR, QUESTION, VALUE)
OPTIONAL_COLUMNS = (CLUSTER, TRUTH, CONDITION, JUDGE)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# What float() also reads as a number, none of it finite.
_NOT_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


class CsvProblem(ValueError):
    """Bad input, told as ``FILE, row N, column C: what is wrong`` (the header is row 1)."""

    def __init__(self, message: str, *, file: str, row: int | None = None, column: str | None = None) -> None:
        self.message = message
        self.file = file
        self.row = row
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.file]
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {self.message}"


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


def _read_text(source: str | os.PathLike[str] | TextIO, name: str | None) -> tuple[str, str]:
    if hasattr(source, "read"):
        return source.read(), name or getattr(source, "name", None) or "<input>"  # type: ignore[union-attr]
    if isinstance(source, str) and "\n" in source:
        return source, name or "<text>"
    path = Path(source)  # type: ignore[arg-type]
    name = name or path.name
    try:
        return path.read_text(encoding="utf-8-sig"), name
    except FileNotFoundError as error:
        raise CsvProblem("no such file", file=name) from error
    except UnicodeDecodeError as error:
        raise CsvProblem(f"is not UTF-8 text (byte {error.start} cannot be decoded)", file=name) from error
    except OSError as error:
        raise CsvProblem(f"cannot be read: {error.strerror}", file=name) from error


def _header(reader: Iterable[list[str]], file: str) -> list[str]:
    cells = next(iter(reader), None)
    usage = (
        f"the header must name the columns {', '.join(REQUIRED_COLUMNS)} "
        f"(and may add {', '.join(OPTIONAL_COLUMNS)})"
    )
    if not cells or not any(cell.strip() for cell in cells):
        raise CsvProblem(f"the file is empty; {usage}", file=file, row=1)
    header = [cell.strip().lower() for cell in cells]
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        hint = ""
        if len(header) == 1 and any(sep in cells[0] for sep in ";\t|"):
            hint = "; the file seems to use another separator, but columns must be separated by commas"
        raise CsvProblem(f"the header lacks {', '.join(missing)}; {usage}{hint}", file=file, row=1, column=missing[0])
    repeated = sorted({column for column in header if column and header.count(column) > 1})
    if repeated:
        raise CsvProblem(f"the header names {', '.join(repeated)} more than once", file=file, row=1, column=repeated[0])
    return header


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

    text, file = _read_text(source, name)
    cells, rows = _cells(text, file)
    layout = _Checks(file, rows)
    for column in (ITEM, ANNOTATOR, QUESTION):
        layout.first(
            cells[column] == "", column, lambda _, column=column: f"the {column} is empty; every rating needs one"
        )
    _check_duplicates(cells, layout)
    rated = cells[VALUE] != ""
    if not rated.any():
        _raise_earliest(layout)
        raise CsvProblem("has no ratings: every row below the header is blank or has a blank value", file=file)
    questions = sorted(set(cells[QUESTION]))
    cells, rows = {column: values[rated] for column, values in cells.items()}, rows[rated]
    content = _Checks(file, rows)
    numeric_questions = _numeric_questions(cells, content, declared_categorical, declared_numeric)
    table = _typed_table(cells, content, numeric_questions, categories, scales, declared_numeric)
    _raise_earliest(layout, content)

    unknown = sorted((declared_categorical | declared_numeric) - set(questions))
    if unknown:
        raise OptionProblem(
            f"{file}: the options name question {', '.join(repr(q) for q in unknown)}, which the file does not have "
            f"(its questions: {', '.join(questions)})"
        )
    blank = set(questions) - set(cells[QUESTION])
    categorical_questions = (set(cells[QUESTION]) - numeric_questions) | (blank & declared_categorical)
    options = ReportOptions(
        categorical=tuple(sorted(categorical_questions)),
        numeric=tuple(sorted(numeric_questions | (blank - declared_categorical))),
        categories=categories,
        scales=scales,
        blank_values=int((~rated).sum()),
        blank_questions=tuple(sorted(blank)),
    )
    return table, options


def _cells(text: str, file: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The needed columns as arrays of stripped strings, and each row's number in the file (header = 1).

    Plain Python and numpy on purpose: with pandas' default Python string storage, column-wise
    string methods are slower than one pass over the rows.
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    header = _header(reader, file)
    width = len(header)
    kept: list[list[str]] = []
    numbers: list[int] = []
    try:
        for number, row in enumerate(reader, start=2):
            if len(row) == width:
                if "".join(row).strip():  # a row of empty cells is skipped
                    kept.append(row)
                    numbers.append(number)
            elif "".join(row).strip():
                raise CsvProblem(f"has {len(row)} cells; the header has {width}", file=file, row=number)
    except csv.Error as error:
        raise CsvProblem(f"is not valid CSV: {error}", file=file, row=reader.line_num) from error
    cells = {}
    for column in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS):
        if column in header:
            index = header.index(column)
            cells[column] = np.empty(len(kept), dtype=object)
            cells[column][:] = [row[index].strip() for row in kept]
    return cells, np.asarray(numbers, dtype=np.intp)


def _among(values: np.ndarray, allowed: Collection[str]) -> np.ndarray:
    """Elementwise membership by hashing (np.isin sorts object arrays, which is slow)."""
    return pd.Series(values, dtype=object).isin(list(allowed)).to_numpy()


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


def _check_duplicates(cells: dict[str, np.ndarray], check: _Checks) -> None:
    first_at: dict[tuple[str, str, str], int] = {}
    for position, key in enumerate(zip(cells[ITEM], cells[ANNOTATOR], cells[QUESTION], strict=True)):
        earlier = first_at.setdefault(key, position)
        if earlier != position:
            item, annotator, question = key
            check.at(
                position,
                VALUE,
                f"annotator {annotator!r} rated item {item!r} on question {question!r} already at row "
                f"{check.rows[earlier]}; give one rating per item, annotator and question",
            )
            return


def _is_number(values: np.ndarray) -> np.ndarray:
    """Cells that read as a number: decimal, or spelled inf / nan (refused later as not finite)."""
    number, not_finite = _NUMBER.fullmatch, _NOT_FINITE.fullmatch
    return np.array([number(value) is not None or not_finite(value) is not None for value in values], dtype=bool)


def _to_float(values: np.ndarray, is_number: np.ndarray) -> np.ndarray:
    out = np.full(len(values), np.nan)
    out[is_number] = [float(value) for value in values[is_number]]
    return out


def _not_finite_text(text: str) -> str:
    if _NUMBER.fullmatch(text):
        return f"{text!r} is not a finite number (it is too large, and reads as infinity)"
    return f"{text!r} is not a finite number"


def _numeric_questions(
    cells: dict[str, np.ndarray], check: _Checks, declared_categorical: set[str], declared_numeric: set[str]
) -> set[str]:
    """Questions to treat as numbers; an undeclared question mixing numbers and text is an error."""
    question, value = cells[QUESTION], cells[VALUE]
    number = _is_number(value)
    with_numbers, with_text = set(question[number]), set(question[~number])
    declared = declared_categorical | declared_numeric
    mixed = (with_numbers & with_text) - declared
    if mixed:
        in_mixed = _among(question, mixed)

        def message(position: int) -> str:
            example = int(np.flatnonzero((question == question[position]) & number)[0])
            return (
                f"{value[position]!r} is not a number, but question {question[position]!r} has numbers too "
                f"(row {check.rows[example]}: {value[example]!r}); correct the value, leave it blank for no "
                f"rating, or pass --categorical {question[position]} if its answers are categories"
            )

        check.first(in_mixed & ~number, VALUE, message)
    inferred = with_numbers - with_text - declared
    return inferred | declared_numeric


def _typed_table(
    cells: dict[str, np.ndarray],
    check: _Checks,
    numeric_questions: set[str],
    categories: dict[str, tuple[str, ...]],
    scales: dict[str, tuple[float, float]],
    declared_numeric: Collection[str],
) -> pd.DataFrame:
    """Values (and truths) as finite numbers for numeric questions; every cell checked against the options."""
    question, value = cells[QUESTION], cells[VALUE]
    is_numeric = _among(question, numeric_questions)
    value_number = _is_number(value)
    check.first(
        is_numeric & ~value_number,
        VALUE,
        lambda p: f"{value[p]!r} is not a number, and question {question[p]!r} is numeric "
        "(declared with --numeric or --scale); leave the value blank for no rating",
    )
    numbers = _to_float(value, is_numeric & value_number)
    check.first(
        is_numeric & value_number & ~np.isfinite(numbers),
        VALUE,
        lambda p: f"{_not_finite_text(value[p])}; a rating must be a finite number: correct the value, or leave "
        "it blank for no rating"
        + ("" if question[p] in declared_numeric else f", or pass --categorical {question[p]} if its answers are "
           "categories"),
    )
    for name, (low, high) in scales.items():
        with np.errstate(invalid="ignore"):
            outside = (question == name) & ((numbers < low) | (numbers > high))
        check.first(
            outside,
            VALUE,
            lambda p, low=low, high=high: f"{value[p]} is outside the scale {low:g}:{high:g} given for "
            f"question {question[p]!r}",
        )
    for name, allowed in categories.items():
        check.first(
            (question == name) & ~_among(value, allowed),
            VALUE,
            lambda p, allowed=allowed: f"{value[p]!r} is not one of the categories given for question "
            f"{question[p]!r} ({', '.join(allowed)})",
        )

    typed = value.copy()
    typed[is_numeric] = numbers[is_numeric]
    table = pd.DataFrame({ITEM: cells[ITEM], ANNOTATOR: cells[ANNOTATOR], QUESTION: question})
    table[VALUE] = pd.Series(typed, dtype=object)
    for column in (CLUSTER, CONDITION):
        if column in cells:
            table[column] = pd.Series(_blank_as_none(cells[column]), dtype=object)
    if TRUTH in cells:
        truth = cells[TRUTH]
        given = truth != ""
        truth_number = _is_number(truth)
        check.first(
            is_numeric & given & ~truth_number,
            TRUTH,
            lambda p: f"{truth[p]!r} is not a number, and question {question[p]!r} is numeric",
        )
        typed_truth = _blank_as_none(truth)
        numeric_truth = is_numeric & truth_number
        truth_numbers = _to_float(truth, numeric_truth)
        check.first(
            numeric_truth & ~np.isfinite(truth_numbers),
            TRUTH,
            lambda p: f"{_not_finite_text(truth[p])}; the truth of numeric question {question[p]!r} must be a "
            "finite number, or blank when it is not known",
        )
        typed_truth[numeric_truth] = truth_numbers[numeric_truth]
        table[TRUTH] = pd.Series(typed_truth, dtype=object)
    if JUDGE in cells:
        judge = cells[JUDGE]
        judge_number = _is_number(judge)
        check.first(
            (judge != "") & ~judge_number,
            JUDGE,
            lambda p: f"{judge[p]!r} is not a number; the judge column holds scores",
        )
        judge_numbers = _to_float(judge, judge_number)
        check.first(
            judge_number & ~np.isfinite(judge_numbers),
            JUDGE,
            lambda p: f"{_not_finite_text(judge[p])}; the judge column holds scores, which must be finite "
            "numbers (leave the cell blank where the judge gave none)",
        )
        table[JUDGE] = judge_numbers
    return table


def _blank_as_none(values: np.ndarray) -> np.ndarray:
    out = values.copy()
    out[values == ""] = None
    return out
