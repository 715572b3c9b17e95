"""Who speaks next: round robin, or random order after a greeting; seeded, resumable, never twice in a row."""

import pytest
from asgiref.sync import async_to_sync

from benchmark.models import ActionType, Episode, Scenario, TurnTaking
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.runs.planning import plan_run, prepare_episodes
from benchmark.runs.simulation import create_episode, run_episode
from benchmark.scenarios.turn_taking import (
    can_go_on,
    check_greeter,
    expected_turns,
    next_speaker,
    speaking_order,
    turn_cap_for,
)
from tests.builders import default_team, get_barrier, make_scenario

ROUND_ROBIN, RANDOM = TurnTaking.ROUND_ROBIN, TurnTaking.RANDOM_AFTER_GREETING


def test_round_robin_cycles_through_the_seats_in_position_order():
    spoken = []
    for _ in range(7):
        spoken.append(next_speaker(ROUND_ROBIN, [2, 0, 1], spoken))
    assert spoken == [0, 1, 2, 0, 1, 2, 0]


def test_round_robin_with_two_seats_alternates_as_before():
    assert [next_speaker(ROUND_ROBIN, [0, 1], [0] * n) for n in range(4)] == [0, 1, 0, 1]


def test_round_robin_skips_a_seat_that_left():
    # seat 1 left on turn 1; after seat 2, seat 0 and then seat 2 again
    assert next_speaker(ROUND_ROBIN, [0, 1, 2], [0, 1], left={1}) == 2
    assert next_speaker(ROUND_ROBIN, [0, 1, 2], [0, 1, 2], left={1}) == 0
    assert next_speaker(ROUND_ROBIN, [0, 1, 2], [0, 1, 2, 0], left={1}) == 2


def test_random_order_opens_with_the_greeter_then_never_repeats_a_speaker():
    spoken = [next_speaker(RANDOM, [0, 1, 2, 3], [], greeter=2, seed=5)]
    for _ in range(60):
        spoken.append(next_speaker(RANDOM, [0, 1, 2, 3], spoken, seed=5))
    assert spoken[0] == 2
    assert all(a != b for a, b in zip(spoken, spoken[1:], strict=False))
    assert set(spoken) == {0, 1, 2, 3}
    assert spoken[:12] != [0, 1, 2, 3] * 3  # not round robin in disguise


def test_random_order_without_a_greeter_opens_with_the_first_role():
    assert next_speaker(RANDOM, [1, 0, 2], [], seed=3) == 0


def test_random_order_is_the_same_for_a_seed_and_differs_across_seeds():
    def order(seed):
        spoken = []
        for _ in range(20):
            spoken.append(next_speaker(RANDOM, [0, 1, 2], spoken, seed=seed))
        return spoken

    assert order(7) == order(7)
    assert order(7) != order(8)


def test_random_order_resumes_as_it_would_have_gone_on():
    """The draw depends on the seed and the turn's index, so a resumed episode continues identically."""
    spoken = []
    for _ in range(10):
        spoken.append(next_speaker(RANDOM, [0, 1, 2], spoken, seed=1))
    resumed = spoken[:4]
    for _ in range(6):
        resumed.append(next_speaker(RANDOM, [0, 1, 2], resumed, seed=1))
    assert resumed == spoken


def test_the_only_seat_left_may_speak_twice():
    assert next_speaker(RANDOM, [0, 1, 2], [0, 1, 2], left={0, 1}) == 2


def test_no_seat_left_to_speak_is_an_error():
    with pytest.raises(ValueError, match="no seat is left"):
        next_speaker(ROUND_ROBIN, [0, 1], [0, 1], left={0, 1})


def test_an_unknown_policy_is_named():
    with pytest.raises(ValueError, match="unknown turn-taking policy 'shouting'"):
        next_speaker("shouting", [0, 1], [])


def test_the_speaking_order_steps_round_a_seat_from_the_turn_after_its_leave():
    """As a running episode draws it: each turn from next_speaker with the seats that left before it."""
    for policy in (TurnTaking.ROUND_ROBIN, TurnTaking.RANDOM_AFTER_GREETING):
        leaver = speaking_order(policy, (0, 1, 2, 3), 6, seed=7, greeter=0)[5]  # whoever speaks at turn 5 leaves
        order = speaking_order(policy, (0, 1, 2, 3), 12, seed=7, greeter=0, leaves=((5, leaver),))
        spoken: list[int] = []
        for index in range(12):
            left = {leaver} if index > 5 else set()
            spoken.append(next_speaker(policy, [0, 1, 2, 3], spoken, left, seed=7, greeter=0))
        assert order == tuple(spoken)
        assert leaver not in order[6:]
        assert order[:6] == speaking_order(policy, (0, 1, 2, 3), 6, seed=7, greeter=0)


