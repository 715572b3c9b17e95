"""How far an import's task has got inside a file, kept in the task queue's key-value store.

The task saves each file inside one transaction. A count written to the import's row inside that
transaction would reach no other reader before the end, and one written to the row through a
second connection would wait for the first one's write lock on SQLite. So the task writes its place
with ``HUEY.put``: the queue's own storage (its SQLite file, its PostgreSQL tables on a connection
of their own, or Redis), never the application's transaction, on every queue kind and in the
tests' immediate mode alike. Each record is replaced whole, at most a few times a second, and
carries the time it was written (``stamp``) and how long the task may then say nothing
(``quiet``: a minute, and a second more per megabyte of the file in hand, for the stretches no
count comes out of: reading the file, the bulk inserts at its end). A task silent for longer has
lost its consumer.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

from ..jobs.queue import HUEY

logger = logging.getLogger(__name__)

WRITE_EVERY = 0.25  # seconds between two writes of a changing count
QUIET = 60.0  # seconds a task may say nothing, whatever the file
QUIET_PER_BYTE = 1 / 1_000_000  # and one second more per megabyte of the file in hand


def progress_key(job_id: int) -> str:
    return f"parley.import-progress.{job_id}"


@dataclass
class FileProgress:
    """Where the task is: file ``file`` (from 0) of ``files``; ``stage`` is ``started`` (the task has begun),
    ``reading`` (the file is read and checked) or ``saving`` (``done`` of ``total`` records); written at
    ``stamp`` (a Unix time), after which the task may be silent for ``quiet`` seconds."""

    files: int
    file: int = 0
    stage: str = "started"
    done: int = 0
    total: int = 0
    stamp: float = 0.0
    quiet: float = QUIET

    def silent_too_long(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) > self.stamp + self.quiet


def write_progress(job_id: int, progress: FileProgress) -> None:
    progress.stamp = time.time()
    HUEY.put(progress_key(job_id), asdict(progress))


def read_progress(job_id: int) -> FileProgress | None:
    """The task's last word, or None when it has said nothing yet (or the queue cannot be read now)."""
    try:
        values = HUEY.get(progress_key(job_id), peek=True)
    except Exception:  # the page still shows the row when the queue is down
        logger.warning("Could not read the progress of import %s", job_id, exc_info=True)
        return None
    try:
        return FileProgress(**values) if isinstance(values, dict) else None
    except TypeError:
        return None


def clear_progress(job_id: int) -> None:
    try:
        HUEY.delete(progress_key(job_id))
    except Exception:
        logger.warning("Could not delete the progress of import %s", job_id, exc_info=True)


class ProgressWriter:
    """The task's side: ``start_file(index, size)`` before each file, then pass the writer to ``import_file``
    as its ``progress``."""

    def __init__(self, job_id: int, files: int) -> None:
        self.job_id = job_id
        self.state = FileProgress(files=files)
        self._written_at = 0.0
        self._write()

    def start_file(self, index: int, size: int) -> None:
        quiet = QUIET + size * QUIET_PER_BYTE
        self.state = FileProgress(files=self.state.files, file=index, stage="reading", quiet=quiet)
        self._write()

    def __call__(self, stage: str, done: int, total: int) -> None:
        """What ``import_file`` tells: ``parsed`` once the records are read, then ``saved`` as they are saved."""
        self.state.stage, self.state.done, self.state.total = "saving", done if stage == "saved" else 0, total
        if done == total or time.monotonic() - self._written_at >= WRITE_EVERY:
            self._write()

    def _write(self) -> None:
        try:
            write_progress(self.job_id, self.state)
        except Exception:  # a count the page misses is no reason to stop the import
            logger.warning("Could not write the progress of import %s", self.job_id, exc_info=True)
        self._written_at = time.monotonic()
