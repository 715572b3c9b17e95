"""A run's chunks played by real consumers in their own processes, on every queue kind the session reaches.

Two consumers share one run and play every episode exactly once; a consumer killed mid-run (``kill -9``)
leaves its chunks to the other after the stale period, with no turn lost or stored twice; a cancel from
the run page stops both consumers' chunks within two seconds. The model is the fake server of
``tests/fake_llm.py`` with some latency per call, so episodes take time.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from benchmark.models import Episode, RunChunk, SimulationRun, Turn
from benchmark.runs import chunks
from benchmark.runs.options import RunOptions
from benchmark.runs.planning import plan_run
from benchmark.runs.status import run_for_command
from tests.benchmark.test_run_views import FORM
from tests.benchmark.test_runs import cast_scenario, speak
from tests.builders import default_team, make_user
from tests.consumers import wait_for
from tests.fake_llm import FAKE_API_KEY, FAKE_MODEL

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)  # consumers see commits only

STALE_SECONDS = 3  # short, so the killed consumer's chunks are taken over soon
CONDITIONS = ("none", "semantic", "sociocultural", "emotional")


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


@pytest.fixture
def slow_model(fake_llm):
    """Every call answers after ``delay`` seconds; the consumers are pointed at the server."""

    def answer_after(delay: float, calls: int = 2000):
        fake_llm.reply_when("role-playing", speak("Go on, then."))
        for _ in range(calls):
            fake_llm.enqueue(delay=delay)
        return fake_llm

    return answer_after


def model_env(fake_llm) -> dict[str, str]:
    return {
        "PARLEY_LLM_API_BASE": fake_llm.api_base, "PARLEY_LLM_API_KEY": FAKE_API_KEY,
        "PARLEY_ALLOWED_MODELS": "openai/", "PARLEY_LLM_TIMEOUT": "10", "PARLEY_LLM_MAX_RETRIES": "0",
        "PARLEY_RUN_STALE_SECONDS": str(STALE_SECONDS),
        **{f"PARLEY_{part.upper()}_MODEL": "" for part in ("agent", "partner", "judge", "neutralizer")},
    }


def queue_run(episodes_per_cell: int, turn_cap: int, concurrency: int, tag: str) -> SimulationRun:
    """A run of ``4 × episodes_per_cell`` episodes, queued on the real queue as ``simulate`` does."""
    options = RunOptions(
        conditions=CONDITIONS, episodes_per_cell=episodes_per_cell, turn_cap=turn_cap, concurrency=concurrency,
        agent_model=FAKE_MODEL, partner_model=FAKE_MODEL, judge_model="none",
    )
    plan = plan_run(options, default_team(), tag)
    run = run_for_command(plan.options, plan.tag, default_team())
    with transaction.atomic():
        chunks.queue_run(run)
    return run


def pid_of(worker: str) -> int:
    return int(worker.rsplit(":", 1)[1])


def assert_every_turn_stored_once(tag: str, turn_cap: int) -> None:
    """Each episode finished with exactly its turns, indexes 0..cap-1: none lost, none twice."""
    episodes = list(Episode.objects.filter(tag=tag))
    assert episodes and all(episode.status == "finished" for episode in episodes)
    for episode in episodes:
        indexes = list(Turn.objects.filter(episode=episode).order_by("index").values_list("index", flat=True))
        assert indexes == list(range(turn_cap)), (episode.pk, indexes)
    assert Turn.objects.filter(episode__tag=tag).count() == len(episodes) * turn_cap


def test_two_consumers_share_a_run_and_play_every_episode_exactly_once(queue, consumers, slow_model):
    cast_scenario()
    fake_llm = slow_model(0.05)
    first = consumers.start(workers=2, env=model_env(fake_llm))
    second = consumers.start(workers=2, env=model_env(fake_llm), periodic=True)

    run = queue_run(episodes_per_cell=10, turn_cap=4, concurrency=2, tag="shared")

    run = wait_for(lambda: SimulationRun.objects.filter(pk=run.pk, status="finished").first(), "the run", consumers,
                   timeout=180)
    assert (run.total, run.finished, run.failed) == (40, 40, 0)
    made = list(RunChunk.objects.filter(run=run))
    assert len(made) == 10 and all(chunk.status == "done" and chunk.attempt == 0 for chunk in made)
    played = Counter(pk for chunk in made for pk, _ in chunk.episodes)
    assert sorted(played) == sorted(Episode.objects.filter(tag="shared").values_list("pk", flat=True))
    assert set(played.values()) == {1}  # each episode in exactly one chunk
    by_consumer = Counter(pid_of(chunk.worker) for chunk in made for _ in chunk.episodes)
    assert set(by_consumer) == {first.pid, second.pid}, by_consumer  # both played some
    assert sum(by_consumer.values()) == 40
    assert_every_turn_stored_once("shared", 4)
    assert len(fake_llm.requests) == 40 * 4  # no episode, no turn, played twice


def test_a_killed_consumers_chunks_are_finished_by_the_other_with_no_turn_lost_or_doubled(
    queue, consumers, slow_model
):
    cast_scenario()
    fake_llm = slow_model(0.1)
    doomed = consumers.start(workers=2, env=model_env(fake_llm))
    survivor = consumers.start(workers=2, env=model_env(fake_llm), periodic=True)

    run = queue_run(episodes_per_cell=10, turn_cap=6, concurrency=2, tag="killed")

    def doomed_is_playing() -> bool:
        return any(
            pid_of(chunk.worker) == doomed.pid and Turn.objects.filter(episode_id__in=[pk for pk, _ in chunk.episodes])
            .exists()
            for chunk in RunChunk.objects.filter(run=run, status="running").exclude(worker="")
        )

    wait_for(doomed_is_playing, "the first consumer to play a chunk", consumers, timeout=120)
    doomed.kill()

    run = wait_for(lambda: SimulationRun.objects.filter(pk=run.pk, status="finished").first(), "the run", consumers,
                   timeout=240)
    made = list(RunChunk.objects.filter(run=run))
    taken_over = [chunk for chunk in made if chunk.attempt > 0]
    assert taken_over and all(pid_of(chunk.worker) == survivor.pid for chunk in taken_over)
    assert all(chunk.status == "done" for chunk in made)
    assert (run.finished, run.failed) == (40, 0)
    assert_every_turn_stored_once("killed", 6)
    assert "lost its consumer; queued again" in survivor.log()


def test_a_cancel_from_the_run_page_stops_both_consumers_chunks_within_two_seconds(
    queue, consumers, slow_model, client
):
    cast_scenario()
    fake_llm = slow_model(0.2)
    first = consumers.start(workers=2, env=model_env(fake_llm))
    second = consumers.start(workers=2, env=model_env(fake_llm))
    user = make_user(staff=True)
    client.force_login(user)
    form = {**FORM, "tag": "cancelled", "conditions": list(CONDITIONS), "episodes_per_cell": "10", "turn_cap": "20",
            "concurrency": "2", "agent_model": FAKE_MODEL, "partner_model": FAKE_MODEL, "judge_model": "none"}
    assert client.post(reverse("benchmark:run-new"), form).status_code == 302
    run = SimulationRun.objects.get(tag="cancelled")

    def both_playing() -> bool:
        workers = RunChunk.objects.filter(run=run, status="running").exclude(worker="").values_list("worker", flat=True)
        return {pid_of(worker) for worker in workers} == {first.pid, second.pid} and Turn.objects.filter(
            episode__tag="cancelled"
        ).count() >= 4

    wait_for(both_playing, "both consumers to play chunks", consumers, timeout=120)
    turns_before = Turn.objects.filter(episode__tag="cancelled").count()
    cancelled_at = timezone.now()
    response = client.post(reverse("benchmark:run-cancel", args=[run.pk]))
    assert response.status_code == 302

    run = wait_for(lambda: SimulationRun.objects.filter(pk=run.pk, status="cancelled").first(), "the cancel",
                   consumers, timeout=60)
    stopped = list(RunChunk.objects.filter(run=run, started_at__isnull=False))
    assert {pid_of(chunk.worker) for chunk in stopped} == {first.pid, second.pid}
    for chunk in stopped:
        assert chunk.status in ("cancelled", "done")
        if chunk.status == "cancelled":
            assert chunk.finished_at - cancelled_at <= timedelta(seconds=2), (chunk.number, chunk.finished_at)
    assert not RunChunk.objects.filter(run=run, status__in=["queued", "running"]).exists()
    assert not Episode.objects.filter(tag="cancelled", status="running").exists()
    assert Episode.objects.filter(tag="cancelled", status="pending").exists()
    assert Turn.objects.filter(episode__tag="cancelled").count() >= turns_before  # nothing stored is lost
    for episode in Episode.objects.filter(tag="cancelled"):
        indexes = list(Turn.objects.filter(episode=episode).order_by("index").values_list("index", flat=True))
        assert indexes == list(range(len(indexes)))
