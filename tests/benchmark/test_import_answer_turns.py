"""An answer's turn or span in a Parley file (``turn``, ``end_turn``, ``start_char``, ``end_char``, written by
an export only when set): read into the answer's target, refused where it does not fit, naming the field."""

import re
from typing import Any

import pytest

from benchmark.importing.parley import answer_turns
from benchmark.importing.problems import ImportProblem
from benchmark.importing.records import Fields, Origin
from benchmark.instruments.targets import Target
from benchmark.models import Response
from tests.benchmark.import_checks import assert_rejected
from tests.benchmark.test_import_parley import episode_record, response_record, write_lines

pytestmark = pytest.mark.django_db

MUTUAL = {"question": "mutual_understanding", "seat": None, "value": "4", "number": 4.0, "reasoning": ""}


def turns_of(**keys: Any) -> Target:
    return answer_turns(Fields({**MUTUAL, **keys}, Origin("x.jsonl", "line 1")))


def test_no_turn_keys_is_the_episode_and_a_turn_or_span_is_read_as_given():
    assert turns_of() == Target.episode()
    assert turns_of(turn=3) == Target.of_turn(3)
    assert turns_of(turn=3, end_turn=5) == Target.of_span(3, 5)
    assert turns_of(turn=3, end_turn=3, start_char=2, end_char=9) == Target.of_span(3, 3, 2, 9)


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        ({"end_turn": 4}, "field end_turn: a span needs its first turn (turn)"),
        ({"turn": 2, "start_char": 1, "end_char": 4}, "field start_char: character offsets belong to a span"),
        ({"turn": 5, "end_turn": 4}, "field end_turn: a span ends (turn 4) before it starts (turn 5)"),
        ({"turn": 1, "end_turn": 2, "start_char": 3}, "field end_turn: a span's character offsets come as a pair"),
        ({"turn": -1}, "field turn:"),
    ],
)
def test_turn_keys_that_make_no_turn_or_span_are_refused_naming_the_field(keys, problem):
    with pytest.raises(ImportProblem, match=re.escape(problem)):
        turns_of(**keys)


def test_a_turn_given_for_a_question_not_asked_per_turn_is_refused(tmp_path):
    record = episode_record(evaluations=[], responses=[response_record(answers=[{**MUTUAL, "turn": 1}])])
    assert_rejected(
        write_lines(tmp_path, record),
        "field responses[0].answers[0].turn: 'mutual_understanding' is not asked per turn; the turn must be null",
    )
    assert not Response.objects.exists()
