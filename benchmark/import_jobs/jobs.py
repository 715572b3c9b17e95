"""An import from the browser: store the upload, dry-run it, import it on request, each in a worker process.

The rule for several files is the command line's: they are read in the order given, each one all or
nothing in its own transaction, and the first bad file stops the job. In a dry run nothing is kept
and the files after the bad one are not checked; in the import, the files before it stay imported
and the files after it are not read. Each file of a dry run is checked against the team's data as it
is, like ``import_episodes --dry-run``.

The work runs in ``manage.py import_episodes --job <id>``, started detached like a simulation run's
worker (:func:`spawn_process`): it outlives the request and a restart of
the web server, and its transactions are its own, so a big file never holds a request open. The
uploads wait under ``VAR_DIR/imports/<id>/`` and are deleted when the import is over, when the dry
run refuses them, or a day after a dry run nobody confirmed (:func:`remove_expired`, run at each upload).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from ..importing import ImportProblem, ImportResult, import_file
from ..models import ImportJob, Team
from .progress_file import STALE_AFTER, FileProgress, ProgressWriter, job_directory, read_progress, write_progress

logger = logging.getLogger(__name__)

KEEP_UPLOADS = timedelta(days=1)
# The page's words for naming a file's format (the command says "pass --format").
CHOOSE_FORMAT = "choose its format in the Format list and upload it again"
Status = ImportJob.Status


class JobNotRunnable(RuntimeError):
    """The job is not waiting for a worker (it is done, or waits for the researcher)."""


def uploaded_paths(job: ImportJob) -> list[Path]:
    """The job's files in import order; each keeps its own name (it names the file in every message)."""
    return [job_directory(job.pk) / str(index) / name for index, name in enumerate(job.file_names)]


class TeamImportsFull(RuntimeError):
    """The team already has as many import jobs at work as one team may (``PARLEY_TEAM_MAX_IMPORTS``)."""


def take_import_slot(team: Team) -> None:
    """Refuse one more job at work for ``team`` when it has ``PARLEY_TEAM_MAX_IMPORTS`` already (each is a
    worker process). Call inside the transaction that starts the job: the team's row stays locked until
    it commits, so uploads at the same moment are counted one after the other."""
    Team.objects.select_for_update().filter(pk=team.pk).first()
    working = ImportJob.objects.filter(team=team, status__in=[Status.CHECKING, Status.IMPORTING])
    limit = settings.PARLEY_TEAM_MAX_IMPORTS
    if sum(1 for job in working if not is_stale(job)) >= limit:
        raise TeamImportsFull(
            f"{team} already has {limit} import{'s' if limit != 1 else ''} under way, the most one team may have "
            "at once: wait for one to end, then try again."
        )


def store_upload(team: Team, user: Any, files: Sequence[UploadedFile], format: str) -> ImportJob:
    """Keep the uploaded files for a new job and start its dry run. Raises ``OSError`` when they cannot be
    written (the job is then deleted), :class:`TeamImportsFull` when the team has as many jobs at work as it may."""
    remove_expired()
    names = [Path(upload.name).name for upload in files]
    with transaction.atomic():
        take_import_slot(team)
        job = ImportJob.objects.create(
            team=team, created_by=user, format=format, file_names=names, size=sum(upload.size for upload in files)
        )
    try:
        for path, upload in zip(uploaded_paths(job), files, strict=True):
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as target:
                for chunk in upload.chunks():
                    target.write(chunk)
    except OSError:
        shutil.rmtree(job_directory(job.pk), ignore_errors=True)
        job.delete()
        raise
    transaction.on_commit(partial(start_worker, job.pk))
    return job


def start_import(job: ImportJob) -> bool:
    """Import for real the files of a checked job; False when it is not waiting for that (a second click).
    Raises :class:`TeamImportsFull` when the team has as many jobs at work as it may."""
    with transaction.atomic():
        if not ImportJob.objects.filter(pk=job.pk, status=Status.CHECKED).exists():
            return False
        take_import_slot(job.team)
        started = ImportJob.objects.filter(pk=job.pk, status=Status.CHECKED).update(
            status=Status.IMPORTING, results=[], error="", failed_file=None, worker_pid=None,
            started_at=None, finished_at=None,
        )
        if started:
            transaction.on_commit(partial(start_worker, job.pk))
    return bool(started)


def worker_command(job_id: int) -> list[str]:
    return [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "import_episodes", "--job", str(job_id)]


def worker_log_path(job_id: int) -> Path:
    return Path(settings.VAR_DIR) / "imports" / "logs" / f"import-{job_id}.log"


def start_worker(job_id: int) -> int | None:
    """Start ``manage.py import_episodes --job <id>`` detached; returns its pid, or None when it could not
    start (the job then fails with the reason)."""
    job = ImportJob.objects.get(pk=job_id)
    write_progress(job_id, FileProgress(files=len(job.file_names)))  # the worker's silence is timed from now
    log = worker_log_path(job_id)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        pid = spawn_process(worker_command(job_id), cwd=Path(settings.BASE_DIR), log=log)
    except OSError as error:
        logger.exception("Could not start the worker of import %s", job_id)
        reason = error.strerror or type(error).__name__  # not str(error), which names the file
        finish(job, Status.FAILED, job.results, error=f"Could not start the worker process ({reason}).")
        return None
    ImportJob.objects.filter(pk=job_id).update(worker_pid=pid)
    return pid


