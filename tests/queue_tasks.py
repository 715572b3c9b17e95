"""Tasks that exist only for the queue's tests; a consumer started by ``tests.consumers`` imports them.

Each writes what it did to a file the test names, so the test sees the work of a consumer in another
process without a model of its own.
"""

from __future__ import annotations

import time
from pathlib import Path

from huey.contrib.djhuey import db_task

RETRIES = 2
RETRY_DELAY = 1.0  # seconds before the first retry
RETRY_BACKOFF = 2.0  # each later retry waits this many times longer


@db_task()
def note(path: str, text: str) -> None:
    """Append ``text`` and the time to ``path``."""
    with Path(path).open("a") as file:
        file.write(f"{time.time()} {text}\n")


@db_task(retries=RETRIES, retry_delay=RETRY_DELAY, retry_backoff=RETRY_BACKOFF)
def always_fails(path: str) -> None:
    """Note the attempt's time in ``path``, then fail: the queue retries it with back-off, then gives up."""
    with Path(path).open("a") as file:
        file.write(f"{time.time()}\n")
    raise ValueError(f"attempt noted in {Path(path).name} failed on purpose")
