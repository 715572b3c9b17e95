"""Simulation runs: planning the grid, playing it against a real OpenAI-compatible server, resuming, cancelling."""

import asyncio
import json
from dataclasses import dataclass
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark.agents.prompt import REPAIR_INSTRUCTION
from benchmark.models import Barrier, Episode, Job, Response, RunChunk, Seat, SimulationRun, Turn
from benchmark.runs import chunks, control, stale
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.runs.planning import plan_run
from benchmark.runs.status import RunBusy, can_resume, is_stale, run_for_command
from benchmark.runs.writer import TurnWriter
from tests.benchmark.test_judge import PROMPT_MARK, reply
from tests.builders import default_team, make_character, make_episode, make_scenario
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db
# A played run's tasks run inline (PARLEY_TASKS_IMMEDIATE), but their database calls go to a thread of
# their own, which sees committed rows only.
played = pytest.mark.django_db(transaction=True, serialized_rollback=True)

BARRIER_SEAT = "Nadia Haddad"
PARTNER = "Omar Haddad"


def speak(text: str) -> str:
    return json.dumps({"action_type": "speak", "argument": text})


LEAVE = json.dumps({"action_type": "leave", "argument": ""})


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def cast_scenario(codename: str = "shared-car", *, difficulty: str = "standard", names=(BARRIER_SEAT, PARTNER)):
    roles = [{"character": make_character(first_name=n.split()[0], last_name=n.split()[1])} for n in names]
    return make_scenario(roles=roles, codename=codename, difficulty=difficulty)


def llm_options(**changes) -> RunOptions:
    values = {"agent_model": FAKE_MODEL, "partner_model": FAKE_MODEL, "conditions": ("semantic",), "turn_cap": 4,
              "concurrency": 4}
    return RunOptions(**{**values, **changes})


@dataclass
class Outcome:
    """What one execution of a run did, read from its rows as ``simulate`` reports it."""

    run: SimulationRun
    skipped: int
    finished: int
    failed: int
    turns: int
    status: str
    errors: list[str]

    def line(self) -> str:
        return self.run.message


def outcome(run: SimulationRun) -> Outcome:
    run.refresh_from_db()
    turns = Turn.objects.filter(episode__tag=run.tag).count() - run.turns_before
    errors = [line for chunk in run.chunks.order_by("number") for line in chunk.error.splitlines() if line]
    return Outcome(run, run.skipped, run.finished, run.failed, turns, run.status, errors)


def execute(options: RunOptions, tag: str = "test-run") -> Outcome:
    """Queue the run as ``simulate`` does; its tasks run inline, to the end."""
    plan = plan_run(options, default_team(), tag)
    run = run_for_command(plan.options, plan.tag, default_team())
    with transaction.atomic():
        chunks.queue_run(run)
    return outcome(run)


def turns_of(episode: Episode) -> list[tuple[int, int, str, str]]:
    return list(
        Turn.objects.filter(episode=episode).order_by("index").values_list("index", "seat__position", "action_type",
                                                                            "content")
    )


def prompts_of(fake_llm, name: str) -> list[str]:
    return [p for p in fake_llm.prompts if f"You are role-playing {name} in" in p]


# Planning


def test_the_plan_is_scenarios_times_conditions_times_episodes_with_paired_seeds():
    first, second = cast_scenario("a"), cast_scenario("b")
    plan = plan_run(RunOptions(conditions=("none", "semantic"), episodes_per_cell=2, seed=7), default_team(), "grid")
    episodes = plan.episodes()
    assert plan.total == len(episodes) == 8
    assert {(e.scenario.pk, e.barrier.key, e.number) for e in episodes} == {
        (s.pk, key, n) for s in (first, second) for key in ("none", "semantic") for n in (0, 1)
    }
    assert {(e.barrier.key, e.number, e.seed) for e in episodes if e.scenario == first} == {
        ("none", 0, 7), ("semantic", 0, 7), ("none", 1, 8), ("semantic", 1, 8)
    }


