"""The frame limit (``chat.throttle.allow_frame``): per participant and window, in the cache every server
process shares (Redis, counted from the event loop) or in the embedded default's in-process cache.

The Redis cases run against the real Redis of ``REDIS_URL`` (CI sets it); the in-process case always.
"""

import asyncio
import logging
import math
import os

import pytest
import redis
from django.core.cache import caches

from chat import throttle
from chat.throttle import FRAME_LIMIT, FRAME_WINDOW, allow_frame
from tests.backends import require_backend

START = 1000 * FRAME_WINDOW  # the start of a window
REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"
CACHES = {
    "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "frames"},
    "redis": {"BACKEND": REDIS_CACHE, "LOCATION": os.environ.get("REDIS_URL"), "KEY_PREFIX": "parley"},
}


def use_cache(settings, kind: str) -> None:
    settings.CACHES = {"default": CACHES[kind]}
    caches["default"].clear()


def window_count(participant_pk: int, now: float = START) -> int | None:
    """The count as the cache itself reads it: the limit's key is the cache's (prefix, version)."""
    return caches["default"].get(f"chat-frames:{participant_pk}:{int(now // FRAME_WINDOW)}")


@pytest.fixture
def counted_in_cache(caplog):
    """Fails the test if a frame was counted in the process because the cache's Redis did not answer."""
    caplog.set_level(logging.WARNING, logger="chat.throttle")
    yield
    assert not caplog.records, "counted in the process, not in the shared cache"


def require_redis() -> None:
    """The Redis cases count in a real Redis (``tests.backends``)."""
    require_backend(bool(os.environ.get("REDIS_URL")), "REDIS_URL is not set: these cases count in a real Redis")


@pytest.fixture(params=["locmem", "redis"])
def frames(request, settings, counted_in_cache):
    if request.param == "redis":
        require_redis()
    use_cache(settings, request.param)


@pytest.fixture
def redis_frames(settings, counted_in_cache):
    require_redis()
    use_cache(settings, "redis")


async def test_frames_are_allowed_up_to_the_limit_per_window_then_again_in_the_next(frames):
    assert [await allow_frame(7, now=START) for _ in range(FRAME_LIMIT + 1)][-2:] == [True, False]
    assert await allow_frame(8, now=START)  # another participant has a count of its own
    assert await allow_frame(7, now=START + FRAME_WINDOW)
    assert window_count(7) == FRAME_LIMIT + 1
    assert window_count(7, START + FRAME_WINDOW) == 1


async def test_the_window_expires_in_redis(redis_frames):
    await allow_frame(7, now=START)
    await allow_frame(7, now=START)

    key = caches["default"].make_key(f"chat-frames:7:{START // FRAME_WINDOW}")
    ttl = redis.Redis.from_url(os.environ["REDIS_URL"]).ttl(key)
    assert FRAME_WINDOW < ttl <= 2 * FRAME_WINDOW  # set by the first frame, not pushed back by the second


async def test_two_server_processes_share_a_participants_count(redis_frames):
    """Another event loop has a Redis client and connection of its own, as another process would."""

    def another_process(count: int) -> list[bool]:
        async def frames() -> list[bool]:
            return [await allow_frame(7, now=START) for _ in range(count)]

        return asyncio.run(frames())

    here = [await allow_frame(7, now=START) for _ in range(FRAME_LIMIT // 2)]
    there = await asyncio.to_thread(another_process, FRAME_LIMIT - len(here) + 1)

    assert all(here) and there[-2:] == [True, False]
    assert not await allow_frame(7, now=START)
    assert window_count(7) == FRAME_LIMIT + 2


def test_a_client_is_not_reused_once_its_event_loop_is_closed(redis_frames):
    """Each test (and each ``asyncio.run``) has a loop of its own; a client's connections die with theirs."""
    assert asyncio.run(allow_frame(7, now=START))
    assert asyncio.run(allow_frame(7, now=START))
    assert window_count(7) == 2


async def test_without_redis_the_frames_are_counted_in_the_process(settings, caplog, monkeypatch):
    """Not every frame refused (every chat would end) nor every one allowed (no limit): counted here, with one
    warning a minute, not one a frame."""
    settings.CACHES = {"default": {"BACKEND": REDIS_CACHE, "LOCATION": "redis://127.0.0.1:1/0"}}  # nothing listens
    throttle.unshared.clear()
    monkeypatch.setattr(throttle, "_warned_at", -math.inf)

    with caplog.at_level(logging.WARNING, logger="chat.throttle"):
        allowed = [await allow_frame(7, now=START) for _ in range(FRAME_LIMIT + 1)]

    assert allowed[-2:] == [True, False]
    warned = [record.getMessage() for record in caplog.records]
    assert len(warned) == 1 and warned[0].startswith("chat frames counted in this process: Redis did not answer")
