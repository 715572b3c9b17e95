"""A ratings file kept on the server between its check and its import, so the import step sends no file back.

The import page checks an upload (a dry run), then imports what was checked when the researcher
confirms. The file waits, as the episode import page's uploads do (``benchmark.import_jobs``),
under ``VAR_DIR/imports/`` and for ``KEEP_UPLOADS`` (a day) at most; it needs no job row, since the
check runs in the request: it is one directory, readable by the server's user alone, named by the
study, the researcher and a random token. Only the researcher who uploaded it can name it, for
that study (a token given by another researcher or for another study finds nothing). It is deleted
once imported, when its check refuses it, or a day after the check (``remove_expired``, run at each
upload and hourly by the consumer's upkeep).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from benchmark.import_jobs.jobs import KEEP_UPLOADS

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")


def _root() -> Path:
    return Path(settings.VAR_DIR) / "imports" / "ratings"


def _directory(study_pk: int, user_pk: int, token: str) -> Path:
    return _root() / f"{study_pk}-{user_pk}-{token}"


def keep(study_pk: int, user_pk: int, upload: UploadedFile) -> tuple[str, Path]:
    """Store ``upload`` for ``user_pk``'s import into study ``study_pk``: (its token, its path)."""
    remove_expired()
    token = secrets.token_urlsafe(24)
    directory = _directory(study_pk, user_pk, token)
    _root().mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.mkdir(mode=0o700)
    path = directory / (Path(upload.name or "ratings").name or "ratings")
    try:
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as target:
            for chunk in upload.chunks():
                target.write(chunk)
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return token, path


def kept(study_pk: int, user_pk: int, token: str) -> Path | None:
    """The file kept under ``token`` for this researcher and study, or None (never kept, imported, or expired)."""
    if not _TOKEN.match(token or ""):
        return None
    directory = _directory(study_pk, user_pk, token)
    if not directory.is_dir() or _expired(directory):
        return None
    files = [path for path in directory.iterdir() if path.is_file()]
    return files[0] if len(files) == 1 else None


def discard(path: Path) -> None:
    """Delete a kept file with its directory."""
    shutil.rmtree(path.parent, ignore_errors=True)


def _expired(directory: Path, now: float | None = None) -> bool:
    now = time.time() if now is None else now
    try:
        return directory.stat().st_mtime < now - KEEP_UPLOADS.total_seconds()
    except OSError:
        return True


def remove_expired(now: float | None = None) -> int:
    """Delete every kept file checked more than ``KEEP_UPLOADS`` ago (at each upload, and hourly by the
    consumer's upkeep, ``annotator.tasks``); how many it deleted."""
    root = _root()
    if not root.is_dir():
        return 0
    removed = 0
    for directory in root.iterdir():
        if directory.is_dir() and _expired(directory, now):
            shutil.rmtree(directory, ignore_errors=True)
            removed += 1
    return removed
