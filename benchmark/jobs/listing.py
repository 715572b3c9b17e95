"""What the jobs page shows: each job as a row, and whether the queue answers and how full it is.

The rows are computed here so the template only prints them: where the label links (only a path
on this site, never a URL a row could carry in from elsewhere), how a failed job's error is
folded, whether it may be retried, and whether the page should keep asking for itself (while any
job shown is queued, running or waiting to retry). The queue's counts come from the queue itself
(``HUEY.pending_count()``, ``scheduled_count()``); a queue that cannot be reached is a sentence
on the page, never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.utils.http import url_has_allowed_host_and_scheme

from ..models import Job
from . import queue

logger = logging.getLogger(__name__)

AT_WORK = frozenset({Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.RETRYING})
SHOWS_ERROR = frozenset({Job.Status.FAILED, Job.Status.RETRYING})  # a finished job's old error is history
ERROR_FOLD = 160  # an error longer than this, or of several lines, is folded under its first line


@dataclass(frozen=True)
class JobRow:
    job: Job
    href: str  # where the label links; empty when the job names no page on this site
    error: str  # the last error of a failed job or one waiting to retry; empty otherwise
    error_summary: str  # the error's first line, shortened; the whole error when not folded
    error_folded: bool
    can_retry: bool


@dataclass(frozen=True)
class QueueState:
    kind: str  # sqlite, postgres or redis, as settings name it
    pending: int | None  # tasks waiting for a consumer; None when the queue cannot be reached
    scheduled: int | None  # tasks waiting for their time (a retry's back-off, a countdown)
    problem: str  # what to tell the researcher when the queue cannot be reached; empty when it answers


def may_retry(job: Job) -> bool:
    """A failed job not yet retried, whose task may be queued again (``queue.retryable``)."""
    return job.status == Job.Status.FAILED and job.retried_as_id is None and queue.may_retry_task(job.task)


def job_row(job: Job) -> JobRow:
    on_this_site = job.link.startswith("/") and url_has_allowed_host_and_scheme(job.link, allowed_hosts=None)
    href = job.link if on_this_site else ""
    error = job.error.strip() if job.status in SHOWS_ERROR else ""
    first_line = error.splitlines()[0] if error else ""
    folded = len(error) > ERROR_FOLD or first_line != error
    summary = first_line if len(first_line) <= ERROR_FOLD else first_line[: ERROR_FOLD - 1] + "…"
    return JobRow(job=job, href=href, error=error, error_summary=summary if folded else error, error_folded=folded,
                  can_retry=may_retry(job))


def job_rows(jobs: Iterable[Job]) -> list[JobRow]:
    return [job_row(job) for job in jobs]


def at_work(rows: Iterable[JobRow]) -> bool:
    """Whether any row may still change by itself, so the page keeps polling."""
    return any(row.job.status in AT_WORK for row in rows)


def queue_state() -> QueueState:
    """The queue's counts, or why it cannot give them."""
    kind = queue.describe_queue()
    try:
        queue.check_queue()
        return QueueState(kind=kind, pending=queue.HUEY.pending_count(), scheduled=queue.HUEY.scheduled_count(),
                          problem="")
    except Exception as error:  # QueueUnavailable, or the storage's own error on the second read
        cause = error.__cause__ if isinstance(error, queue.QueueUnavailable) and error.__cause__ else error
        if not isinstance(error, queue.QueueUnavailable):
            logger.warning("The task queue (%s) cannot be counted: %s", kind, error)
        problem = (
            f"The task queue ({kind}) cannot be reached just now ({type(cause).__name__}). Queued jobs wait "
            "until it is back, and nothing can be retried before then. Ask whoever runs Parley to check it."
        )
        return QueueState(kind=kind, pending=None, scheduled=None, problem=problem)
