"""How the chat's async code (socket, agent turns) calls its synchronous database functions.

Channels' ``database_sync_to_async`` runs every such call of a server process in one thread, so a
slow query of one chat holds up every other open chat. On PostgreSQL (any server database) the
chat's functions run in the event loop's thread pool instead: each is a complete unit of work with
its own transaction and nothing kept between calls, so they may run side by side, each thread on
its own connection, and row locks (``select_for_update``) order the writers of one episode.
SQLite keeps the single thread: it takes one writer at a time anyway (each transaction queues for
its write lock, ``config.settings``), so more threads would only wait on that lock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import close_old_connections, connections


def database_call(function: Callable[..., Any]) -> Callable[..., Any]:
    """``await database_call(function)(*args)``: run a synchronous ORM function off the event loop."""
    if connections["default"].vendor == "sqlite":
        return database_sync_to_async(function)
    return sync_to_async(_closing_connections(function), thread_sensitive=False)


def _closing_connections(function: Callable[..., Any]) -> Callable[..., Any]:
    """Drop connections that are broken or past ``CONN_MAX_AGE`` before and after the call, in
    the worker thread that owns them (as Django does around each request)."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return call
