"""A run's chunks whose consumer died, queued again; and a run's own tasks, restarted when lost.

A playing chunk beats once a second (:mod:`.chunks`). :func:`requeue_stale_chunks` queues again, as
a new attempt, every running chunk whose heartbeat is older than ``PARLEY_RUN_STALE_SECONDS``: the new
attempt resumes each episode from its next turn (every turn is stored the moment it is played), and
the superseded attempt, if it still lives, stops at its next beat. It is called by the run's watch
(:func:`watch_run`, every few seconds while the run's chunks are at work, on any consumer) and by a
periodic task every minute (Huey's finest period), which also restarts a run's lost watch, preparing
or finishing task.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from ..models import RunChunk, SimulationRun
from .chunks import (
    AT_WORK,
    back_to_pending,
    end_chunk,
    locked_run,
    queue_finish,
    queue_run,
    run_link,
    schedule_watch,
    stale_after,
    task,
)
from .status import LOST_TASK_AFTER

logger = logging.getLogger(__name__)


def requeue_stale_chunks(run_id: int | None = None) -> int:
    """Queue again, as a new attempt, every running chunk (of ``run_id``, or of every run) whose heartbeat
    is older than the stale period; its running episodes go back to pending. The number queued again.

    Without a run named (the periodic task), a run whose preparing or finishing task was lost (its
    heartbeat stale, no chunk at work) gets that task queued again, and a lost watch is started again.
    """
    from ..jobs.queue import enqueue

    cut = timezone.now() - stale_after()
    stale = RunChunk.objects.filter(status=RunChunk.Status.RUNNING, heartbeat_at__lt=cut)
    if run_id is not None:
        stale = stale.filter(run_id=run_id)
    queued = 0
    for chunk in stale.select_related("run"):
        with transaction.atomic():
            run = locked_run(chunk.run_id)
            values: dict[str, Any] = {"worker": "", "heartbeat_at": None}
            if run.done or run.cancel_requested:
                values.update(status=RunChunk.Status.CANCELLED, finished_at=timezone.now())
            else:
                values.update(status=RunChunk.Status.QUEUED, attempt=chunk.attempt + 1, started_at=None)
            if not RunChunk.objects.filter(
                pk=chunk.pk, attempt=chunk.attempt, status=RunChunk.Status.RUNNING, heartbeat_at__lt=cut
            ).update(**values):
                continue
            back_to_pending(chunk.episodes)
            if values["status"] == RunChunk.Status.CANCELLED:
                end_chunk(chunk, chunk.attempt, None)
                continue
            logger.warning("Chunk %s of run %s lost its consumer; queued again (attempt %s)", chunk.number,
                           run.tag, chunk.attempt + 1)
            enqueue(
                task("play_run_chunk"), chunk.pk, chunk.attempt + 1, team=run.team, user=run.created_by,
                label=f"Run {run.tag}: chunk {chunk.number} of {run.chunks.count()} (attempt {chunk.attempt + 2})",
                link=run_link(run.pk),
            )
            queued += 1
    queued += _requeue_lost_queued_chunks(run_id, cut)
    if run_id is None:
        _restart_lost_tasks(cut)
    return queued


def _requeue_lost_queued_chunks(run_id: int | None, cut: Any) -> int:
    """Queue again the queued chunks whose task is no longer on the queue: a consumer took the task off the
    queue and died before claiming the chunk (Huey's queues hold no unacknowledged messages), so the chunk
    would wait forever and the run never finish. Looked for only in a run with queued chunks, none running
    and nothing done for the stale period, and then checked against the queue's pending tasks, so a chunk
    merely waiting behind other work keeps its place."""
    from ..jobs.queue import HUEY, enqueue

    runs = SimulationRun.objects.filter(status=SimulationRun.Status.RUNNING, chunks__status=RunChunk.Status.QUEUED)
    runs = runs.exclude(chunks__status=RunChunk.Status.RUNNING).distinct()
    if run_id is not None:
        runs = runs.filter(pk=run_id)
    idle = []
    for run in runs.select_related("team", "created_by"):
        last = run.chunks.aggregate(Max("started_at"), Max("heartbeat_at"), Max("finished_at")).values()
        moments = [moment for moment in (run.started_at, *last) if moment is not None]
        if not moments or max(moments) < cut:
            idle.append(run)
    if not idle:
        return 0
    name = task("play_run_chunk").task_class.__name__
    pending = {tuple(item.args[:2]) for item in HUEY.pending() if type(item).__name__ == name}
    queued = 0
    for run in idle:
        for chunk in run.chunks.filter(status=RunChunk.Status.QUEUED):
            if (chunk.pk, chunk.attempt) in pending:
                continue
            with transaction.atomic():
                unchanged = RunChunk.objects.filter(pk=chunk.pk, attempt=chunk.attempt, status=RunChunk.Status.QUEUED)
                if not unchanged.update(attempt=chunk.attempt + 1):
                    continue
                logger.warning("Chunk %s of run %s was taken off the queue by a consumer that stopped; queued again "
                               "(attempt %s)", chunk.number, run.tag, chunk.attempt + 1)
                enqueue(
                    task("play_run_chunk"), chunk.pk, chunk.attempt + 1, team=run.team, user=run.created_by,
                    label=f"Run {run.tag}: chunk {chunk.number} of {run.chunks.count()} (attempt {chunk.attempt + 2})",
                    link=run_link(run.pk),
                )
                queued += 1
    return queued


def _restart_lost_tasks(cut: Any) -> None:
    """A lost watch is restarted after the stale period; a preparing or finishing task only after
    ``LOST_TASK_AFTER`` too, since it beats between batches (of episodes created, of judged episodes)
    and a slow judge's batch must not make a second finishing task start beside the first."""
    lost = SimulationRun.objects.filter(status=SimulationRun.Status.RUNNING, heartbeat_at__lt=cut)
    for run in lost.select_related("team", "created_by"):
        at_work = run.chunks.filter(status__in=AT_WORK)
        if at_work.exists():
            token = uuid.uuid4().hex
            SimulationRun.objects.filter(pk=run.pk).update(watch_token=token, heartbeat_at=timezone.now())
            schedule_watch(run.pk, token, delay=0)
        elif run.heartbeat_at >= timezone.now() - LOST_TASK_AFTER:
            continue
        elif run.chunks.exists():
            logger.warning("Run %s lost its finishing task; queued again", run.tag)
            SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
            queue_finish(run)
        else:
            logger.warning("Run %s lost its preparing task; queued again", run.tag)
            queue_run(run)


def watch_run(run_id: int, token: str) -> None:
    """Re-queue the run's stale chunks and schedule the next watch, while its chunks are at work.

    Only the watch holding the run's ``watch_token`` goes on (a queue may hand a scheduled task to two
    consumers; the second finds the token changed and stops), and each watch beats the run's row, so
    the periodic task can tell a lost watch.
    """
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.done or run.watch_token != token:
            return
        if not run.chunks.filter(status__in=AT_WORK).exists():
            return
        token = uuid.uuid4().hex
        SimulationRun.objects.filter(pk=run_id).update(watch_token=token, heartbeat_at=timezone.now())
    requeue_stale_chunks(run_id)
    schedule_watch(run_id, token)
