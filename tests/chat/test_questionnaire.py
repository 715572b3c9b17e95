"""The questionnaire researchers write: the instruments' question format, problems named by number and field."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from benchmark.instruments.presets import CHAT_PRESET, CHAT_QUESTIONNAIRE
from chat.models import Participant
from chat.questionnaire import default_instrument, questions_from_json, questions_to_json, save_questionnaire
from tests.builders import make_scenario
from tests.chat.builders import give_answers, make_chat_study, make_participant, sign_in

pytestmark = pytest.mark.django_db

TEXT = {"key": "note", "kind": "text", "prompt": "Any notes?"}


def problems(questions):
    with pytest.raises(ValidationError) as caught:
        questions_from_json(questions)
    return caught.value.messages


def test_the_default_is_the_shared_preset_and_reads_back_unchanged():
    instrument = default_instrument()

    assert (instrument.team, instrument.preset, instrument.name) == (None, CHAT_PRESET, CHAT_QUESTIONNAIRE.name)
    questions = questions_from_json(questions_to_json(instrument))
    assert [q.key for q in questions] == ["goal", "unresolved_confusion", "mutual_understanding", "comment"]
    assert [(q.low, q.high) for q in questions[:3]] == [(1, 5)] * 3


def test_a_question_gets_its_position_scope_and_defaults():
    (question,) = questions_from_json([{**TEXT, "prompt": " Any notes? "}])

    assert (question.key, question.position, question.scope, question.required, question.prompt) == (
        "note", 0, "episode", True, "Any notes?")


def test_an_empty_questionnaire_asks_nothing():
    assert questions_from_json([]) == []


def test_a_questionnaire_must_be_a_list():
    assert "must be a JSON list" in problems({"key": "goal"})[0]


def test_a_question_must_be_an_object():
    assert problems(["goal?"]) == ["Question 1: must be an object with a key, a kind, a prompt and options."]


def test_unknown_fields_are_named():
    (message,) = problems([{**TEXT, "lable": "typo"}])

    assert message.startswith("Question 1, field 'lable': not a field of a question; use key, kind, prompt")


@pytest.mark.parametrize(("question", "expected"), [
    ({**TEXT, "key": "a b"}, "Question 1, field 'key': use up to 50 letters, digits, hyphens or underscores"),
    ({**TEXT, "kind": "span"}, "Question 1, field 'kind': use one of likert"),
    ({**TEXT, "kind": "multiple_choice"}, "Question 1, field 'kind'"),
    ({**TEXT, "required": "yes"}, "Question 1, field 'required': must be true or false"),
    ({**TEXT, "options": []}, "Question 1, field 'options': must be an object"),
    ({**TEXT, "options": {"max_length": 0}}, "Question 1, field 'options.max_length': must be a whole number"),
    ({**TEXT, "dimension": "goal"}, "Question 1, field 'dimension': only Likert and slider questions"),
    ({"key": "a", "kind": "categorical", "prompt": "A?", "options": {"choices": [{"value": "x", "label": "X"}]}},
     "Question 1, field 'options.choices': give at least two choices"),
    ({"key": "a", "kind": "slider", "prompt": "A?", "options": {"min": 5, "max": 1, "step": 1}},
     "Question 1, field 'options.max': must be greater than min (5)"),
])
def test_each_problem_names_the_question_and_field(question, expected):
    assert any(message.startswith(expected) for message in problems([question])), problems([question])


def test_problems_in_several_questions_are_all_reported():
    messages = problems([{**TEXT, "prompt": ""}, {**TEXT, "key": "fine"}, {**TEXT, "key": "c", "kind": "nope"}])

    assert [message.split(",")[0] for message in messages] == ["Question 1", "Question 3"]


def test_saving_the_default_questions_asks_the_preset():
    study = make_chat_study(questions=[TEXT])

    save_questionnaire(study, questions_from_json(questions_to_json(default_instrument())))

    assert study.instrument == default_instrument()


def test_an_answered_preset_is_never_changed_by_a_study():
    study = make_chat_study()
    give_answers(make_participant(study, stage="done"), {"goal": "3"})
    questions = questions_to_json(default_instrument())
    questions[0]["prompt"] = "Did you get what you wanted?"

    save_questionnaire(study, questions_from_json(questions))

    assert study.instrument.team == study.team
    assert study.instrument.preset == CHAT_PRESET
    assert default_instrument().questions.get(key="goal").prompt == "How well did you reach your character's goal?"


def test_the_default_questions_of_a_group_chat_speak_of_everyone_not_of_one_other_side(client):
    study = make_chat_study(scenarios=[make_scenario(roles=3)], conditions=["none"], human_position=1)
    sign_in(client, make_participant(study, stage=Participant.Stage.QUESTIONNAIRE))

    page = client.get(reverse("chat:questionnaire", args=[study.slug])).content.decode()

    assert "How well did you and everyone else in the conversation understand each other?" in page
    assert "other side" not in page
