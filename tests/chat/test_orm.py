"""How the chat's database calls get their connections (``chat.orm``): PostgreSQL's from the pool, given back
after each call; SQLite's on its one thread."""

import asyncio
import threading
import time

import pytest
from django.db import connection

from chat.orm import database_call

CALLS = 60  # more than the pool holds and than the event loop's threads, all in flight at once
SETTLE_SECONDS = 5  # for a connection the pool was still opening in the background when the calls ended

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def whose_connection() -> tuple[int, object]:
    """The thread this call ran on, and the connection it used (PostgreSQL's server process)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_backend_pid()")
            return threading.get_ident(), cursor.fetchone()[0]
        cursor.execute("SELECT 1")
        return threading.get_ident(), None


def lent(pool) -> int:
    """Connections of the pool out on loan (the test's own thread holds some, and one the pool is still
    opening counts as lent until it is ready)."""
    stats = pool.get_stats()
    return stats["pool_size"] - stats["pool_available"]


def lent_once_settled(pool, expected: int) -> int:
    deadline = time.monotonic() + SETTLE_SECONDS
    while lent(pool) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return lent(pool)


async def test_calls_in_flight_together_share_the_pools_connections_and_give_each_back():
    pool = connection.pool if connection.vendor == "postgresql" else None  # SQLite has none
    if pool:
        pool.wait()  # the connections it keeps open are ready, none still opening
    lent_before = lent(pool) if pool else 0

    used = await asyncio.gather(*(database_call(whose_connection)() for _ in range(CALLS)))

    if connection.vendor == "sqlite":
        assert len({thread for thread, _ in used}) == 1  # one writer at a time: one thread
        return
    assert len({backend for _, backend in used}) <= pool.max_size  # no new connection per call
    assert lent_once_settled(pool, lent_before) == lent_before  # every call gave its connection back
    assert "requests_errors" not in pool.get_stats()  # no call timed out waiting for one
