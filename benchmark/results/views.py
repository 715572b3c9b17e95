"""The results page and its downloads: researchers only, filtered by GET, the same numbers as the command.

The page shows SocialVeil's Table 2 (all scenarios and per difficulty), the barrier signatures and
the linguistic correlations, each with an inline SVG figure that the page asks for once it is shown
(``results_figure``, htmx), so the page answers before three figures are drawn; the downloads are
``results.json`` and CSV tables, for the same filters (the page's query string). The report and
its figures are kept between loads while the data is unchanged (``report_cache``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..models import Episode
from ..permissions import researcher_required
from .build import ResultFilters, ResultsProblem
from .figures import RESULTS_FIGURES
from .forms import ResultFilterForm
from .report_cache import cached_figures, cached_results
from .tables import (
    CSV_TABLES,
    correlations_display,
    csv_table,
    deviations_display,
    evaluators_display,
    means_display,
    report_json,
)

if TYPE_CHECKING:
    import pandas as pd

JSON_TYPE = "application/json; charset=utf-8"
CSV_TYPE = "text/csv; charset=utf-8"


@require_GET
@researcher_required
def results(request: HttpRequest) -> HttpResponse:
    """The results of the filtered episodes under one judge; bad filters are shown on the form."""
    episodes = Episode.objects.owned_by(request.user)
    form = ResultFilterForm(request.GET, episodes=episodes)
    filters = form.filters()
    context = {"form": form, "report": None, "problem": None, "query": request.GET.urlencode(),
               "csv_tables": CSV_TABLES}
    if filters is not None:
        try:
            report, _ = cached_results(filters, episodes)
        except ResultsProblem as problem:
            context["problem"] = str(problem)
        else:
            context.update(page_context(report))
    status = 400 if filters is None or context["problem"] else 200
    return render(request, "benchmark/results/page.html", context, status=status)


def page_context(report: dict[str, Any]) -> dict[str, Any]:
    """What the template shows: the report, its rows rounded for reading, and where its figures go (each is
    drawn by ``results_figure``, which the page asks for once shown)."""
    blocks = means_display(report)
    for block in blocks:
        block["figure"] = "means" if block["split"] == "all" and report["models"] else None
    deviation_rows = deviations_display(report)
    return {
        "report": report,
        "respondent_kind": report["respondent_kind"],
        "evaluators": evaluators_display(report),
        "means_blocks": blocks,
        "deviation_rows": deviation_rows,
        "deviation_figures": bool(report["models"] and any(e["deviation"] is not None for e in report["deviations"])),
        "correlation_rows": correlations_display(report),
        "correlation_figure": bool(report["models"] and report.get("features")),
        "methods": [(name.replace("_", " ").capitalize(), text) for name, text in report["methods"].items()],
    }


def _report_or_error(request: HttpRequest) -> tuple[dict[str, Any], pd.DataFrame] | HttpResponse:
    episodes = Episode.objects.owned_by(request.user)
    form = ResultFilterForm(request.GET, episodes=episodes)
    filters: ResultFilters | None = form.filters()
    if filters is None:
        problems = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
        return HttpResponseBadRequest(f"Bad filters: {problems}", content_type="text/plain; charset=utf-8")
    try:
        return cached_results(filters, episodes)
    except ResultsProblem as problem:
        return HttpResponseBadRequest(str(problem), content_type="text/plain; charset=utf-8")


@require_GET
@researcher_required
def results_figure(request: HttpRequest, name: str) -> HttpResponse:
    """One of the page's figures (``means``, ``deviations``, ``correlations``) for the page's filters, as the
    HTML the page swaps in where the figure goes."""
    if name not in RESULTS_FIGURES:
        raise Http404(f"No results figure {name!r}.")
    built = _report_or_error(request)
    if isinstance(built, HttpResponse):
        return built
    return render(request, "benchmark/results/partials/_figures.html", {"figures": cached_figures(built[0], name)})


@require_GET
@researcher_required
def results_json(request: HttpRequest) -> HttpResponse:
    """Every number of the report, unrounded (docs/results-schema.md)."""
    built = _report_or_error(request)
    if isinstance(built, HttpResponse):
        return built
    response = HttpResponse(report_json(built[0]), content_type=JSON_TYPE)
    response["Content-Disposition"] = 'attachment; filename="results.json"'
    return response


@require_GET
@researcher_required
def results_csv(request: HttpRequest, table: str) -> HttpResponse:
    """One table of the report as CSV: means, deviations, correlations, or the episodes behind them."""
    if table not in CSV_TABLES:
        return HttpResponseBadRequest(
            f"Unknown table {table!r}; choose one of {', '.join(CSV_TABLES)}.", content_type="text/plain; charset=utf-8"
        )
    built = _report_or_error(request)
    if isinstance(built, HttpResponse):
        return built
    report, frame = built
    response = HttpResponse(csv_table(table, report, frame), content_type=CSV_TYPE)
    response["Content-Disposition"] = f'attachment; filename="results-{table}.csv"'
    return response
