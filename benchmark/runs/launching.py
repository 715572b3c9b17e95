"""Runs launched from the web: store the row, then start a detached worker process for it.

The worker is ``manage.py simulate --run <id>`` in its own session, so it outlives the request,
a page reload and a restart of the web server.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import SimulationRun, Team
from .options import RunOptions, RunOptionsError
from .planning import plan_run
from .status import can_resume, close, is_stale

logger = logging.getLogger(__name__)

class TeamRunsFull(RuntimeError):
    """The team already has as many runs at work as one team may (``PARLEY_TEAM_MAX_RUNS``)."""


def runs_at_work(team: Team) -> int:
    """The team's runs that hold a worker or wait for one: queued or running, and not lost (``is_stale``)."""
    waiting = SimulationRun.objects.of_team(team).filter(
        status__in=[SimulationRun.Status.QUEUED, SimulationRun.Status.RUNNING]
    )
    return sum(1 for run in waiting.only("status", "heartbeat_at", "created_at") if not is_stale(run))


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
    """A queued run of ``team`` for ``options``, checked against the team's data and the web's limit of
    worker processes (``PARLEY_RUN_MAX_WORKERS``), stored with the model names resolved."""
    limit = settings.PARLEY_RUN_MAX_WORKERS
    if options.workers > limit:
        raise RunOptionsError("workers", f"A run launched here may use at most {limit} worker processes.")
    plan = plan_run(options, team, tag)
    return SimulationRun.objects.create(
        team=team, tag=plan.tag, options=plan.options.as_dict(), created_by=user, total=plan.total
    )


def launch_run(options: RunOptions, tag: str, team: Team, user: Any = None) -> SimulationRun:
    """Store a queued run and start its worker once the row is committed (so the worker finds it).

    Raises :class:`TeamRunsFull` when the team has as many runs at work as it may.
    """
    with transaction.atomic():
        take_run_slot(team)
        run = create_run(options, tag, team, user)
        transaction.on_commit(partial(start_worker, run))
    return run


def resume_run(run: SimulationRun) -> bool:
    """Queue a stopped run again and start a new worker for it; False when it cannot be resumed now.

    The row is locked while deciding, so two clicks start one worker. Raises :class:`TeamRunsFull` when
    the team has as many runs at work as it may.
    """
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().select_related("team").get(pk=run.pk)
        if not can_resume(run):
            return False
        take_run_slot(run.team)
        SimulationRun.objects.filter(pk=run.pk).update(
            status=SimulationRun.Status.QUEUED, cancel_requested=False, heartbeat_at=timezone.now(),
            worker_pid=None, finished_at=None, message="",
        )
        transaction.on_commit(partial(start_worker, run))
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


def worker_log_path(run: SimulationRun) -> Path:
    return Path(settings.VAR_DIR) / "runs" / f"run-{run.pk}.log"


def worker_command(run: SimulationRun) -> list[str]:
    return [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "simulate", "--run", str(run.pk)]


def start_worker(run: SimulationRun) -> int | None:
    """Start ``manage.py simulate --run <id>`` detached from this process; returns its pid.

    The worker gets its own session, so it outlives the request, a page reload and a restart of
    the web server; its output goes to ``var/runs/run-<id>.log``. If the process cannot be
    started, the run is marked failed with the reason (it can be resumed later).
    """
    log = worker_log_path(run)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        pid = spawn_process(worker_command(run), cwd=Path(settings.BASE_DIR), log=log)
    except OSError as error:
        logger.exception("Could not start the worker of run %s", run.pk)
        reason = error.strerror or type(error).__name__  # not str(error), which names the file
        message = f"Could not start the worker process ({reason}); the server log has the details."
        close(run.pk, SimulationRun.Status.FAILED, message)
        return None
    SimulationRun.objects.filter(pk=run.pk).update(worker_pid=pid, heartbeat_at=timezone.now())
    return pid


def spawn_process(command: list[str], *, cwd: Path, log: Path) -> int:
    """Start ``command`` in a new session with output appended to ``log``, and reap it when it exits."""
    with log.open("ab") as output:
        process = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )
    threading.Thread(target=process.wait, name=f"reap-{process.pid}", daemon=True).start()
    return process.pid


def request_cancel(run: SimulationRun) -> None:
    """Ask the worker to stop; a run with no live worker is marked cancelled at once."""
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run.pk)
        if run.done:
            return
        if run.status == SimulationRun.Status.RUNNING and not is_stale(run):
            run.cancel_requested = True
            run.save(update_fields=["cancel_requested"])
            return
        run.cancel_requested = True
        run.status = SimulationRun.Status.CANCELLED
        run.finished_at = timezone.now()
        run.message = run.message or "Cancelled before a worker ran it."
        run.save(update_fields=["cancel_requested", "status", "finished_at", "message"])
