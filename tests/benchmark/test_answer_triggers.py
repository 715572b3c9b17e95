"""The database refuses answers their question does not allow, whoever writes them (SQLite and PostgreSQL).

Run this file with ``DATABASE_URL=postgres://...`` too: the triggers are written once per vendor.
"""

import time

import pytest
from django.db import IntegrityError, connection, transaction

from benchmark.instruments import triggers
from benchmark.models import Answer, Instrument, Question, Respondent, Response
from tests.annotator.builders import make_question
from tests.builders import make_episode
from tests.concurrency import at_once

pytestmark = pytest.mark.django_db

CHOICES = {"choices": [{"value": "semantic", "label": "Semantic"}, {"value": "none", "label": "None"}]}
ANCHORS = {"anchors": [{"value": v, "label": str(v), "description": f"{v} of 5"} for v in range(1, 6)]}


@pytest.fixture
def questions():
    """One question of every kind the triggers look at, by kind."""
    instrument = Instrument.objects.create(name="Every kind")
    kinds = {
        "categorical": CHOICES,
        "pairwise": {"choices": [{"value": "A", "label": "A"}, {"value": "B", "label": "B"}]},
        "multiple_choice": {**CHOICES, "correct": "semantic"},
        "multi_label": {"choices": [{"value": v, "label": v} for v in ("warm", "curt", "vague")]},
        "yes_no": {},
        "likert": ANCHORS,
        "slider": {"min": -5, "max": 5, "step": 1},
        "text": {},
    }
    return {
        kind: make_question(instrument=instrument, key=kind, position=position, kind=kind, prompt=f"{kind}?",
                            options=options, scope="seat" if kind == "slider" else "episode")
        for position, (kind, options) in enumerate(kinds.items())
    }


def response(questions, status=Response.Status.SUBMITTED):
    judge, _ = Respondent.objects.get_or_create(kind=Respondent.Kind.JUDGE, model="test/judge")
    instrument = next(iter(questions.values())).instrument
    return Response.objects.create(instrument=instrument, episode=make_episode(), respondent=judge, status=status)


def refused(**fields):
    """Whether storing an answer with ``fields`` is refused as an IntegrityError (nothing is stored)."""
    try:
        with transaction.atomic():
            Answer.objects.create(**fields)
    except IntegrityError:
        return True
    return False


def test_the_triggers_are_installed_after_every_migration():
    expected = triggers.SQLITE_TRIGGERS if connection.vendor == "sqlite" else triggers.POSTGRESQL_TRIGGERS
    assert triggers.installed(connection) == set(expected)


@pytest.mark.parametrize(("kind", "number", "allowed"), [
    ("likert", 1, True), ("likert", 5, True), ("likert", 0, False), ("likert", 5.5, False),
    ("slider", -5, True), ("slider", 5, True), ("slider", -5.01, False), ("slider", 6, False),
])
def test_a_number_outside_the_questions_range_is_refused(questions, kind, number, allowed):
    seat = 0 if kind == "slider" else None
    answer = {"response": response(questions), "question": questions[kind], "seat_position": seat}

    assert refused(**answer, value=f"{number:g}", number=number) is not allowed


@pytest.mark.parametrize("kind", ["likert", "slider"])
def test_a_numeric_question_answered_without_a_number_is_refused(questions, kind):
    assert refused(response=response(questions), question=questions[kind], value="4", number=None,
                   seat_position=0 if kind == "slider" else None)


@pytest.mark.parametrize(("kind", "value", "allowed"), [
    ("categorical", "semantic", True), ("categorical", "emotional", False), ("categorical", "Semantic", False),
    ("pairwise", "B", True), ("pairwise", "tie", False),
    ("multiple_choice", "none", True), ("multiple_choice", "correct", False),
    ("multi_label", "curt", True), ("multi_label", "rude", False),
    ("yes_no", "yes", True), ("yes_no", "no", True), ("yes_no", "maybe", False), ("yes_no", "Yes", False),
])
def test_a_value_that_is_not_one_of_the_options_is_refused(questions, kind, value, allowed):
    assert refused(response=response(questions), question=questions[kind], value=value) is not allowed


