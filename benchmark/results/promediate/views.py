"""The ProMediate results page and its downloads: researchers only, the asking researcher's teams only.

The page shows Table 1 (metrics per conflict mode and mediator condition), Table 2 (the Social mediator
per model), Table 3 (factor loadings), the ME–MI correlation, the human validation and the figures;
the downloads are ``promediate.json``, one CSV per table and a ZIP of all of them, for the same filters.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ...models import Episode
from ...permissions import researcher_required
from ..tables import report_json
from .build import build_promediate
from .bundle import bundle_bytes
from .figures import promediate_figures
from .forms import ProMediateFilterForm
from .tables import (
    CSV_TABLES,
    csv_table,
    human_grid,
    me_mi_text,
    methods,
    table1_grid,
    table2_grid,
    table2_title,
    table3_grid,
)

TEXT_TYPE = "text/plain; charset=utf-8"


def _built(request: HttpRequest) -> tuple[ProMediateFilterForm, Any]:
    episodes = Episode.objects.owned_by(request.user)
    form = ProMediateFilterForm(request.GET, episodes=episodes)
    filters = form.filters()
    return form, None if filters is None else build_promediate(filters, episodes)


def _grid(title: str, grid: tuple[list[str], list[list[str]]], name: str) -> dict[str, Any]:
    header, rows = grid
    return {"name": name, "title": title, "columns": header, "rows": rows if len(header) > 1 else []}


@require_GET
@researcher_required
def promediate(request: HttpRequest) -> HttpResponse:
    """The ProMediate analyses of the filtered episodes; bad filters are shown on the form."""
    form, built = _built(request)
    context: dict[str, Any] = {"form": form, "report": None, "query": request.GET.urlencode(), "csv_tables": CSV_TABLES}
    if built is not None:
        report = built[0]
        context.update(
            {
                "report": report,
                "tables": [
                    _grid("Table 1: metrics per conflict mode and mediator condition", table1_grid(report), "table1"),
                    _grid(table2_title(report), table2_grid(report), "table2"),
                    _grid(
                        "Table 3: factor loadings (varimax; * marks |loading| ≥ 0.40)", table3_grid(report), "table3"
                    ),
                ],
                "table3_note": report["table3"].get("note"),
                "me_mi": me_mi_text(report),
                "human": _grid("Human validation", human_grid(report), "human"),
                "figures": [figure for figure in promediate_figures(report).values() if figure is not None],
                "methods": methods(report),
            }
        )
    return render(request, "benchmark/results/promediate.html", context, status=200 if built else 400)


def _bad_filters(form: ProMediateFilterForm) -> HttpResponse:
    return HttpResponseBadRequest(f"Bad filters: {form.errors.as_text()}", content_type=TEXT_TYPE)


@require_GET
@researcher_required
def promediate_json(request: HttpRequest) -> HttpResponse:
    """Every number of the report, unrounded."""
    form, built = _built(request)
    if built is None:
        return _bad_filters(form)
    response = HttpResponse(report_json(built[0]), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="promediate.json"'
    return response


@require_GET
@researcher_required
def promediate_csv(request: HttpRequest, table: str) -> HttpResponse:
    """One table of the report, or the conversations behind it, as CSV."""
    if table not in CSV_TABLES:
        return HttpResponseBadRequest(
            f"Unknown table {table!r}; choose one of {', '.join(CSV_TABLES)}.", content_type=TEXT_TYPE
        )
    form, built = _built(request)
    if built is None:
        return _bad_filters(form)
    response = HttpResponse(csv_table(table, *built), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="promediate-{table}.csv"'
    return response


@require_GET
@researcher_required
def promediate_zip(request: HttpRequest) -> HttpResponse:
    """The report, its tables and its figures in one ZIP."""
    form, built = _built(request)
    if built is None:
        return _bad_filters(form)
    response = HttpResponse(bundle_bytes(*built), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="promediate.zip"'
    return response
