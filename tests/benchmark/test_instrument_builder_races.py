"""Two researchers change one instrument at the same moment: each change waits for the other, positions stay 0..n-1."""

import pytest

from benchmark.instrument_builder.editing import move_question, remove_question, save_question
from benchmark.instrument_builder.transfer import create_instrument, questions_from_data
from benchmark.models import Question
from tests.builders import default_team
from tests.concurrency import at_once

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def text_question(key):
    return Question(key=key, kind="text", prompt=f"{key}?", scope="episode", rationale="none", options={})


def test_two_questions_added_at_once_both_land_in_order():
    instrument = create_instrument(default_team(), "Raced", "", [])

    outcomes = at_once(lambda: save_question(instrument, text_question("first")),
                       lambda: save_question(instrument, text_question("second")))

    assert all(isinstance(outcome, Question) for outcome in outcomes), outcomes
    assert sorted(instrument.questions.values_list("position", flat=True)) == [0, 1]


def test_a_move_and_a_removal_at_once_leave_no_gap():
    texts = [{"key": key, "kind": "text", "prompt": f"{key}?"} for key in ("a", "b", "c")]
    instrument = create_instrument(default_team(), "Raced", "", questions_from_data(texts))
    b, c = instrument.questions.get(key="b"), instrument.questions.get(key="c")

    outcomes = at_once(lambda: move_question(instrument, c, -1), lambda: remove_question(instrument, b))

    assert outcomes == [None, None]
    assert sorted(instrument.questions.values_list("position", flat=True)) == [0, 1]


def test_a_question_removed_twice_at_once_is_removed_once():
    texts = [{"key": key, "kind": "text", "prompt": f"{key}?"} for key in ("a", "b")]
    instrument = create_instrument(default_team(), "Raced", "", questions_from_data(texts))
    a = instrument.questions.get(key="a")

    outcomes = at_once(lambda: remove_question(instrument, a), lambda: remove_question(instrument, a))

    assert outcomes == [None, None]
    assert list(instrument.questions.values_list("key", "position")) == [("b", 0)]
