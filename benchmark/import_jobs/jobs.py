"""An import from the browser: store the upload, dry-run it, import it on request, each step a task on the queue.

The rule for several files is the command line's: they are read in the order given, each one all or
nothing in its own transaction, and the first bad file stops the job. In a dry run nothing is kept
and the files after the bad one are not checked; in the import, the files before it stay imported
and the files after it are not read. Each file of a dry run is checked against the team's data as it
is, like ``import_episodes --dry-run``.

Each step runs as the task ``benchmark.jobs.tasks.import_upload`` on a consumer that is already up
(``make worker``, or the one ``make demo`` starts), queued with :func:`benchmark.jobs.queue.enqueue`
once the request's transaction commits: it outlives the request and a restart of the web server,
its transactions are its own, so a big file never holds a request open, and a small file's dry run
answers in well under two seconds (no process to start). A step claims the row before it works
(``started_at``), so a task delivered twice, or ``import_episodes --job`` run beside it, does the
work once.

The uploads wait under ``imports/<id>/`` in the queue's shared directory (``PARLEY_SHARED_DIR``, which
every machine running a consumer mounts; the var directory by default), so whichever consumer takes a
step finds them; a step whose consumer cannot see them fails saying so. They are deleted when the
import is over, when the dry run refuses them, or a day after a dry run nobody confirmed
(:func:`remove_expired`, run at each upload and by the consumer's hourly upkeep).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from ..importing import ImportProblem, ImportResult, import_file
from ..jobs.queue import check_queue, enqueue, shared_directory, task_named, worker_name
from ..models import ImportJob, Job, Team
from .progress_store import QUIET, ProgressWriter, clear_progress, read_progress

logger = logging.getLogger(__name__)

KEEP_UPLOADS = timedelta(days=1)
# The page's words for naming a file's format (the command says "pass --format").
CHOOSE_FORMAT = "choose its format in the Format list and upload it again"
Status = ImportJob.Status
LOST = "Its task stopped before the end; upload the files again."


class JobNotRunnable(RuntimeError):
    """The job has no step waiting to be done (it is over, waits for the researcher, or is being done)."""


def job_directory(job_id: int) -> Path:
    """Where a job's uploads wait until the job is over (on every machine whose consumer may do its steps)."""
    return shared_directory() / "imports" / str(job_id)


def uploaded_paths(job: ImportJob) -> list[Path]:
    """The job's files in import order; each keeps its own name (it names the file in every message)."""
    return [job_directory(job.pk) / str(index) / name for index, name in enumerate(job.file_names)]


class TeamImportsFull(RuntimeError):
    """The team already has as many import jobs at work as one team may (``PARLEY_TEAM_MAX_IMPORTS``)."""


def take_import_slot(team: Team) -> None:
    """Refuse one more job at work for ``team`` when it has ``PARLEY_TEAM_MAX_IMPORTS`` already (each takes
    a consumer's worker). Call inside the transaction that starts the job: the team's row stays locked
    until it commits, so uploads at the same moment are counted one after the other."""
    Team.objects.select_for_update().filter(pk=team.pk).first()
    working = ImportJob.objects.filter(team=team, status__in=[Status.CHECKING, Status.IMPORTING])
    limit = settings.PARLEY_TEAM_MAX_IMPORTS
    if sum(1 for job in working.select_related("queue_job") if not is_stale(job)) >= limit:
        raise TeamImportsFull(
            f"{team} already has {limit} import{'s' if limit != 1 else ''} under way, the most one team may have "
            "at once: wait for one to end, then try again."
        )


