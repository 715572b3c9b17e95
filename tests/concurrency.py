"""Run calls at the same moment, each in its own thread over its own database connection.

Races are tested with real threads on a real database, never with mocks: on PostgreSQL a racing
transaction waits for the row lock it needs, on SQLite for the database's write lock, and only
running both shows that the code's locking is right for each. Mark such tests
``@pytest.mark.concurrency`` and make them transactional
(``@pytest.mark.django_db(transaction=True, serialized_rollback=True)``), so every thread sees
committed rows; in CI ``make test`` runs them on PostgreSQL and again on SQLite.

The test database on SQLite is a file (``config.settings`` sets ``TEST["NAME"]``), so threads
share it as separate server processes would.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from django.db import connections

# Python hands the interpreter from thread to thread every 5 ms by default, long enough for a short
# request to run start to end alone; switching every 10 µs interleaves the racing calls as server
# processes on several cores would.
SWITCH_INTERVAL = 1e-5
JOIN_TIMEOUT = 120  # seconds; a thread still running after this is reported, not waited for forever


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Start every call together (a barrier releases them at once) and wait for all of them.

    Returns each call's result in order, or the exception it raised, so that a test asserts on
    every outcome: an unexpected ``OperationalError: database is locked`` shows up in the
    assertion instead of vanishing with its thread.
    """
    start = threading.Barrier(len(calls))
    outcomes: list[Any] = [None] * len(calls)

    def run(position: int, call: Callable[[], Any]) -> None:
        try:
            start.wait()
            outcomes[position] = call()
        except Exception as error:  # returned to the test, which asserts on it
            outcomes[position] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n, call), daemon=True) for n, call in enumerate(calls)]
    usual_interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(JOIN_TIMEOUT)
    finally:
        sys.setswitchinterval(usual_interval)
    hanging = sum(thread.is_alive() for thread in threads)
    assert not hanging, f"{hanging} of {len(threads)} racing calls still running after {JOIN_TIMEOUT} s"
    return outcomes


def errors(outcomes: list[Any]) -> list[Exception]:
    """The exceptions among ``at_once``'s outcomes (assert it is empty to show every call finished)."""
    return [outcome for outcome in outcomes if isinstance(outcome, Exception)]
