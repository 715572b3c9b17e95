"""Many model calls at once, but never more than a set number in flight.

The judge and the neutraliser both work through a list this way: results come back in the
given order, and ``on_result`` sees each one as it finishes (for a progress bar).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def map_bounded(
    items: Iterable[T],
    work: Callable[[T], Awaitable[R]],
    *,
    concurrency: int,
    on_result: Callable[[R], None] | None = None,
) -> list[R]:
    """``work`` applied to every item, at most ``concurrency`` at a time, results in item order."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    gate = asyncio.Semaphore(concurrency)

    async def one(item: T) -> R:
        async with gate:
            result = await work(item)
        if on_result is not None:
            on_result(result)
        return result

    return list(await asyncio.gather(*(one(item) for item in items)))
