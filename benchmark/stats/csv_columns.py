"""Reading a ratings CSV into columns of integer codes: the parsing half of `csv_input`.

Each needed column comes back as a `Column`: an integer code per kept row and the distinct cells
those codes stand for, stripped of surrounding spaces (``labels[codes]`` gives the cells). A file
is parsed by pyarrow's CSV reader, in C++ and on every core; the cells are never looked at one by
one in Python: each column is dictionary-encoded by pyarrow, and only its distinct cells are
stripped (with Python's `str.strip`, so the spaces removed are exactly those the reader always
removed) and merged where stripping made two the same. A ratings file has few distinct values, so
the checks in `csv_input` read each distinct cell once and mark rows by masks over the codes.

Row numbers are those of the CSV records (the header is row 1, a blank line is a row). pyarrow does
not number rows, so its result is used only when every record is one line and every row has the
header's number of cells, which makes record numbers line numbers: then a line the file leaves
blank is also known without reading it. Anything else (a row with too few or too many cells, a
quoted cell spanning lines, a lone carriage return ending lines, quotes in the header, a line of
spaces) is read by Python's `csv` module instead, cell by cell as before, so such files keep their
exact reading and messages; they are the rare and the refused ones.

Pure: no Django, no database.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from .tables import ANNOTATOR, CLUSTER, CONDITION, ITEM, JUDGE, QUESTION, TRUTH, VALUE

REQUIRED_COLUMNS = (ITEM, ANNOTATOR, QUESTION, VALUE)
OPTIONAL_COLUMNS = (CLUSTER, TRUTH, CONDITION, JUDGE)
BOM = b"\xef\xbb\xbf"


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


@dataclass
class Column:
    """A column as codes: ``labels[codes[i]]`` is row i's stripped cell; labels are distinct."""

    codes: np.ndarray
    labels: np.ndarray  # of str (object)

    def text(self, position: int) -> str:
        return self.labels[self.codes[position]]

    def marks(self, wanted: Iterable[str]) -> np.ndarray:
        """Rows whose cell is one of `wanted` (each distinct cell looked up once)."""
        chosen = set(wanted)
        return np.fromiter((label in chosen for label in self.labels), dtype=bool, count=len(self.labels))[self.codes]

    def blank(self) -> np.ndarray:
        """Rows whose cell is empty (after stripping)."""
        empty = np.flatnonzero(self.labels == "")
        return self.codes == empty[0] if len(empty) else np.zeros(len(self.codes), dtype=bool)

    def take(self, rows: np.ndarray) -> Column:
        return Column(self.codes[rows], self.labels)


def _read_bytes(source: str | os.PathLike[str] | TextIO, name: str | None) -> tuple[bytes | None, str, str | None]:
    """The file as UTF-8 bytes when a path (checked as UTF-8), else its text; and the name for messages."""
    if hasattr(source, "read"):
        return None, name or getattr(source, "name", None) or "<input>", source.read()  # type: ignore[union-attr]
    if isinstance(source, str) and "\n" in source:
        return None, name or "<text>", source
    path = Path(source)  # type: ignore[arg-type]
    name = name or path.name
    try:
        data = path.read_bytes()
        data.decode("utf-8-sig")
    except FileNotFoundError as error:
        raise CsvProblem("no such file", file=name) from error
    except UnicodeDecodeError:
        return None, name, _read_text(path, name)  # for the message, as the text reader words it
    except OSError as error:
        raise CsvProblem(f"cannot be read: {error.strerror}", file=name) from error
    return (data[len(BOM) :] if data.startswith(BOM) else data), name, None


