"""The import page: upload files, watch their dry run, import them, watch the import.

The work happens in a task on the queue (:mod:`benchmark.import_jobs.jobs`); these views store the
upload, read the job's row and its progress, and queue the import when asked. A queue that cannot be
reached is said on the page, and nothing is stored. Every view is behind
``researcher_required`` and finds jobs through ``ImportJob.objects.owned_by``: another team's job is
a 404.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..jobs.queue import QueueUnavailable
from ..models import ImportJob
from ..permissions import researcher_required
from .forms import ImportForm
from .jobs import TeamImportsFull, start_import, store_upload
from .status import job_status

RECENT_JOBS = 20


@require_http_methods(["GET", "POST"])
@researcher_required
def import_page(request: HttpRequest) -> HttpResponse:
    """The upload form, and the latest imports of the researcher's teams."""
    form = ImportForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = store_upload(data["team"], request.user, data["files"], data["format"])
        except OSError as error:
            form.add_error(None, f"The files could not be stored on the server ({error.strerror or 'error'}).")
        except (TeamImportsFull, QueueUnavailable) as refused:
            form.add_error(None, str(refused))
        else:
            return redirect("benchmark:import-job", pk=job.pk)
    jobs = ImportJob.objects.owned_by(request.user).select_related("team", "created_by")[:RECENT_JOBS]
    context = {
        "form": form, "jobs": jobs, "max_bytes": settings.PARLEY_IMPORT_MAX_BYTES,
        "max_imports": settings.PARLEY_TEAM_MAX_IMPORTS,
    }
    return render(request, "benchmark/imports/page.html", context)


def _owned_job(request: HttpRequest, pk: int) -> ImportJob:
    jobs = ImportJob.objects.owned_by(request.user).select_related("team", "created_by", "queue_job")
    return get_object_or_404(jobs, pk=pk)


@require_GET
@researcher_required
def import_job(request: HttpRequest, pk: int) -> HttpResponse:
    return render(request, "benchmark/imports/job.html", {"status": job_status(_owned_job(request, pk), request.user)})


@require_GET
@researcher_required
def import_job_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """What the job page polls while its task is queued or at work."""
    status = job_status(_owned_job(request, pk), request.user)
    return render(request, "benchmark/imports/partials/_job.html", {"status": status})


@require_POST
@researcher_required
def import_job_start(request: HttpRequest, pk: int) -> HttpResponse:
    """Import for real the files a dry run checked."""
    job = _owned_job(request, pk)
    try:
        started = start_import(job, request.user)
    except (TeamImportsFull, QueueUnavailable) as refused:
        messages.error(request, str(refused))
        return redirect("benchmark:import-job", pk=job.pk)
    if not started:
        messages.error(request, f"These files cannot be imported now: the job is {job.get_status_display()}.")
    return redirect("benchmark:import-job", pk=job.pk)
