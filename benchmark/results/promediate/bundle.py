"""The ProMediate results as one ZIP: the report, every table and every figure, for the same filters.

It holds::

    README.txt             what each file is
    promediate.json        the report, every number unrounded
    tables/<name>.csv      Table 1, Table 2, Table 3, the ME–MI correlation, and one row per conversation
    figures/<name>.svg     the figures that have data
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..tables import report_json
from .figures import promediate_figures
from .tables import CSV_TABLES, csv_table

SVG_PROLOG = '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
TABLE_HELP = {
    "table1": "metrics per conflict mode and mediator condition (mean, SE, 95% CI, n, undefined left out)",
    "table2": "the Social mediator's metrics per mediator model",
    "table3": "factor loadings (two factors, varimax), salient when |loading| >= 0.40",
    "me-mi": "Spearman correlation of ME and MI over interventions",
    "human": "human validation: conversation quality means, snippet kappa, MI accuracies, each with n",
    "conversations": "one row per conversation: its labels and every metric, with why a value is undefined",
}


def bundle_bytes(report: Mapping[str, Any], frame: pd.DataFrame) -> bytes:
    """The ZIP as bytes (small: a report of a few hundred conversations)."""
    figures = {name: figure for name, figure in promediate_figures(report).items() if figure is not None}
    lines = [
        'ProMediate results, for the filters in promediate.json ("filters").',
        "",
        "promediate.json         the report (docs/results-schema.md, ProMediate section)",
    ]
    lines += [f"tables/{name}.csv{' ' * max(1, 14 - len(name))}{TABLE_HELP[name]}" for name in CSV_TABLES]
    lines += [f"figures/{figure.name}  {figure.title}" for figure in figures.values()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.txt", "\n".join(lines) + "\n")
        archive.writestr("promediate.json", report_json(report))
        for name in CSV_TABLES:
            archive.writestr(f"tables/{name}.csv", csv_table(name, report, frame))
        for figure in figures.values():
            archive.writestr(f"figures/{figure.name}", SVG_PROLOG + figure.svg)
    return buffer.getvalue()
