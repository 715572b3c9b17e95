"""Build a large study's report bundle in a background thread, tracked by a ``ReportBundle`` row.

A study with more submitted annotations than ``settings.PARLEY_REPORT_BACKGROUND_THRESHOLD`` is
bundled off the request: ``start_bundle`` records a pending row and, once it is committed,
starts a thread that builds the report, writes the ZIP under ``VAR_DIR/reports`` and marks the
row ready (or failed, with the error). The page polls the row. Everything the page needs is in
the database, so any worker process can answer the poll, and a bundle whose thread died with
its process is recognised as stalled after ``STALLED_AFTER`` and can be started again.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connections, transaction
from django.db.models import Count, Max
from django.utils import timezone

from benchmark.stats.bootstrap import DEFAULT_RESAMPLES

from ..models import ReportBundle, Study
from .build import build_report, latest_submitted
from .documents import write_bundle

logger = logging.getLogger(__name__)

STALLED_AFTER = timedelta(minutes=30)
THREAD_PREFIX = "parley-report-bundle-"
ACTIVE = (ReportBundle.Status.PENDING, ReportBundle.Status.RUNNING)


def bundle_directory() -> Path:
    return Path(settings.VAR_DIR) / "reports"


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
    """What the report page says about the bundle: built on request, or the latest background build."""

    background: bool
    annotations: int
    last_submitted_at: datetime | None
    bundle: ReportBundle | None

    @property
    def building(self) -> bool:
        return self.bundle is not None and self.bundle.status in ACTIVE and not self.stalled

    @property
    def stalled(self) -> bool:
        return (
            self.bundle is not None
            and self.bundle.status in ACTIVE
            and self.bundle.created_at < timezone.now() - STALLED_AFTER
        )

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


def bundle_state(study: Study) -> BundleState:
    annotations, last = data_state(study)
    latest = ReportBundle.objects.filter(study=study).order_by("-created_at", "-pk").first()
    return BundleState(is_large(annotations), annotations, last, latest)


def start_bundle(study: Study, requested_by: AbstractBaseUser | None = None) -> ReportBundle:
    """Queue a background build of ``study``'s bundle, unless one is under way already; returns its row."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).exists()  # one request at a time per study
        running = (
            ReportBundle.objects.filter(study=study, status__in=ACTIVE, created_at__gte=timezone.now() - STALLED_AFTER)
            .order_by("-created_at")
            .first()
        )
        if running is not None:
            return running
        bundle = ReportBundle.objects.create(study=study, requested_by=requested_by)
        transaction.on_commit(lambda: _launch(bundle.pk))
    return bundle


def _launch(bundle_id: int) -> threading.Thread:
    thread = threading.Thread(target=build_bundle, args=(bundle_id,), name=f"{THREAD_PREFIX}{bundle_id}", daemon=True)
    thread.start()
    return thread


def build_bundle(bundle_id: int, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> None:
    """Build the bundle of row ``bundle_id`` and record the outcome (run in its own thread)."""
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
        ReportBundle.objects.filter(pk=bundle_id).update(
            status=ReportBundle.Status.FAILED, error=f"{type(error).__name__}: {error}"[:2000],
            finished_at=timezone.now(),
        )
    finally:
        connections.close_all()  # this thread's connections only


def _remove_older(study: Study, keep: int) -> None:
    """Delete the study's earlier finished bundles and their files: only the newest is offered."""
    older = ReportBundle.objects.filter(study=study, pk__lt=keep).exclude(status__in=ACTIVE)
    for bundle in older:
        if bundle.file_name:
            bundle_path(bundle).unlink(missing_ok=True)
    older.delete()
