"""Group commit of the turns that the episodes of one process produce together."""

from __future__ import annotations

import asyncio

from asgiref.sync import sync_to_async
from django.db import transaction

from ..models import Turn


class TurnWriter:
    """Group commit for the turns of the episodes one process plays at once.

    Each turn is still stored before its episode goes on (the episode awaits :meth:`save`), but
    the turns that arrive while one insert is under way go to the database together in the next.
    Django runs every async ORM call on one thread per process, and with dozens of episodes in
    flight the hop to that thread, not the insert itself, is what costs: batching makes it one hop
    per batch instead of one per turn. If a batch fails (say, a turn index taken by another
    worker), its turns are stored one by one, so only the offending episode sees the error.
    """

    def __init__(self) -> None:
        self._waiting: list[tuple[Turn, asyncio.Future[Turn]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.batches = 0

    async def save(self, turn: Turn) -> Turn:
        future: asyncio.Future[Turn] = asyncio.get_running_loop().create_future()
        self._waiting.append((turn, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def close(self) -> None:
        """Wait for the last batch (cancelled episodes may have left one under way)."""
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)

    async def _flush(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            self.batches += 1
            outcomes = await sync_to_async(_insert_turns)([turn for turn, _ in batch])
            for (turn, future), outcome in zip(batch, outcomes, strict=True):
                if future.cancelled():
                    continue
                if isinstance(outcome, BaseException):
                    future.set_exception(outcome)
                else:
                    future.set_result(turn)


def _insert_turns(turns: list[Turn]) -> list[Turn | Exception]:
    """Insert ``turns`` in one statement, or one by one if that fails; an error per turn that failed."""
    try:
        with transaction.atomic():
            Turn.objects.bulk_create(turns)
        return list(turns)
    except Exception:  # a batch shares one statement; find the turn that broke it
        for turn in turns:
            turn.pk = None
    outcomes: list[Turn | Exception] = []
    for turn in turns:
        try:
            with transaction.atomic():
                turn.save(force_insert=True)
            outcomes.append(turn)
        except Exception as error:  # handed to the episode that made this turn
            outcomes.append(error)
    return outcomes
