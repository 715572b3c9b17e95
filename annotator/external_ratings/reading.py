"""Reading a ratings file (long CSV, wide CSV or JSON Lines) into ratings: who rated which episode, cell by cell.

Nothing here knows the study: a cell's question, seat and goal are checked against it later
(``checking``). A row that cannot be read is a problem, gathered with every other one (``Problems``),
and the rating it belongs to is left out of the later checks, so one bad row is not told twice.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from benchmark.csv_output import restore_cell
from benchmark.importing import ImportProblem
from benchmark.importing.parley import json_lines
from benchmark.importing.reading import check_storable_text
from benchmark.importing.records import Origin, describe
from benchmark.importing.turns_csv import rows

from .problems import Problems

LONG_COLUMNS = ("episode_id", "annotator_id", "question", "value")
LONG_OPTIONAL = ("rationale", "seat", "goal")
WIDE_COLUMNS = ("episode_id", "annotator_id")
RATIONALE_SUFFIX = "_rationale"
MAX_ID_LENGTH = 200
_COLUMN = re.compile(r"^(?P<key>[-a-zA-Z0-9_]+?)(?::(?:(?P<seat>[0-9]+)|g(?P<goal>[0-9]+\.[0-9]+)))?$")


@dataclass
class Cell:
    """One answer (or rationale) read from the file, and where it was."""

    origin: Origin
    key: str
    seat: str  # as written in a long row's seat or a wide column's suffix, "" for none
    goal: str  # as written, "" for none
    value: str
    rationale: str | None = None  # None: this cell gives no rationale
    is_rationale: bool = False  # a wide file's ``<key>_rationale`` column: ``value`` is the rationale
    row_seat: str = ""  # a wide row's own seat: the seat of its per-character questions named without one
    wide: bool = False  # from a wide file, where a multi-label answer's labels are joined by ";"


@dataclass
class Rating:
    """Everything one annotator of the file said about one episode."""

    annotator_id: str
    episode_id: str
    origin: Origin  # the first row or line that gives it
    places: list[str] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)


@dataclass
class RatingsFile:
    """What was read: the shape, the ratings in the order the file first names them, the question keys it
    names anywhere (a question it never names is not rated, rather than unanswered)."""

    shape: str  # "long" or "wide"
    ratings: list[Rating]
    named: set[str]


def read_ratings(text: str, file: str, problems: Problems, *, csv_file: bool) -> RatingsFile:
    """The file's ratings; what cannot be read goes to ``problems`` (a bad header: no ratings at all)."""
    if not text.strip():
        problems.add(ImportProblem(
            "the file is empty: it holds no header and no ratings" if not text else "the file holds only blank lines",
            file=file,
        ))
        return RatingsFile("long", [], set())
    if csv_file:
        shape, read = _read_csv(text, file, problems)
    else:
        shape, read = "long", _read_jsonl(text, file, problems)
    ratings = _group(read)
    return RatingsFile(shape, ratings, {cell.key for rating in ratings for cell in rating.cells})


Read = tuple[str, str, list[Cell], Origin]  # annotator id, episode id, cells, where


