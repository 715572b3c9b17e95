"""The queue's signals keep each job's row current, from whichever consumer runs the task."""

from __future__ import annotations

import logging
from typing import Any

from django.db import close_old_connections
from django.db.models import F
from django.utils import timezone
from huey import signals as S
from huey.contrib.djhuey import HUEY

from ..models import Job
from .queue import worker_name

logger = logging.getLogger(__name__)

MAX_ERROR = 2000


def _update(task: Any, **values: Any) -> None:
    try:
        Job.objects.filter(task_id=task.id).update(**values)
    except Exception:  # a job row is bookkeeping: the task itself must not fail over it
        logger.exception("Could not record %s for task %s", values.get("status", "a change"), task.id)
        close_old_connections()


@HUEY.signal(S.SIGNAL_EXECUTING)
def _executing(signal: str, task: Any, *args: Any) -> None:
    _update(task, status=Job.Status.RUNNING, started_at=timezone.now(), attempts=F("attempts") + 1,
            worker=worker_name(), finished_at=None)


@HUEY.signal(S.SIGNAL_COMPLETE)
def _complete(signal: str, task: Any, *args: Any) -> None:
    _update(task, status=Job.Status.FINISHED, finished_at=timezone.now())


@HUEY.signal(S.SIGNAL_ERROR)
def _error(signal: str, task: Any, exc: BaseException | None = None, *args: Any) -> None:
    error = f"{type(exc).__name__}: {exc}" if exc is not None else "failed"
    status = Job.Status.RETRYING if task.retries else Job.Status.FAILED
    _update(task, status=status, error=error[:MAX_ERROR], finished_at=timezone.now())


@HUEY.signal(S.SIGNAL_REVOKED, S.SIGNAL_CANCELED, S.SIGNAL_EXPIRED)
def _cancelled(signal: str, task: Any, *args: Any) -> None:
    _update(task, status=Job.Status.CANCELLED, finished_at=timezone.now())


@HUEY.signal(S.SIGNAL_INTERRUPTED)
def _interrupted(signal: str, task: Any, *args: Any) -> None:
    _update(task, status=Job.Status.FAILED, error="The consumer stopped while this ran.", finished_at=timezone.now())
