"""A run's row: who executes it, whether its worker is alive, its counts, and what its page shows.

The process that executes a run writes its pid, a heartbeat and the counts here; every web page
reads only this row, so any server process can answer, and a run whose heartbeat is older than
``STALE_AFTER`` is known to have lost its worker.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from ..agents import llm
from ..models import Episode, SimulationRun, Team, Turn
from .options import RunOptions
from .planning import chunks

STALE_AFTER = timedelta(seconds=30)


class RunBusy(RuntimeError):
    """Another live process is executing this run."""


class RunCancelled(RuntimeError):
    """The run was cancelled before this worker started; it must be resumed explicitly."""


def is_stale(run: SimulationRun, now: Any = None) -> bool:
    """A run that should have a live worker but has not heard from it for ``STALE_AFTER``."""
    if run.done:
        return False
    now = now or timezone.now()
    last = run.heartbeat_at or run.created_at
    return last < now - STALE_AFTER


def can_resume(run: SimulationRun) -> bool:
    """A run that ended without finishing everything, or whose worker died, may get a new worker."""
    if run.status == SimulationRun.Status.FINISHED:
        return False
    return run.done or is_stale(run)


def may_control(user: Any, run: SimulationRun) -> bool:
    """Cancel and resume belong to whoever launched the run; a command-line run to any researcher
    of its team. ``run`` comes from ``SimulationRun.objects.owned_by(user)``: the team is checked there."""
    return bool(user.is_superuser or run.created_by_id is None or run.created_by_id == user.pk)


def run_for_command(options: RunOptions, tag: str, team: Team) -> SimulationRun:
    """The team's latest run with ``tag``, or a new one. Running the command again is a request to
    resume, so a cancel is lifted and the options brought up to date."""
    run = SimulationRun.objects.of_team(team).filter(tag=tag).order_by("-created_at", "-pk").first()
    if run is None:
        return SimulationRun.objects.create(team=team, tag=tag, options=options.as_dict())
    SimulationRun.objects.filter(pk=run.pk).update(options=options.as_dict(), cancel_requested=False)
    run.options, run.cancel_requested = options.as_dict(), False
    return run


def claim(run_id: int, total: int | None = None) -> SimulationRun:
    """Mark the run as executed by this process, unless another live process executes it or it was
    cancelled before this worker got to it (a cancel is lifted only by resuming)."""
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run_id)
        if run.cancel_requested:
            if not run.done:
                close(run.pk, SimulationRun.Status.CANCELLED, run.message or "Cancelled before a worker ran it.")
            raise RunCancelled(
                f"Run {run.tag} was cancelled; resume it from its page, or run the simulate command with "
                f"--tag {run.tag} again."
            )
        now = timezone.now()
        alive = run.status == SimulationRun.Status.RUNNING and not is_stale(run, now)
        if alive and run.worker_pid not in (None, os.getpid()):
            raise RunBusy(
                f"Run {run.tag} is being executed by process {run.worker_pid} "
                f"(last heartbeat {int((now - run.heartbeat_at).total_seconds())} s ago); "
                "cancel it or wait for it to finish."
            )
        run.status = SimulationRun.Status.RUNNING
        run.worker_pid = os.getpid()
        run.heartbeat_at = now
        run.started_at = run.started_at or now
        run.finished_at = None
        run.message = ""
        if total is not None:
            run.total = total
        run.save(
            update_fields=["status", "worker_pid", "heartbeat_at", "started_at", "finished_at", "message", "total"]
        )
    return run


def heartbeat(run_id: int) -> None:
    SimulationRun.objects.filter(pk=run_id).update(heartbeat_at=timezone.now())


def close(run_id: int, status: str, message: str, counts: Snapshot | None = None) -> None:
    values: dict[str, Any] = {"status": status, "message": message, "finished_at": timezone.now()}
    if counts is not None:
        values.update(finished=counts.finished, failed=counts.failed)
    SimulationRun.objects.filter(pk=run_id).update(**values)


def unexpected(error: BaseException) -> str:
    """How a run's message names an error nobody planned for: its kind only.

    A run's message is shown on the run page, and an unexpected exception's text may name files on
    the server (an OSError always does); the whole traceback is in the worker's log instead.
    """
    return f"{type(error).__name__} (the server log has the details)"


@dataclass
class Snapshot:
    """The run's episodes as the database has them now."""

    finished: int
    failed: int
    turns: int
    model_turns: int