def test_free_text_is_not_checked_against_options(questions):
    assert not refused(response=response(questions), question=questions["text"], value="Anything at all.")


def test_a_second_answer_to_a_single_valued_question_is_refused(questions):
    answers = response(questions)
    Answer.objects.create(response=answers, question=questions["categorical"], value="semantic")

    assert refused(response=answers, question=questions["categorical"], value="none")
    assert refused(response=answers, question=questions["text"], value="x") is False
    assert refused(response=answers, question=questions["text"], value="y")  # text is single-valued too


def test_single_valued_means_once_per_seat_and_goal(questions):
    answers = response(questions)
    Answer.objects.create(response=answers, question=questions["slider"], seat_position=0, value="1", number=1)

    assert not refused(response=answers, question=questions["slider"], seat_position=1, value="2", number=2)
    assert refused(response=answers, question=questions["slider"], seat_position=1, value="3", number=3)


def test_a_multi_label_answer_is_one_row_per_label(questions):
    answers = response(questions)

    assert not refused(response=answers, question=questions["multi_label"], value="warm")
    assert not refused(response=answers, question=questions["multi_label"], value="curt")
    assert refused(response=answers, question=questions["multi_label"], value="curt")  # each label once


def test_an_update_is_checked_like_an_insert(questions):
    answer = Answer.objects.create(response=response(questions), question=questions["likert"], value="3", number=3)

    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.filter(pk=answer.pk).update(number=9)
    answer.refresh_from_db()
    assert answer.number == 3
    Answer.objects.filter(pk=answer.pk).update(value="4", number=4)  # its own row is no duplicate


def test_a_draft_keeps_what_was_typed_until_it_leaves_draft(questions):
    draft = response(questions, status=Response.Status.DRAFT)
    Answer.objects.create(response=draft, question=questions["likert"], value="7,", number=None)
    Answer.objects.create(response=draft, question=questions["categorical"], value="not yet")

    with pytest.raises(IntegrityError), transaction.atomic():
        Response.objects.filter(pk=draft.pk).update(status=Response.Status.SUBMITTED)
    assert Response.objects.get(pk=draft.pk).status == Response.Status.DRAFT

    Answer.objects.filter(response=draft, question=questions["likert"]).update(value="4", number=4)
    Answer.objects.filter(response=draft, question=questions["categorical"]).update(value="none")
    Response.objects.filter(pk=draft.pk).update(status=Response.Status.SUBMITTED)
    assert Response.objects.get(pk=draft.pk).status == Response.Status.SUBMITTED


def test_a_draft_still_holds_one_answer_per_single_valued_question(questions):
    draft = response(questions, status=Response.Status.DRAFT)
    Answer.objects.create(response=draft, question=questions["categorical"], value="typed")

    assert refused(response=draft, question=questions["categorical"], value="typed again")


def test_a_numeric_question_must_have_its_bounds():
    instrument = Instrument.objects.create(name="No bounds")

    with pytest.raises(IntegrityError), transaction.atomic():
        Question.objects.create(instrument=instrument, key="q", position=0, kind="likert", prompt="?",
                                options=ANCHORS)


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_writers_of_the_same_single_valued_answer_at_once_store_one(questions):
    answers = response(questions)

    def store(value: str) -> Answer:
        with transaction.atomic():
            answer = Answer.objects.create(response=answers, question=questions["categorical"], value=value)
            time.sleep(0.2)  # still uncommitted while the other writer tries
            return answer

    outcomes = at_once(lambda: store("semantic"), lambda: store("none"))

    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["Answer", "IntegrityError"]
    assert Answer.objects.filter(response=answers, question=questions["categorical"]).count() == 1