def test_planning_again_gives_the_same_external_ids():
    cast_scenario()
    options = RunOptions(conditions=("none", "emotional"), episodes_per_cell=3)
    assert [e.external_id for e in plan_run(options, default_team(), "again").episodes()] == [
        e.external_id for e in plan_run(options, default_team(), "again").episodes()
    ]
    assert len({e.external_id for e in plan_run(options, default_team(), "again").episodes()}) == 6


def test_a_long_run_name_still_gives_unique_external_ids_that_fit():
    cast_scenario()
    plan = plan_run(RunOptions(conditions=("none", "semantic"), episodes_per_cell=2), default_team(), "x" * 100)
    ids = [e.external_id for e in plan.episodes()]
    assert all(len(i) <= 100 for i in ids) and len(set(ids)) == 4


def test_the_default_run_name_follows_what_shapes_the_episodes_but_not_the_speed():
    options = RunOptions(conditions=("none",), seed=3)
    assert options.default_tag() == RunOptions(conditions=("none",), seed=3, concurrency=50).default_tag()
    assert options.default_tag() != RunOptions(conditions=("none",), seed=4).default_tag()


def test_an_unknown_condition_is_refused_with_the_known_barriers_listed():
    cast_scenario()
    with pytest.raises(RunOptionsError, match="Unknown condition.*'bogus'.*known barriers: none, semantic") as error:
        plan_run(RunOptions(conditions=("none", "bogus")), default_team())
    assert error.value.option == "conditions"


def test_a_custom_barrier_is_a_condition_like_the_others():
    cast_scenario()
    Barrier.objects.create(team=default_team(), key="jargon", name="Jargon", definition="Speaks in trade jargon.")
    plan = plan_run(RunOptions(conditions=("none", "jargon")), default_team(), "custom")
    assert [b.key for b in plan.barriers] == ["none", "jargon"]


def test_scenarios_are_chosen_by_id_codename_and_difficulty():
    easy, hard, other_hard = cast_scenario("easy"), cast_scenario("hard", difficulty="hard"), cast_scenario(
        "other", difficulty="hard"
    )
    team = default_team()
    assert plan_run(RunOptions(scenarios=(str(easy.pk), "hard")), team).scenarios == [easy, hard]
    assert plan_run(RunOptions(difficulties=("hard",)), team).scenarios == [hard, other_hard]
    assert plan_run(RunOptions(scenarios=("easy", "hard"), difficulties=("hard",)), team).scenarios == [hard]


def test_an_unknown_scenario_is_refused_by_name():
    cast_scenario()
    with pytest.raises(RunOptionsError, match="'missing'") as error:
        plan_run(RunOptions(scenarios=("shared-car", "missing")), default_team())
    assert error.value.option == "scenarios"


def test_a_scenario_without_a_role_at_the_barrier_seat_is_refused():
    cast_scenario()
    with pytest.raises(RunOptionsError, match="no role at position 2") as error:
        plan_run(RunOptions(barrier_seats=("0", "2")), default_team())
    assert error.value.option == "barrier_seats"


@pytest.mark.parametrize(
    ("changes", "option"),
    [
        ({"turn_cap": 0}, "turn_cap"),
        ({"episodes_per_cell": 0}, "episodes_per_cell"),
        ({"temperature": 3.0}, "temperature"),
        ({"concurrency": 0}, "concurrency"),
        ({"strategy": "flatter"}, "strategy"),
        ({"difficulties": ("easy",)}, "difficulties"),
        ({"conditions": ()}, "conditions"),
        ({"judge_model": " , "}, "judge_model"),
        ({"judge_model": "none, openai/gpt-4o"}, "judge_model"),
    ],
)
def test_options_no_run_can_use_are_refused_naming_the_option(changes, option):
    with pytest.raises(RunOptionsError) as error:
        RunOptions(**changes).check()
    assert error.value.option == option


def test_stored_options_of_a_run_from_before_chunks_still_load_without_their_worker_count():
    options = RunOptions.from_dict({"conditions": ["none"], "workers": 2, "concurrency": 3})
    assert options.concurrency == 3 and "workers" not in options.as_dict()


