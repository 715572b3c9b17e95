"""The jobs page: the long work of the researcher's teams on the task queue, and retrying what failed.

Researchers see their teams' jobs (``Job.objects.owned_by``); superusers see every team's and the
upkeep that belongs to none. The list refreshes itself with htmx while any job shown is at work.
Retrying is a POST that queues the failed job's task again as a new job
(:func:`benchmark.jobs.queue.retry`); another team's job is a 404, as if it did not exist.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from ..models import Job
from ..permissions import researcher_required
from . import queue
from .forms import JobFilterForm
from .listing import at_work, job_rows, may_retry, queue_state

JOBS_PER_PAGE = 50


@require_GET
@researcher_required
def job_list(request: HttpRequest) -> HttpResponse:
    """Newest first, filtered by status; an htmx request (the page polling itself) gets only the list."""
    form = JobFilterForm(request.GET)
    jobs = form.filter(Job.objects.owned_by(request.user).select_related("team", "created_by"))
    page = Paginator(jobs.order_by("-created_at", "-pk"), JOBS_PER_PAGE).get_page(request.GET.get("page"))
    rows = job_rows(page.object_list)
    context = {
        "form": form,
        "page": page,
        "rows": rows,
        "polling": at_work(rows),
        "queue": queue_state(),
        "show_team": request.user.is_superuser,
    }
    if request.htmx and not request.htmx.history_restore_request:
        response = render(request, "benchmark/jobs/partials/_jobs.html", context)
    else:
        response = render(request, "benchmark/jobs/list.html", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_POST
@researcher_required
def job_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a failed job's task again (a new job); the failed one stays listed as it was."""
    job = get_object_or_404(Job.objects.owned_by(request.user).select_related("team"), pk=pk)
    if not may_retry(job):
        if job.status != Job.Status.FAILED:
            reason = f"it is {job.get_status_display()}, not failed"
        elif job.retried_as_id is not None:
            reason = f"it was retried already, as job {job.retried_as_id}"
        else:
            reason = "its task is not one this Parley can start again"
        messages.error(request, f"“{job.label}” cannot be retried: {reason}.")
        return redirect("benchmark:jobs")
    try:
        queue.check_queue()
    except queue.QueueUnavailable as down:
        messages.error(request, str(down))
        return redirect("benchmark:jobs")
    again = queue.retry(job, user=request.user)
    if again is None:  # another request retried or changed it a moment ago
        messages.error(request, f"“{job.label}” cannot be retried now: reload the page to see where it is.")
    else:
        messages.success(request, f"“{job.label}” queued again as job {again.pk}; the failed one stays listed.")
    return redirect("benchmark:jobs")
