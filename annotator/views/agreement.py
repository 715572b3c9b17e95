"""Each annotator's agreement with the others and with gold, and MACE competence: the dashboard's partial.

The figures take a moment on a large study (MACE's restarts, per nominal question), so the dashboard loads
them after the page with htmx, and they are kept (``benchmark.caching``) until the study's answers, items or
gold change (``reports.stamp.study_stamp``). Any page that shows a study's annotators (the pool page) can
include the same loader.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from benchmark.caching import cached

from ..permissions import researcher_required
from ..reports import latest_submitted
from ..reports.annotators import annotator_quality_rows
from ..reports.stamp import study_stamp
from .research import researcher_studies


@require_GET
@researcher_required
def annotator_agreement(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(researcher_studies(request.user).select_related("instrument"), slug=slug)
    figures = cached(lambda: annotator_quality_rows(study, latest_submitted(study)),
                     "annotator-agreement", study_stamp(study))
    return render(request, "annotator/research/partials/_annotator_agreement.html",
                  {"study": study, "agreement": figures})