def test_stored_options_with_an_unknown_key_or_a_wrong_type_are_refused():
    with pytest.raises(RunOptionsError, match="Unknown run option"):
        RunOptions.from_dict({"turns": 3})
    with pytest.raises(RunOptionsError, match="turn cap"):
        RunOptions.from_dict({"turn_cap": "many"})
    assert RunOptions.from_dict(RunOptions(conditions=("none",)).as_dict()) == RunOptions(conditions=("none",))


# Playing against the OpenAI-compatible server


@played
def test_the_barrier_text_reaches_only_the_barrier_seat(fake_llm):
    cast_scenario()
    fake_llm.reply_when(f"role-playing {BARRIER_SEAT}", speak("You know, the thing with the stuff."))
    fake_llm.reply_when(f"role-playing {PARTNER}", speak("Sorry, which thing?"))
    directive = Barrier.objects.get(key="semantic").style_directive

    summary = execute(llm_options())

    assert summary.finished == 1 and summary.turns == 4
    assert len(prompts_of(fake_llm, BARRIER_SEAT)) == 2 and len(prompts_of(fake_llm, PARTNER)) == 2
    assert all(directive in p for p in prompts_of(fake_llm, BARRIER_SEAT))
    assert not any(directive in p or "Communication style" in p for p in prompts_of(fake_llm, PARTNER))


@played
def test_the_repair_instruction_reaches_only_the_partner(fake_llm):
    cast_scenario()
    fake_llm.reply_when(f"role-playing {BARRIER_SEAT}", speak("It is, well, you know."))
    fake_llm.reply_when(f"role-playing {PARTNER}", speak("Do you mean the car?"))

    execute(llm_options(strategy="repair"))

    assert all(REPAIR_INSTRUCTION in p for p in prompts_of(fake_llm, PARTNER))
    assert not any(REPAIR_INSTRUCTION in p for p in prompts_of(fake_llm, BARRIER_SEAT))
    seats = Seat.objects.filter(episode__tag="test-run").order_by("position")
    assert [(s.carries_barrier, s.strategy) for s in seats] == [(True, "default"), (False, "repair")]


