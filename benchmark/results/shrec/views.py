"""The SHREC results page and its downloads: researchers only, the asking researcher's teams' task sets only.

The page shows Table 1 (detection, error detection, attributes, multiple attributes), Table 2 (pre-condition,
post-condition, rationale, correction), the per-attribute scores, the dataset statistics and the figures for
one task set; the downloads are ``shrec.json``, one CSV per table and a ZIP of all of them. A task set of
another team is answered 404, as if it did not exist.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ...models import TaskSet
from ...permissions import researcher_required
from ...stats.bootstrap import DEFAULT_RESAMPLES
from ..tables import report_json
from .build import cached_shrec
from .bundle import bundle_bytes
from .figures import cached_figures
from .forms import ShrecResultsForm
from .records import ShrecResultsProblem
from .tables import CSV_TABLES, attribute_grid, chance_text, csv_table, dataset_lines, table_grid

TEXT_TYPE = "text/plain; charset=utf-8"
ID_DIGITS = 18  # the longest id a 64-bit primary key holds without overflow


def _built(
    request: HttpRequest, *, resamples: int = DEFAULT_RESAMPLES
) -> tuple[ShrecResultsForm, dict[str, Any] | None, str]:
    """The form, the report (None on bad input or no task set) and why there is none."""
    task_sets = TaskSet.objects.owned_by(request.user)
    wanted = request.GET.get("task_set", "")
    # A number that could be an id and is none of the asker's: 404, as if it did not exist. Anything else (a
    # word, a number too long for an id) is the form's error.
    could_be_id = wanted.isascii() and wanted.isdigit() and len(wanted) <= ID_DIGITS
    if could_be_id and not task_sets.filter(pk=int(wanted)).exists():
        raise Http404("No such task set.")
    form = ShrecResultsForm(request.GET, task_sets=task_sets)
    if not form.is_valid():
        return form, None, ""
    try:
        task_set = form.chosen()
    except ShrecResultsProblem as problem:
        return form, None, str(problem)
    return form, cached_shrec(task_set, answers=form.answers_from(), resamples=resamples), ""


def _grid(title: str, grid: tuple[list[str], list[list[str]]], name: str) -> dict[str, Any]:
    header, rows = grid
    return {"name": name, "title": title, "columns": header, "rows": rows}


@require_GET
@researcher_required
def shrec(request: HttpRequest) -> HttpResponse:
    """The SHREC tables and figures of one task set; a bad choice is shown on the form.

    The page shows no interval, so it is scored without the bootstrap (a second per model row); the downloads
    carry the intervals."""
    form, report, problem = _built(request, resamples=0)
    context: dict[str, Any] = {
        "form": form, "report": report, "problem": problem, "query": request.GET.urlencode(), "csv_tables": CSV_TABLES,
        "resamples": DEFAULT_RESAMPLES,
    }
    if report is not None:
        context.update(
            {
                "tables": [
                    _grid("Table 1: detection and social attributes", table_grid(report, "table1"), "table1"),
                    _grid("Table 2: pre-condition, post-condition, rationale and correction",
                          table_grid(report, "table2"), "table2"),
                    _grid("Attribute identification: F1 per attribute", attribute_grid(report, "attribute_f1"),
                          "attribute-f1"),
                    _grid("Error detection: macro-F1 within each attribute's items",
                          attribute_grid(report, "error_f1"), "error-f1"),
                ],
                "chance": chance_text(report),
                "dataset": [line.strip() for line in dataset_lines(report)],
                "figures": [figure for figure in cached_figures(report).values() if figure is not None],
            }
        )
    return render(request, "benchmark/results/shrec.html", context, status=400 if form.errors else 200)


def _refused(form: ShrecResultsForm, problem: str) -> HttpResponse:
    message = f"Bad choice: {form.errors.as_text()}" if form.errors else problem
    return HttpResponseBadRequest(message, content_type=TEXT_TYPE)


@require_GET
@researcher_required
def shrec_json(request: HttpRequest) -> HttpResponse:
    """Every number of the report, unrounded."""
    form, report, problem = _built(request)
    if report is None:
        return _refused(form, problem)
    response = HttpResponse(report_json(report), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="shrec.json"'
    return response


@require_GET
@researcher_required
def shrec_csv(request: HttpRequest, table: str) -> HttpResponse:
    """One table of the report as CSV."""
    if table not in CSV_TABLES:
        return HttpResponseBadRequest(
            f"Unknown table {table!r}; choose one of {', '.join(CSV_TABLES)}.", content_type=TEXT_TYPE
        )
    form, report, problem = _built(request)
    if report is None:
        return _refused(form, problem)
    response = HttpResponse(csv_table(table, report), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="shrec-{table}.csv"'
    return response


@require_GET
@researcher_required
def shrec_zip(request: HttpRequest) -> HttpResponse:
    """The report, its tables and its figures in one ZIP."""
    form, report, problem = _built(request)
    if report is None:
        return _refused(form, problem)
    response = HttpResponse(bundle_bytes(report), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="shrec.zip"'
    return response
