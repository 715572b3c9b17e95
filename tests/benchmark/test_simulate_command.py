"""``manage.py simulate``: options, progress, summary, resuming, and clear errors on bad input."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import Episode, SimulationRun
from tests.builders import default_team, make_character, make_scenario
from tests.fake_llm import FAKE_MODEL

# The run is played by its tasks (inline here), whose database calls go to a thread of their own: they see
# committed rows only.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


@pytest.fixture
def scenarios():
    def cast(codename: str, difficulty: str = "standard"):
        roles = [{"character": make_character(first_name=f"{codename}{n}", last_name="Tester")} for n in (1, 2)]
        return make_scenario(roles=roles, codename=codename, difficulty=difficulty)

    return [cast("kitchen"), cast("garden", "hard"), cast("office", "hard")]


def simulate(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("simulate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_simulate_plays_every_scenario_under_every_condition_and_sums_up(scenarios):
    out, _ = simulate("--scenarios", "kitchen,garden", "--conditions", "none,semantic", "--tag", "grid", "--seed", "3")

    episodes = Episode.objects.filter(tag="grid")
    assert episodes.count() == 4
    assert {(e.scenario.codename, e.barrier.key) for e in episodes} == {
        (s, c) for s in ("kitchen", "garden") for c in ("none", "semantic")
    }
    assert all(e.status == "finished" and e.settings["seed"] == 3 for e in episodes)
    assert "2 scenario(s) × 2 condition(s) × 1 episode(s) = 4 episodes" in out
    assert "Run grid finished: 4/4 episodes finished (0 skipped, finished before), 0 failed" in out
    assert "0 model calls" in out  # the scripted model calls nothing


def test_the_default_conditions_are_the_four_socialveil_ones(scenarios):
    simulate("--scenarios", "kitchen", "--tag", "four")
    keys = set(Episode.objects.filter(tag="four").values_list("barrier__key", flat=True))
    assert keys == {"none", "semantic", "sociocultural", "emotional"}


def test_a_progress_bar_goes_to_stderr(scenarios):
    _, err = simulate("--scenarios", "kitchen", "--conditions", "none", "--tag", "bar")
    assert "[##############################] 1/1 episodes (0 failed)" in err
    assert "turns/s" in err


def test_running_the_same_command_again_skips_finished_episodes(scenarios):
    simulate("--tags", "hard", "--conditions", "none,emotional")
    turns = list(Episode.objects.values_list("pk", "turns__index"))

    out, _ = simulate("--tags", "hard", "--conditions", "none,emotional")

    assert "4/4 episodes finished (4 skipped, finished before)" in out and "; 0 turns" in out
    assert list(Episode.objects.values_list("pk", "turns__index")) == turns
    assert SimulationRun.objects.count() == 1


def test_tags_choose_scenarios_by_difficulty(scenarios):
    simulate("--tags", "hard", "--conditions", "none", "--tag", "hard-only")
    assert set(Episode.objects.filter(tag="hard-only").values_list("scenario__codename", flat=True)) == {
        "garden", "office"
    }


def test_models_episodes_per_cell_turn_cap_and_strategy_reach_the_episodes(scenarios, fake_llm):
    fake_llm.reply_when("role-playing", json.dumps({"action_type": "speak", "argument": "Right."}))
    simulate(
        "--scenarios", "kitchen", "--conditions", "semantic", "--agent-model", FAKE_MODEL, "--partner-model",
        "openai/other-model", "--episodes-per-cell", "2", "--turn-cap", "3", "--strategy", "repair",
        "--temperature", "0.2", "--tag", "llm",
    )
    episodes = list(Episode.objects.filter(tag="llm").prefetch_related("seats"))
    assert len(episodes) == 2
    for episode in episodes:
        assert episode.turn_cap == 3 and episode.turns.count() == 3 and episode.settings["temperature"] == 0.2
        assert [(s.model, s.strategy, s.carries_barrier) for s in episode.seats.all()] == [
            (FAKE_MODEL, "default", True), ("openai/other-model", "repair", False)
        ]
    assert {r["temperature"] for r in fake_llm.requests} == {0.2}


def test_run_executes_a_stored_run(scenarios):
    run = SimulationRun.objects.create(team=default_team(),
        tag="from-web", options={"scenarios": ["office"], "conditions": ["none", "semantic"]}, total=2
    )
    out, _ = simulate("--run", str(run.pk))
    run.refresh_from_db()
    assert (run.status, run.finished) == ("finished", 2)
    assert "Executing run from-web" in out


def test_failed_episodes_end_the_command_with_an_error_after_the_summary(scenarios, fake_llm):
    fake_llm.reply_when("role-playing", "not JSON at all")
    with pytest.raises(CommandError, match="1 episode\\(s\\) failed.*run the same command again"):
        simulate("--scenarios", "kitchen", "--conditions", "none", "--agent-model", FAKE_MODEL,
                 "--partner-model", FAKE_MODEL, "--tag", "broken")
    assert Episode.objects.get(tag="broken").status == "failed"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--conditions", "none,bogus"], "--conditions: Unknown condition(s) 'bogus'; known barriers: none, semantic, "
                                         "sociocultural, emotional, promediate-general, promediate-competing"),
        (["--scenarios", "kitchen,nowhere"], "--scenarios: No scenario has the id, external id or codename 'nowhere'."),
        (["--tags", "easy"], "--difficulty: Unknown difficulty tag(s) 'easy'; known: standard, hard."),
        (["--turn-cap", "0"], "--turn-cap: turn cap must be between 1 and 1000; got 0."),
        (["--episodes-per-cell", "0"], "--episodes-per-cell: episodes per cell must be between 1 and 1000; got 0."),
        (["--barrier-seat", "5"], "--barrier-seats: Scenario kitchen has no role at position 5"),
        (["--barrier-seats", "0,x"], "--barrier-seats: barrier seats are role positions from 0 to 100; got 'x'"),
        (["--tag", "Not a slug!"], "--tag: Run name 'Not a slug!' must be a slug"),
        (["--run", "999999"], "--run: there is no simulation run with id 999999."),
    ],
)
def test_bad_options_are_refused_with_a_message_naming_the_option(scenarios, args, message):
    with pytest.raises(CommandError) as error:
        simulate(*args)
    assert message in str(error.value)
    assert not Episode.objects.exists()


def test_a_strategy_outside_the_choices_is_refused(scenarios):
    with pytest.raises(CommandError, match="invalid choice: 'flatter'"):
        simulate("--strategy", "flatter")


# --- pairwise designs: a model per seat ------------------------------------------------------------


@pytest.fixture
def pairwise():
    """A three-role scenario: a sender, a receiver and an unlabelled bystander."""
    roles = [
        {"character": make_character(first_name=name, last_name="Pair"), "communication": label}
        for name, label in (("Sia", "sender"), ("Rui", "receiver"), ("Bo", ""))
    ]
    return make_scenario(roles=roles, codename="pairwise")


def seat_models_of(tag: str) -> list[tuple[int, str]]:
    episode = Episode.objects.get(tag=tag)
    return list(episode.seats.order_by("position").values_list("position", "model"))


def test_seat_models_give_the_sender_and_the_receiver_their_own_models(pairwise, fake_llm):
    fake_llm.reply_when("role-playing", json.dumps({"action_type": "speak", "argument": "Right."}))
    out, _ = simulate("--scenarios", "pairwise", "--conditions", "none", "--tag", "pairs", "--turn-cap", "3",
                      "--seat-models", "sender=openai/strong, receiver=openai/weak")
    assert seat_models_of("pairs") == [(0, "openai/strong"), (1, "openai/weak"), (2, "scripted")]
    assert "seat models sender=openai/strong, receiver=openai/weak." in out
    assert Episode.objects.get(tag="pairs").status == "finished"
    assert [request["model"] for request in fake_llm.requests] == ["strong", "weak"]  # seat 2 is scripted


def test_a_position_wins_over_a_label_and_a_label_over_the_agent_model(pairwise):
    simulate("--scenarios", "pairwise", "--conditions", "none", "--tag", "mixed", "--agent-model", "openai/a",
             "--seat-models", "Sender=openai/s,0=scripted,2=scripted,receiver=scripted", "--episodes-per-cell", "1")
    assert seat_models_of("mixed") == [(0, "scripted"), (1, "scripted"), (2, "scripted")]
    assert Episode.objects.get(tag="mixed").status == "finished"  # openai/a and openai/s were never asked


def test_seat_models_are_in_the_run_name_only_when_given(pairwise):
    simulate("--scenarios", "pairwise", "--conditions", "none")
    simulate("--scenarios", "pairwise", "--conditions", "none", "--seat-models", "receiver=scripted")
    plain, paired = SimulationRun.objects.order_by("pk")
    assert plain.tag != paired.tag
    assert "seat_models" not in plain.options or plain.options["seat_models"] == []
    assert paired.options["seat_models"] == ["receiver=scripted"]
    # the same command finds the same run again
    simulate("--scenarios", "pairwise", "--conditions", "none", "--seat-models", "receiver=scripted")
    assert SimulationRun.objects.count() == 2


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("sender", "--seat-models: seat models: 'sender' is not SEAT=MODEL"),
        ("boss=openai/x", "'boss=openai/x' is not SEAT=MODEL, where SEAT is sender, receiver or a role position"),
        ("receiver=", "'receiver=' is not SEAT=MODEL"),
        ("1=scripted,01=scripted", "seat models: 1 is given a model twice."),
        ("7=scripted", "seat models: scenario pairwise has no role at position 7."),
    ],
)
def test_bad_seat_models_are_refused_with_a_clear_message(pairwise, value, message):
    with pytest.raises(CommandError) as error:
        simulate("--scenarios", "pairwise", "--conditions", "none", "--seat-models", value)
    assert message in str(error.value)
    assert not Episode.objects.exists()


def test_a_label_no_role_carries_is_refused(scenarios):
    with pytest.raises(CommandError, match="no role of the chosen scenarios is labelled sender"):
        simulate("--scenarios", "kitchen", "--conditions", "none", "--seat-models", "sender=scripted")


# Following a run on a real queue


def test_with_no_consumer_the_command_says_how_to_start_one_and_ctrl_c_leaves_the_run_queued(
    scenarios, queue, monkeypatch
):
    from benchmark.management.commands import simulate as command

    monkeypatch.setattr(command, "NO_CONSUMER_SECONDS", 0)
    sleeps = []

    def sleep(seconds):  # the second poll is where the user presses Ctrl-C
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(command.time, "sleep", sleep)
    out, _ = simulate("--scenarios", "kitchen", "--conditions", "none", "--run-name", "waiting")

    assert "No consumer has taken run waiting's work after 0 s: start one with `make worker`" in out
    assert "Stopped following run waiting; it goes on on the task queue's consumers" in out
    assert "manage.py simulate --cancel waiting" in out
    run = SimulationRun.objects.get(tag="waiting")
    assert (run.status, run.cancel_requested) == ("queued", False)
    assert queue.storage().queue_size() == 1  # its preparing task waits for a consumer

    out, _ = simulate("--cancel", "waiting")
    run.refresh_from_db()
    assert (run.status, run.cancel_requested) == ("cancelled", True)
    assert "Run waiting: cancel requested" in out


def test_cancel_names_a_run_the_team_does_not_have(scenarios):
    with pytest.raises(CommandError, match="--cancel: the team .* has no run named nowhere"):
        simulate("--cancel", "nowhere")


@pytest.mark.django_db  # inside the test's transaction, which never commits: nothing takes the run's work
def test_a_run_queued_inline_inside_an_open_transaction_is_refused_rather_than_followed_forever(scenarios):
    with pytest.raises(CommandError, match="did not play: tasks run inline here .* has not committed"):
        simulate("--scenarios", "kitchen", "--conditions", "none", "--tag", "stuck")