@played
def test_the_models_go_to_their_seats(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", LEAVE)
    execute(llm_options(agent_model="openai/barrier-model", partner_model="openai/partner-model"))
    seats = Seat.objects.filter(episode__tag="test-run").order_by("position")
    assert [s.model for s in seats] == ["openai/barrier-model", "openai/partner-model"]


@played
def test_an_episode_ends_when_a_seat_leaves(fake_llm):
    cast_scenario()
    fake_llm.reply_when(f"role-playing {BARRIER_SEAT}", speak("Shall we split it?"))
    fake_llm.reply_when(f"role-playing {PARTNER}", LEAVE)

    execute(llm_options(turn_cap=20))

    episode = Episode.objects.get(tag="test-run")
    assert [t[2] for t in turns_of(episode)] == ["speak", "leave"]
    assert (episode.status, episode.end_reason) == ("finished", "leave")


@played
def test_an_episode_ends_at_the_turn_cap(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", speak("And another thing."))

    execute(llm_options(turn_cap=5))

    episode = Episode.objects.get(tag="test-run")
    assert [t[0] for t in turns_of(episode)] == [0, 1, 2, 3, 4]
    assert (episode.status, episode.end_reason) == ("finished", "turn_cap")


@played
def test_a_run_ends_by_having_its_judge_score_the_finished_episodes(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", speak("Fine."))

    summary = execute(llm_options(conditions=("none", "semantic")))

    scored = Response.objects.filter(episode__tag="test-run", respondent__model="scripted")
    assert scored.values("episode").distinct().count() == 2
    assert "Judge scripted: 2 scored, 0 already scored, 0 failed." in summary.line()
    assert SimulationRun.objects.get(tag="test-run").message == summary.line()


@played
def test_a_run_can_have_several_judges_each_score_its_episodes(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", speak("Fine."))
    fake_llm.reply_when(PROMPT_MARK, reply())

    summary = execute(llm_options(conditions=("none",), judge_model=f"scripted, {FAKE_MODEL}"))

    judges = Response.objects.filter(episode__tag="test-run").values_list("respondent__model", flat=True)
    assert sorted(set(judges)) == [FAKE_MODEL, "scripted"]
    assert f"Judges scripted, {FAKE_MODEL}: 2 scored, 0 already scored, 0 failed." in summary.line()


@played
def test_a_run_with_judge_none_leaves_its_episodes_unscored(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", speak("Fine."))

    summary = execute(llm_options(judge_model="none"))

    assert not Response.objects.filter(episode__tag="test-run").exists()
    assert "Judge" not in summary.line()


@played
def test_running_again_skips_finished_episodes(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", speak("Fine."))
    options = llm_options(conditions=("none", "semantic"))
    execute(options)
    requests = len(fake_llm.requests)

    again = execute(options)

    assert len(fake_llm.requests) == requests
    assert (again.skipped, again.finished, again.turns, again.status) == (2, 2, 0, "finished")
    assert Episode.objects.filter(tag="test-run").count() == 2


@played
def test_resume_after_a_crash_finishes_the_interrupted_episode_without_duplicating_turns(fake_llm):
    cast_scenario()
    fake_llm.reply_when(f"role-playing {BARRIER_SEAT}", speak("The thing, you know."))
    fake_llm.reply_when(f"role-playing {PARTNER}", speak("Go on."))
    options = llm_options(conditions=("none", "semantic"), turn_cap=6)
    execute(options)
    reference = {e.barrier.key: turns_of(e) for e in Episode.objects.filter(tag="test-run")}
    # What a killed worker leaves: one episode half played and still marked running, one never started.
    crashed = Episode.objects.get(tag="test-run", barrier__key="semantic")
    crashed.turns.filter(index__gte=4).delete()
    Episode.objects.filter(pk=crashed.pk).update(status="running", end_reason="", finished_at=None)
    untouched = Episode.objects.get(tag="test-run", barrier__key="none")
    untouched.turns.all().delete()
    Episode.objects.filter(pk=untouched.pk).update(status="pending", end_reason="", finished_at=None)
    run = SimulationRun.objects.get(tag="test-run")
    SimulationRun.objects.filter(pk=run.pk).update(status="running", heartbeat_at=timezone.now())
    RunChunk.objects.filter(run=run).update(status="running", heartbeat_at=timezone.now())
    fake_llm.requests.clear()

    with pytest.raises(RunBusy):  # its chunk's heartbeat is fresh: as far as anyone knows, its consumer lives
        execute(options)
    SimulationRun.objects.filter(tag="test-run").update(heartbeat_at=None, created_at="2000-01-01T00:00Z")
    RunChunk.objects.filter(run=run).update(heartbeat_at="2000-01-01T00:00Z")
    summary = execute(options)

    assert len(fake_llm.requests) == 2 + 6  # the two missing turns, then the whole other episode
    assert {e.barrier.key: turns_of(e) for e in Episode.objects.filter(tag="test-run")} == reference
    assert (summary.finished, summary.turns, summary.status) == (2, 8, "finished")


@played
def test_a_failed_episode_is_counted_and_the_run_goes_on(fake_llm):
    cast_scenario("fine")
    cast_scenario("broken", names=("Ivo Broken", "Una Broken"))
    fake_llm.reply_when("role-playing Ivo Broken", "I will not answer in JSON.")
    fake_llm.reply_when("role-playing", speak("All good."))

    summary = execute(llm_options(conditions=("none",)))

    assert (summary.finished, summary.failed, summary.status) == (1, 1, "failed")
    assert "did not return usable JSON" in summary.errors[0]
    run = SimulationRun.objects.get(tag="test-run")
    assert (run.status, run.finished, run.failed) == ("failed", 1, 1)
    assert "1 failed" in run.message and "did not return usable JSON" in run.message
    failed = Episode.objects.get(tag="test-run", scenario__codename="broken")
    assert (failed.status, failed.end_reason) == ("failed", "model_error")


@played
def test_an_unexpected_episode_error_is_named_on_the_run_without_its_server_path(monkeypatch, settings):
    """The exception's text can hold file paths; the run (and its page) get its kind, the log the rest."""
    cast_scenario()
    missing = str(settings.BASE_DIR / "var" / "missing-prompt.txt")

    async def run_episode(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", missing)

    monkeypatch.setattr(chunks, "run_episode", run_episode)
    summary = execute(llm_options(conditions=("none",)))

    run = SimulationRun.objects.get(tag="test-run")
    assert (summary.failed, run.status) == (1, "failed")
    assert "FileNotFoundError" in run.message and "server log" in run.message
    assert missing not in run.message and str(settings.BASE_DIR) not in run.message


@played
def test_a_worker_stopped_by_an_unexpected_error_says_so_without_its_server_path(monkeypatch, settings):
    cast_scenario()
    missing = str(settings.BASE_DIR / "var" / "runs")

    def prepare_episodes(*args, **kwargs):
        raise PermissionError(13, "Permission denied", missing)

    monkeypatch.setattr(chunks, "prepare_episodes", prepare_episodes)
    execute(llm_options(conditions=("none",)))  # the task's error goes to its job and the consumer's log

    run = SimulationRun.objects.get(tag="test-run")
    assert run.status == "failed" and "PermissionError" in run.message
    assert missing not in run.message and str(settings.BASE_DIR) not in run.message


@played
def test_running_again_retries_failed_episodes(fake_llm):
    cast_scenario("broken", names=("Ivo Broken", "Una Broken"))
    fake_llm.reply_when("role-playing Ivo Broken", "No JSON today.")
    options = llm_options(conditions=("none",))
    execute(options)
    fake_llm.reset()
    fake_llm.reply_when("role-playing", speak("Now it works."))

    summary = execute(options)

    assert (summary.finished, summary.failed, summary.status) == (1, 0, "finished")
    assert Episode.objects.get(tag="test-run").end_reason == "turn_cap"


@played
def test_a_cancel_stops_the_run_and_leaves_unfinished_episodes_resumable(fake_llm, monkeypatch):
    for name in ("a", "b", "c"):
        cast_scenario(name)
    fake_llm.reply_when("role-playing", speak("Slowly now."))
    for _ in range(200):
        fake_llm.enqueue(delay=0.05)
    monkeypatch.setattr(chunks, "HEARTBEAT_SECONDS", 0.1)
    beat = chunks._beat

    def beat_then_cancel_after_some_turns(state):
        if Turn.objects.filter(episode__tag="test-run").count() >= 2:
            control.request_cancel(SimulationRun.objects.get(pk=state.run_id))  # as the cancel page does
        beat(state)

    monkeypatch.setattr(chunks, "_beat", beat_then_cancel_after_some_turns)
    options = llm_options(conditions=("none", "semantic"), turn_cap=10, concurrency=2)

    summary = execute(options)

    run = SimulationRun.objects.get(tag="test-run")
    assert summary.status == run.status == "cancelled"
    assert 2 <= Turn.objects.filter(episode__tag="test-run").count() < 60
    assert not Episode.objects.filter(tag="test-run", status="running").exists()
    assert Episode.objects.filter(tag="test-run", status="pending").exists()
    assert set(RunChunk.objects.filter(run=run).values_list("status", flat=True)) == {"cancelled"}

    monkeypatch.setattr(chunks, "_beat", beat)
    resumed = execute(options)  # the same command again lifts the cancel and finishes the rest
    assert (resumed.status, resumed.finished) == ("finished", 6)
    for episode in Episode.objects.filter(tag="test-run"):
        assert [t[0] for t in turns_of(episode)] == list(range(10))


@played
def test_a_run_cancelled_before_a_consumer_takes_it_is_not_played(fake_llm):
    cast_scenario()
    with transaction.atomic():
        run = control.create_run(llm_options(), "queued-run", default_team())
        control.request_cancel(run)  # in the same transaction: before its task could start
        chunks.queue_run(run)

    run.refresh_from_db()
    assert (run.status, run.message) == ("cancelled", "Cancelled before a consumer took it.")
    assert fake_llm.requests == [] and not Episode.objects.filter(tag="queued-run").exists()


@played
def test_the_chunks_record_their_consumer_heartbeat_and_counts_on_the_run(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", LEAVE)
    run = control.create_run(llm_options(conditions=("none", "semantic")), "counted", default_team())
    assert (run.status, run.total) == ("queued", 2)

    with transaction.atomic():
        chunks.queue_run(run)

    run.refresh_from_db()
    assert run.heartbeat_at is not None and run.started_at <= run.finished_at
    assert (run.status, run.total, run.finished, run.failed) == ("finished", 2, 2, 0)
    assert run.message.startswith("Run counted finished: 2/2 episodes finished")
    chunk = RunChunk.objects.get(run=run)  # concurrency 4: one chunk holds up to 8 episodes
    assert (chunk.status, chunk.attempt, chunk.finished, chunk.failed, len(chunk.episodes)) == ("done", 0, 2, 0, 2)
    assert chunk.worker and chunk.heartbeat_at and chunk.started_at <= chunk.finished_at
    labels = sorted(Job.objects.filter(team=run.team).values_list("label", "status"))
    assert labels == [("Run counted: chunk 1 of 1", "finished"), ("Run counted: finishing", "finished"),
                      ("Run counted: preparing", "finished")]


def test_a_stale_run_can_be_resumed_and_a_live_one_cannot():
    run = SimulationRun.objects.create(team=default_team(), tag="live", status="running")
    run.heartbeat_at = run.created_at
    assert not is_stale(run) and not can_resume(run)
    SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at="2000-01-01T00:00Z")
    run.refresh_from_db()
    assert is_stale(run) and can_resume(run)
    chunk = RunChunk.objects.create(run=run, number=1, status="running", heartbeat_at=timezone.now())
    assert not is_stale(run)  # a chunk of it beats
    RunChunk.objects.filter(pk=chunk.pk).update(heartbeat_at="2000-01-01T00:00Z")
    assert is_stale(run)
    RunChunk.objects.filter(pk=chunk.pk).update(status="done")  # finishing: its judges may be slow to beat
    SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=1))
    run.refresh_from_db()
    assert not is_stale(run)
    SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at="2000-01-01T00:00Z")
    run.refresh_from_db()
    assert is_stale(run)


@played
def test_a_run_is_split_into_chunks_that_play_every_episode_exactly_once():
    for name in ("a", "b", "c"):
        cast_scenario(name)
    options = RunOptions(conditions=("none", "semantic", "emotional"), episodes_per_cell=2, concurrency=2,
                         agent_model="scripted", partner_model="scripted", turn_cap=8)

    summary = execute(options, "chunked")

    assert (summary.finished, summary.failed, summary.status) == (18, 0, "finished")
    made = list(RunChunk.objects.filter(run=summary.run))
    assert [len(chunk.episodes) for chunk in made] == [4, 4, 4, 4, 2]  # two rounds of the concurrency each
    played_ids = [pk for chunk in made for pk, _ in chunk.episodes]
    assert sorted(played_ids) == sorted(Episode.objects.filter(tag="chunked").values_list("pk", flat=True))
    assert all(chunk.status == "done" and chunk.finished == len(chunk.episodes) for chunk in made)
    for episode in Episode.objects.filter(tag="chunked"):
        indexes = [t[0] for t in turns_of(episode)]
        assert indexes == list(range(len(indexes))) and 1 <= len(indexes) <= 8


@played
def test_a_chunk_whose_consumer_died_is_queued_again_and_resumes_from_the_next_turn(fake_llm):
    cast_scenario()
    fake_llm.reply_when(f"role-playing {BARRIER_SEAT}", speak("The thing, you know."))
    fake_llm.reply_when(f"role-playing {PARTNER}", speak("Go on."))
    options = llm_options(conditions=("none", "semantic"), turn_cap=6)
    execute(options)
    reference = {e.barrier.key: turns_of(e) for e in Episode.objects.filter(tag="test-run")}
    # What a consumer killed mid-chunk leaves: its chunk running with an old heartbeat, an episode half played.
    run = SimulationRun.objects.get(tag="test-run")
    halfway = Episode.objects.get(tag="test-run", barrier__key="semantic")
    halfway.turns.filter(index__gte=3).delete()
    Episode.objects.filter(pk=halfway.pk).update(status="running", end_reason="", finished_at=None)
    SimulationRun.objects.filter(pk=run.pk).update(status="running", finished=1, finished_at=None, message="")
    RunChunk.objects.filter(run=run).update(status="running", heartbeat_at="2000-01-01T00:00Z", worker="gone:1")
    fake_llm.requests.clear()

    assert stale.requeue_stale_chunks() == 1  # the periodic task; the new attempt runs inline here

    chunk = RunChunk.objects.get(run=run)
    assert (chunk.status, chunk.attempt) == ("done", 1) and chunk.worker != "gone:1"
    assert len(fake_llm.requests) == 3  # only the three missing turns
    assert {e.barrier.key: turns_of(e) for e in Episode.objects.filter(tag="test-run")} == reference
    run.refresh_from_db()
    assert (run.status, run.finished, run.failed) == ("finished", 2, 0)


@played
def test_a_queued_chunk_whose_task_left_the_queue_with_a_dying_consumer_is_queued_again(fake_llm):
    cast_scenario()
    fake_llm.reply_when(f"role-playing {BARRIER_SEAT}", speak("The thing, you know."))
    fake_llm.reply_when(f"role-playing {PARTNER}", speak("Go on."))
    execute(llm_options(conditions=("none", "semantic"), turn_cap=6))
    reference = {e.barrier.key: turns_of(e) for e in Episode.objects.filter(tag="test-run")}
    # What a consumer killed between taking the chunk's task off the queue and claiming the chunk leaves: the
    # chunk queued, its task gone from the queue (it holds no unacknowledged tasks), the run waiting for it.
    run = SimulationRun.objects.get(tag="test-run")
    Episode.objects.filter(tag="test-run").update(status="pending", end_reason="", finished_at=None)
    Turn.objects.filter(episode__tag="test-run").delete()
    long_ago = timezone.now() - timedelta(hours=1)
    SimulationRun.objects.filter(pk=run.pk).update(status="running", finished=0, finished_at=None, message="",
                                                   started_at=long_ago)
    RunChunk.objects.filter(run=run).update(status="queued", heartbeat_at=None, worker="", started_at=None,
                                            finished_at=None, finished=0)
    fresh = timezone.now()
    SimulationRun.objects.filter(pk=run.pk).update(started_at=fresh)
    assert stale.requeue_stale_chunks(run.pk) == 0  # prepared just now: it may simply wait its turn

    SimulationRun.objects.filter(pk=run.pk).update(started_at=long_ago)
    assert stale.requeue_stale_chunks(run.pk) == 1  # the run's watch; the new attempt runs inline here

    chunk = RunChunk.objects.get(run=run)
    assert (chunk.status, chunk.attempt) == ("done", 1)
    assert {e.barrier.key: turns_of(e) for e in Episode.objects.filter(tag="test-run")} == reference
    run.refresh_from_db()
    assert (run.status, run.finished, run.failed) == ("finished", 2, 0)


@played
def test_a_superseded_attempt_stops_at_its_next_beat_and_records_nothing(fake_llm):
    cast_scenario()
    run = control.create_run(llm_options(), "superseded", default_team())
    chunk = RunChunk.objects.create(run=run, number=1, status="running", attempt=1, heartbeat_at=timezone.now())
    state = chunks.ChunkState(chunk.pk, run.pk, attempt=0)

    chunks._beat(state)

    assert state.superseded and state.stop.is_set()
    chunks._count(state, "finished")
    assert RunChunk.objects.get(pk=chunk.pk).finished == 0 and SimulationRun.objects.get(pk=run.pk).finished == 0


@played
def test_a_model_that_refuses_the_key_stops_the_run_with_the_providers_message(fake_llm):
    for name in ("a", "b", "c"):
        cast_scenario(name)
    for _ in range(50):
        fake_llm.enqueue(status=401)

    summary = execute(llm_options(conditions=("none", "semantic"), concurrency=1))

    run = summary.run
    assert run.status == "failed" and "authentication error" in run.message and "rejected" in run.message
    assert len(fake_llm.requests) == 1  # not one call per episode
    failed_chunk = RunChunk.objects.get(run=run, status="failed")
    assert RunChunk.objects.filter(run=run, status="cancelled").count() == 2  # the others never started
    job = Job.objects.get(label=f"Run test-run: chunk {failed_chunk.number} of 3")
    assert job.status == "failed" and "authentication error" in job.error
    assert can_resume(run)


@played
def test_a_model_that_cannot_be_reached_stops_the_run_instead_of_failing_every_episode(fake_llm, settings):
    settings.PARLEY_LLM_MAX_RETRIES = 0
    for name in ("a", "b"):
        cast_scenario(name)
    for _ in range(50):
        fake_llm.enqueue(status=503)

    summary = execute(llm_options(conditions=("none", "semantic"), concurrency=1))

    assert summary.status == "failed" and "cannot be reached" in summary.run.message
    assert "unavailable" in summary.run.message
    assert len(fake_llm.requests) == 1


# Group commit


def unsaved_turns(episode: Episode, count: int, start: int = 0) -> list[Turn]:
    seat = episode.seats.get(position=0)
    return [Turn(episode=episode, seat=seat, index=start + n, content=f"Line {n}.") for n in range(count)]


def test_the_turn_writer_stores_turns_that_arrive_together_in_one_batch():
    episodes = [make_episode(turns=0) for _ in range(3)]
    writer = TurnWriter()
    turns = [turn for episode in episodes for turn in unsaved_turns(episode, 2)]

    async def save_all():
        return await asyncio.gather(*(writer.save(turn) for turn in turns))

    saved = async_to_sync(save_all)()

    assert writer.batches == 1 and all(turn.pk for turn in saved)
    assert Turn.objects.filter(episode__in=episodes).count() == 6


def test_a_turn_the_database_refuses_fails_only_its_own_save():
    first, second = make_episode(turns=1), make_episode(turns=0)
    writer = TurnWriter()
    duplicate = unsaved_turns(first, 1)[0]  # index 0 is taken
    fine = unsaved_turns(second, 1)[0]

    async def save_both():
        return await asyncio.gather(writer.save(duplicate), writer.save(fine), return_exceptions=True)

    refused, stored = async_to_sync(save_both)()

    assert isinstance(refused, IntegrityError) and stored.pk is not None
    assert list(Turn.objects.filter(episode=second).values_list("index", flat=True)) == [0]
    assert Turn.objects.filter(episode=first).count() == 1


@played
def test_a_model_that_answered_the_chunk_and_then_drops_one_call_fails_that_episode_only(fake_llm, settings):
    settings.PARLEY_LLM_MAX_RETRIES = 0
    cast_scenario()
    fake_llm.reply_when("role-playing", speak("Fine."))
    for _ in range(4):  # the first episode's four turns
        fake_llm.enqueue()
    fake_llm.enqueue(status=503)  # then the model drops one call: flaky, not down

    summary = execute(llm_options(conditions=("none", "semantic"), concurrency=1))

    assert (summary.finished, summary.failed, summary.status) == (1, 1, "failed")
    assert "cannot be reached" not in summary.run.message and "1 failed" in summary.run.message


@played
def test_a_run_whose_finishing_task_was_lost_is_finished_by_the_periodic_check(fake_llm):
    cast_scenario()
    fake_llm.reply_when("role-playing", LEAVE)
    execute(llm_options(conditions=("none", "semantic"), judge_model="none"))
    run = SimulationRun.objects.get(tag="test-run")
    # what a consumer killed during the finishing task leaves: every chunk done, the run still running
    lately = timezone.now() - timedelta(minutes=1)
    SimulationRun.objects.filter(pk=run.pk).update(status="running", finished_at=None, message="", heartbeat_at=lately)

    stale.requeue_stale_chunks()  # a slow judge beats less often than the stale period: not lost yet
    run.refresh_from_db()
    assert run.status == "running"

    SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - stale.LOST_TASK_AFTER * 2)
    stale.requeue_stale_chunks()
    run.refresh_from_db()
    assert (run.status, run.finished) == ("finished", 2) and run.message.startswith("Run test-run finished")
