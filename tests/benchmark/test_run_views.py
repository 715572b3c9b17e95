"""The simulation run pages: who may see them, launching (which queues its work), progress, chunks, cancel,
resume."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from benchmark.jobs import queue
from benchmark.models import Episode, Job, RunChunk, SimulationRun
from benchmark.runs import control
from benchmark.runs.status import can_resume
from tests.builders import default_team, make_character, make_researcher, make_scenario, make_user

pytestmark = pytest.mark.django_db

FORM = {
    "tag": "", "difficulty": "", "scenarios": "", "conditions": ["none", "semantic"], "agent_model": "scripted",
    "partner_model": "scripted", "judge_model": "scripted", "strategy": "default", "episodes_per_cell": "1",
    "turn_cap": "6",
    "temperature": "0.7", "concurrency": "4", "seed": "0",
}


@pytest.fixture(autouse=True)
def no_configured_models(settings, tmp_path):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}
    settings.VAR_DIR = tmp_path


@pytest.fixture
def scenario():
    roles = [{"character": make_character()}, {"character": make_character()}]
    return make_scenario(roles=roles, codename="stairwell")


@pytest.fixture
def researcher():
    return make_researcher()


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


STALE_AFTER = timedelta(seconds=django_settings.PARLEY_RUN_STALE_SECONDS)


@pytest.fixture
def spawned(monkeypatch):
    """Replace only the queueing of a run's work: record the runs queued."""
    calls = []
    monkeypatch.setattr(control, "queue_run", lambda run: calls.append(run.pk))
    return calls


def make_run(user=None, **fields) -> SimulationRun:
    fields.setdefault("status", "running")
    fields.setdefault("heartbeat_at", timezone.now())
    fields.setdefault("total", 8)
    return SimulationRun.objects.create(team=default_team(), tag=fields.pop("tag", "a-run"), created_by=user,
                                        options={"turn_cap": 6},
                                        **fields)


def urls(run: SimulationRun) -> dict[str, str]:
    return {
        "list": reverse("benchmark:runs"),
        "new": reverse("benchmark:run-new"),
        "detail": reverse("benchmark:run", args=[run.pk]),
        "progress": reverse("benchmark:run-progress", args=[run.pk]),
    }


def assert_no_server_paths(text: str) -> None:
    """A page for researchers names no file on the server: not the project's folder, not var/."""
    for folder in (django_settings.BASE_DIR, django_settings.VAR_DIR):
        assert str(folder) not in text
        assert str(Path(folder).resolve()) not in text


# Who may look


@pytest.mark.parametrize("page", ["list", "new", "detail", "progress"])
def test_anonymous_users_are_sent_to_log_in(client, page):
    response = client.get(urls(make_run())[page])
    assert response.status_code == 302 and "login" in response.url


@pytest.mark.parametrize("page", ["list", "new", "detail", "progress"])
def test_annotators_are_refused(client, page):
    client.force_login(make_user())
    response = client.get(urls(make_run())[page])
    assert response.status_code == 403


@pytest.mark.parametrize("action", ["run-cancel", "run-resume"])
def test_annotators_cannot_cancel_or_resume(client, action):
    run = make_run()
    client.force_login(make_user())
    assert client.post(reverse(f"benchmark:{action}", args=[run.pk])).status_code == 403
    run.refresh_from_db()
    assert not run.cancel_requested


@pytest.mark.parametrize("page", ["list", "new", "detail", "progress"])
def test_researchers_and_staff_may_look(client, researcher, page):
    run = make_run()
    for user in (researcher, make_user(staff=True)):
        client.force_login(user)
        assert client.get(urls(run)[page]).status_code == 200


def test_the_list_shows_runs_with_their_counts_and_a_lost_worker(researcher_client, researcher):
    make_run(researcher, tag="going", finished=3, failed=1)
    make_run(None, tag="orphan", heartbeat_at=timezone.now() - STALE_AFTER * 2)
    response = researcher_client.get(reverse("benchmark:runs"))
    assert [row.run.tag for row in response.context["rows"]] == ["orphan", "going"]
    assert "nothing working on it" in response.text and "command line" in response.text
    assert f'href="{reverse("benchmark:run-new")}"' in response.text


