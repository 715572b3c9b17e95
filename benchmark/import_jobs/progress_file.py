"""How far an import job's worker has got, told through a small file beside the uploads.

The worker saves each file inside one transaction. A count written to the job's row inside that
transaction would reach no other reader before the end, and one written through a second connection
would wait for the first one's write lock on SQLite. So the worker writes ``progress.json`` in the
job's directory instead: replaced whole (a reader never sees half of it), at most a few times a
second, and rewritten every ``HEARTBEAT`` seconds while the worker lives, even when a long bulk insert
says nothing. A job at work whose file has not changed for ``STALE_AFTER`` has lost its worker.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings

HEARTBEAT = 5.0  # seconds
WRITE_EVERY = 0.25  # seconds between two writes of a changing count
STALE_AFTER = timedelta(seconds=60)


def job_directory(job_id: int) -> Path:
    """Where a job's uploads and its progress file live until the job is over."""
    return Path(settings.VAR_DIR) / "imports" / str(job_id)


def progress_path(job_id: int) -> Path:
    return job_directory(job_id) / "progress.json"


@dataclass
class FileProgress:
    """Where the worker is: file ``file`` (from 0) of ``files``; ``stage`` is ``waiting`` (for the worker
    to start), ``reading`` (the file is read and checked), ``saving`` (``done`` of ``total`` records)."""

    files: int
    file: int = 0
    stage: str = "waiting"
    done: int = 0
    total: int = 0


def write_progress(job_id: int, progress: FileProgress) -> None:
    path = progress_path(job_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    partial.write_text(json.dumps(asdict(progress)), encoding="utf-8")
    partial.replace(path)


def read_progress(job_id: int) -> tuple[FileProgress, float] | None:
    """The last progress the worker wrote and when (a Unix time), or None when there is none."""
    path = progress_path(job_id)
    try:
        written = path.stat().st_mtime
        values = json.loads(path.read_text(encoding="utf-8"))
        return FileProgress(**values), written
    except (OSError, ValueError, TypeError):
        return None


class ProgressWriter:
    """The worker's side: ``start_file(index)`` before each file, then pass the writer to ``import_file`` as
    its ``progress``. Used as a context manager, it rewrites the file every ``HEARTBEAT`` seconds."""

    def __init__(self, job_id: int, files: int) -> None:
        self.job_id = job_id
        self.state = FileProgress(files=files)
        self._written_at = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, name=f"import-{job_id}-heartbeat", daemon=True)

    def __enter__(self) -> ProgressWriter:
        self._write()
        self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._beat.join()

    def start_file(self, index: int) -> None:
        self.state = FileProgress(files=self.state.files, file=index, stage="reading")
        self._write()

    def __call__(self, stage: str, done: int, total: int) -> None:
        """What ``import_file`` tells: ``parsed`` once the records are read, then ``saved`` as they are saved."""
        self.state.stage, self.state.done, self.state.total = "saving", done if stage == "saved" else 0, total
        if done == total or time.monotonic() - self._written_at >= WRITE_EVERY:
            self._write()

    def _write(self) -> None:
        with self._lock:
            write_progress(self.job_id, self.state)
            self._written_at = time.monotonic()

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT):
            self._write()
