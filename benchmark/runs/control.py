"""What the pages and the ``simulate`` command do to a run: create, launch, resume and cancel it, within
the team's limit of runs at work.

Launching or resuming writes the run's row and queues its preparing task
(:func:`benchmark.runs.chunks.queue_run`) when the transaction commits; consumers on any machine
then play its chunks. The queue is checked first (:func:`benchmark.jobs.queue.check_queue`), so a
queue that is down leaves nothing written.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..jobs.queue import check_queue
from ..models import Episode, RunChunk, SimulationRun, Team
from .chunks import queue_run
from .options import RunOptions
from .planning import plan_run
from .status import can_resume, close, is_stale, stale_period

__all__ = [
    "TeamRunsFull", "create_run", "launch_run", "request_cancel", "resume_run", "runs_at_work", "take_run_slot",
    "unused_tag",
]


class TeamRunsFull(RuntimeError):
    """The team already has as many runs at work as one team may (``PARLEY_TEAM_MAX_RUNS``)."""


def runs_at_work(team: Team) -> int:
    """The team's runs queued or running that something works on (not lost: ``is_stale``)."""
    waiting = SimulationRun.objects.of_team(team).filter(
        status__in=[SimulationRun.Status.QUEUED, SimulationRun.Status.RUNNING]
    )
    return sum(1 for run in waiting.only("pk", "status", "heartbeat_at", "created_at") if not is_stale(run))


def take_run_slot(team: Team) -> None:
    """Refuse one more run of ``team`` when it has ``PARLEY_TEAM_MAX_RUNS`` at work already.

    Call inside the transaction that queues the run: the team's row stays locked until it commits, so
    two launches at the same moment are counted one after the other.
    """
    Team.objects.select_for_update().filter(pk=team.pk).first()
    limit = settings.PARLEY_TEAM_MAX_RUNS
    if runs_at_work(team) >= limit:
        raise TeamRunsFull(
            f"{team} already has {limit} run{'s' if limit != 1 else ''} queued or running, the most one team may "
            "have at once: wait for one to end, or cancel one."
        )


def create_run(options: RunOptions, tag: str, team: Team, user: Any = None) -> SimulationRun:
    """A queued run of ``team`` for ``options``, checked against the team's data, stored with the model
    names resolved (nothing is queued)."""
    plan = plan_run(options, team, tag)
    return SimulationRun.objects.create(
        team=team, tag=plan.tag, options=plan.options.as_dict(), created_by=user, total=plan.total,
        heartbeat_at=timezone.now(),
    )


def launch_run(options: RunOptions, tag: str, team: Team, user: Any = None) -> SimulationRun:
    """Store a queued run and queue its work once the row is committed.

    Raises :class:`TeamRunsFull` when the team has as many runs at work as it may,
    ``RunOptionsError`` for options the team's data refuses, and ``QueueUnavailable`` (before writing
    anything) when the task queue cannot be reached.
    """
    check_queue()
    with transaction.atomic():
        take_run_slot(team)
        run = create_run(options, tag, team, user)
        queue_run(run)
    return run


def resume_run(run: SimulationRun) -> bool:
    """Queue a stopped (or lost) run again; False when it cannot be resumed now.

    Its finished episodes are kept and the others resume from their next turn. The row is locked while
    deciding, so two clicks queue it once. Raises :class:`TeamRunsFull` and ``QueueUnavailable`` as
    :func:`launch_run` does.
    """
    check_queue()
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update(of=("self",)).select_related("team", "created_by").get(pk=run.pk)
        if not can_resume(run):
            return False
        take_run_slot(run.team)
        SimulationRun.objects.filter(pk=run.pk).update(
            status=SimulationRun.Status.QUEUED, cancel_requested=False, heartbeat_at=timezone.now(),
            finished_at=None, message="",
        )
        queue_run(run)
    return True


def unused_tag(base: str, team: Team) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever no run of the team has yet."""
    taken = set(SimulationRun.objects.of_team(team).filter(tag__startswith=base).values_list("tag", flat=True))
    if base not in taken:
        return base
    number = 2
    while f"{base}-{number}" in taken:
        number += 1
    return f"{base}-{number}"


def request_cancel(run: SimulationRun) -> None:
    """Ask the run's chunks to stop (each stops at its next beat, within two seconds).

    Queued chunks are cancelled at once; a run with no chunk beating is marked cancelled at once, its
    episodes that were in flight back to pending.
    """
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run.pk)
        if run.done:
            return
        now = timezone.now()
        run.chunks.filter(status=RunChunk.Status.QUEUED).update(status=RunChunk.Status.CANCELLED, finished_at=now)
        SimulationRun.objects.filter(pk=run.pk).update(cancel_requested=True)
        beating = run.chunks.filter(status=RunChunk.Status.RUNNING, heartbeat_at__gte=now - stale_period())
        if beating.exists():
            return
        if run.status == SimulationRun.Status.RUNNING and not run.chunks.exists() and not is_stale(run, now):
            return  # its preparing task is at work: it stops before queueing any chunk
        lost = list(run.chunks.filter(status=RunChunk.Status.RUNNING))
        run.chunks.filter(status=RunChunk.Status.RUNNING).update(status=RunChunk.Status.CANCELLED, finished_at=now)
        ids = [int(pk) for chunk in lost for pk, _ in chunk.episodes]
        Episode.objects.filter(pk__in=ids, status=Episode.Status.RUNNING).update(status=Episode.Status.PENDING)
        started = run.chunks.exclude(started_at=None).exists()
        message = "Cancelled." if started else "Cancelled before a consumer took it."
        close(run.pk, SimulationRun.Status.CANCELLED, message)
