"""A run's row: its counts and state as its chunks write them, and what its page shows.

A run's chunks (``benchmark.runs.chunks``) update the counts here and read ``cancel_requested``;
every web page reads only this row and the chunks' rows, so any server process can answer. A run
not done whose own tasks have not beaten for ``PARLEY_RUN_STALE_SECONDS`` and that has no chunk at
work is known to have lost its consumer, and may be resumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from ..agents import llm
from ..models import Episode, RunChunk, SimulationRun, Team, Turn
from .options import RunOptions
from .planning import chunks


def stale_period() -> timedelta:
    return timedelta(seconds=settings.PARLEY_RUN_STALE_SECONDS)


class RunBusy(RuntimeError):
    """The run's chunks are at work on the queue's consumers."""


def is_stale(run: SimulationRun, now: Any = None) -> bool:
    """A run not done that nothing works on: its own tasks have not beaten for the stale period, and no
    chunk of it is queued or beating (a consumer died with its last task, or none ever took it)."""
    if run.done:
        return False
    now = now or timezone.now()
    cut = now - stale_period()
    if (run.heartbeat_at or run.created_at) >= cut:
        return False
    alive = Q(status=RunChunk.Status.QUEUED) | Q(status=RunChunk.Status.RUNNING, heartbeat_at__gte=cut)
    return not RunChunk.objects.filter(alive, run_id=run.pk).exists()


def can_resume(run: SimulationRun) -> bool:
    """A run that ended without finishing everything, or that nothing works on, may be queued again."""
    if run.status == SimulationRun.Status.FINISHED:
        return False
    return run.done or is_stale(run)


def may_control(user: Any, run: SimulationRun) -> bool:
    """Cancel and resume belong to whoever launched the run; a command-line run to any researcher
    of its team. ``run`` comes from ``SimulationRun.objects.owned_by(user)``: the team is checked there."""
    return bool(user.is_superuser or run.created_by_id is None or run.created_by_id == user.pk)


def run_for_command(options: RunOptions, tag: str, team: Team) -> SimulationRun:
    """The team's latest run with ``tag``, queued again, or a new one. Running the command again is a
    request to resume, so a cancel is lifted and the options brought up to date; a run whose chunks are
    at work is refused (:class:`RunBusy`)."""
    run = SimulationRun.objects.of_team(team).filter(tag=tag).order_by("-created_at", "-pk").first()
    if run is None:
        return SimulationRun.objects.create(
            team=team, tag=tag, options=options.as_dict(), heartbeat_at=timezone.now()
        )
    if not run.done and not is_stale(run):
        raise RunBusy(
            f"Run {run.tag} is at work on the task queue's consumers ({run.get_status_display()}); "
            f"cancel it (manage.py simulate --cancel {run.tag}) or wait for it to end."
        )
    SimulationRun.objects.filter(pk=run.pk).update(
        options=options.as_dict(), cancel_requested=False, status=SimulationRun.Status.QUEUED,
        heartbeat_at=timezone.now(), finished_at=None, message="",
    )
    run.refresh_from_db()
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
class ChunkRow:
    """One chunk as the run page lists it."""

    chunk: RunChunk
    heartbeat_age: int | None


@dataclass
class RunProgress:
    """A run as its page shows it: counts, rates, its chunks, and whether anything works on it."""

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
    chunks: list[ChunkRow] = field(default_factory=list)
    waiting: bool = False  # queued, and no consumer has taken any of its work yet

    @property
    def polling(self) -> bool:
        """The page keeps asking until the run ends (a consumer may take a waiting run's work any time)."""
        return not self.run.done


WAITING_NOTICE_SECONDS = 15


def run_progress(
    run: SimulationRun, user: Any = None, *, turns: int | None = None, with_chunks: bool = True
) -> RunProgress:
    """What the run page shows; ``turns`` may be passed in (the list page counts neither turns nor chunks)."""
    now = timezone.now()
    stale = is_stale(run, now)
    done = run.finished + run.failed
    end = run.finished_at if run.done and run.finished_at else now
    elapsed = int((end - run.started_at).total_seconds()) if run.started_at else None
    if turns is None:
        turns = Turn.objects.filter(episode__team=run.team_id, episode__tag=run.tag).count()
    control = user is not None and may_control(user, run)
    rows = []
    if with_chunks:
        rows = [
            ChunkRow(chunk, int((now - chunk.heartbeat_at).total_seconds()) if chunk.heartbeat_at else None)
            for chunk in run.chunks.order_by("number")
        ]
    waiting = (
        run.status == SimulationRun.Status.QUEUED
        and run.created_at < now - timedelta(seconds=WAITING_NOTICE_SECONDS)
        and (run.heartbeat_at or run.created_at) < now - timedelta(seconds=WAITING_NOTICE_SECONDS)
    )
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
        chunks=rows,
        waiting=waiting,
    )
