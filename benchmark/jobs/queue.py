"""The queue and the one way to put work on it.

``HUEY`` is the instance ``huey.contrib.djhuey`` builds from ``settings.HUEY`` (see
``config.settings.task_queue``). :func:`enqueue` is how a page or a command starts long work:
it writes the :class:`~benchmark.models.Job` row in the caller's transaction and puts the task
on the queue once that transaction commits, under the row's ``task_id``, so a consumer never
takes a task whose rows it cannot see yet, and a rolled-back request queues nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from huey.api import TaskWrapper
from huey.contrib.djhuey import HUEY

from ..models import Job, Team

logger = logging.getLogger(__name__)

__all__ = ["HUEY", "QueueUnavailable", "check_queue", "enqueue", "retry", "shared_directory", "worker_name"]


class QueueUnavailable(RuntimeError):
    """The task queue cannot be reached; the message says so in words a page can show."""


def worker_name() -> str:
    """This process as the jobs page names it: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def shared_directory() -> Path:
    """Where the files of a task that a page hands over live (an upload to import, a bundle to download):
    ``PARLEY_SHARED_DIR`` when set, which consumers on several machines must all mount, else the var directory."""
    from django.conf import settings

    return Path(settings.SHARED_DIR or settings.VAR_DIR)


def describe_queue() -> str:
    """The queue's kind as settings name it (sqlite, postgres or redis)."""
    return settings.PARLEY_TASKS


def check_queue() -> None:
    """Raise :class:`QueueUnavailable` unless the queue answers (a cheap read of its length).

    Pages call it before writing anything, so a queue that is down gives a clear message and
    leaves nothing half written.
    """
    if HUEY.immediate:
        return
    try:
        HUEY.pending_count()
    except Exception as error:  # the storage's own error types differ per backend
        logger.warning("The task queue (%s) cannot be reached: %s", describe_queue(), error)
        raise QueueUnavailable(
            f"The task queue ({describe_queue()}) cannot be reached, so nothing was started: "
            f"{type(error).__name__}. Ask whoever runs Parley to check it, then try again."
        ) from error


def enqueue(
    task: TaskWrapper,
    *arguments: Any,
    team: Team | None,
    label: str,
    user: Any = None,
    link: str = "",
    on_failure: Callable[[Job, str], None] | None = None,
) -> Job:
    """Record a job for ``task(*arguments)`` and queue it when the current transaction commits.

    ``arguments`` are ids and plain values (they are serialised onto the queue). ``label`` and
    ``link`` are what the jobs page shows. If the queue cannot take the task at commit time, the
    job is marked failed with the reason and ``on_failure(job, message)`` lets the caller mark what
    the work was about (its run, its import) the same way; the request still answers.
    """
    job = Job.objects.create(
        team=team,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        task=task.task_class.__name__,
        task_id=uuid.uuid4().hex,
        arguments=list(arguments),
        label=label[:200],
        link=link,
    )
    transaction.on_commit(partial(_put, task, job, on_failure))
    return job


def _put(task: TaskWrapper, job: Job, on_failure: Callable[[Job, str], None] | None) -> None:
    try:
        HUEY.enqueue(task.s(*job.arguments, id=job.task_id))
    except Exception as error:
        logger.exception("Could not queue job %s (%s)", job.pk, job.label)
        message = (
            f"The task queue ({describe_queue()}) could not take the job: {type(error).__name__}. "
            "Retry it from the jobs page once the queue is back."
        )
        Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED, error=message, finished_at=timezone.now())
        if on_failure is not None:
            on_failure(job, message)


TASKS: dict[str, TaskWrapper] = {}  # Parley's tasks by name, for code that cannot import the tasks modules
RETRYABLE: set[str] = set()  # the ones a failed job of which the jobs page may queue again


def named(wrapper: TaskWrapper) -> TaskWrapper:
    """Make a task findable by its name (:func:`task_named`); use under ``@db_task``."""
    TASKS[wrapper.task_class.__name__] = wrapper
    return wrapper


def retryable(wrapper: TaskWrapper) -> TaskWrapper:
    """A named task that the jobs page may queue again when its job failed (use under ``@db_task``): one
    whose arguments still mean the same work later. A run's chunk is not one (resume the run instead)."""
    RETRYABLE.add(wrapper.task_class.__name__)
    return named(wrapper)


def task_named(name: str) -> TaskWrapper | None:
    """The task named ``name`` (a job's ``task``), or None."""
    return TASKS.get(name)


def may_retry_task(name: str) -> bool:
    return name in RETRYABLE and name in TASKS


def retry(job: Job, user: Any = None) -> Job | None:
    """Queue a failed job's task again, as a new job; None when it cannot be retried (not failed,
    retried already, or its task is not one a page may start again).

    The failed row is locked while deciding and then names its retry, so two clicks queue it once.
    """
    task = task_named(job.task)
    if task is None or not may_retry_task(job.task):
        return None
    with transaction.atomic():
        locked = Job.objects.select_for_update().filter(
            pk=job.pk, status=Job.Status.FAILED, retried_as__isnull=True
        ).first()
        if locked is None:
            return None
        again = enqueue(task, *locked.arguments, team=locked.team, label=locked.label, user=user, link=locked.link)
        Job.objects.filter(pk=locked.pk).update(retried_as=again)
    return again