def test_the_list_costs_the_same_queries_however_many_runs(researcher_client):
    make_run(make_user(staff=True), tag="one")
    with CaptureQueriesContext(connection) as few:
        researcher_client.get(reverse("benchmark:runs"))
    for number in range(12):
        make_run(make_user(staff=True), tag=f"more-{number}")
    with CaptureQueriesContext(connection) as many:
        response = researcher_client.get(reverse("benchmark:runs"))
    assert len(response.context["rows"]) == 13
    assert len(many) == len(few)


# Launching


def test_the_form_offers_the_scripted_model_and_the_four_conditions(researcher_client, scenario):
    form = researcher_client.get(reverse("benchmark:run-new")).context["form"]
    assert form["agent_model"].initial == form["partner_model"].initial == "scripted"
    assert form["conditions"].initial == ["none", "semantic", "sociocultural", "emotional"]


def test_launching_stores_the_run_and_queues_its_work(researcher_client, researcher, scenario, spawned):
    response = researcher_client.post(reverse("benchmark:run-new"), {**FORM, "tag": "first-try"})

    run = SimulationRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("benchmark:run", args=[run.pk])
    assert (run.tag, run.status, run.total, run.created_by) == ("first-try", "queued", 2, researcher)
    assert run.options["conditions"] == ["none", "semantic"] and run.options["turn_cap"] == 6
    assert spawned == [run.pk]


