"""The report as files: a standalone HTML page, and a ZIP bundle with the data behind it.

The HTML file carries its CSS and its figures inline, so it opens anywhere without the site.
The bundle holds::

    README.txt            what each file is
    annotations.csv       the raw long-format export (latest submitted versions; annotator.exports)
    report.json           the report (build_report)
    report.html           the standalone page
    tables/<name>.csv     the report's tables (report_tables)
    figures/<name>.svg    every figure
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from io import BytesIO
from pathlib import Path
from typing import IO, Any

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string

from .. import figures as report_figures
from ..exports import export_lines
from ..models import Study
from .display import report_view
from .tables import report_tables

SITE_CSS = "css/parley.css"
SVG_PROLOG = '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'


def report_json(report: Mapping[str, Any]) -> str:
    """The report as strict JSON text (a NaN would raise rather than be written)."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _site_css() -> str:
    path = finders.find(SITE_CSS)
    return Path(path).read_text(encoding="utf-8") if path else ""


def _html(study: Study, report: Mapping[str, Any], drawn: Mapping[str, Any]) -> str:
    context = {"study": study, "report": report, "view": report_view(report, drawn), "site_css": _site_css()}
    return render_to_string("annotator/research/report_standalone.html", context)


def render_html(study: Study, report: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML document: inline CSS and SVG, no external files."""
    return _html(study, report, report_figures.report_figures(report))


def _readme(study: Study, report: Mapping[str, Any], tables: Mapping[str, str], figure_names: list[str]) -> str:
    lines = [
        f"Agreement report of the study \"{study.title}\" ({study.slug}), generated {report['generated_at']}.",
        "",
        "annotations.csv   the annotations in long format: one row per answer or span, latest submitted",
        "                  version of each assignment, every item kind (see the item_kind column)",
        "report.json       the report; docs/report-schema.md in Parley describes every key",
        "report.html       the report as a page, to open in a browser",
    ]
    lines += [f"tables/{name}" for name in tables]
    lines += [f"figures/{name}" for name in figure_names]
    return "\n".join(lines) + "\n"


def write_bundle(study: Study, report: Mapping[str, Any], target: IO[bytes]) -> list[str]:
    """Write the ZIP bundle to ``target`` (a binary file); returns the names it holds.

    The annotations are streamed into the archive, so a large study does not sit in memory.
    """
    drawn = report_figures.report_figures(report)
    tables = report_tables(report)
    svgs = {figure.name: figure.svg for by_kind in drawn.values() for figure in by_kind.values()}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.txt", _readme(study, report, tables, list(svgs)))
        with archive.open("annotations.csv", "w") as annotations:
            for line in export_lines(study, "csv"):
                annotations.write(line.encode("utf-8"))
        archive.writestr("report.json", report_json(report))
        archive.writestr("report.html", _html(study, report, drawn))
        for name, text in tables.items():
            archive.writestr(f"tables/{name}", text)
        for name, svg in svgs.items():
            archive.writestr(f"figures/{name}", SVG_PROLOG + svg)
        return archive.namelist()


def render_bundle(study: Study, report: Mapping[str, Any]) -> bytes:
    """The ZIP bundle as bytes (see the module docstring for what it holds)."""
    buffer = BytesIO()
    write_bundle(study, report, buffer)
    return buffer.getvalue()


def render_tables_zip(report: Mapping[str, Any]) -> bytes:
    """Just the CSV tables, zipped."""
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in report_tables(report).items():
            archive.writestr(name, text)
    return buffer.getvalue()
