"""A study's agreement report: built from its annotations, shown on a page, downloaded as files.

- ``build_report(study)`` reads the submitted annotations and returns the report as a JSON-ready
  dict (``build``), comparing them with the respondent kinds ``compared_kinds`` reads from a request;
- ``report_tables(report)`` turns it into CSV tables by file name (``tables``);
- ``render_html(study, report)`` and ``render_bundle(study, report)`` make the standalone HTML
  page and the ZIP bundle (``documents``); ``report_view`` formats it for a page (``display``);
- ``cached_report`` and ``cached_view`` keep the report and its page view between loads until the
  study's answers change (``stamp``);
- ``start_bundle`` and ``bundle_state`` build a large study's bundle as a task on the queue
  (``bundles``).
"""

from .build import COMPARABLE, build_report, compared_kinds, latest_submitted
from .bundles import BundleState, bundle_path, bundle_state, start_bundle
from .display import report_view
from .documents import render_bundle, render_html, render_tables_zip, report_json, write_bundle
from .stamp import cached_report, cached_view
from .tables import report_tables

__all__ = [
    "BundleState",
    "COMPARABLE",
    "build_report",
    "cached_report",
    "cached_view",
    "bundle_path",
    "bundle_state",
    "compared_kinds",
    "latest_submitted",
    "render_bundle",
    "render_html",
    "render_tables_zip",
    "report_json",
    "report_tables",
    "report_view",
    "start_bundle",
    "write_bundle",
]
