"""A consumer in its own process runs what the test process queued, and its job row says so.

The harness (``tests.consumers``) is what the queue's fault tests stand on; this is its proof, on
every queue kind the session can reach.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.jobs.queue import enqueue
from benchmark.models import Job
from tests import queue_tasks
from tests.consumers import wait_for

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_queued_job_is_run_by_a_consumer_process(queue, consumers, tmp_path: Path) -> None:
    consumer = consumers.start(workers=1)
    notes = tmp_path / "notes.txt"

    job = enqueue(queue_tasks.note, str(notes), "hello", team=None, label="a note")

    job = wait_for(lambda: Job.objects.filter(pk=job.pk, status=Job.Status.FINISHED).first(), "the job", consumers)
    assert notes.read_text().split()[1:] == ["hello"]
    assert job.attempts == 1
    assert job.worker.endswith(f":{consumer.pid}")  # thread workers: the consumer's own process
    assert job.started_at is not None and job.finished_at >= job.started_at


def test_a_stopped_consumer_exits_cleanly(queue, consumers) -> None:
    consumer = consumers.start(workers=2, worker_type="process")

    assert consumer.stop() == 0
    assert "Consumer exiting" in consumer.log() or "Shutting down" in consumer.log()