def test_launching_queues_a_job_that_links_to_the_run(
    researcher_client, researcher, scenario, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(queue, "_put", lambda task, job, on_failure: None)  # queued, not yet taken
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(reverse("benchmark:run-new"), {**FORM, "tag": "jobbed"})
    run = SimulationRun.objects.get()
    job = Job.objects.get()
    assert (job.task, job.arguments, job.label, job.link) == (
        "prepare_run", [run.pk], "Run jobbed: preparing", reverse("benchmark:run", args=[run.pk])
    )
    assert (job.team, job.created_by, run.status) == (run.team, researcher, "queued")


def test_a_queue_that_is_down_is_said_on_the_form_and_nothing_is_written(researcher_client, scenario, monkeypatch):
    def check_queue():
        raise queue.QueueUnavailable("The task queue (postgres) cannot be reached, so nothing was started: Error.")

    monkeypatch.setattr(control, "check_queue", check_queue)
    response = researcher_client.post(reverse("benchmark:run-new"), {**FORM, "tag": "down"})
    assert response.status_code == 200 and "cannot be reached, so nothing was started" in response.text
    assert "Traceback" not in response.text
    assert not SimulationRun.objects.exists() and not Job.objects.exists() and not Episode.objects.exists()


def test_a_queue_that_refuses_the_job_fails_the_run_with_the_reason_but_not_the_path(
    researcher_client, scenario, monkeypatch, django_capture_on_commit_callbacks
):
    def enqueue(task):
        raise ConnectionError(111, "Connection refused", str(django_settings.VAR_DIR / "tasks.sqlite3"))

    monkeypatch.setattr(queue.HUEY, "enqueue", enqueue)
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(reverse("benchmark:run-new"), FORM)
    run = SimulationRun.objects.get()
    assert run.status == "failed" and "could not take the job: ConnectionError" in run.message
    assert Job.objects.get().status == "failed"
    assert can_resume(run)
    assert_no_server_paths(researcher_client.get(reverse("benchmark:run", args=[run.pk])).text)


def test_a_run_without_a_name_gets_a_dated_one(researcher_client, scenario, spawned):
    researcher_client.post(reverse("benchmark:run-new"), FORM)
    assert SimulationRun.objects.get().tag.startswith("run-20")


def test_bad_choices_are_shown_on_the_form_and_nothing_starts(researcher_client, scenario, spawned):
    response = researcher_client.post(reverse("benchmark:run-new"), {**FORM, "scenarios": "stairwell,nowhere"})
    assert response.status_code == 200
    assert "No scenario has the id, external id or codename &#x27;nowhere&#x27;." in response.text
    assert not SimulationRun.objects.exists() and spawned == []


def test_the_form_takes_models_by_seat_and_the_run_page_shows_them(researcher_client, scenario, spawned):
    form = {**FORM, "tag": "paired", "seat_models": "1=openai/weak"}
    response = researcher_client.post(reverse("benchmark:run-new"), form)
    run = SimulationRun.objects.get(tag="paired")
    assert response.status_code == 302 and run.options["seat_models"] == ["1=openai/weak"]
    page = researcher_client.get(reverse("benchmark:run", args=[run.pk])).text
    assert "Models by seat" in page and "1=openai/weak" in page


def test_bad_models_by_seat_are_shown_beside_the_field(researcher_client, scenario, spawned):
    response = researcher_client.post(reverse("benchmark:run-new"), {**FORM, "seat_models": "receiver=openai/weak"})
    assert response.status_code == 200 and spawned == []
    assert response.context["form"].errors["seat_models"] == [
        "seat models: no role of the chosen scenarios is labelled receiver; label roles sender or receiver in the "
        "scenario, or name seats by position."
    ]


def test_a_run_name_in_use_is_refused(researcher_client, scenario, spawned):
    make_run(tag="taken")
    response = researcher_client.post(reverse("benchmark:run-new"), {**FORM, "tag": "taken"})
    assert "A run named taken exists already" in response.text
    assert SimulationRun.objects.count() == 1


# Progress


def test_the_progress_partial_polls_while_the_worker_is_alive(researcher_client, researcher):
    run = make_run(researcher, finished=3, failed=1)
    response = researcher_client.get(reverse("benchmark:run-progress", args=[run.pk]))
    assert 'hx-trigger="every 2s"' in response.text
    assert "3 finished and 1 failed of 8 episodes (50%)" in response.text
    assert "Cancel the run" in response.text and "Resume" not in response.text


def test_the_progress_partial_stops_polling_when_the_run_is_done(researcher_client, researcher):
    run = make_run(researcher, status="finished", finished=8, message="Run a-run finished: 8/8 episodes finished.")
    response = researcher_client.get(reverse("benchmark:run-progress", args=[run.pk]))
    assert "hx-trigger" not in response.text and "Run a-run finished: 8/8" in response.text
    assert "Cancel the run" not in response.text and "Resume" not in response.text


def test_a_run_nothing_works_on_is_shown_as_such_with_a_resume_button(researcher_client, researcher):
    run = make_run(researcher, heartbeat_at=timezone.now() - STALE_AFTER * 2)
    RunChunk.objects.create(run=run, number=1, status="running", heartbeat_at=timezone.now() - STALE_AFTER * 2)
    response = researcher_client.get(reverse("benchmark:run", args=[run.pk]))
    assert "nothing working on it" in response.text and "Nothing has worked on this run" in response.text
    assert "Resume" in response.text


def test_the_run_page_lists_its_chunks_with_state_attempt_consumer_and_heartbeat(researcher_client, researcher):
    run = make_run(researcher, tag="chunked")
    RunChunk.objects.create(run=run, number=1, status="done", episodes=[[1, 0], [2, 0]], finished=2,
                            worker="box-a:101", heartbeat_at=timezone.now())
    RunChunk.objects.create(run=run, number=2, status="running", attempt=1, episodes=[[3, 0]],
                            worker="box-b:202", heartbeat_at=timezone.now() - timedelta(seconds=3))
    RunChunk.objects.create(run=run, number=3, status="queued", episodes=[[4, 0]])
    response = researcher_client.get(reverse("benchmark:run-progress", args=[run.pk]))
    rows = response.context["progress"].chunks
    assert [(r.chunk.number, r.chunk.status, r.chunk.attempt, r.chunk.worker) for r in rows] == [
        (1, "done", 0, "box-a:101"), (2, "running", 1, "box-b:202"), (3, "queued", 0, "")
    ]
    assert "box-b:202" in response.text and "3 s ago" in response.text


def test_a_queued_run_no_consumer_took_says_how_to_start_one(researcher_client, researcher):
    old = timezone.now() - timedelta(seconds=20)
    run = make_run(researcher, status="queued", heartbeat_at=old)
    SimulationRun.objects.filter(pk=run.pk).update(created_at=old)
    response = researcher_client.get(reverse("benchmark:run-progress", args=[run.pk]))
    assert "No consumer has taken this run" in response.text and "make worker" in response.text


def test_the_run_page_counts_turns_and_links_to_the_episodes_and_results(researcher_client, researcher, scenario):
    run = make_run(researcher, tag="linked", started_at=timezone.now())
    response = researcher_client.get(reverse("benchmark:run", args=[run.pk]))
    assert f'{reverse("benchmark:index")}?tag=linked' in response.text
    assert f'{reverse("benchmark:results")}?tag=linked' in response.text
    assert response.context["progress"].turns == 0


def test_the_run_page_and_its_progress_name_no_server_path(researcher_client, researcher):
    run = make_run(researcher, status="failed", heartbeat_at=None,
                   message="Run a-run failed: 0/8 episodes finished. First error: episode 3: OSError.")
    for page in ("detail", "progress", "list"):
        response = researcher_client.get(urls(run)[page])
        assert response.status_code == 200
        assert_no_server_paths(response.text)


# Cancel and resume


def test_cancel_asks_the_running_chunks_to_stop_and_cancels_the_queued_ones(researcher_client, researcher):
    run = make_run(researcher)
    running = RunChunk.objects.create(run=run, number=1, status="running", heartbeat_at=timezone.now())
    waiting = RunChunk.objects.create(run=run, number=2, status="queued")
    response = researcher_client.post(reverse("benchmark:run-cancel", args=[run.pk]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.cancel_requested and run.status == "running"
    running.refresh_from_db()
    waiting.refresh_from_db()
    assert (running.status, waiting.status) == ("running", "cancelled")


def test_cancel_before_a_consumer_took_it_marks_the_run_cancelled(researcher_client, researcher):
    run = make_run(researcher, status="queued")
    researcher_client.post(reverse("benchmark:run-cancel", args=[run.pk]))
    run.refresh_from_db()
    assert run.cancel_requested and run.status == "cancelled"


def test_another_researchers_run_cannot_be_cancelled(researcher_client):
    run = make_run(make_user(staff=True))
    assert researcher_client.post(reverse("benchmark:run-cancel", args=[run.pk])).status_code == 403
    run.refresh_from_db()
    assert not run.cancel_requested


def test_resume_queues_a_stopped_run_again(researcher_client, researcher, spawned):
    run = make_run(researcher, status="cancelled", cancel_requested=True)
    researcher_client.post(reverse("benchmark:run-resume", args=[run.pk]))
    run.refresh_from_db()
    assert (run.status, run.cancel_requested) == ("queued", False)
    assert spawned == [run.pk]


def test_resume_with_the_queue_down_says_so_and_changes_nothing(researcher_client, researcher, monkeypatch):
    def check_queue():
        raise queue.QueueUnavailable("The task queue (redis) cannot be reached, so nothing was started: Error.")

    monkeypatch.setattr(control, "check_queue", check_queue)
    run = make_run(researcher, status="cancelled", cancel_requested=True)
    response = researcher_client.post(reverse("benchmark:run-resume", args=[run.pk]), follow=True)
    assert "cannot be reached, so nothing was started" in response.text
    run.refresh_from_db()
    assert (run.status, run.cancel_requested) == ("cancelled", True)


def test_a_run_at_work_is_not_resumed(researcher_client, researcher, spawned):
    run = make_run(researcher)
    response = researcher_client.post(reverse("benchmark:run-resume", args=[run.pk]), follow=True)
    assert "cannot be resumed now" in response.text and spawned == []


# The real thing: launched from the page, played by its tasks (inline here; on real consumers in
# tests/benchmark/test_run_consumers.py)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_launched_run_is_played_to_its_end(client):
    roles = [{"character": make_character()}, {"character": make_character()}]
    make_scenario(roles=roles, codename="for-real")
    user = make_user(staff=True)
    client.force_login(user)

    client.post(reverse("benchmark:run-new"), {**FORM, "tag": "played"})

    run = SimulationRun.objects.get(tag="played")
    assert (run.status, run.finished) == ("finished", 2) and "Run played finished: 2/2" in run.message
    assert Episode.objects.filter(tag="played", status="finished").count() == 2
    assert set(RunChunk.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    page = client.get(reverse("benchmark:run", args=[run.pk])).text
    assert "hx-trigger" not in page and "Run played finished" in page
