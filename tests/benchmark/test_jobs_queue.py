"""The one way to queue work: a job row per task, kept current by the queue's signals."""

from __future__ import annotations

import pytest
from django.db import transaction
from huey.contrib.djhuey import db_task

from benchmark.jobs.queue import HUEY, enqueue, retry, retryable
from benchmark.models import Job, Team

pytestmark = pytest.mark.django_db

CALLS: list[int] = []


@retryable
@db_task(name="tests.record_call")
def record_call(number: int) -> int:
    CALLS.append(number)
    return number


@retryable
@db_task(name="tests.always_fails")
def always_fails(number: int) -> None:
    raise ValueError(f"bad number {number}")


@pytest.fixture
def team() -> Team:
    return Team.objects.create(slug="lab", name="Lab")


def test_tests_run_tasks_in_place() -> None:
    assert HUEY.immediate


def test_a_task_queued_in_a_transaction_runs_once_it_commits(team, django_capture_on_commit_callbacks) -> None:
    CALLS.clear()
    with django_capture_on_commit_callbacks(execute=True):
        job = enqueue(record_call, 7, team=team, label="Record 7", link="/somewhere/")
        assert CALLS == []  # not before the commit
    assert CALLS == [7]
    job.refresh_from_db()
    assert (job.status, job.attempts, job.task, job.arguments, job.link) == (
        Job.Status.FINISHED, 1, "tests.record_call", [7], "/somewhere/"
    )
    assert job.started_at is not None and job.finished_at is not None and job.worker


def test_nothing_is_queued_when_the_transaction_rolls_back(team, django_capture_on_commit_callbacks) -> None:
    CALLS.clear()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        with transaction.atomic():
            enqueue(record_call, 8, team=team, label="Record 8")
            raise RuntimeError("the request failed")
    assert CALLS == []
    assert not Job.objects.exists()


def test_a_failing_task_is_recorded_with_its_error_and_can_be_retried(team, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        job = enqueue(always_fails, 3, team=team, label="Fail")
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == "ValueError: bad number 3"
    with django_capture_on_commit_callbacks(execute=True):
        again = retry(job)
    assert again is not None and again.pk != job.pk
    again.refresh_from_db()
    assert (again.status, again.arguments, again.label) == (Job.Status.FAILED, [3], "Fail")
    assert retry(Job.objects.get(pk=record_job(team).pk)) is None  # a finished job is not retried


def record_job(team: Team) -> Job:
    return Job.objects.create(
        team=team, task="tests.record_call", task_id="x1", label="done", status=Job.Status.FINISHED
    )


def test_a_queue_that_cannot_take_the_task_fails_the_job_and_tells_the_caller(
    team, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    def down(task):
        raise ConnectionError("refused")

    monkeypatch.setattr(HUEY, "enqueue", down)
    told: list[str] = []
    with django_capture_on_commit_callbacks(execute=True):
        job = enqueue(record_call, 1, team=team, label="Record 1", on_failure=lambda job, message: told.append(message))
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "could not take the job: ConnectionError" in job.error
    assert told == [job.error]


def test_a_failed_job_is_retried_once_however_often_it_is_asked(team, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        job = enqueue(always_fails, 4, team=team, label="Fail")
    with django_capture_on_commit_callbacks(execute=True):
        first = retry(job)
        second = retry(job)  # a second click on the same failed row
    assert first is not None and second is None
    job.refresh_from_db()
    assert job.retried_as == first
    assert Job.objects.filter(task="tests.always_fails").count() == 2


def test_only_tasks_whose_arguments_still_mean_the_same_work_are_retried(team) -> None:
    """A failed run chunk is resumed with its run (a new attempt), never retried under its old attempt."""
    from benchmark.jobs.queue import may_retry_task

    assert may_retry_task("prepare_run") and may_retry_task("finish_run")
    assert not may_retry_task("play_run_chunk") and not may_retry_task("import_upload")
    chunk = Job.objects.create(team=team, task="play_run_chunk", task_id="c1", label="chunk", status=Job.Status.FAILED)
    assert retry(chunk) is None