def snapshot(episode_ids: Sequence[int]) -> Snapshot:
    """Counts over the run's own episodes (a tag may also carry episodes an earlier plan made)."""
    total = Snapshot(0, 0, 0, 0)
    for chunk in chunks(episode_ids):
        counts = Episode.objects.filter(pk__in=chunk).aggregate(
            finished=Count("pk", filter=Q(status=Episode.Status.FINISHED)),
            failed=Count("pk", filter=Q(status=Episode.Status.FAILED)),
        )
        turns = Turn.objects.filter(episode_id__in=chunk).aggregate(
            all=Count("pk"), model=Count("pk", filter=~Q(model=llm.SCRIPTED))
        )
        total.finished += counts["finished"]
        total.failed += counts["failed"]
        total.turns += turns["all"]
        total.model_turns += turns["model"]
    return total


@dataclass
class RunSummary:
    """What one execution of a run did. ``model_turns`` counts turns a model played (one call each;
    the gateway's retries and JSON repairs are further calls it does not see)."""

    tag: str
    total: int
    skipped: int
    finished: int
    failed: int
    turns: int
    model_turns: int
    seconds: float
    status: str
    errors: list[str] = field(default_factory=list)
    judged: str = ""
    interviewed: str = ""

    @property
    def unfinished(self) -> int:
        return self.total - self.finished - self.failed

    def line(self) -> str:
        rate = self.turns / self.seconds if self.seconds else 0.0
        parts = [
            f"Run {self.tag} {self.status}: {self.finished}/{self.total} episodes finished "
            f"({self.skipped} skipped, finished before), {self.failed} failed",
        ]
        if self.unfinished:
            parts.append(f"{self.unfinished} left to resume")
        parts.append(
            f"{self.turns} turns, {self.model_turns} model calls, {self.seconds:.1f} s wall time ({rate:.1f} turns/s)"
        )
        text = "; ".join(parts) + "."
        if self.judged:
            text += " " + self.judged
        if self.interviewed:
            text += " " + self.interviewed
        if self.errors:
            text += " First error: " + self.errors[0]
        return text


@dataclass
class RunProgress:
    """A run as its page shows it: counts, rates, and whether its worker is alive."""

    run: SimulationRun
    percent: int
    stale: bool
    turns: int
    elapsed_seconds: int | None
    episodes_per_minute: float | None
    turns_per_second: float | None
    heartbeat_age: int | None
    can_cancel: bool
    can_resume: bool

    @property
    def polling(self) -> bool:
        """The page keeps asking while a live worker may still change the numbers."""
        return not self.run.done and not self.stale


def run_progress(run: SimulationRun, user: Any = None, *, turns: int | None = None) -> RunProgress:
    """What the run page shows; ``turns`` may be passed in (the list page does not count them)."""
    now = timezone.now()
    stale = is_stale(run, now)
    done = run.finished + run.failed
    end = run.finished_at if run.done and run.finished_at else now
    elapsed = int((end - run.started_at).total_seconds()) if run.started_at else None
    if turns is None:
        turns = Turn.objects.filter(episode__team=run.team_id, episode__tag=run.tag).count()
    control = user is not None and may_control(user, run)
    return RunProgress(
        run=run,
        percent=round(100 * done / run.total) if run.total else 0,
        stale=stale,
        turns=turns,
        elapsed_seconds=elapsed,
        episodes_per_minute=round(60 * done / elapsed, 1) if elapsed else None,
        turns_per_second=round(turns / elapsed, 1) if elapsed else None,
        heartbeat_age=int((now - run.heartbeat_at).total_seconds()) if run.heartbeat_at else None,
        can_cancel=control and not run.done and not run.cancel_requested,
        can_resume=control and can_resume(run),
    )
