"""What keeps one run from wasting work or the server: a refused key stops it; a team's runs are capped."""

from functools import partial

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from benchmark.import_jobs import jobs
from benchmark.jobs.queue import HUEY
from benchmark.models import Episode, ImportJob, SimulationRun
from benchmark.runs import control
from benchmark.runs.options import RunOptions
from tests.benchmark.test_run_views import FORM, STALE_AFTER
from tests.benchmark.test_runs import cast_scenario, execute, llm_options, played, speak
from tests.builders import default_team, make_team, make_user
from tests.concurrency import at_once

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


@played
@pytest.mark.parametrize("status", [401, 403])
def test_a_run_stops_at_the_first_authentication_error(fake_llm, status):
    for number in range(4):
        cast_scenario(f"scenario-{number}", names=(f"Ana Number{number}", f"Ben Number{number}"))
    for _ in range(20):
        fake_llm.enqueue(status=status)

    summary = execute(llm_options(conditions=("none",), concurrency=1, judge_model="none"))

    assert len(fake_llm.requests) == 1  # a 401 or 403 is not retried, and no other episode is started
    run = SimulationRun.objects.get(tag="test-run")
    assert (summary.status, run.status) == ("failed", "failed")
    assert "stopped at the first authentication error" in run.message and f"HTTP {status}" in run.message
    statuses = sorted(Episode.objects.filter(tag="test-run").values_list("status", flat=True))
    assert statuses == ["failed", "pending", "pending", "pending"]  # the rest stay to be resumed with a good key


@played
def test_other_client_errors_fail_their_episode_only(fake_llm):
    cast_scenario("first", names=("Ana First", "Ben First"))
    cast_scenario("second", names=("Ana Second", "Ben Second"))
    fake_llm.enqueue(status=400)
    fake_llm.reply_when("role-playing", speak("Fine."))

    summary = execute(llm_options(conditions=("none",), concurrency=1, judge_model="none"))

    assert (summary.finished, summary.failed) == (1, 1)


# What one team may have at work from the web


def make_run(**fields) -> SimulationRun:
    fields.setdefault("status", "running")
    fields.setdefault("heartbeat_at", timezone.now())
    fields.setdefault("team", default_team())
    return SimulationRun.objects.create(tag=fields.pop("tag"), options={"turn_cap": 6}, total=2, **fields)


@pytest.fixture
def spawned(monkeypatch):
    """The runs the run pages queued (their work is not queued)."""
    calls = []
    monkeypatch.setattr(control, "queue_run", lambda run: calls.append(run.pk))
    return calls


@pytest.fixture
def launcher(client):
    client.force_login(make_user(staff=True))
    return client


def launch(client, **changes):
    return client.post(reverse("benchmark:run-new"), {**FORM, "team": str(default_team().pk), **changes})


def test_the_run_form_has_no_worker_processes_any_more(launcher, spawned):
    cast_scenario()
    response = launch(launcher, tag="no-workers", workers="64")  # an old form's field is ignored
    assert response.status_code == 302 and "workers" not in SimulationRun.objects.get(tag="no-workers").options


def test_a_team_with_its_runs_at_work_cannot_launch_another(
    launcher, spawned, settings, django_capture_on_commit_callbacks
):
    settings.PARLEY_TEAM_MAX_RUNS = 1
    cast_scenario()
    make_run(tag="busy")

    with django_capture_on_commit_callbacks(execute=True):
        response = launch(launcher, tag="one-more")

    assert response.status_code == 200
    assert "already has 1 run queued or running" in response.context["form"].non_field_errors()[0]
    assert not SimulationRun.objects.filter(tag="one-more").exists() and spawned == []
    assert "Each team may have 1 run queued or running at once" in response.content.decode()


def test_runs_that_ended_or_that_nothing_works_on_do_not_count(
    launcher, spawned, settings, django_capture_on_commit_callbacks
):
    settings.PARLEY_TEAM_MAX_RUNS = 1
    cast_scenario()
    make_run(tag="done", status="finished")
    make_run(tag="lost", heartbeat_at=timezone.now() - STALE_AFTER * 2)
    make_run(tag="elsewhere", team=make_team())

    with django_capture_on_commit_callbacks(execute=True):
        response = launch(launcher, tag="next")

    assert response.status_code == 302 and len(spawned) == 1


def test_resuming_waits_for_a_free_place_too(launcher, spawned, settings):
    settings.PARLEY_TEAM_MAX_RUNS = 1
    make_run(tag="busy")
    stopped = make_run(tag="stopped", status="failed")

    response = launcher.post(reverse("benchmark:run-resume", args=[stopped.pk]), follow=True)

    assert "cannot be resumed now" in response.content.decode() and "already has 1 run" in response.content.decode()
    assert SimulationRun.objects.get(pk=stopped.pk).status == "failed" and spawned == []


@pytest.fixture
def import_workers(monkeypatch, settings, tmp_path):
    """The import steps put on the queue, which no consumer takes (so each stays at work)."""
    settings.VAR_DIR = tmp_path
    queued = []
    monkeypatch.setattr(HUEY, "enqueue", queued.append)
    return queued


def test_a_team_with_its_imports_at_work_cannot_upload_another(
    launcher, import_workers, settings, django_capture_on_commit_callbacks
):
    settings.PARLEY_TEAM_MAX_IMPORTS = 1
    url = reverse("benchmark:import")
    with django_capture_on_commit_callbacks(execute=True):
        first = launcher.post(url, {"files": [SimpleUploadedFile("a.jsonl", b"{}\n")], "format": "auto"})
        second = launcher.post(url, {"files": [SimpleUploadedFile("b.jsonl", b"{}\n")], "format": "auto"})

    assert first.status_code == 302 and second.status_code == 200
    assert "already has 1 import under way" in second.context["form"].non_field_errors()[0]
    assert ImportJob.objects.count() == 1 and len(import_workers) == 1
    assert "1 upload\n    being checked or imported at once" in second.content.decode()


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_launches_at_the_same_moment_are_counted_in_turn(spawned, settings):
    settings.PARLEY_TEAM_MAX_RUNS = 1
    cast_scenario()
    options = RunOptions(conditions=("none",), judge_model="none")
    team = default_team()

    outcomes = at_once(*(partial(control.launch_run, options, f"race-{n}", team) for n in range(3)))

    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["SimulationRun", "TeamRunsFull", "TeamRunsFull"]
    assert SimulationRun.objects.count() == 1


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_uploads_at_the_same_moment_are_counted_in_turn(import_workers, settings):
    settings.PARLEY_TEAM_MAX_IMPORTS = 1
    team, user = default_team(), make_user(staff=True)

    def upload(n: int):
        return jobs.store_upload(team, user, [SimpleUploadedFile(f"{n}.jsonl", b"{}\n")], "auto")

    outcomes = at_once(*(partial(upload, n) for n in range(3)))

    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["ImportJob", "TeamImportsFull", "TeamImportsFull"]
    assert ImportJob.objects.count() == 1
