"""How the chat's async code (socket, agent turns) calls its synchronous database functions.

Channels' ``database_sync_to_async`` runs every such call of a server process in one thread, so a
slow query of one chat holds up every other open chat. On PostgreSQL (any server database) the
chat's functions run in the event loop's thread pool instead: each is a complete unit of work with
its own transaction and nothing kept between calls, so they may run side by side, each thread on
its own connection, and row locks (``select_for_update``) order the writers of one episode.
SQLite keeps the single thread: it takes one writer at a time anyway (each transaction queues for
its write lock, ``config.settings``), so more threads would only wait on that lock.

A call's connection is handled as Django handles a request's: looked at before and given up after
(``close_old_connections``). On PostgreSQL the connection comes from psycopg's pool
(``config.settings.connection_pool``), so giving it up hands it back for the next call on any
thread, and taking one costs no new connection: the pool keeps them open. Keeping one per thread
instead (``CONN_MAX_AGE``) would tie a connection to each thread of the pool for as long as the
thread lives, and none would ever be shared.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import close_old_connections, connections


@functools.lru_cache(maxsize=64)
def database_call(function: Callable[..., Any]) -> Callable[..., Any]:
    """``await database_call(function)(*args)``: run a synchronous ORM function off the event loop.

    Made once per function (they are the chat's module-level functions): making asgiref's wrapper inspects the
    function anew each time, which a message paid for each of its database calls.
    """
    if connections["default"].vendor == "sqlite":
        return database_sync_to_async(function)
    return sync_to_async(_as_a_request(function), thread_sensitive=False)


def _as_a_request(function: Callable[..., Any]) -> Callable[..., Any]:
    """Around the call, in the worker thread that owns the connection, what Django does around a request:
    drop a broken one before, and after, give the connection back to the pool (or close it, without one)."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return call