def _read_text(path: Path, name: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise CsvProblem(f"is not UTF-8 text (byte {error.start} cannot be decoded)", file=name) from error


def header(cells: list[str] | None, file: str) -> list[str]:
    """The header's column names, lower case and stripped; a missing or repeated column is refused."""
    usage = (
        f"the header must name the columns {', '.join(REQUIRED_COLUMNS)} "
        f"(and may add {', '.join(OPTIONAL_COLUMNS)})"
    )
    if not cells or not any(cell.strip() for cell in cells):
        raise CsvProblem(f"the file is empty; {usage}", file=file, row=1)
    names = [cell.strip().lower() for cell in cells]
    missing = [column for column in REQUIRED_COLUMNS if column not in names]
    if missing:
        hint = ""
        if len(names) == 1 and any(sep in cells[0] for sep in ";\t|"):
            hint = "; the file seems to use another separator, but columns must be separated by commas"
        raise CsvProblem(f"the header lacks {', '.join(missing)}; {usage}{hint}", file=file, row=1, column=missing[0])
    repeated = sorted({column for column in names if column and names.count(column) > 1})
    if repeated:
        raise CsvProblem(f"the header names {', '.join(repeated)} more than once", file=file, row=1, column=repeated[0])
    return names


def read_columns(
    source: str | os.PathLike[str] | TextIO, name: str | None
) -> tuple[dict[str, Column], np.ndarray, str]:
    """The needed columns of a ratings CSV, each row's record number (header = 1), and the file's name.

    Rows whose every cell is blank are left out, as a blank line is; a row with another number of
    cells than the header is refused.
    """
    data, file, text = _read_bytes(source, name)
    if data is None:
        data = text.encode("utf-8", "surrogatepass")  # type: ignore[union-attr]
        fast = _columnar(data, file, keep_bom=True)
    else:
        fast = _columnar(data, file, keep_bom=False)
    if fast is not None:
        return (*fast, file)
    if text is None:
        text = data.decode("utf-8")
    return (*_by_rows(text, file), file)


def _first_line(data: bytes) -> bytes:
    end = data.find(b"\n")
    return (data if end < 0 else data[:end]).rstrip(b"\r")


def _columnar(data: bytes, file: str, *, keep_bom: bool) -> tuple[dict[str, Column], np.ndarray] | None:
    """pyarrow's reading when every record is one line of the header's width; None otherwise."""
    import pyarrow as pa
    import pyarrow.csv as arrow_csv

    first = _first_line(data)
    if b'"' in first or b"\r" in first:
        return None
    first_text = first.decode("utf-8", "surrogatepass")
    names = header(next(csv.reader([first_text]), None), file)
    width = len(names)
    wanted = {column: names.index(column) for column in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if column in names}
    refused: list[object] = []

    def invalid(row: object) -> str:
        refused.append(row)
        return "skip"

    generated = [f"c{index}" for index in range(width)]
    try:
        table = arrow_csv.read_csv(
            io.BytesIO(data),
            read_options=arrow_csv.ReadOptions(column_names=generated, skip_rows=1, block_size=1 << 24),
            parse_options=arrow_csv.ParseOptions(ignore_empty_lines=False, invalid_row_handler=invalid),
            convert_options=arrow_csv.ConvertOptions(
                include_columns=[generated[index] for index in wanted.values()],
                column_types={generated[index]: pa.dictionary(pa.int32(), pa.string()) for index in wanted.values()},
                strings_can_be_null=False, quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if refused or keep_bom and data.startswith(BOM):
        return None
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if lines != table.num_rows + 1 or b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None  # a record spans lines, or lines end in a lone carriage return
    columns = {column: _encoded(table.column(generated[index])) for column, index in wanted.items()}
    blank = np.ones(table.num_rows, dtype=bool)
    for column in columns.values():
        blank &= column.blank()
    if width > len(wanted) and blank.any():  # cells of the ignored columns may still hold something
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
        blank[blank] = [_all_blank(data, newlines, int(row) + 1) for row in np.flatnonzero(blank)]
    kept = ~blank
    numbers = np.arange(2, table.num_rows + 2, dtype=np.intp)
    if blank.any():
        columns = {column: values.take(kept) for column, values in columns.items()}
        numbers = numbers[kept]
    return columns, numbers


def _all_blank(data: bytes, newlines: np.ndarray, line: int) -> bool:
    """Whether every cell of the file's `line` (0 = the header) is blank."""
    start = 0 if line == 0 else int(newlines[line - 1]) + 1
    end = int(newlines[line]) if line < len(newlines) else len(data)
    cells = next(csv.reader([data[start:end].decode("utf-8", "surrogatepass").rstrip("\r")]), [])
    return not "".join(cells).strip()


def _encoded(chunks: Any) -> Column:
    """A column pyarrow read dictionary-encoded, as codes of its distinct stripped cells."""
    if not len(chunks):
        return Column(np.zeros(0, dtype=np.intp), np.array([], dtype=object))
    encoded = chunks.unify_dictionaries().combine_chunks()
    stripped = [cell.strip() for cell in encoded.dictionary.to_pylist()]
    merged, labels = pd.factorize(pd.Series(stripped, dtype=object), sort=False)
    codes = merged.astype(np.intp)[encoded.indices.to_numpy(zero_copy_only=False)]
    return Column(codes, np.asarray(labels, dtype=object))


def _by_rows(text: str, file: str) -> tuple[dict[str, Column], np.ndarray]:
    """Python's csv module, a record at a time: for the files pyarrow's result cannot be used for."""
    reader = csv.reader(io.StringIO(text, newline=""))
    names = header(next(iter(reader), None), file)
    width = len(names)
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
    columns = {}
    for column in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS):
        if column in names:
            index = names.index(column)
            codes, labels = pd.factorize(pd.Series([row[index].strip() for row in kept], dtype=object), sort=False)
            columns[column] = Column(codes.astype(np.intp), np.asarray(labels, dtype=object))
    return columns, np.asarray(numbers, dtype=np.intp)
