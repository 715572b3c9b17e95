"""A task that raises is retried with back-off the configured number of times, then its job shows failed.

Run by a real consumer on every queue kind the session reaches (SQLite, PostgreSQL, Redis): the
retries are Huey's (``retries=``, ``retry_delay=``, ``retry_backoff=`` on the task), scheduled on the
queue itself, and the job row is kept current by the queue's signals from the consumer's process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from benchmark.jobs.queue import enqueue
from benchmark.models import Job
from tests import queue_tasks
from tests.consumers import wait_for

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_failing_task_is_retried_with_back_off_then_shown_failed(
    queue, consumers, tmp_path: Path, admin_client
) -> None:
    consumers.start(workers=1)
    attempts_file = tmp_path / "attempts.txt"

    job = enqueue(queue_tasks.always_fails, str(attempts_file), team=None, label="fails on purpose")

    failed = Job.objects.filter(pk=job.pk, status=Job.Status.FAILED)
    job = wait_for(failed.first, "the job to fail", consumers)
    times = [float(line) for line in attempts_file.read_text().split()]
    assert len(times) == 1 + queue_tasks.RETRIES
    assert job.attempts == 1 + queue_tasks.RETRIES
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    # Each retry waits at least its delay; each delay is the one before times the back-off.
    assert gaps[0] >= queue_tasks.RETRY_DELAY
    assert gaps[1] >= queue_tasks.RETRY_DELAY * queue_tasks.RETRY_BACKOFF
    assert job.error == "ValueError: attempt noted in attempts.txt failed on purpose"
    assert job.finished_at is not None
    page = admin_client.get(reverse("benchmark:jobs")).content.decode()  # upkeep-like jobs: superusers see them
    assert "fails on purpose" in page and "attempt noted in attempts.txt failed on purpose" in page


def test_a_job_between_attempts_shows_it_will_be_retried(queue, consumers, tmp_path: Path) -> None:
    consumers.start(workers=1)
    attempts_file = tmp_path / "attempts.txt"

    job = enqueue(queue_tasks.always_fails, str(attempts_file), team=None, label="fails on purpose")

    seen = wait_for(lambda: Job.objects.filter(pk=job.pk, status=Job.Status.RETRYING).first(), "a retry", consumers)
    assert seen.error.startswith("ValueError: attempt noted")
    wait_for(lambda: Job.objects.filter(pk=job.pk, status=Job.Status.FAILED).exists(), "the job to fail", consumers)
