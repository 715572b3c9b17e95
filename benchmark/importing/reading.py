"""Reading untrusted text into values every database can store, or a located ImportProblem.

An imported file comes from anywhere, so before a parser looks at a record, the record must be
something Parley can hold on SQLite and on PostgreSQL alike, and something the importer can read
without running out of stack or memory. The rules, and why:

- **A JSON Lines line is at most** ``MAX_LINE_BYTES`` **(5 MB)** of UTF-8. A whole episode with
  a long transcript is well under 1 MB; a bigger line is a mistake or an attack, and refusing it
  before decoding keeps memory bounded.
- **JSON nests at most** ``MAX_DEPTH`` **(64) levels.** Parley's and Sotopia's records nest
  fewer than 10; Python's decoder would crash with a RecursionError somewhere near 1,000.
- **Keys are unique in each object.** ``{"score": 1, "score": 9}`` means one of two things and
  Python's decoder silently keeps the last; the file is refused instead.
- **Strings hold text:** no NUL character (PostgreSQL's text and jsonb cannot store U+0000) and no
  lone UTF-16 surrogate (``"\\ud800"``: half a character, which no UTF-8 database can store and
  SQLite would keep as garbage). Keys are checked too.
- **Numbers are finite.** ``NaN``, ``Infinity`` and ``1e400`` (read as infinity) are not JSON
  numbers any database column or jsonb value stores. Integers longer than Python reads (4,300
  digits) are refused.

The caps on what a record says (a turn's text, the number of turns, integers that must fit their
columns) are checked as each format reads it, with the constants in ``drafts``. ``docs/formats.md``
("Limits") states every cap for people writing files.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .problems import ImportProblem
from .records import Origin

MAX_LINE_BYTES = 5_000_000
MAX_DEPTH = 64


def read_text(path: Path) -> str:
    """The file as text (UTF-8, a byte-order mark is ignored)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ImportProblem("no such file", file=path.name) from None
    except UnicodeDecodeError as error:
        raise ImportProblem(f"not UTF-8 text (byte {error.start})", file=path.name) from None
    except OSError as error:
        raise ImportProblem(f"cannot read the file: {error.strerror}", file=path.name) from None


class _RepeatedKey(dict):
    """An object in which ``key`` was given more than once (found by ``check_json``)."""

    key: str


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    seen: set[str] = set()
    marked = _RepeatedKey(value)
    marked.key = next(key for key, _ in pairs if key in seen or seen.add(key))
    return marked


def check_line_size(line: str, origin: Origin) -> None:
    """Refuse a line over ``MAX_LINE_BYTES`` of UTF-8 (counted only when it could be)."""
    if len(line) * 4 <= MAX_LINE_BYTES:
        return
    size = len(line.encode("utf-8", "surrogatepass"))
    if size > MAX_LINE_BYTES:
        raise origin.problem(f"is {size:,} bytes long; a line may hold at most {MAX_LINE_BYTES:,} bytes (5 MB)")


def decode_json(text: str, origin: Origin) -> Any:
    """``text`` decoded, repeated keys marked; bad JSON is a problem at ``origin``.

    A whole file (``origin`` without a place) names the line of a syntax error. The value still
    needs ``check_json`` (record by record, so each problem names its record).
    """
    try:
        return json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as error:
        where = origin if origin.place else Origin(origin.file, f"line {error.lineno}")
        raise where.problem(f"not valid JSON: {error.msg} (column {error.colno})") from None
    except RecursionError:
        raise origin.problem(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:  # Python refuses to read integers of more than sys.get_int_max_str_digits() digits
        raise origin.problem("not valid JSON: an integer has more than 4300 digits") from None


def check_json(value: Any, origin: Origin) -> None:
    """Refuse what no database stores or the parsers should not read: see the module's rules.

    Walks the value without recursion, keeping each node's path, so a problem names its field
    (``turns[2].content``); a problem with a key names the object that holds it.
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            _check_string(node, path, origin)
        elif isinstance(node, float) and not math.isfinite(node):
            name = "NaN" if math.isnan(node) else "Infinity (or a number too large for a float)"
            raise _at(origin, path).problem(f"{name} is not a JSON number any database stores")
        elif isinstance(node, (dict, list)):
            if len(path) >= MAX_DEPTH:
                raise _at(origin, path[:1]).problem(f"nested more than {MAX_DEPTH} levels deep")
            if isinstance(node, dict):
                if isinstance(node, _RepeatedKey):
                    raise _at(origin, (*path, node.key)).problem("given twice in one object; keys must be unique")
                for key in node:
                    problem = _text_problem(key)
                    if problem:
                        raise _at(origin, path).problem(f"the key {key!r} {problem}")
                stack.extend((item, (*path, key)) for key, item in node.items())
            else:
                stack.extend((item, (*path, index)) for index, item in enumerate(node))


def load_json(text: str, origin: Origin) -> Any:
    """One record's JSON text (a line, or a double-encoded string), decoded and checked."""
    value = decode_json(text, origin)
    check_json(value, origin)
    return value


def check_storable_text(value: str, origin: Origin) -> None:
    """Refuse a string with a NUL character or a lone surrogate, naming ``origin``."""
    problem = _text_problem(value)
    if problem:
        raise origin.problem(problem)


def _check_string(value: str, path: tuple[str | int, ...], origin: Origin) -> None:
    problem = _text_problem(value)
    if problem:
        raise _at(origin, path).problem(problem)


def _text_problem(value: str) -> str | None:
    position = value.find("\x00")
    if position >= 0:
        return f"holds a NUL character (\\u0000, character {position + 1}), which PostgreSQL cannot store"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        surrogate = f"\\u{ord(value[error.start]):04x}"
        return (
            f"holds a lone surrogate {surrogate} (character {error.start + 1}), half of a UTF-16 pair that no "
            "database can store; write the whole character"
        )
    return None


def _at(origin: Origin, path: tuple[str | int, ...]) -> Origin:
    for step in path:
        origin = origin.at(step)
    return origin