def store_upload(team: Team, user: Any, files: Sequence[UploadedFile], format: str) -> ImportJob:
    """Keep the uploaded files for a new job and queue its dry run.

    Raises :class:`~benchmark.jobs.queue.QueueUnavailable` when the queue cannot be reached and
    ``OSError`` when the files cannot be written (nothing is kept in either case), and
    :class:`TeamImportsFull` when the team has as many jobs at work as it may."""
    check_queue()
    remove_expired()
    names = [Path(upload.name).name for upload in files]
    with transaction.atomic():
        take_import_slot(team)
        job = ImportJob.objects.create(
            team=team, created_by=user, format=format, file_names=names, size=sum(upload.size for upload in files)
        )
    try:  # outside the transaction: on SQLite it holds the write lock, and big files take a while to write
        for path, upload in zip(uploaded_paths(job), files, strict=True):
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as target:
                for chunk in upload.chunks():
                    target.write(chunk)
    except OSError:
        shutil.rmtree(job_directory(job.pk), ignore_errors=True)
        job.delete()
        raise
    with transaction.atomic():
        queue_step(job, user)
    return job


def start_import(job: ImportJob, user: Any = None) -> bool:
    """Queue the real import of a checked job's files; False when it is not waiting for that (a second click).
    Raises :class:`TeamImportsFull` when the team has as many jobs at work as it may, and
    :class:`~benchmark.jobs.queue.QueueUnavailable` (changing nothing) when the queue cannot be reached."""
    check_queue()
    with transaction.atomic():
        if not ImportJob.objects.filter(pk=job.pk, status=Status.CHECKED).exists():
            return False
        take_import_slot(job.team)
        started = ImportJob.objects.filter(pk=job.pk, status=Status.CHECKED).update(
            status=Status.IMPORTING, results=[], error="", failed_file=None, started_at=None, finished_at=None,
        )
        if started:
            job.refresh_from_db()
            queue_step(job, user)
    return bool(started)


def step_label(job: ImportJob) -> str:
    """How the jobs page names the step, e.g. "Import 2 files (dry run)"."""
    count = len(job.file_names)
    files = job.file_names[0] if count == 1 else f"{count} files"
    return f"Import {files}{' (dry run)' if job.status == Status.CHECKING else ''}"


def queue_step(job: ImportJob, user: Any) -> Job:
    """Queue the step the job is at (its dry run or its import) once the caller's transaction commits."""
    queued = enqueue(
        task_named("import_upload"), job.pk, team=job.team, label=step_label(job), user=user,
        link=reverse("benchmark:import-job", args=[job.pk]), on_failure=_not_queued,
    )
    ImportJob.objects.filter(pk=job.pk).update(queue_job=queued)
    job.queue_job = queued
    return queued


def _not_queued(queued: Job, message: str) -> None:
    """The queue refused the step at commit time: the import fails with the queue's words."""
    job = ImportJob.objects.filter(queue_job=queued).first()
    if job is not None and job.working:
        finish(job, Status.FAILED, job.results, error=message)


def run_job(job_id: int) -> ImportJob:
    """A consumer's work (or ``import_episodes --job``'s): the dry run of a job being checked, or the import
    of one being imported."""
    job = ImportJob.objects.select_related("team").get(pk=job_id)
    if not job.working:
        raise JobNotRunnable(f"Import {job_id} is {job.get_status_display()}: there is nothing left to do for it.")
    claimed = ImportJob.objects.filter(pk=job_id, status=job.status, started_at__isnull=True).update(
        started_at=timezone.now()
    )
    if not claimed:
        raise JobNotRunnable(f"Import {job_id} is being done already ({job.get_status_display()}).")
    dry_run = job.status == Status.CHECKING
    results: list[dict[str, Any]] = []
    paths = uploaded_paths(job)
    missing = next((index for index, path in enumerate(paths) if not path.exists()), None)
    if missing is not None:
        return finish(job, Status.FAILED, results, failed_file=missing, error=(
            f"{job.file_names[missing]}: the uploaded file is not where the task looked ({worker_name()} reads "
            f"{job_directory(job.pk)}). With consumers on several machines, PARLEY_SHARED_DIR must name a "
            "directory they all share; upload the files again."
        ))
    progress = ProgressWriter(job_id, len(paths))
    try:
        for index, path in enumerate(paths):
            progress.start_file(index, path.stat().st_size if path.is_file() else 0)
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
        message = f"An unexpected error stopped the task: {type(error).__name__} (the server log has the details)."
        finish(job, Status.FAILED, results, error=message, failed_file=len(results))
        raise
    return finish(job, Status.CHECKED if dry_run else Status.IMPORTED, results)


