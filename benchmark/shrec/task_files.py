"""A task set's items as JSONL, out and back in (spec SH-6: "JSONL export and import").

The first line describes the set (``{"format": "parley-shrec-tasks", "version": 1, "name", "seed",
"params", "spans_from"}``); every further line is one item, its episode named by external id
(SHREC's video id) so the file can be loaded into another Parley whose team imported the same
episodes. Reading checks every line before anything is stored, and a problem is reported with the
file, the line and the field (``tasks.jsonl line 7, field 'correct': ...``); saving is all or nothing
(``benchmark.shrec.saving``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from benchmark.models import TaskItem, TaskSet

from .builders import TASKS, ItemRecord
from .records import ATTRIBUTE_KEYS

FORMAT, VERSION = "parley-shrec-tasks", 1
ITEM_FIELDS = (
    "task", "item_key", "episode", "first_turn", "last_turn", "start_s", "end_s", "label", "context", "options",
    "correct", "gold", "source", "provenance", "subsets",
)
SOURCE_LENGTH = TaskItem._meta.get_field("source").max_length
LARGEST = 2**31 - 1  # the largest whole number every database's integer column holds
GOLD_SPACES = {"detection": ("competency", "error", "none"), "error": ("error", "no_error")}


class TaskFileError(ValueError):
    """A task file that cannot be read: where, and what is wrong."""


@dataclass
class TaskFile:
    """What a task file holds: the set's description and its items."""

    name: str
    seed: int
    params: dict[str, Any]
    spans_from: str
    items: list[ItemRecord]


def write_task_set(task_set: TaskSet, out: TextIO) -> int:
    """Write ``task_set`` as JSONL to ``out``; returns the number of items written."""
    header = {
        "format": FORMAT, "version": VERSION, "name": task_set.name, "seed": task_set.seed,
        "params": task_set.params, "spans_from": task_set.spans_from,
    }
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    count = 0
    for item in task_set.items.select_related("episode").order_by("task", "item_key"):
        row = {name: getattr(item, name) for name in ITEM_FIELDS if name != "episode"}
        row["episode"] = item.episode.external_id
        out.write(json.dumps({name: row[name] for name in ITEM_FIELDS}, ensure_ascii=False) + "\n")
        count += 1
    return count


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LARGEST


def _item_problem(row: dict[str, Any]) -> tuple[str, str] | None:
    """The first (field, problem) of one item line, or None."""
    required = ("task", "item_key", "episode", "context", "options", "correct", "gold")
    missing = [name for name in required if name not in row]
    if missing:
        return missing[0], "missing"
    task, options, correct, gold = row["task"], row["options"], row["correct"], row["gold"]
    checks: list[tuple[str, bool, str]] = [
        ("task", task in TASKS, f"must be one of {', '.join(TASKS)}"),
        ("item_key", isinstance(row["item_key"], str) and bool(row["item_key"].strip()), "must be a non-empty text"),
        ("episode", isinstance(row["episode"], str) and bool(row["episode"].strip()), "must be an external id"),
        ("context", isinstance(row["context"], str), "must be a text"),
        ("options", isinstance(options, list) and bool(options) and all(isinstance(o, str) and o for o in options),
         "must be a list of non-empty texts"),
        ("correct", isinstance(correct, list) and bool(correct) and all(_index(c) for c in correct),
         "must be a list of option positions (from 0)"),
    ]
    for name, ok, problem in checks:
        if not ok:
            return name, problem
    if any(position >= len(options) for position in correct):
        return "correct", f"positions must be below the {len(options)} options"
    if task in GOLD_SPACES and gold not in GOLD_SPACES[task]:
        return "gold", f"must be one of {', '.join(GOLD_SPACES[task])} for the {task} task"
    if task == "attributes" and not (isinstance(gold, list) and gold and set(gold) <= set(ATTRIBUTE_KEYS)):
        return "gold", f"must be a list of attribute keys ({', '.join(ATTRIBUTE_KEYS)})"
    if task == "multiple" and not isinstance(gold, bool):
        return "gold", "must be true or false"
    if task in ("pre", "post", "rationale", "correction") and gold != correct[0] + 1:
        return "gold", "must be the correct option's number (from 1)"
    for first, last, check in (("first_turn", "last_turn", _index), ("start_s", "end_s", _number)):
        low, high = row.get(first), row.get(last)
        for name, value in ((first, low), (last, high)):
            if value is not None and not check(value):
                return name, "must be a non-negative whole number or null" if check is _index else "must be a number"
        if (low is None) != (high is None) or (low is not None and high < low):
            return last, f"must be given with {first} and not before it"
    if not (isinstance(row.get("subsets", []), list) and all(_index(s) for s in row.get("subsets", []))):
        return "subsets", "must be a list of subset numbers (from 0)"
    if not isinstance(row.get("provenance", {}), dict):
        return "provenance", "must be an object"
    if row.get("label", "") not in ("", "error", "competency", "none"):
        return "label", "must be error, competency, none or empty"
    if not isinstance(row.get("source", ""), str) or len(row.get("source", "")) > SOURCE_LENGTH:
        return "source", f"must be a text of at most {SOURCE_LENGTH} characters"
    return None


def read_task_file(lines: Iterable[str], file_name: str) -> TaskFile:
    """Read and check a task file (see the module docstring); raises ``TaskFileError`` naming the line."""
    header: dict[str, Any] | None = None
    items: list[ItemRecord] = []
    seen: dict[tuple[str, str], int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        where = f"{file_name} line {number}"
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            raise TaskFileError(f"{where}: not JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise TaskFileError(f"{where}: expected a JSON object")
        if header is None:
            if row.get("format") != FORMAT or row.get("version") != VERSION:
                raise TaskFileError(f"{where}: not a Parley SHREC task file (expected format {FORMAT!r}, version 1)")
            if not isinstance(row.get("name"), str) or not _index(row.get("seed", 0)):
                raise TaskFileError(f"{where}: the header needs a name (text) and a seed (whole number)")
            header = row
            continue
        problem = _item_problem(row)
        if problem:
            raise TaskFileError(f"{where}, field {problem[0]!r}: {problem[1]}")
        key = (row["task"], row["item_key"])
        if key in seen:
            raise TaskFileError(f"{where}, field 'item_key': {key[1]!r} of task {key[0]} is also on line {seen[key]}")
        seen[key] = number
        items.append(
            ItemRecord(
                task=row["task"], item_key=row["item_key"], episode_key=row["episode"], episode_id=None,
                first_turn=row.get("first_turn"), last_turn=row.get("last_turn"), start_s=row.get("start_s"),
                end_s=row.get("end_s"), label=row.get("label", ""), context=row["context"], options=row["options"],
                correct=row["correct"], gold=row["gold"], source=row.get("source", ""),
                provenance=row.get("provenance", {}), subsets=row.get("subsets", []),
            )
        )
    if header is None:
        raise TaskFileError(f"{file_name}: empty file (expected a header line and items)")
    params, spans_from = header.get("params") or {}, header.get("spans_from", "")
    return TaskFile(header["name"], header.get("seed", 0), params, spans_from, items)
