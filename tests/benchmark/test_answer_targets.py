"""The database keeps an answer's target (``benchmark.instruments.targets``) to what its question's scope names.

Run this file with ``DATABASE_URL=postgres://...`` too: the triggers are written once per vendor.
"""

import pytest
from django.db import IntegrityError, transaction

from benchmark.instruments.targets import COLUMNS, Target
from benchmark.models import Answer, Instrument, Respondent, Response
from tests.annotator.builders import make_question
from tests.builders import make_episode

pytestmark = pytest.mark.django_db

ANCHORS = {"anchors": [{"value": v, "label": str(v), "description": f"{v} of 5"} for v in range(1, 6)]}
SCOPES = ("episode", "seat", "turn", "span")


@pytest.fixture
def questions():
    """One Likert question and one multi-label question per scope (goals are covered by the goal tests)."""
    instrument = Instrument.objects.create(name="Every target")
    found = {}
    for position, scope in enumerate(SCOPES):
        found[scope] = make_question(instrument=instrument, key=f"rate-{scope}", position=2 * position,
                                     kind="likert", prompt="How helpful?", options=ANCHORS, scope=scope)
        found[f"labels-{scope}"] = make_question(
            instrument=instrument, key=f"labels-{scope}", position=2 * position + 1, kind="multi_label",
            prompt="Which?", options={"choices": [{"value": v, "label": v} for v in ("warm", "curt")]}, scope=scope)
    return found


@pytest.fixture
def answers(questions):
    judge, _ = Respondent.objects.get_or_create(kind=Respondent.Kind.JUDGE, model="test/judge")
    return Response.objects.create(instrument=questions["turn"].instrument, episode=make_episode(), respondent=judge)


def refused(response, question, target, value="3"):
    """Whether storing an answer about ``target`` is refused as an IntegrityError (nothing is stored)."""
    number = float(value) if value.isdigit() else None
    try:
        with transaction.atomic():
            Answer.objects.create(response=response, question=question, value=value, number=number,
                                  **target.columns())
    except IntegrityError:
        return True
    return False


TARGETS = {
    "episode": Target.episode(),
    "seat": Target.of_seat(1),
    "turn": Target.of_turn(2),
    "span": Target.of_span(2, 4),
}


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("kind", list(TARGETS))
def test_a_target_must_be_of_the_kind_the_scope_names(questions, answers, scope, kind):
    assert refused(answers, questions[scope], TARGETS[kind]) is (kind != scope)


def test_a_span_with_characters_is_a_span_target(questions, answers):
    assert not refused(answers, questions["span"], Target.of_span(1, 1, 4, 9))
    assert refused(answers, questions["turn"], Target.of_span(1, 1, 4, 9))


def test_a_turn_takes_one_answer_per_single_valued_question(questions, answers):
    assert not refused(answers, questions["turn"], Target.of_turn(0))
    assert not refused(answers, questions["turn"], Target.of_turn(1))  # another turn
    assert refused(answers, questions["turn"], Target.of_turn(1), value="4")  # the trigger
    assert refused(answers, questions["turn"], Target.of_turn(1))  # the unique index too


def test_a_multi_label_turn_answer_is_one_row_per_label(questions, answers):
    question = questions["labels-turn"]
    assert not refused(answers, question, Target.of_turn(0), value="warm")
    assert not refused(answers, question, Target.of_turn(0), value="curt")
    assert refused(answers, question, Target.of_turn(0), value="curt")
    assert not refused(answers, question, Target.of_turn(1), value="curt")


def test_a_span_question_takes_any_number_of_spans(questions, answers):
    for _ in range(3):
        assert not refused(answers, questions["span"], Target.of_span(0, 2))
    assert not refused(answers, questions["span"], Target.of_span(0, 2, 1, 5))
    assert Answer.objects.filter(question=questions["span"]).count() == 4


@pytest.mark.parametrize("columns", [
    {"turn": 4, "end_turn": 2},  # ends before it starts
    {"end_turn": 2},  # no first turn
    {"turn": 1, "end_turn": 2, "start_char": 3},  # characters come in pairs
    {"turn": 1, "end_turn": 1, "start_char": 5, "end_char": 5},  # empty within one turn
    {"turn": 1, "start_char": 0, "end_char": 5},  # characters only in a span
])
def test_an_ill_formed_span_is_refused(questions, answers, columns):
    stored = dict.fromkeys(COLUMNS) | {"goal_id": None} | columns
    assert refused(answers, questions["span"], Target.from_columns(**stored))


def test_an_update_that_moves_an_answer_to_another_kind_of_target_is_refused(questions, answers):
    answer = Answer.objects.create(response=answers, question=questions["turn"], value="3", number=3,
                                   **Target.of_turn(0).columns())
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.filter(pk=answer.pk).update(turn=None, seat_position=0)
    Answer.objects.filter(pk=answer.pk).update(turn=5)  # another turn is fine
    assert Target.of(Answer.objects.get(pk=answer.pk)) == Target.of_turn(5)