def describe(result: ImportResult) -> dict[str, Any]:
    """What the job keeps of one file's result: the summary's parts and notes, worded as the command words
    them, and what an import made (the episodes and scenarios the page links to)."""
    return {
        "file": result.file, "format": result.format, "dry_run": result.dry_run, "summary": result.summary(),
        "parts": [list(part) for part in result.parts()], "notes": list(result.notes),
        "episodes": [] if result.dry_run else result.episodes,
        "scenarios": [] if result.dry_run else result.scenarios,
    }


def finish(
    job: ImportJob, status: str, results: list[dict[str, Any]], *, error: str = "", failed_file: int | None = None
) -> ImportJob:
    """Record how the job ended; its files go, unless a checked job keeps them for the import."""
    ImportJob.objects.filter(pk=job.pk).update(
        status=status, results=results, error=error, failed_file=failed_file, finished_at=timezone.now()
    )
    clear_progress(job.pk)
    if status != Status.CHECKED:
        shutil.rmtree(job_directory(job.pk), ignore_errors=True)
    job.refresh_from_db()
    return job


def is_stale(job: ImportJob, now: datetime | None = None) -> bool:
    """A job at work whose task has been lost: the queue says the step ended without finishing it (the
    consumer stopped), or the task has said nothing for longer than it may (its consumer died).

    A step still waiting in the queue is not stale, however long the queue makes it wait.
    """
    if not job.working:
        return False
    queued = job.queue_job
    if queued is not None and queued.status in {Job.Status.FAILED, Job.Status.CANCELLED, Job.Status.FINISHED}:
        job.refresh_from_db(fields=["status"])  # the task may have finished the row since it was read
        return job.working
    if queued is not None and queued.status in {Job.Status.QUEUED, Job.Status.RETRYING}:
        return False
    now = now or timezone.now()
    progress = read_progress(job.pk)
    if progress is not None:
        return progress.silent_too_long(now.timestamp())
    last = job.started_at or job.created_at
    return last < now - timedelta(seconds=QUIET)


def remove_expired(now: datetime | None = None) -> int:
    """Delete the uploads nobody will import: dry runs not confirmed within ``KEEP_UPLOADS``, jobs whose
    task was lost that long ago, and directories whose job is over or gone; how many jobs it ended."""
    now = now or timezone.now()
    ended = 0
    old = ImportJob.objects.filter(created_at__lt=now - KEEP_UPLOADS)
    for job in old.filter(status=Status.CHECKED):
        if ImportJob.objects.filter(pk=job.pk, status=Status.CHECKED).update(status=Status.EXPIRED):
            shutil.rmtree(job_directory(job.pk), ignore_errors=True)
            ended += 1
    for job in old.filter(status__in=[Status.CHECKING, Status.IMPORTING]).select_related("queue_job"):
        if is_stale(job, now):
            finish(job, Status.FAILED, job.results, error=LOST, failed_file=len(job.results))
            # A consumer killed outright sent no signal: its job row still says running on the jobs page.
            Job.objects.filter(pk=job.queue_job_id, status=Job.Status.RUNNING).update(
                status=Job.Status.FAILED, error=LOST, finished_at=timezone.now()
            )
            ended += 1
    root = shared_directory() / "imports"
    numbered = [path for path in root.iterdir() if path.name.isdigit()] if root.is_dir() else []
    waiting = set(ImportJob.objects.filter(status__in=[Status.CHECKING, Status.CHECKED, Status.IMPORTING])
                  .filter(pk__in=[int(path.name) for path in numbered]).values_list("pk", flat=True))
    for path in numbered:
        if int(path.name) not in waiting:
            shutil.rmtree(path, ignore_errors=True)
    return ended
