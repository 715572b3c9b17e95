"""Build a large study's report bundle as a task on the queue, tracked by a ``ReportBundle`` row.

A study with more submitted annotations than ``settings.PARLEY_REPORT_BACKGROUND_THRESHOLD`` is
bundled off the request: ``start_bundle`` records a pending row and queues the task
``annotator.tasks.build_report_bundle`` (through ``benchmark.jobs.queue.enqueue``, once the row is
committed), which a consumer runs: it builds the report, writes the ZIP under ``reports/`` in the
queue's shared directory (``benchmark.jobs.queue.shared_directory``: the var directory unless
``PARLEY_SHARED_DIR`` names one every machine mounts) and marks the row ready (or failed, with the
error). The page polls the row. Everything the page needs is in the database and the work is on the
queue, so any web process can answer the poll and a restart of the web process loses nothing. A
bundle whose task was lost (the queue's job failed or was cancelled without it finishing, or it has
been building for ``STALLED_AFTER``) is shown as stalled and can be started again; one still waiting
in the queue is not. The consumer's upkeep deletes the files there that no ready bundle names
(``remove_orphan_files``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Max
from django.urls import reverse
from django.utils import timezone

from benchmark.jobs.queue import check_queue, enqueue, shared_directory
from benchmark.models import Job
from benchmark.stats.bootstrap import DEFAULT_RESAMPLES

from ..models import ReportBundle, Study
from ..tasks import build_report_bundle
from .build import build_report, latest_submitted
from .documents import write_bundle

logger = logging.getLogger(__name__)

STALLED_AFTER = timedelta(minutes=30)
ORPHANS_AFTER = timedelta(hours=1)  # a file younger than this may be a build's, not yet on its row
ACTIVE = (ReportBundle.Status.PENDING, ReportBundle.Status.RUNNING)
LOST = (Job.Status.FAILED, Job.Status.CANCELLED, Job.Status.FINISHED)
TASK = build_report_bundle.task_class.__name__  # the name its jobs are recorded under


def bundle_directory() -> Path:
    """Where bundles are written by a consumer and read by the web process (the queue's shared directory)."""
    return shared_directory() / "reports"


def bundle_path(bundle: ReportBundle) -> Path:
    return bundle_directory() / Path(bundle.file_name).name


def data_state(study: Study) -> tuple[int, datetime | None]:
    """How many submitted annotations the study has (latest versions, every item kind), and the last submission."""
    totals = latest_submitted(study).aggregate(annotations=Count("pk"), last=Max("submitted_at"))
    return totals["annotations"], totals["last"]


def is_large(annotations: int) -> bool:
    """Whether a study with this many submitted annotations is bundled in the background."""
    return annotations > settings.PARLEY_REPORT_BACKGROUND_THRESHOLD


@dataclass
class BundleState:
    """What the report page says about the bundle: built on request, or the latest background build
    (``job``: the queue's job that builds it, when there is one)."""

    background: bool
    annotations: int
    last_submitted_at: datetime | None
    bundle: ReportBundle | None
    job: Job | None = None

    @property
    def building(self) -> bool:
        return self.bundle is not None and self.bundle.status in ACTIVE and not self.stalled

    @cached_property
    def stalled(self) -> bool:
        return self.bundle is not None and is_stalled(self.bundle, self.job)

    @property
    def waiting(self) -> bool:
        """Queued, no consumer has taken it yet."""
        return self.building and self.bundle.status == ReportBundle.Status.PENDING

    @property
    def ready(self) -> bool:
        return self.bundle is not None and self.bundle.status == ReportBundle.Status.READY

    @property
    def failed(self) -> bool:
        return self.bundle is not None and (self.bundle.status == ReportBundle.Status.FAILED or self.stalled)

    @property
    def fresh(self) -> bool:
        """The ready bundle was built from the annotations the study has now."""
        return self.ready and (self.bundle.annotations, self.bundle.last_submitted_at) == (
            self.annotations, self.last_submitted_at
        )


def bundle_job(bundle: ReportBundle) -> Job | None:
    """The queue's latest job building ``bundle``."""
    return Job.objects.filter(task=TASK, arguments=[bundle.pk]).order_by("-created_at", "-pk").first()


def is_stalled(bundle: ReportBundle, job: Job | None, now: datetime | None = None) -> bool:
    """An unfinished bundle whose task was lost: its job ended without finishing the row, or it has been
    building (or, with no job to tell, waiting) for longer than ``STALLED_AFTER``."""
    if bundle.status not in ACTIVE:
        return False
    if job is not None and job.status in LOST:
        bundle.refresh_from_db(fields=["status"])  # the task may have finished the row since it was read
        return bundle.status in ACTIVE
    if job is not None and job.status == Job.Status.QUEUED:
        return False
    since = bundle.started_at or bundle.created_at
    return since < (now or timezone.now()) - STALLED_AFTER


def bundle_state(study: Study) -> BundleState:
    annotations, last = data_state(study)
    latest = ReportBundle.objects.filter(study=study).order_by("-created_at", "-pk").first()
    job = bundle_job(latest) if latest is not None and latest.status in ACTIVE else None
    return BundleState(is_large(annotations), annotations, last, latest, job)


def start_bundle(study: Study, requested_by: AbstractBaseUser | None = None) -> ReportBundle:
    """Queue the build of ``study``'s bundle, unless one is under way already; returns its row.

    Raises :class:`~benchmark.jobs.queue.QueueUnavailable`, writing nothing, when the queue cannot be reached.
    """
    check_queue()
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).exists()  # one request at a time per study
        running = ReportBundle.objects.filter(study=study, status__in=ACTIVE).order_by("-created_at", "-pk").first()
        if running is not None:
            job = bundle_job(running)
            if not is_stalled(running, job):
                return running
            lost = "Its build stopped without finishing (its task was lost)."
            _fail(running.pk, lost)
            if job is not None:  # a consumer killed outright sent no signal: its job row still says running
                Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
                    status=Job.Status.FAILED, error=lost, finished_at=timezone.now()
                )
        bundle = ReportBundle.objects.create(study=study, requested_by=requested_by)
        enqueue(
            build_report_bundle, bundle.pk, team=study.team, label=f"Report bundle of {study}",
            user=requested_by, link=reverse("annotator:report", args=[study.slug]) + "#bundle",
            on_failure=lambda job, message: _fail(bundle.pk, message),
        )
    return bundle


