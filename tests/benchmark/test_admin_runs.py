"""The admin pages for simulation runs (read only) and neutral contexts."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmark.models import NeutralContext, RunChunk, SimulationRun
from tests.builders import default_team, make_scenario, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


def make_run(**fields) -> SimulationRun:
    fields.setdefault("tag", "pilot")
    fields.setdefault("total", 8)
    fields.setdefault("finished", 3)
    fields.setdefault("failed", 1)
    return SimulationRun.objects.create(team=default_team(), **fields)


def test_the_run_list_shows_its_counts(admin_client):
    make_run(status=SimulationRun.Status.RUNNING)

    response = admin_client.get(reverse("admin:benchmark_simulationrun_changelist"))

    assert response.status_code == 200
    assert "3 / 8" in response.text


def test_runs_cannot_be_added_or_changed_in_the_admin(admin_client):
    run = make_run(status=SimulationRun.Status.FINISHED)
    change = reverse("admin:benchmark_simulationrun_change", args=[run.pk])

    assert admin_client.get(reverse("admin:benchmark_simulationrun_add")).status_code == 403
    assert admin_client.get(change).status_code == 200  # shown read only
    admin_client.post(change, {"tag": "renamed", "total": 8, "finished": 8, "failed": 0, "status": "finished"})
    run.refresh_from_db()
    assert (run.tag, run.finished) == ("pilot", 3)


def test_a_runs_page_lists_its_chunks_read_only(admin_client):
    run = make_run(status=SimulationRun.Status.RUNNING)
    RunChunk.objects.create(run=run, number=1, status="running", attempt=1, worker="box-b:202")

    response = admin_client.get(reverse("admin:benchmark_simulationrun_change", args=[run.pk]))

    assert response.status_code == 200 and "box-b:202" in response.text
    assert RunChunk.objects.get().worker == "box-b:202"


def test_a_run_still_going_cannot_be_deleted_but_a_finished_one_can(admin_client):
    running = make_run(status=SimulationRun.Status.RUNNING)
    finished = make_run(status=SimulationRun.Status.FINISHED)

    assert admin_client.get(reverse("admin:benchmark_simulationrun_delete", args=[running.pk])).status_code == 403
    response = admin_client.post(reverse("admin:benchmark_simulationrun_delete", args=[finished.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert list(SimulationRun.objects.values_list("pk", flat=True)) == [running.pk]


def test_the_neutral_context_list_costs_the_same_queries_for_more_rows(admin_client):
    url = reverse("admin:benchmark_neutralcontext_changelist")
    NeutralContext.objects.create(scenario=make_scenario(), prompt_version="v1", model="scripted", text="One.")
    with CaptureQueriesContext(connection) as few:
        admin_client.get(url)
    for _ in range(4):
        NeutralContext.objects.create(scenario=make_scenario(), prompt_version="v1", model="scripted", text="More.")

    with CaptureQueriesContext(connection) as many:
        response = admin_client.get(url)

    assert response.status_code == 200
    assert len(many) == len(few)


def test_a_neutral_context_keeps_its_scenario_and_version_once_made(admin_client):
    row = NeutralContext.objects.create(scenario=make_scenario(), prompt_version="v1", model="scripted", text="One.")

    response = admin_client.get(reverse("admin:benchmark_neutralcontext_change", args=[row.pk]))

    readonly = response.context["adminform"].readonly_fields
    assert {"scenario", "prompt_version", "model", "edited"} <= set(readonly)
