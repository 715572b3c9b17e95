"""Every CSV file Parley writes goes through this module, so that no cell opens as a formula.

Participants, annotators and imported files put free text into Parley's exports (a comment, a
speaker's name, a model's name, a category). Excel, LibreOffice Calc and Google Sheets run a cell
as a formula when it begins with ``=``, ``+``, ``-`` or ``@`` (and some treat a leading tab or
carriage return the same way), so a comment ``=HYPERLINK("http://evil.example","click")`` would
open as a live link, and worse payloads reach other programs through DDE. The rules, after OWASP's
"CSV Injection" advice:

- A **text** cell that begins with one of ``FORMULA_TRIGGERS`` is written with a single quote
  ``'`` in front, which spreadsheets show as text rather than run.
- **Numbers** written as numbers (``int``, ``float``, numpy numbers, ``bool``) and ``None`` (an
  empty cell) are written unchanged: ``-0.5`` stays the number ``-0.5``.
- A text cell that is a **plain decimal number** (an optional sign, digits, an optional point and
  exponent, nothing else: ``-0.5``, ``+3``, ``-1e-3``) is written unchanged too. A spreadsheet
  reads it as that number, which cannot run anything, and quoting it would turn a number that was
  stored as text (a slider answer ``-1``) into text.
- The rule is **reversible**. A text cell that already begins with quotes followed by a trigger
  (``'=x``, ``''-x``) gets one more quote, so every written cell maps back to exactly one
  original: :func:`restore_cell` removes one quote from a cell that begins with quotes followed by
  a trigger, and nothing else. Parley's own importer of the turns CSV undoes the rule this way, so
  export, import and export again gives the same bytes.

All files share one dialect: comma separated, quoted only where needed, ``\\n`` line ends, UTF-8
(the caller encodes). Use :class:`CsvWriter` to write to a file or stream, :func:`csv_lines` to
stream a response line by line, :func:`csv_text` for a whole small document. Never call
``csv.writer`` or ``DataFrame.to_csv`` directly for output; reading CSV is the importers' business.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


def _looks_like_formula(text: str) -> bool:
    """Whether ``text``, past any leading quotes, begins with a trigger (and is not a plain number)."""
    return text.lstrip(QUOTE).startswith(FORMULA_TRIGGERS) and not _PLAIN_NUMBER.fullmatch(text)


def neutral_cell(value: Any) -> Any:
    """``value`` as it is safe to write in a cell: text that a spreadsheet would run gets a leading quote."""
    if isinstance(value, str) and _looks_like_formula(value):
        return QUOTE + value
    return value


def restore_cell(text: str) -> str:
    """The original text of a cell :func:`neutral_cell` wrote: the inverse of the quoting rule.

    A cell that begins with a quote, then possibly more quotes, then a trigger loses its first quote;
    any other cell is returned as is.
    """
    if text.startswith(QUOTE) and _looks_like_formula(text):
        return text[1:]
    return text


class _Echo:
    """A file-like object whose ``write`` returns what it was given, so each row comes back as a line."""

    def write(self, text: str) -> str:
        return text


class CsvWriter:
    """Like ``csv.writer`` in Parley's dialect, except that every cell goes through :func:`neutral_cell`."""

    def __init__(self, out: Writable) -> None:
        self._out = out
        # With "\r\n" as its terminator, csv quotes every field that holds a carriage return (with
        # "\n" alone, Python before 3.13 leaves a lone "\r" bare and a reader breaks the row there);
        # each line's terminator is then written as "\n".
        self._writer = csv.writer(_Echo(), lineterminator="\r\n")

    def writerow(self, row: Iterable[Any]) -> Any:
        """Write one row; returns what ``out.write`` returned (the line itself for :func:`csv_lines`)."""
        line = self._writer.writerow([neutral_cell(cell) for cell in row])
        return self._out.write(line[:-2] + "\n")


def csv_lines(header: Sequence[str], rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """The header line, then one line per row, lazily (for streaming a large export)."""
    writer = CsvWriter(_Echo())
    yield writer.writerow(header)
    for row in rows:
        yield writer.writerow(row)


def csv_text(header: Sequence[str], rows: Iterable[Iterable[Any]]) -> str:
    """A whole CSV document: the header, then the rows; ``None`` is an empty cell, floats keep full precision."""
    return "".join(csv_lines(header, rows))
