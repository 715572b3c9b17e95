"""PM-A11: the ProMediate floor selection, on plain values (thresholds 3.0 and 2.5, silence bonus, fallback)."""

import pytest

from benchmark.scenarios.floor import (
    ANYONE,
    IM_THRESHOLD,
    INTERRUPT_THRESHOLD,
    choose_speaker,
    mediator_takes_floor,
    passes,
    silence_bonus,
)


def test_thresholds_are_the_case_files():
    assert (IM_THRESHOLD, INTERRUPT_THRESHOLD) == (3.0, 2.5)


def test_open_floor_goes_to_the_highest_passing_party_but_never_the_last_speaker():
    # (i) B is below 3.0 and C just spoke
    assert choose_speaker({"A": 3.2, "B": 2.8, "C": 4.1}, ANYONE, "C") == "A"


def test_the_allocated_party_needs_no_threshold_and_others_need_the_interrupt_one():
    # (ii) A is below the interruption threshold; B was handed the floor
    assert choose_speaker({"A": 2.4, "B": 2.0}, "B", "C") == "B"


def test_a_party_may_interrupt_the_allocated_one_with_a_higher_score():
    # (iii) A may interrupt at >= 2.5 and beats B
    assert choose_speaker({"A": 3.2, "B": 2.8}, "B", "C") == "A"


def test_nothing_passing_falls_back_to_the_reservoir_with_no_threshold():
    # (iv) nothing reaches 3.0; the stored thoughts decide
    assert choose_speaker({"A": 2.4, "B": 2.0}, ANYONE, "C", fallback={"A": 2.2, "B": 2.9}) == "B"


def test_no_thought_at_all_means_nobody_speaks():
    assert choose_speaker({"A": 2.4, "B": None}, ANYONE, "C") is None
    assert choose_speaker({"A": None}, ANYONE, "C", fallback={"C": 4.0}) is None  # only the last speaker


def test_ties_go_to_the_first_party_in_seat_order():
    assert choose_speaker({"B": 3.5, "A": 3.5}, ANYONE, None) == "B"


def test_threshold_boundaries_are_inclusive():
    assert passes(3.0, "A", ANYONE) and not passes(2.9, "A", ANYONE)
    assert passes(2.5, "A", "B") and not passes(2.4, "A", "B")
    assert passes(1.0, "B", "B")


@pytest.mark.parametrize(
    ("rating", "gap", "expected"),
    [
        (3.0, 10, 3.3),  # 3.0 × 1.01^10 = 3.3139
        (4.9, 10, 5.0),  # 5.41, clipped
        (3.0, 0, 3.0),
        (0.5, 3, 1.0),  # raised to the scale's floor
    ],
)
def test_silence_bonus(rating, gap, expected):
    assert silence_bonus(rating, gap) == expected


def test_a_pending_mediator_speaks_first_but_never_twice_in_a_row():
    assert mediator_takes_floor(True, last_speaker_is_mediator=False)
    assert not mediator_takes_floor(True, last_speaker_is_mediator=True)
    assert not mediator_takes_floor(False, last_speaker_is_mediator=False)


def test_a_party_may_have_its_own_thresholds():
    assert choose_speaker({"A": 3.2, "B": 2.8}, ANYONE, "C", thresholds={"B": (2.5, 2.0)}) == "A"
    assert choose_speaker({"A": 2.9, "B": 2.8}, ANYONE, "C", thresholds={"B": (2.5, 2.0)}) == "B"
