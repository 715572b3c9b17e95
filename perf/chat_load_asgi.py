"""The application ``perf/chat_load.py`` serves with daphne: Parley's own, counting the SQL it sends.

The load benchmark reports SQL statements per answered message, and the statements are sent by
the server processes, not by the benchmark. So each daphne loads this module instead of
``config.asgi:application``: it hooks every database connection the process opens
(``connection_created``) with an execute wrapper that counts the statements sent through Django's
cursors, the same statements Django's query-count assertions count (savepoints included; the
implicit BEGIN and the COMMIT, and a pool's own health checks, are not cursor statements). The
counts are served to the benchmark at ``GET /_chat_load/statements`` before any of Parley's
code sees the request, so asking costs no statement.

Nothing here is Parley's: it wraps whatever ``config.asgi`` the server's tree has, so an old
checkout is counted the same way as the new one, and the app itself carries no benchmark code.
Counting adds one Python call per statement (about a microsecond), far below what a statement
costs.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import threading
from collections import Counter
from typing import Any

from django.db.backends.signals import connection_created

STATEMENTS_PATH = "/_chat_load/statements"


class StatementCounter:
    """Statements sent and connections opened by this process, over all its threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.statements = 0
        self.connections = 0
        self.kinds: Counter[str] = Counter()

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: dict) -> Any:
        kind = statement_kind(sql)
        if CALLERS:
            kind = f"{caller()} {kind}"
        with self._lock:
            self.statements += 1
            self.kinds[kind] += 1
        return execute(sql, params, many, context)

    def connected(self, sender: Any, connection: Any, **_details: Any) -> None:
        """Count the connection and wrap its cursors, once: Django reuses a connection object (and
        its list of wrappers) when it reconnects, or takes a new one from the pool."""
        with self._lock:
            self.connections += 1
        if not any(wrapper is self for wrapper in connection.execute_wrappers):
            connection.execute_wrappers.append(self)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"statements": self.statements, "connections": self.connections, "kinds": dict(self.kinds)}


CALLERS = os.environ.get("CHAT_LOAD_CALLERS") == "1"  # ``perf/chat_load.py --callers``
_OURS = re.compile(r"/(chat|benchmark|config)/(\w+)\.py$")


def caller() -> str:
    """The innermost function of Parley's own code that sent the statement (module.function), walking up
    the stack: what ``--callers`` groups the statements by (a few microseconds a statement)."""
    frame = sys._getframe(2)
    while frame is not None:
        found = _OURS.search(frame.f_code.co_filename)
        if found:
            return f"{found.group(1)}.{found.group(2)}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


_TABLE = re.compile(r'\b(?:FROM|INTO|UPDATE)\s+"?(\w+)"?', re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def statement_kind(sql: str) -> str:
    """What a statement does, to tell the statements apart in the report: its verb and first table
    (``SELECT chat_participant``), and whether it locks (``FOR UPDATE``). Kept per SQL text: the chat sends
    the same few texts again and again, and the yardstick should cost the servers as little as it can."""
    verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else "?"
    table = _TABLE.search(sql)
    lock = " FOR UPDATE" if sql.rstrip().upper().endswith("FOR UPDATE") else ""
    return f"{verb} {table.group(1) if table else ''}{lock}".strip()


counter = StatementCounter()
connection_created.connect(counter.connected, weak=False)

from config.asgi import application as parley  # noqa: E402  (after the hook, so no connection escapes it)


async def application(scope: dict, receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope["path"] == STATEMENTS_PATH:
        body = json.dumps(counter.snapshot()).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        return
    await parley(scope, receive, send)
