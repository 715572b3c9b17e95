"""The report schema's promise that every null comes with a note, as a check the tests share."""

from collections.abc import Iterator
from typing import Any


def null_paths(value: Any, path: str = "") -> Iterator[str]:
    """Dotted paths of every null in a report (list elements share their list's path)."""
    if value is None:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from null_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for item in value:
            yield from null_paths(item, path)


def unexplained_nulls(report: dict[str, Any]) -> list[str]:
    """Nulls no note explains: a note '<key>: reason' explains the null at key and below it."""
    keys = {note.partition(": ")[0] for note in report["notes"]}
    return [
        path for path in null_paths({k: v for k, v in report.items() if k != "notes"})
        if not any(path == key or path.startswith(f"{key}.") for key in keys)
    ]
