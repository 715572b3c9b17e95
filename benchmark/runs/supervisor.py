"""Executing a run: the process that plays it, beats, counts, draws progress and relays a cancel.

``manage.py simulate`` (started by hand or by the web page) calls :func:`execute_run`. It
reads ``cancel_requested`` once a second; a cancel stops at once and loses nothing stored:
episodes not yet started are not started, turns in flight are abandoned (their model calls are
not stored) and their episodes go back to ``pending``, to be resumed by a later run.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from asgiref.sync import async_to_sync, sync_to_async
from django.db import connections
from django.utils import timezone

from ..agents import llm, loading
from ..models import Episode, SimulationRun
from ..progress_bar import ProgressBar
from .interrupts import install_signal_handlers
from .options import NO_JUDGE, RunOptions, RunOptionsError
from .planning import Preparation, RunPlan, chunks, plan_run, prepare_episodes
from .scoring import interview_run_episodes, score_episodes
from .status import RunSummary, Snapshot, claim, close, heartbeat, snapshot, unexpected
from .workers import EpisodeQueue, ErrorLog, Shared, play_episodes, worker_process

HEARTBEAT_SECONDS = 1.0


@dataclass
class Supervisor:
    """The process that executes a run: it beats, counts, draws progress and relays a cancel."""

    run_id: int
    episode_ids: list[int]
    shared: Shared
    bar: ProgressBar | None
    turns_at_start: int
    signalled: bool = False  # set by a SIGINT/SIGTERM handler
    cancelled: bool = False

    def beat(self) -> Snapshot:
        """Write the heartbeat and counts, and pass on a requested cancel to the workers."""
        counts = snapshot(self.episode_ids)
        SimulationRun.objects.filter(pk=self.run_id).update(
            heartbeat_at=timezone.now(), finished=counts.finished, failed=counts.failed
        )
        requested = SimulationRun.objects.filter(pk=self.run_id, cancel_requested=True).exists()
        if (requested or self.signalled) and not self.shared.stop.is_set():
            self.cancelled = True
            self.shared.stop.set()
        return counts

    async def watch(self, done: Callable[[], bool]) -> None:
        """Beat once a second until ``done()``."""
        beat = sync_to_async(self.beat)
        while not done():
            counts = await beat()
            self.shared.errors.drain()
            if self.bar is not None:
                show_progress(self.bar, counts, self.turns_at_start)
            for _ in range(round(HEARTBEAT_SECONDS / 0.1)):
                if done():
                    break
                await asyncio.sleep(0.1)
        self.shared.errors.drain()

    async def in_process(self, concurrency: int) -> None:
        players = asyncio.create_task(play_episodes(self.shared, concurrency))
        try:
            await self.watch(players.done)
        except BaseException:
            self.shared.stop.set()
            raise
        finally:
            await asyncio.gather(players, return_exceptions=True)
        players.result()

    def in_processes(self, concurrency: int, workers: int, context: Any) -> None:
        """Fork ``workers`` processes that share the episodes, and watch them from this one."""
        shares = [concurrency // workers + (1 if n < concurrency % workers else 0) for n in range(workers)]
        connections.close_all()  # a forked child must open its own connection, never share ours
        processes = [
            context.Process(target=worker_process, args=(self.shared, max(1, share), os.getpid()), daemon=True)
            for share in shares
        ]
        for process in processes:
            process.start()
        try:
            async_to_sync(self.watch)(lambda: not any(p.is_alive() for p in processes))
        except BaseException:
            self.shared.stop.set()
            raise
        finally:
            for process in processes:
                process.join()
            self.shared.errors.drain()
        crashed = [p.exitcode for p in processes if p.exitcode]
        if crashed:
            self.shared.errors.kept.append(f"{len(crashed)} worker process(es) exited with code(s) {crashed}")


def execute_run(run_id: int, *, progress: TextIO | None = None, stop_on_signals: bool = False) -> RunSummary:
    """Execute a run to its end (or until it is cancelled) and record the outcome on its row.

    ``progress`` receives the progress bar. ``stop_on_signals`` makes the first SIGINT or
    SIGTERM stop the run as a cancel would, leaving its episodes resumable (for the command line
    and the detached worker).
    """
    started = time.monotonic()
    run = SimulationRun.objects.select_related("team").get(pk=run_id)
    try:
        plan = plan_run(RunOptions.from_dict(run.options), run.team, run.tag)
    except RunOptionsError as error:
        close(run.pk, SimulationRun.Status.FAILED, f"Bad options: {error}")
        raise
    claim(run.pk, total=plan.total)
    try:
        preparation = prepare_episodes(plan, beat=lambda: heartbeat(run.pk))
        return _execute(plan, run.pk, preparation, started, progress, stop_on_signals)
    except BaseException as error:  # re-raised: the traceback goes to the worker's log
        close(run.pk, SimulationRun.Status.FAILED, f"The worker stopped: {unexpected(error)}")
        raise


def _execute(
    plan: RunPlan, run_id: int, preparation: Preparation, started: float, progress: TextIO | None, on_signals: bool
) -> RunSummary:
    episode_ids = preparation.episode_ids
    before = snapshot(episode_ids)
    workers = max(1, min(plan.options.workers, len(preparation.to_play)))
    context = multiprocessing.get_context("fork" if workers > 1 else None)
    shared = Shared(EpisodeQueue(preparation.to_play, context.Value("l", 0)), context.Event(), ErrorLog(context))
    bar = None
    if progress is not None:
        bar = ProgressBar(progress, plan.total, "simulate", unit="episodes", already_done=preparation.already_finished)
    supervisor = Supervisor(run_id, episode_ids, shared, bar, before.turns)
    _load_gateway(plan.options)
    previous = install_signal_handlers(supervisor) if on_signals else {}
    try:
        if workers == 1:
            async_to_sync(supervisor.in_process)(plan.options.concurrency)
        else:
            supervisor.in_processes(plan.options.concurrency, workers, context)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    # what was in flight when the run stopped goes back to pending, to be resumed
    for chunk in chunks(episode_ids):
        Episode.objects.filter(pk__in=chunk, status=Episode.Status.RUNNING).update(status=Episode.Status.PENDING)
    after = snapshot(episode_ids)
    if bar is not None:
        show_progress(bar, after, before.turns, final=True)
    if supervisor.cancelled:
        status = SimulationRun.Status.CANCELLED
    elif after.finished == plan.total:
        status = SimulationRun.Status.FINISHED
    else:
        status = SimulationRun.Status.FAILED
    summary = RunSummary(
        tag=plan.tag,
        total=plan.total,
        skipped=preparation.already_finished,
        finished=after.finished,
        failed=after.failed,
        turns=after.turns - before.turns,
        model_turns=after.model_turns - before.model_turns,
        seconds=time.monotonic() - started,
        status=status,
        errors=list(shared.errors.kept),
    )
    if status != SimulationRun.Status.CANCELLED and plan.options.judge_model != NO_JUDGE:
        summary.judged = score_episodes(run_id, episode_ids, plan.options)
    if status != SimulationRun.Status.CANCELLED and plan.options.interview:
        summary.interviewed = interview_run_episodes(run_id, episode_ids, plan.options)
    close(run_id, status, summary.line(), after)
    return summary


def show_progress(bar: ProgressBar, counts: Snapshot, turns_at_start: int, *, final: bool = False) -> None:
    """Episodes done, failures, and the turns played by this execution and their rate."""
    played = counts.turns - turns_at_start
    elapsed = bar.elapsed()
    rate = played / elapsed if elapsed else 0.0
    note = f"({counts.failed} failed) · {played} turns · {rate:.1f} turns/s"
    bar.show(counts.finished + counts.failed, note, final=final)


def _load_gateway(options: RunOptions) -> None:
    """Import litellm here, once, rather than inside the event loop of every worker.

    The import costs seconds of CPU; done before the workers fork, they share it, and no
    worker's event loop stalls on it while its first episodes wait.
    """
    models = [options.agent_model, options.partner_model, *options.seat_model_map().values()]
    if not all(llm.is_scripted(model) for model in models):
        loading.preload()