def _fail(bundle_id: int, message: str) -> None:
    ReportBundle.objects.filter(pk=bundle_id, status__in=ACTIVE).update(
        status=ReportBundle.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )


def build_bundle(bundle_id: int, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> None:
    """Build the bundle of row ``bundle_id`` and record the outcome (the task's work)."""
    try:
        bundle = ReportBundle.objects.select_related("study__instrument").get(pk=bundle_id)
        ReportBundle.objects.filter(pk=bundle_id).update(status=ReportBundle.Status.RUNNING, started_at=timezone.now())
        study = bundle.study
        annotations, last = data_state(study)
        report = build_report(study, resamples=resamples, seed=seed)
        directory = bundle_directory()
        directory.mkdir(parents=True, exist_ok=True)
        name = f"{study.slug}-report-{bundle_id}.zip"
        partial = directory / f"{name}.part"
        with partial.open("wb") as target:
            write_bundle(study, report, target)
        partial.replace(directory / name)
        ReportBundle.objects.filter(pk=bundle_id).update(
            status=ReportBundle.Status.READY, file_name=name, size=(directory / name).stat().st_size,
            annotations=annotations, last_submitted_at=last, finished_at=timezone.now(),
        )
        _remove_older(study, bundle_id)
    except Exception as error:  # recorded on the row for the page, and logged with its traceback
        logger.exception("The report bundle %s failed", bundle_id)
        _fail(bundle_id, f"{type(error).__name__}: {error}")


def _remove_older(study: Study, keep: int) -> None:
    """Delete the study's earlier finished bundles and their files: only the newest is offered."""
    older = ReportBundle.objects.filter(study=study, pk__lt=keep).exclude(status__in=ACTIVE)
    for bundle in older:
        if bundle.file_name:
            bundle_path(bundle).unlink(missing_ok=True)
    older.delete()


def remove_orphan_files(now: float | None = None) -> int:
    """Delete the files in the bundles' directory that no ready bundle names (a deleted study's, a build's
    leftover ``.part``), once older than ``ORPHANS_AFTER``; how many were deleted."""
    directory = bundle_directory()
    if not directory.is_dir():
        return 0
    named = set(ReportBundle.objects.filter(status=ReportBundle.Status.READY).values_list("file_name", flat=True))
    cutoff = (time.time() if now is None else now) - ORPHANS_AFTER.total_seconds()
    removed = 0
    for path in directory.iterdir():
        try:
            if path.is_file() and path.name not in named and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except OSError:
            logger.warning("Could not delete the old report file %s", path, exc_info=True)
    return removed
