"""How many new participants one client address may start, and wrong resume codes it may try.

Made-up ids cost nothing, so a script can fill a study with participants who consent and leave
(the minimum of turns, ``chat.lifecycle``, stops them from earning the completion code; this stops
them from taking the places). The study link creates at most ``settings.PARLEY_ENTRY_RATE`` new
participants per client address per period ("10/hour" unless configured; "off" for none), and
wrong resume codes count against the same allowance, so the codes cannot be guessed either.
Returning participants are never counted.

The counting is ``benchmark.throttle``'s (per address and fixed window, in the cache).

A participant's sockets may send at most ``FRAME_LIMIT`` frames in each ``FRAME_WINDOW`` seconds
(:func:`allow_frame`), whatever they are (turns, resyncs, junk), and opening a socket counts as one,
since it reads the whole transcript. The count is the participant's, not one socket's, and lives in
the cache like the entry allowance, so closing and reopening sockets, on one server process or
several, does not reset it.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from benchmark.throttle import Allowance, allowance

GROUP = "chat-entry"


def spend(request: HttpRequest) -> Allowance:
    """Count one new participant (or one wrong resume code) for the request's address."""
    return allowance(request, GROUP, settings.PARLEY_ENTRY_RATE, spend=True)


def remaining(request: HttpRequest) -> Allowance:
    """Whether the request's address has any allowance left, without spending it."""
    return allowance(request, GROUP, settings.PARLEY_ENTRY_RATE, spend=False)


FRAME_LIMIT = 30
FRAME_WINDOW = 10  # seconds
clock = time.time  # the windows are wall-clock time, the same on every server process


async def allow_frame(participant_pk: int, *, now: float | None = None) -> bool:
    """Count one frame (or one socket opened) of the participant; False once the window's limit is passed."""
    now = clock() if now is None else now
    key = f"chat-frames:{participant_pk}:{int(now // FRAME_WINDOW)}"
    await cache.aadd(key, 0, timeout=FRAME_WINDOW * 2)
    try:
        count = await cache.aincr(key)
    except ValueError:  # the key lapsed between the two calls: this frame starts the count again
        await cache.aset(key, 1, timeout=FRAME_WINDOW * 2)
        count = 1
    return count <= FRAME_LIMIT
