"""The embedded default under load: requests that queue work while a consumer writes a run never see
"database is locked".

``make demo`` runs one web server and one consumer on the embedded default: the application in one
SQLite file, the queue in another (``tasks.sqlite3``). Here a real consumer plays a run (every turn a
write to the application's file) while 20 researchers launch runs at the same moment from the run
page of a live server (each launch writes its run and its job, then puts a task on the SQLite queue
that the consumer polls). Every launch must answer with its run page. In CI the concurrency tests run
on PostgreSQL and again on SQLite; the queue is SQLite's both times.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from benchmark.models import Job, SimulationRun, Turn
from tests.builders import make_character, make_researcher, make_scenario
from tests.concurrency import at_once, errors
from tests.consumers import Consumers, make_queue, real_queue, wait_for

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

LAUNCHES = 20
FORM = {
    "difficulty": "", "scenarios": "", "conditions": ["none"], "agent_model": "scripted",
    "partner_model": "scripted", "judge_model": "none", "strategy": "default", "episodes_per_cell": "1",
    "turn_cap": "4", "temperature": "0.7", "concurrency": "4", "seed": "0",
}
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture
def sqlite_queue(tmp_path: Path):
    queue = make_queue("sqlite", tmp_path)
    with real_queue(queue):
        yield queue


@pytest.fixture
def consumer(sqlite_queue, tmp_path: Path):
    consumers = Consumers(sqlite_queue, tmp_path)
    try:
        yield consumers
    finally:
        consumers.close()


def signed_in(live_server, user) -> httpx.Client:
    """An HTTP client of the live server with ``user``'s session."""
    django_client = Client()
    django_client.force_login(user)
    client = httpx.Client(base_url=live_server.url, timeout=60)
    client.cookies.set("sessionid", django_client.cookies["sessionid"].value)
    return client


def launch(client: httpx.Client, tag: str, **choices: object) -> httpx.Response:
    """Open the run form and launch a run named ``tag``, as a researcher's browser does."""
    page = client.get(reverse("benchmark:run-new"))
    token = CSRF.search(page.text).group(1)
    data = {**FORM, **choices, "tag": tag, "csrfmiddlewaretoken": token}
    return client.post(reverse("benchmark:run-new"), data=data,
                       headers={"Referer": f"{client.base_url}{reverse('benchmark:run-new')}"})


def test_launches_while_a_consumer_writes_a_run_never_find_the_database_locked(
    live_server, consumer, settings
) -> None:
    settings.PARLEY_TEAM_MAX_RUNS = LAUNCHES + 1
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}
    for _ in range(6):
        make_scenario(roles=[{"character": make_character()}, {"character": make_character()}])
    clients = [signed_in(live_server, make_researcher()) for _ in range(LAUNCHES + 1)]
    consumer.start(workers=2, worker_type="thread", periodic=True)

    # A longer run first (6 scenarios × 4 conditions × 4 episodes of up to 20 turns), stored turn by turn.
    writer = launch(clients[0], "the-writer", conditions=["none", "semantic", "sociocultural", "emotional"],
                    episodes_per_cell="4", turn_cap="20")
    assert writer.status_code == 302, writer.text[:2000]
    wait_for(lambda: Turn.objects.filter(episode__tag="the-writer").count() >= 20, "the run's first turns", consumer)
    assert SimulationRun.objects.get(tag="the-writer").status == "running"
    turns_before = Turn.objects.filter(episode__tag="the-writer").count()

    outcomes = at_once(*(lambda c=c, n=n: launch(c, f"launch-{n}") for n, c in enumerate(clients[1:], 1)))

    assert Turn.objects.filter(episode__tag="the-writer").count() > turns_before  # the consumer wrote meanwhile

    assert errors(outcomes) == []
    refused = [(r.status_code, r.text[:500]) for r in outcomes if r.status_code != 302]
    assert refused == []
    assert not any("database is locked" in r.text for r in outcomes)
    assert SimulationRun.objects.filter(tag__startswith="launch-").count() == LAUNCHES
    assert Job.objects.filter(task="prepare_run").count() == LAUNCHES + 1
    # The consumer took every launch off the queue and nothing it did failed on a lock.
    wait_for(lambda: not SimulationRun.objects.exclude(status__in=["finished", "failed", "cancelled"]).exists(),
             "every run to end", consumer, timeout=300)
    assert not Job.objects.filter(status=Job.Status.FAILED).exists(), list(Job.objects.values("label", "error"))
    assert "database is locked" not in consumer.logs()