def test_expected_turns_are_exact_under_round_robin_and_the_mean_over_seeds_under_random_order():
    assert expected_turns(TurnTaking.ROUND_ROBIN, [0, 1, 2], 1, 10) == 3  # turns 1, 4, 7
    assert expected_turns(TurnTaking.ROUND_ROBIN, [0, 1], 0, 5) == 3
    assert expected_turns(TurnTaking.RANDOM_AFTER_GREETING, [0, 1], 1, 5, greeter=0) == 2  # two seats alternate
    seeds = range(2000)
    for position in (0, 2):
        mean = sum(
            speaking_order(TurnTaking.RANDOM_AFTER_GREETING, (0, 1, 2), 12, seed=seed, greeter=0).count(position)
            for seed in seeds
        ) / len(seeds)
        expected = expected_turns(TurnTaking.RANDOM_AFTER_GREETING, [0, 1, 2], position, 12, greeter=0)
        assert mean == pytest.approx(expected, abs=0.1)
    assert expected_turns(TurnTaking.RANDOM_AFTER_GREETING, [0, 1, 2], 0, 12, greeter=0) > 4  # the greeter's turn


def test_a_conversation_needs_two_who_can_still_speak():
    assert can_go_on([0, 1, 2], {1})
    assert not can_go_on([0, 1, 2], {0, 2})
    assert not can_go_on([0, 1], {0})


@pytest.mark.django_db
def test_the_scenarios_turn_cap_overrides_the_runs():
    assert turn_cap_for(make_scenario(turn_cap=8), 20) == 8
    assert turn_cap_for(make_scenario(), 20) == 20


@pytest.mark.django_db
def test_a_greeter_needs_random_order_and_a_role_of_the_scenario():
    assert check_greeter(make_scenario(turn_taking=RANDOM, greeter_position=1), [0, 1]) is None
    assert "names a greeter but takes turns round robin" in check_greeter(
        make_scenario(greeter_position=1), [0, 1]
    )
    assert "names role 5 as its greeter, but its roles are 0, 1" in check_greeter(
        make_scenario(turn_taking=RANDOM, greeter_position=5), [0, 1]
    )


# --- in the runner --------------------------------------------------------------------------------


def play(scenario: Scenario, *, seed: int = 0, turn_cap: int = 12, beats=None) -> Episode:
    episode = create_episode(scenario, get_barrier("none"), turn_cap=turn_cap)
    return async_to_sync(run_episode)(episode, seed=seed, beats=beats)


def speakers(episode: Episode) -> list[int]:
    return list(episode.turns.order_by("index").values_list("seat__position", flat=True))


@pytest.mark.django_db
def test_an_episode_in_random_order_follows_the_policy_and_opens_with_the_greeting_role():
    scenario = make_scenario(roles=3, turn_taking=RANDOM, greeter_position=1)
    episode = play(scenario, seed=4)
    order = speakers(episode)
    assert order[0] == 1
    assert all(a != b for a, b in zip(order, order[1:], strict=False))
    expected = []
    for _ in order:
        expected.append(next_speaker(RANDOM, [0, 1, 2], expected, seed=4, greeter=1))
    assert order == expected


@pytest.mark.django_db
def test_the_same_seed_plays_the_same_random_order_again():
    scenario = make_scenario(roles=3, turn_taking=RANDOM)
    first, second = play(scenario, seed=9), play(scenario, seed=9)
    assert speakers(first) == speakers(second)
    assert list(first.turns.values_list("content", flat=True)) == list(second.turns.values_list("content", flat=True))


@pytest.mark.django_db
def test_in_a_group_one_seat_leaving_does_not_end_the_episode():
    scenario = make_scenario(roles=3)
    beats = {0: ["Hello both."], 1: ["Hi.", "Yes.", "Fine."], 2: ["Hey.", "Sure.", "Okay."]}
    episode = play(scenario, beats=beats, turn_cap=30)
    turns = list(episode.turns.order_by("index").values_list("seat__position", "action_type"))
    # seat 0 leaves on its second turn; seats 1 and 2 go on alternating until one of them leaves
    assert turns[3] == (0, ActionType.LEAVE)
    assert [position for position, _ in turns[4:]] == [1, 2, 1, 2, 1]
    assert turns[-1][1] == ActionType.LEAVE
    assert episode.end_reason == Episode.EndReason.LEAVE


@pytest.mark.django_db
def test_a_run_gives_each_episode_the_scenarios_own_turn_cap():
    short = make_scenario(codename="short", turn_cap=3)
    make_scenario(codename="long")
    plan = plan_run(RunOptions(conditions=("none",), turn_cap=11), default_team(), "cap-run")
    prepare_episodes(plan)
    caps = dict(Episode.objects.values_list("scenario__codename", "turn_cap"))
    assert caps == {"short": 3, "long": 11}
    assert short.episodes.get().turn_cap == 3


@pytest.mark.django_db
def test_a_run_refuses_a_scenario_whose_greeter_is_not_one_of_its_roles():
    make_scenario(codename="odd", turn_taking=RANDOM, greeter_position=4)
    with pytest.raises(RunOptionsError, match="names role 4 as its greeter") as error:
        plan_run(RunOptions(conditions=("none",)), default_team(), "greeter-run")
    assert error.value.option == "scenarios"
