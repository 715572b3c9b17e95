"""What an import job's page shows: where its task is, per file what the dry run or the import did, and what
an import brought in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from ..models import ImportJob, Job, Scenario
from .forms import format_label
from .jobs import is_stale
from .progress_store import read_progress

SCENARIOS_SHOWN = 20

Status = ImportJob.Status


@dataclass
class FileRow:
    """One uploaded file: ``state`` is ``done``, ``failed``, ``working``, ``waiting`` or ``skipped`` (not read,
    since a file before it failed); a done file has its summary ``parts`` and ``notes``, a failed one its error."""

    position: int
    name: str
    state: str
    format: str = ""
    parts: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str = ""


@dataclass
class JobStatus:
    job: ImportJob
    stale: bool
    files: list[FileRow]
    bar: dict[str, Any] | None  # the progress bar (done, total, percent, label) while a task is at it
    outcome: str  # one or two sentences on how the job stands
    scenarios: list[Scenario] = field(default_factory=list)  # what an import made or its episodes are in
    more_scenarios: int = 0  # beyond those listed

    @property
    def polling(self) -> bool:
        return self.job.working and not self.stale

    @property
    def can_import(self) -> bool:
        return self.job.status == Status.CHECKED

    @property
    def format(self) -> str:
        """The format chosen on the page, as the page names it."""
        return format_label(self.job.format)

    @property
    def episodes(self) -> int:
        """How many episodes the import created or added to (none in a dry run)."""
        if self.job.dry_run:
            return 0
        return len({pk for result in self.job.results for pk in result.get("episodes", [])})

    @property
    def tone(self) -> str:
        """The badge's colour, in the run badges' words."""
        if self.stale or self.job.status in {Status.REFUSED, Status.FAILED, Status.EXPIRED}:
            return "failed"
        return "running" if self.job.working else "finished"


def job_status(job: ImportJob, user: Any = None) -> JobStatus:
    stale = is_stale(job)
    progress = read_progress(job.pk) if job.working else None
    current = progress.file if progress else len(job.results)
    files = [_file_row(job, position, name, current) for position, name in enumerate(job.file_names)]
    bar = None
    if job.working and not stale:
        bar = _bar(job, progress) if progress else _waiting(job)
    status = JobStatus(job=job, stale=stale, files=files, bar=bar, outcome=_outcome(job, stale))
    if user is not None and not job.dry_run and job.status in {Status.IMPORTED, Status.FAILED}:
        status.scenarios, status.more_scenarios = _scenarios(job, user)
    return status


def _scenarios(job: ImportJob, user: Any) -> tuple[list[Scenario], int]:
    """The scenarios the import created, and those its episodes are in, that ``user`` may see."""
    made = {pk for result in job.results for pk in result.get("scenarios", [])}
    episodes = {pk for result in job.results for pk in result.get("episodes", [])}
    if not made and not episodes:
        return [], 0
    found = Scenario.objects.owned_by(user).filter(Q(pk__in=made) | Q(episodes__pk__in=episodes)).distinct()
    found = found.only("codename").order_by("codename", "pk")
    shown = list(found[:SCENARIOS_SHOWN])
    return shown, (found.count() - len(shown) if len(shown) == SCENARIOS_SHOWN else 0)


def _file_row(job: ImportJob, position: int, name: str, current: int) -> FileRow:
    if position < len(job.results):
        result = job.results[position]
        parts = [(label.rstrip(":").capitalize(), what) for label, what in result["parts"]]
        if not parts:
            parts = [("Nothing to import", "")]
        return FileRow(position, name, "done", format_label(result["format"]), parts, result["notes"])
    if position == job.failed_file:
        return FileRow(position, name, "failed", error=job.error)
    if job.working:
        return FileRow(position, name, "working" if position == current else "waiting")
    return FileRow(position, name, "skipped")


def _bar(job: ImportJob, progress: Any) -> dict[str, Any]:
    name = job.file_names[progress.file] if progress.file < len(job.file_names) else ""
    where = f"File {progress.file + 1} of {progress.files}, {name}" if progress.files > 1 else name
    verb = "checked" if job.dry_run else "saved"
    if progress.stage == "started":
        label = "Starting"
    elif progress.stage == "reading":
        label = f"{where}: reading the records"
    else:
        label = f"{where}: {progress.done} of {progress.total} records {verb}"
    percent = round(100 * progress.done / progress.total) if progress.total else 0
    return {"done": progress.done, "total": progress.total, "percent": percent, "label": label}


def _waiting(job: ImportJob) -> dict[str, Any]:
    """The bar of a step that has said nothing yet: queued, or just taken by a consumer."""
    queued = job.queue_job.status if job.queue_job is not None else Job.Status.QUEUED
    if queued == Job.Status.RUNNING:
        label = "Starting"
    else:
        label = "Waiting for a task consumer to take it"
        if queued == Job.Status.QUEUED:
            label += " (queued with the other work; it starts as soon as a consumer is free)"
    return {"done": 0, "total": 0, "percent": 0, "label": label}


def _outcome(job: ImportJob, stale: bool) -> str:
    files = len(job.file_names)
    if stale:
        kept = "checked" if job.dry_run else "imported"
        return (
            f"The task stopped before the end (its task consumer may have stopped). The {len(job.results)} file(s) "
            f"listed as done were {kept}; the file it was on was rolled back whole. Upload the files again to go "
            "on: what is already in Parley is left unchanged."
        )
    if job.status == Status.CHECKING:
        return "Dry run under way: each file is read and saved, then everything is rolled back. Nothing is kept."
    if job.status == Status.IMPORTING:
        return "Importing: each file is saved whole or not at all, in the order listed."
    if job.status == Status.CHECKED:
        return "Dry run finished: nothing was saved. Import the files to store what is listed."
    if job.status == Status.IMPORTED:
        return f"Imported {files} file{'' if files == 1 else 's'}."
    if job.status == Status.EXPIRED:
        return "Nobody imported these files within a day of their dry run, so they were deleted; upload them again."
    if job.failed_file is None:  # the queue could not take the step
        return job.error
    before, after = job.failed_file, files - job.failed_file - 1
    if job.status == Status.REFUSED:
        told = "The dry run found a problem in the file marked below; nothing was saved."
        if after:
            told += f" The {after} file(s) after it were not checked."
        return told + " Fix the file and upload again."
    told = "The import stopped at the file marked below, which was rolled back whole."
    if before:
        told += f" The {before} file(s) before it were imported."
    if after:
        told += f" The {after} file(s) after it were not read."
    return told