def _read_csv(text: str, file: str, problems: Problems) -> tuple[str, list[Read | None]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header_origin = Origin(file, "row 1")
    header = [column.strip() for column in next(reader, [])]
    lowered = [column.lower() for column in header]
    long = {"question", "value"} <= set(lowered)
    for column in sorted({column for column in lowered if lowered.count(column) > 1}):
        problems.add(header_origin.at(column).problem("this column is named twice in the header"))
    missing = [column for column in (LONG_COLUMNS if long else WIDE_COLUMNS) if column not in lowered]
    if missing:
        problems.add(header_origin.problem(
            f"the header lacks {', '.join(missing)}; a long file has the columns {', '.join(LONG_COLUMNS)} "
            f"(and may add {', '.join(LONG_OPTIONAL)}), a wide file {', '.join(WIDE_COLUMNS)} and one column per "
            "question key"
        ))
    if long:
        for name, low in zip(header, lowered, strict=True):
            if low not in LONG_COLUMNS + LONG_OPTIONAL:
                problems.add(header_origin.at(name).problem(
                    f"a long ratings file has no such column (it has {', '.join(LONG_COLUMNS + LONG_OPTIONAL)})"
                ))
    else:
        for name in header:
            if name.lower() not in (*WIDE_COLUMNS, "seat") and not _COLUMN.match(name):
                problems.add(header_origin.at(name).problem(
                    "not a question column: name it by the question's key, key:<seat> (e.g. goal:0), "
                    "key:g<role>.<goal> (e.g. goal_achieved:g0.1), or <key>_rationale with the same suffix"
                ))
        if not missing and not any(name.lower() not in (*WIDE_COLUMNS, "seat") for name in header):
            problems.add(header_origin.problem(
                "the header names no question: a wide file has a column for each question it rates, named by the "
                "question's key (questions without a column are not rated)"
            ))
    if problems:
        return ("long" if long else "wide"), []
    names = lowered if long else [low if low in (*WIDE_COLUMNS, "seat") else name for name, low in
                                  zip(header, lowered, strict=True)]
    read: list[Read | None] = []
    try:
        for number, cells in enumerate(rows(reader, file), start=2):
            if not any(cell.strip() for cell in cells):
                continue
            origin = Origin(file, f"row {number}")
            if len(cells) != len(header):
                problems.add(origin.problem(f"has {len(cells)} cells; the header has {len(header)}"))
                continue
            values = dict(zip(names, (restore_cell(cell) for cell in cells), strict=True))
            read.append(_row(origin, values, problems, long=long))
    except ImportProblem as problem:  # the csv module gave up: nothing after it can be read
        problems.add(problem)
    return ("long" if long else "wide"), read


def _row(origin: Origin, values: dict[str, str], problems: Problems, *, long: bool) -> Read | None:
    """One row's cells, or None when it cannot be read (its problems added; a known rating left out)."""
    before = problems.total
    try:
        check_storable_text("".join(values.values()), origin)  # the whole row at once; cell by cell if it fails
    except ImportProblem:
        for column, value in values.items():
            try:
                check_storable_text(value, origin.at(column))
            except ImportProblem as problem:
                problems.add(problem)
    ids = _ids(values, origin, problems)
    if ids is None:
        return None
    if problems.total > before:
        return (*ids, [], origin)  # its rating is known and bad: left out of the checks, like the row
    if long:
        return _long_cells(origin, values, ids, problems)
    return _wide_cells(origin, values, ids)


def _read_jsonl(text: str, file: str, problems: Problems) -> list[Read | None]:
    read: list[Read | None] = []
    try:
        records = json_lines(text, file)
    except ImportProblem as problem:  # a line that is not JSON: where the next record starts is unknown
        problems.add(problem)
        return []
    for origin, record in records:
        if not isinstance(record, dict):
            problems.add(origin.problem(f"expected an object, got {describe(record)}"))
            continue
        before = problems.total
        for name in record:
            if name not in LONG_COLUMNS + LONG_OPTIONAL:
                problems.add(origin.at(name).problem(
                    f"a ratings line has no such field (it has {', '.join(LONG_COLUMNS + LONG_OPTIONAL)})"
                ))
        values = {}
        for name in LONG_COLUMNS + LONG_OPTIONAL:
            value = record.get(name)
            if value is None:
                values[name] = ""
            elif name == "value" and isinstance(value, list) and all(isinstance(label, str) for label in value):
                values[name] = value
            elif isinstance(value, str):
                values[name] = value
            elif isinstance(value, int | float) and not isinstance(value, bool) and name in ("value", "seat"):
                values[name] = str(value)
            else:
                problems.add(origin.at(name).problem(
                    f"expected text{' or a number' if name in ('value', 'seat') else ''}, got {describe(value)}"
                ))
                values[name] = ""
        ids = _ids({name: value for name, value in values.items() if isinstance(value, str)}, origin, problems)
        if ids is None:
            continue
        if problems.total > before:
            read.append((*ids, [], origin))
            continue
        labels = values["value"] if isinstance(values["value"], list) else [values["value"]]
        for label in labels:
            read.append(_long_cells(origin, {**values, "value": label}, ids, problems))
    return read


def _ids(values: dict[str, str], origin: Origin, problems: Problems) -> tuple[str, str] | None:
    ids = []
    for column in ("annotator_id", "episode_id"):
        value = values.get(column, "").strip()
        if not value:
            problems.add(origin.at(column).problem("must not be empty"))
        elif len(value) > MAX_ID_LENGTH:
            problems.add(origin.at(column).problem(f"is {len(value)} characters long; at most {MAX_ID_LENGTH} fit"))
        else:
            ids.append(value)
    return (ids[0], ids[1]) if len(ids) == 2 else None


def _long_cells(origin: Origin, values: dict[str, str], ids: tuple[str, str], problems: Problems) -> Read:
    key = values["question"].strip()
    if not key:
        problems.add(origin.at("question").problem("must not be empty: give the question's key"))
        return (*ids, [], origin)
    rationale = values.get("rationale", "")
    cell = Cell(origin.at("value"), key, values.get("seat", "").strip(), values.get("goal", "").strip(),
                values["value"], rationale if rationale.strip() else None)
    return (*ids, [cell], origin)


def _wide_cells(origin: Origin, values: dict[str, str], ids: tuple[str, str]) -> Read:
    row_seat = values.get("seat", "").strip()
    cells = []
    for column, value in values.items():
        if column in (*WIDE_COLUMNS, "seat"):
            continue
        match = _COLUMN.match(column)
        key, seat, goal = match["key"], match["seat"] or "", match["goal"] or ""
        is_rationale = key.endswith(RATIONALE_SUFFIX)
        if is_rationale:
            key = key[: -len(RATIONALE_SUFFIX)]
        cells.append(Cell(origin.at(column), key, seat, goal, value, is_rationale=is_rationale, row_seat=row_seat,
                          wide=True))
    return (*ids, cells, origin)


def _group(read: Iterable[Read | None]) -> list[Rating]:
    """The ratings by (annotator, episode); one with a row that could not be read is left out (its problem is
    told already; checking what remains of it would only report answers missing)."""
    ratings: dict[tuple[str, str], Rating] = {}
    bad: set[tuple[str, str]] = set()
    for row in read:
        if row is None:
            continue
        annotator_id, episode_id, cells, origin = row
        if not cells:
            bad.add((annotator_id, episode_id))
        rating = ratings.setdefault((annotator_id, episode_id), Rating(annotator_id, episode_id, origin))
        if origin.place not in rating.places:
            rating.places.append(origin.place)
        rating.cells.extend(cells)
    return [rating for pair, rating in ratings.items() if pair not in bad]
