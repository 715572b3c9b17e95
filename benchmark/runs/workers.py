"""Playing a run's episodes: in this process's event loop, or in forked worker processes.

An episode has one model call in flight at a time, so ``concurrency`` is the number of
concurrent model calls. litellm costs a few milliseconds of CPU per call, so ``workers`` splits
the episodes over several processes (forked, each with its own event loop and connection), which
take the next episode from a shared counter so none idles while another has a backlog.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from django.db import connections
from django.utils import timezone

from ..agents import llm
from ..models import Episode
from .simulation import run_episode
from .status import unexpected
from .writer import TurnWriter

logger = logging.getLogger(__name__)

MAX_ERRORS_KEPT = 5


class EpisodeQueue:
    """The episodes to play, handed out one at a time through a counter shared by worker processes."""

    def __init__(self, items: Sequence[tuple[int, int]], counter: Any) -> None:
        self.items = list(items)
        self._counter = counter

    def next(self) -> tuple[int, int] | None:
        with self._counter.get_lock():
            index = self._counter.value
            if index >= len(self.items):
                return None
            self._counter.value = index + 1
        return self.items[index]


class ErrorLog:
    """The first few episode errors of every process, sent through a pipe to the supervisor.

    The supervisor drains it once a second, and each process sends at most ``limit`` messages,
    so a writer never blocks on a full pipe.
    """

    def __init__(self, context: Any, limit: int = MAX_ERRORS_KEPT) -> None:
        self._pipe = context.SimpleQueue()
        self._limit = limit
        self._sent = 0  # per process: a forked copy counts its own
        self.kept: list[str] = []

    def add(self, message: str) -> None:
        logger.warning("%s", message)
        if self._sent < self._limit:
            self._sent += 1
            self._pipe.put(message[:500])

    def drain(self) -> list[str]:
        while not self._pipe.empty():
            self.kept.append(self._pipe.get())
        return self.kept


@dataclass
class Shared:
    """What the supervisor and its worker processes share: the episodes, the stop signal, the errors."""

    episodes: EpisodeQueue
    stop: Any  # a multiprocessing Event
    errors: ErrorLog


async def play_episodes(shared: Shared, concurrency: int) -> None:
    """Play episodes, ``concurrency`` at a time, until none is left or ``shared.stop`` is set.

    A failed episode is recorded (``run_episode`` marks a model failure; any other error is
    marked here) and the others go on. On stop the episodes in flight are cancelled.
    """
    writer = TurnWriter()

    async def player() -> None:
        while not shared.stop.is_set():
            item = shared.episodes.next()
            if item is None:
                return
            await _play_one(*item, shared=shared, writer=writer)

    tasks = [asyncio.create_task(player()) for _ in range(concurrency)]
    pending = set(tasks)
    while pending:
        _, pending = await asyncio.wait(pending, timeout=0.25)
        if shared.stop.is_set():
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            break
    await writer.close()
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()


async def _play_one(episode_id: int, seed: int, *, shared: Shared, writer: TurnWriter) -> None:
    """Play one episode; a refused key stops the whole run, since every other episode would fail alike."""
    errors = shared.errors
    try:
        await run_episode(Episode(pk=episode_id), seed=seed, save_turn=writer.save)
    except llm.LLMRefused as error:
        errors.add(f"the run stopped at the first authentication error, in episode {episode_id}: {error}")
        shared.stop.set()
    except llm.LLMError as error:
        errors.add(f"episode {episode_id}: {error}")
    except Exception as error:  # one broken episode must not stop the run; logged with its traceback
        logger.exception("Episode %s failed", episode_id)
        errors.add(f"episode {episode_id}: {unexpected(error)}")
        await Episode.objects.filter(pk=episode_id).aupdate(status=Episode.Status.FAILED, finished_at=timezone.now())


def worker_process(shared: Shared, concurrency: int, supervisor_pid: int) -> None:
    """A forked worker: its own connection and event loop; Ctrl-C is the supervisor's to handle.

    It stops when its supervisor dies (killed, say), so a later resume never plays an episode
    that an orphaned worker is still playing.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connections.close_all()

    async def play_while_supervised() -> None:
        async def watch_supervisor() -> None:
            while os.getppid() == supervisor_pid:
                await asyncio.sleep(0.5)
            shared.stop.set()

        watchdog = asyncio.create_task(watch_supervisor())
        try:
            await play_episodes(shared, concurrency)
        finally:
            watchdog.cancel()

    try:
        async_to_sync(play_while_supervised)()
    finally:
        connections.close_all()