def run_job(job_id: int) -> ImportJob:
    """The worker's work: the dry run of a job being checked, or the import of one being imported."""
    job = ImportJob.objects.select_related("team").get(pk=job_id)
    if not job.working:
        raise JobNotRunnable(f"Import {job_id} is {job.get_status_display()}: there is nothing for a worker to do.")
    ImportJob.objects.filter(pk=job_id).update(worker_pid=os.getpid(), started_at=timezone.now())
    dry_run = job.status == Status.CHECKING
    results: list[dict[str, Any]] = []
    paths = uploaded_paths(job)
    try:
        with ProgressWriter(job_id, len(paths)) as progress:
            for index, path in enumerate(paths):
                progress.start_file(index)
                try:
                    result = import_file(path, team=job.team, format=job.format, dry_run=dry_run, progress=progress,
                                         choose_format=CHOOSE_FORMAT)
                except ImportProblem as problem:
                    status = Status.REFUSED if dry_run else Status.FAILED
                    return finish(job, status, results, error=str(problem), failed_file=index)
                results.append(describe(result))
                ImportJob.objects.filter(pk=job_id).update(results=results)
    except Exception as error:
        logger.exception("Import %s failed", job_id)
        message = f"An unexpected error stopped the worker: {type(error).__name__} (the server log has the details)."
        finish(job, Status.FAILED, results, error=message, failed_file=len(results))
        raise
    return finish(job, Status.CHECKED if dry_run else Status.IMPORTED, results)


def describe(result: ImportResult) -> dict[str, Any]:
    """What the job keeps of one file's result: the summary's parts and notes, worded as the command words them."""
    return {
        "file": result.file, "format": result.format, "dry_run": result.dry_run, "summary": result.summary(),
        "parts": [list(part) for part in result.parts()], "notes": list(result.notes),
        "episodes": [] if result.dry_run else result.episodes,
    }


def finish(
    job: ImportJob, status: str, results: list[dict[str, Any]], *, error: str = "", failed_file: int | None = None
) -> ImportJob:
    """Record how the job ended; its files go, unless a checked job keeps them for the import."""
    ImportJob.objects.filter(pk=job.pk).update(
        status=status, results=results, error=error, failed_file=failed_file, finished_at=timezone.now()
    )
    if status == Status.CHECKED:
        job_directory(job.pk).joinpath("progress.json").unlink(missing_ok=True)
    else:
        shutil.rmtree(job_directory(job.pk), ignore_errors=True)
    job.refresh_from_db()
    return job


def is_stale(job: ImportJob, now: Any = None) -> bool:
    """A job at work whose worker has said nothing for ``STALE_AFTER``: its process has ended."""
    if not job.working:
        return False
    now = now or timezone.now()
    read = read_progress(job.pk)
    last = datetime.fromtimestamp(read[1], tz=UTC) if read else job.started_at or job.created_at
    return last < now - STALE_AFTER


def remove_expired(now: Any = None) -> None:
    """Delete the uploads nobody will import: dry runs not confirmed within ``KEEP_UPLOADS``, jobs whose
    worker died that long ago, and directories whose job is over or gone."""
    now = now or timezone.now()
    old = ImportJob.objects.filter(created_at__lt=now - KEEP_UPLOADS)
    for job in old.filter(status=Status.CHECKED):
        if ImportJob.objects.filter(pk=job.pk, status=Status.CHECKED).update(status=Status.EXPIRED):
            shutil.rmtree(job_directory(job.pk), ignore_errors=True)
    for job in old.filter(status__in=[Status.CHECKING, Status.IMPORTING]):
        if is_stale(job, now):
            message = "Its worker stopped before the end; upload the files again."
            finish(job, Status.FAILED, job.results, error=message, failed_file=len(job.results))
    root = Path(settings.VAR_DIR) / "imports"
    numbered = [path for path in root.iterdir() if path.name.isdigit()] if root.is_dir() else []
    waiting = set(ImportJob.objects.filter(status__in=[Status.CHECKING, Status.CHECKED, Status.IMPORTING])
                  .filter(pk__in=[int(path.name) for path in numbered]).values_list("pk", flat=True))
    for path in numbered:
        if int(path.name) not in waiting:
            shutil.rmtree(path, ignore_errors=True)


def spawn_process(command: list[str], *, cwd: Path, log: Path) -> int:
    """Start ``command`` in a new session with output appended to ``log``, and reap it when it exits.

    Kept here only until the import page's jobs move onto the task queue (helper "imports", issue 23):
    runs no longer start processes, so this left ``benchmark.runs``.
    """
    import subprocess
    import threading

    with log.open("ab") as output:
        process = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )
    threading.Thread(target=process.wait, name=f"reap-{process.pid}", daemon=True).start()
    return process.pid
