"""Async work from a task: one ``asyncio.run`` whose ORM calls get a thread (and connection) of their own.

A consumer's worker runs tasks one after another (and a thread consumer several at once); each
event loop started here sends its ``sync_to_async`` calls to a thread of its own
(``ThreadSensitiveContext``) and closes that thread's database connection at the end, so no
connection outlives the task or is shared between two tasks. Tasks use this, never ``async_to_sync``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.db import connections

T = TypeVar("T")


def run_in_loop(function: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
    """``await function(*args, **kwargs)`` in a new event loop, its ORM calls on one thread of its own."""

    async def main() -> T:
        async with ThreadSensitiveContext():
            try:
                return await function(*args, **kwargs)
            finally:
                await sync_to_async(connections.close_all)()

    return asyncio.run(main())
