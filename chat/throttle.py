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
the cache like the entry allowance (under the cache's key prefix, on the cache's Redis), so closing
and reopening sockets, on one server process or several, does not reset it.

It runs on every frame, so it does not use the cache's ``aadd``/``aincr``: Django's Redis cache has
no async client, and each of those calls hops to the process's one sync thread (the thread Channels'
session and auth middleware and ``database_sync_to_async`` queue on) and makes a round trip of its
own. Instead an async Redis client counts in one round trip from the event loop; the embedded
default's in-process cache is a dict under a lock, counted in the event loop directly.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time

import redis.asyncio
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest

from benchmark.throttle import Allowance, allowance

GROUP = "chat-entry"
logger = logging.getLogger(__name__)


def spend(request: HttpRequest) -> Allowance:
    """Count one new participant (or one wrong resume code) for the request's address."""
    return allowance(request, GROUP, settings.PARLEY_ENTRY_RATE, spend=True)


def remaining(request: HttpRequest) -> Allowance:
    """Whether the request's address has any allowance left, without spending it."""
    return allowance(request, GROUP, settings.PARLEY_ENTRY_RATE, spend=False)


FRAME_LIMIT = 30
FRAME_WINDOW = 10  # seconds
clock = time.time  # the windows are wall-clock time, the same on every server process
unshared = LocMemCache("chat-frames", {})  # this process's count while Redis does not answer
WARN_EVERY = 60.0  # seconds between two warnings that Redis does not answer (not one a frame)
_warned_at = -math.inf


async def allow_frame(participant_pk: int, *, now: float | None = None) -> bool:
    """Count one frame (or one socket opened) of the participant; False once the window's limit is passed."""
    now = clock() if now is None else now
    name = f"chat-frames:{participant_pk}:{int(now // FRAME_WINDOW)}"
    store = caches["default"]
    if not isinstance(store, RedisCache):  # the embedded default's LocMemCache: no I/O to wait for
        return _count_in(store, name) <= FRAME_LIMIT
    try:
        count = await _count_in_redis(store, name)
    except redis.RedisError as error:
        # Refusing every frame would end every chat, letting every frame through would lift the
        # limit: count in this process (a participant's sockets on other processes count apart)
        # until Redis answers again.
        global _warned_at
        if time.monotonic() - _warned_at >= WARN_EVERY:
            _warned_at = time.monotonic()
            logger.warning("chat frames counted in this process: Redis did not answer (%s)", error)
        count = _count_in(unshared, name)
    return count <= FRAME_LIMIT


def _count_in(store: BaseCache, name: str) -> int:
    """The window's count after this frame, in an in-process cache (a dict under a lock, no I/O)."""
    store.add(name, 0, timeout=FRAME_WINDOW * 2)
    try:
        return store.incr(name)
    except ValueError:  # the key lapsed between the two calls: this frame starts the count again
        store.set(name, 1, timeout=FRAME_WINDOW * 2)
        return 1


async def _count_in_redis(store: RedisCache, name: str) -> int:
    """The window's count after this frame, from the cache's Redis in one round trip.

    The key is the one the cache's own ``add``/``incr`` would use (its prefix and version); the
    transaction creates it with the window's expiry if it is new, then increments it, as
    ``add`` + ``incr`` did, so the count cannot outlive its window.
    """
    key = store.make_and_validate_key(name)
    async with _client(settings.CACHES["default"]["LOCATION"]).pipeline(transaction=True) as pipe:
        _, count = await pipe.set(key, 0, ex=FRAME_WINDOW * 2, nx=True).incr(key).execute()
    return count


_clients: dict[tuple[asyncio.AbstractEventLoop, str], redis.asyncio.Redis] = {}


def _client(location: str) -> redis.asyncio.Redis:
    """This event loop's client of the cache's Redis (its connections belong to the loop that opened them).

    A server process runs one loop for its life; tests run a loop each, so a client whose loop is
    closed is dropped. Short timeouts: a Redis that hangs must not hold a frame for long.
    """
    loop = asyncio.get_running_loop()
    client = _clients.get((loop, location))
    if client is None:
        for stale in [key for key in _clients if key[0].is_closed()]:
            del _clients[stale]
        client = _clients[loop, location] = redis.asyncio.Redis.from_url(
            location, socket_connect_timeout=2, socket_timeout=2
        )
    return client
