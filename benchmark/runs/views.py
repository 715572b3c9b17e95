"""Researcher pages for simulation runs: launch one, list them, watch one's progress, cancel or resume it.

A run is played outside the request, in chunks on the task queue's consumers
(:mod:`benchmark.runs.chunks`). These views only read and write the ``SimulationRun`` row (and read
its chunks'), so any server process can answer them and a page reload changes nothing; a queue that
cannot be reached is said on the page, with nothing written. Every view is behind
``researcher_required``; cancelling and resuming also need :func:`benchmark.runs.status.may_control`.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..jobs.queue import QueueUnavailable
from ..models import SimulationRun
from ..permissions import researcher_required
from .control import TeamRunsFull, launch_run, request_cancel, resume_run, unused_tag
from .forms import RunForm
from .options import RunOptionsError, describe_options
from .status import may_control, run_progress

RUNS_PER_PAGE = 50


@require_GET
@researcher_required
def run_list(request: HttpRequest) -> HttpResponse:
    """The runs of the researcher's teams, newest first; the counts are the ones the chunks last wrote."""
    runs = SimulationRun.objects.owned_by(request.user).select_related("created_by").order_by("-created_at", "-pk")
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [run_progress(run, request.user, turns=0, with_chunks=False) for run in page.object_list]
    return render(request, "benchmark/runs/list.html", {"page": page, "rows": rows})


@require_http_methods(["GET", "POST"])
@researcher_required
def run_new(request: HttpRequest) -> HttpResponse:
    """The launch form; a valid run is stored and its work queued once the row is committed."""
    form = RunForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        team = form.cleaned_data["team"]
        tag = form.cleaned_data["tag"] or unused_tag(timezone.now().strftime("run-%Y%m%d-%H%M"), team)
        try:
            run = launch_run(form.options(), tag, team, request.user)
        except (TeamRunsFull, QueueUnavailable) as refused:
            form.add_error(None, str(refused))
        except RunOptionsError as error:
            form.add_error(error.option if error.option in form.fields else None, str(error))
        else:
            messages.success(request, f"Run {run.tag} launched: {run.total} episodes.")
            return redirect("benchmark:run", pk=run.pk)
    limits = {"runs": settings.PARLEY_TEAM_MAX_RUNS}
    return render(request, "benchmark/runs/new.html", {"form": form, "limits": limits})


@require_GET
@researcher_required
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(SimulationRun.objects.owned_by(request.user).select_related("created_by"), pk=pk)
    context = {"progress": run_progress(run, request.user), "options": describe_options(run.options)}
    return render(request, "benchmark/runs/detail.html", context)


@require_GET
@researcher_required
def run_progress_partial(request: HttpRequest, pk: int) -> HttpResponse:
    """What the run page polls every two seconds while the run is going."""
    run = get_object_or_404(SimulationRun.objects.owned_by(request.user).select_related("created_by"), pk=pk)
    return render(request, "benchmark/runs/partials/_progress.html", {"progress": run_progress(run, request.user)})


@require_POST
@researcher_required
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask the run's chunks to stop (within two seconds, on every consumer); its unfinished episodes stay resumable."""
    run = get_object_or_404(SimulationRun.objects.owned_by(request.user), pk=pk)
    if not may_control(request.user, run):
        raise PermissionDenied("Only the researcher who launched this run can cancel it.")
    request_cancel(run)
    messages.info(request, f"Run {run.tag}: cancel requested; episodes in flight stop, finished ones stay.")
    return redirect("benchmark:run", pk=run.pk)


@require_POST
@researcher_required
def run_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue again a run that stopped early or that nothing works on any more."""
    run = get_object_or_404(SimulationRun.objects.owned_by(request.user), pk=pk)
    if not may_control(request.user, run):
        raise PermissionDenied("Only the researcher who launched this run can resume it.")
    try:
        resumed = resume_run(run)
    except (TeamRunsFull, QueueUnavailable) as refused:
        messages.error(request, f"Run {run.tag} cannot be resumed now: {refused}")
        return redirect("benchmark:run", pk=run.pk)
    if resumed:
        messages.success(request, f"Run {run.tag} resumed: finished episodes are kept, the others go on.")
    else:
        messages.error(request, f"Run {run.tag} cannot be resumed now: it is {run.get_status_display()}.")
    return redirect("benchmark:run", pk=run.pk)
