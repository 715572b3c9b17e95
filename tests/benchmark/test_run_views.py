"""The simulation run pages: who may see them, launching (which starts a worker), progress, cancel, resume."""

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from benchmark.models import Episode, SimulationRun
from benchmark.runs import launching
from benchmark.runs.status import STALE_AFTER, can_resume
from tests.builders import default_team, make_character, make_researcher, make_scenario, make_user

pytestmark = pytest.mark.django_db

FORM = {
    "tag": "", "difficulty": "", "scenarios": "", "conditions": ["none", "semantic"], "agent_model": "scripted",
    "partner_model": "scripted", "judge_model": "scripted", "strategy": "default", "episodes_per_cell": "1",
    "turn_cap": "6",
    "temperature": "0.7", "concurrency": "4", "workers": "1", "seed": "0",
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


@pytest.fixture
def spawned(monkeypatch):
    """Replace only the process start: record the command, cwd and log, return a fake pid."""
    calls = []

    def spawn_process(command, *, cwd, log):
        calls.append((command, cwd, log))
        return 4242

    monkeypatch.setattr(launching, "spawn_process", spawn_process)
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
    assert "worker lost" in response.text and "command line" in response.text
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


def test_launching_stores_the_run_and_starts_its_worker(
    researcher_client, researcher, scenario, spawned, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(reverse("benchmark:run-new"), {**FORM, "tag": "first-try"})

    run = SimulationRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("benchmark:run", args=[run.pk])
    assert (run.tag, run.status, run.total, run.created_by) == ("first-try", "queued", 2, researcher)
    assert run.options["conditions"] == ["none", "semantic"] and run.options["turn_cap"] == 6
    assert spawned == [(
        [sys.executable, str(Path(django_settings.BASE_DIR) / "manage.py"), "simulate", "--run", str(run.pk)],
        Path(django_settings.BASE_DIR),
        Path(django_settings.VAR_DIR) / "runs" / f"run-{run.pk}.log",
    )]
    assert SimulationRun.objects.get().worker_pid == 4242


def test_a_worker_that_cannot_start_fails_the_run_with_the_reason_but_not_the_path(
    researcher_client, scenario, monkeypatch, django_capture_on_commit_callbacks
):
    manage_py = str(Path(django_settings.BASE_DIR) / "manage.py")

    def spawn_process(command, *, cwd, log):
        raise PermissionError(13, "Permission denied", manage_py)

    monkeypatch.setattr(launching, "spawn_process", spawn_process)
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(reverse("benchmark:run-new"), FORM)
    run = SimulationRun.objects.get()
    assert run.status == "failed" and "Permission denied" in run.message
    assert manage_py not in run.message
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


def test_a_run_whose_worker_died_is_shown_as_such_with_a_resume_button(researcher_client, researcher):
    run = make_run(researcher, heartbeat_at=timezone.now() - STALE_AFTER * 2)
    response = researcher_client.get(reverse("benchmark:run", args=[run.pk]))
    assert "worker lost" in response.text and "has stopped" in response.text
    assert "hx-trigger" not in response.text and "Resume" in response.text


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


def test_cancel_asks_a_live_worker_to_stop(researcher_client, researcher):
    run = make_run(researcher)
    response = researcher_client.post(reverse("benchmark:run-cancel", args=[run.pk]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.cancel_requested and run.status == "running"


def test_cancel_before_a_worker_started_marks_the_run_cancelled(researcher_client, researcher):
    run = make_run(researcher, status="queued")
    researcher_client.post(reverse("benchmark:run-cancel", args=[run.pk]))
    run.refresh_from_db()
    assert run.cancel_requested and run.status == "cancelled"


def test_another_researchers_run_cannot_be_cancelled(researcher_client):
    run = make_run(make_user(staff=True))
    assert researcher_client.post(reverse("benchmark:run-cancel", args=[run.pk])).status_code == 403
    run.refresh_from_db()
    assert not run.cancel_requested


def test_resume_starts_a_new_worker_for_a_stopped_run(
    researcher_client, researcher, spawned, django_capture_on_commit_callbacks
):
    run = make_run(researcher, status="cancelled", cancel_requested=True)
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(reverse("benchmark:run-resume", args=[run.pk]))
    run.refresh_from_db()
    assert (run.status, run.cancel_requested, run.worker_pid) == ("queued", False, 4242)
    assert spawned[0][0][-2:] == ["--run", str(run.pk)]


def test_a_run_with_a_live_worker_is_not_resumed(researcher_client, researcher, spawned):
    run = make_run(researcher)
    response = researcher_client.post(reverse("benchmark:run-resume", args=[run.pk]), follow=True)
    assert "cannot be resumed now" in response.text and spawned == []


# The real thing: a detached process that executes the run against the test database


def database_url() -> str:
    values = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{values['NAME']}"
    password = f":{values['PASSWORD']}" if values.get("PASSWORD") else ""
    return (f"postgres://{values['USER']}{password}@{values['HOST'] or '127.0.0.1'}:{values['PORT'] or 5432}"
            f"/{values['NAME']}")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_launched_run_is_executed_by_a_detached_worker(client, monkeypatch, tmp_path):
    roles = [{"character": make_character()}, {"character": make_character()}]
    make_scenario(roles=roles, codename="for-real")
    user = make_user(staff=True)
    client.force_login(user)
    monkeypatch.setenv("DATABASE_URL", database_url())
    monkeypatch.setenv("PARLEY_VAR_DIR", str(tmp_path))
    for variable in ("PARLEY_AGENT_MODEL", "PARLEY_PARTNER_MODEL"):
        monkeypatch.delenv(variable, raising=False)

    client.post(reverse("benchmark:run-new"), {**FORM, "tag": "detached"})

    run = SimulationRun.objects.get(tag="detached")
    try:
        deadline = time.monotonic() + 90
        while not run.done and time.monotonic() < deadline:
            time.sleep(0.2)
            run.refresh_from_db()
        log = (tmp_path / "runs" / f"run-{run.pk}.log").read_text()
        assert run.status == "finished", log
        assert run.finished == 2 and run.worker_pid and "Run detached finished: 2/2" in log
        assert Episode.objects.filter(tag="detached", status="finished").count() == 2
    finally:
        if not run.done and run.worker_pid:
            os.kill(run.worker_pid, signal.SIGTERM)
