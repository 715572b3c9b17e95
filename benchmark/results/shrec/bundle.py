"""The SHREC results as one ZIP: the report, every table and every figure, for one task set.

It holds::

    README.txt           what each file is
    shrec.json           the report, every number unrounded (docs/results-schema.md, SHREC section)
    shrec.txt            the tables as text, with the legend
    tables/<name>.csv    Table 1, Table 2, per subset, per attribute, per person, the dataset statistics
    figures/<name>.svg   the figures that have data
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from typing import Any

from ..tables import report_json
from .figures import cached_figures
from .tables import CSV_TABLES, csv_table, text_report

SVG_PROLOG = '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
TABLE_HELP = {
    "table1": "Table 1 (detection, error, attributes, multiple): one row per model row x column, mean, SD, n per "
    "subset, pooled value and its 95% CI by video, chance",
    "table2": "Table 2 (pre-condition, post-condition, rationale, correction), the same columns",
    "subsets": "every metric of every row on every subset, with its n",
    "attributes": "F1 per attribute: attribute identification, and error detection within each attribute",
    "people": "the human baseline per person and for the majority answer of each item",
    "dataset": "the dataset statistics the task set recorded (overlap, agreement, labels, channels, attributes "
    "per source) and its items per task, source and label",
}
# A fixed time for every entry, so two ZIPs of the same report are the same bytes.
ENTRY_TIME = (1980, 1, 1, 0, 0, 0)


def _write(archive: zipfile.ZipFile, name: str, text: str) -> None:
    archive.writestr(zipfile.ZipInfo(name, ENTRY_TIME), text, compress_type=zipfile.ZIP_DEFLATED)


def bundle_bytes(report: Mapping[str, Any]) -> bytes:
    """The ZIP as bytes (small: a task set of a few thousand items)."""
    figures = {name: figure for name, figure in cached_figures(report).items() if figure is not None}
    lines = [
        f"SHREC results for the task set {report['task_set']['name']!r}.",
        "",
        "shrec.json              the report (docs/results-schema.md, SHREC section)",
        "shrec.txt               the tables as text, with the legend",
    ]
    lines += [f"tables/{name}.csv{' ' * max(1, 14 - len(name))}{TABLE_HELP[name]}" for name in CSV_TABLES]
    lines += [f"figures/{figure.name}  {figure.title}" for figure in figures.values()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        _write(archive, "README.txt", "\n".join(lines) + "\n")
        _write(archive, "shrec.json", report_json(report))
        _write(archive, "shrec.txt", text_report(report))
        for name in CSV_TABLES:
            _write(archive, f"tables/{name}.csv", csv_table(name, report))
        for figure in figures.values():
            _write(archive, f"figures/{figure.name}", SVG_PROLOG + figure.svg)
    return buffer.getvalue()
