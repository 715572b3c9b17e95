"""Researcher pages for simulation runs: launch one, list them, watch one's progress, cancel or resume it.

A run executes outside the request, in a detached ``manage.py simulate --run <id>`` process
(:func:`benchmark.runs.launching.start_worker`). These views only read and write the ``SimulationRun`` row,
so any server process can answer them and a page reload changes nothing. Every view is behind
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

from ..models import SimulationRun
from ..permissions import researcher_required
from .forms import RunForm
from .launching import TeamRunsFull, launch_run, request_cancel, resume_run, unused_tag
from .options import RunOptionsError, describe_options
from .status import may_control, run_progress

RUNS_PER_PAGE = 50


@require_GET
@researcher_required
def run_list(request: HttpRequest) -> HttpResponse:
    """The runs of the researcher's teams, newest first; the counts are the ones the workers last wrote."""
    runs = SimulationRun.objects.owned_by(request.user).select_related("created_by").order_by("-created_at", "-pk")
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [run_progress(run, request.user, turns=0) for run in page.object_list]
    return render(request, "benchmark/runs/list.html", {"page": page, "rows": rows})


@require_http_methods(["GET", "POST"])
@researcher_required
def run_new(request: HttpRequest) -> HttpResponse:
    """The launch form; a valid run is stored and its worker started once the row is committed."""
    form = RunForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        team = form.cleaned_data["team"]
        tag = form.cleaned_data["tag"] or unused_tag(timezone.now().strftime("run-%Y%m%d-%H%M"), team)
        try:
            run = launch_run(form.options(), tag, team, request.user)
        except TeamRunsFull as busy:
            form.add_error(None, str(busy))
        except RunOptionsError as error:
            form.add_error(error.option if error.option in form.fields else None, str(error))
        else:
            messages.success(request, f"Run {run.tag} launched: {run.total} episodes.")
            return redirect("benchmark:run", pk=run.pk)
    limits = {"runs": settings.PARLEY_TEAM_MAX_RUNS, "workers": settings.PARLEY_RUN_MAX_WORKERS}
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
    """Ask the run's worker to stop; its unfinished episodes stay resumable."""
    run = get_object_or_404(SimulationRun.objects.owned_by(request.user), pk=pk)
    if not may_control(request.user, run):
        raise PermissionDenied("Only the researcher who launched this run can cancel it.")
    request_cancel(run)
    messages.info(request, f"Run {run.tag}: cancel requested; episodes in flight stop, finished ones stay.")
    return redirect("benchmark:run", pk=run.pk)


@require_POST
@researcher_required
def run_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """Start a new worker for a run that stopped early or whose worker died."""
    run = get_object_or_404(SimulationRun.objects.owned_by(request.user), pk=pk)
    if not may_control(request.user, run):
        raise PermissionDenied("Only the researcher who launched this run can resume it.")
    try:
        resumed = resume_run(run)
    except TeamRunsFull as busy:
        messages.error(request, f"Run {run.tag} cannot be resumed now: {busy}")
        return redirect("benchmark:run", pk=run.pk)
    if resumed:
        messages.success(request, f"Run {run.tag} resumed: finished episodes are kept, the others go on.")
    else:
        messages.error(request, f"Run {run.tag} cannot be resumed now: it is {run.get_status_display()}.")
    return redirect("benchmark:run", pk=run.pk)
