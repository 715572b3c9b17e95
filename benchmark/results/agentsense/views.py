"""The AgentSense results page and its downloads: researchers only, the asking researcher's teams only.

The page shows goal completion per model and perspective, by ERG need, goal type and scenario
category, the over-estimation of self and other against the judges, attackers and defenders, PSI,
sender × receiver pairings and the agreement between perspectives, each table with its CIs and n,
with SVG figures; the downloads are ``agentsense.json`` and one CSV per table, for the same filters.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ...models import Episode
from ...permissions import researcher_required
from ..tables import report_json
from .figures import agentsense_figures
from .forms import AgentSenseFilterForm
from .records import build_agentsense
from .tables import CSV_TABLES, csv_table, display_columns, display_rows, methods, report_tables

TEXT_TYPE = "text/plain; charset=utf-8"


def _built(request: HttpRequest) -> tuple[AgentSenseFilterForm, Any]:
    episodes = Episode.objects.owned_by(request.user)
    form = AgentSenseFilterForm(request.GET, episodes=episodes)
    filters = form.filters()
    return form, None if filters is None else build_agentsense(filters, episodes)


@require_GET
@researcher_required
def agentsense(request: HttpRequest) -> HttpResponse:
    """The analyses of the filtered episodes; bad filters are shown on the form."""
    form, built = _built(request)
    context: dict[str, Any] = {"form": form, "report": None, "query": request.GET.urlencode(),
                               "csv_tables": CSV_TABLES}
    if built is not None:
        report = built[0]
        figures = agentsense_figures(report)
        context.update({
            "report": report,
            "has_answers": bool(report["counts"]["goal_answers"] or report["counts"]["probe_answers"]),
            "tables": [
                {"name": table.name, "title": table.title, "columns": display_columns(table),
                 "rows": display_rows(table)}
                for table in report_tables(report).values()
            ],
            "figures": [figure for figure in figures.values() if figure is not None],
            "methods": methods(report),
        })
    return render(request, "benchmark/results/agentsense.html", context, status=200 if built else 400)


@require_GET
@researcher_required
def agentsense_json(request: HttpRequest) -> HttpResponse:
    """Every number of the report, unrounded (docs/results-schema.md)."""
    form, built = _built(request)
    if built is None:
        return HttpResponseBadRequest(f"Bad filters: {form.errors.as_text()}", content_type=TEXT_TYPE)
    response = HttpResponse(report_json(built[0]), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="agentsense.json"'
    return response


@require_GET
@researcher_required
def agentsense_csv(request: HttpRequest, table: str) -> HttpResponse:
    """One table of the report, or the answers behind it, as CSV."""
    if table not in CSV_TABLES:
        return HttpResponseBadRequest(f"Unknown table {table!r}; choose one of {', '.join(CSV_TABLES)}.",
                                      content_type=TEXT_TYPE)
    form, built = _built(request)
    if built is None:
        return HttpResponseBadRequest(f"Bad filters: {form.errors.as_text()}", content_type=TEXT_TYPE)
    response = HttpResponse(csv_table(table, *built), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="agentsense-{table}.csv"'
    return response
