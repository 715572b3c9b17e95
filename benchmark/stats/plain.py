"""Reports as plain JSON values: what every report does last, before it is stored or downloaded.

numpy scalars become Python numbers, tuples lists, keys strings; a non-finite number (which the
statistics should never produce) becomes null with a note naming where it was, so a JSON file
never holds NaN or Infinity.
"""

import math
from typing import Any

import numpy as np


def plain_report(report: dict[str, Any], notes: list[str] | None = None) -> dict[str, Any]:
    """A plain copy of ``report`` whose ``notes`` (``report["notes"]`` unless given) come last."""
    notes = list(report.get("notes", [])) if notes is None else notes
    plain = plain_value({key: value for key, value in report.items() if key != "notes"}, notes)
    plain["notes"] = notes
    return plain


def plain_value(value: Any, notes: list[str], path: str = "") -> Any:
    """``value`` in plain JSON types; each non-finite number is nulled and noted in ``notes``."""
    if isinstance(value, dict):
        return {
            str(key): plain_value(item, notes, f"{path}.{key}" if path else str(key)) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [plain_value(item, notes, path) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        notes.append(f"{path}: not a finite number, reported as null")
        return None
    return value
