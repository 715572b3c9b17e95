"""The questionnaire schema researchers write: what is accepted, and how problems are named."""

import pytest
from django.core.exceptions import ValidationError

from chat.models import default_questionnaire
from chat.questionnaire import questionnaire_form, scale_choices, validate_questionnaire


def problems(questions):
    with pytest.raises(ValidationError) as caught:
        validate_questionnaire(questions)
    return caught.value.messages


def test_the_default_questionnaire_is_valid():
    assert validate_questionnaire(default_questionnaire()) == default_questionnaire()


def test_defaults_are_filled_in():
    (question,) = validate_questionnaire([{"key": "note", "kind": "text", "label": " Any notes? "}])

    assert question == {"key": "note", "kind": "text", "label": "Any notes?", "required": True}


def test_an_empty_questionnaire_is_allowed():
    assert validate_questionnaire([]) == []


def test_a_questionnaire_must_be_a_list():
    assert "must be a JSON list" in problems({"key": "goal"})[0]


def test_a_question_must_be_an_object():
    assert problems(["goal?"]) == ["Question 1: must be an object with key, kind and label, not a string."]


def test_unknown_fields_are_named():
    (message,) = problems([{"key": "a", "kind": "text", "label": "A", "lable": "typo"}])

    assert message == "Question 1: unknown field 'lable' for a text question."


@pytest.mark.parametrize(("question", "expected"), [
    ({"key": "1st", "kind": "text", "label": "A"}, "Question 1, field 'key'"),
    ({"key": "a", "kind": "likert", "label": "A", "low": 1, "high": 20}, "at most 11 points"),
    ({"key": "a", "kind": "likert", "label": "A", "low": 1.5, "high": 5}, "field 'low': must be a whole number"),
    ({"key": "a", "kind": "likert", "label": "A", "low": 1, "high": 5, "low_label": 3}, "field 'low_label'"),
    ({"key": "a", "kind": "choice", "label": "A", "options": ["only"]}, "at least two"),
    ({"key": "a", "kind": "choice", "label": "A", "options": ["x", "x"]}, "differ"),
    ({"key": "a", "kind": "text", "label": "A", "max_chars": 0}, "field 'max_chars'"),
    ({"key": "a", "kind": "text", "label": "A", "required": "yes"}, "field 'required': must be true or false"),
])
def test_each_problem_names_the_question_and_field(question, expected):
    assert any(expected in message for message in problems([question]))


def test_problems_in_several_questions_are_all_reported():
    messages = problems([
        {"key": "a", "kind": "text", "label": ""},
        {"key": "b", "kind": "text", "label": "fine"},
        {"key": "c", "kind": "nope", "label": "C"},
    ])

    assert [message.split(",")[0].split(":")[0] for message in messages] == ["Question 1", "Question 3"]


def test_likert_end_labels_go_on_the_end_points():
    question = {"key": "a", "kind": "likert", "label": "A", "low": 0, "high": 3, "low_label": "no", "high_label": "yes"}

    assert scale_choices(question) == [(0, "0 – no"), (1, "1"), (2, "2"), (3, "3 – yes")]


def test_an_unanswered_optional_likert_question_is_stored_as_none():
    questions = validate_questionnaire([{"key": "a", "kind": "likert", "label": "A", "low": 1, "high": 5,
                                         "required": False}])

    form = questionnaire_form(questions, {})

    assert form.is_valid()
    assert form.cleaned_data == {"a": None}


def test_an_overlong_text_answer_is_refused_by_number():
    questions = validate_questionnaire([{"key": "a", "kind": "text", "label": "A", "max_chars": 5}])

    form = questionnaire_form(questions, {"a": "far too long"})

    assert not form.is_valid()
    assert form.errors["a"] == ["Question 1: please keep the answer under 5 characters."]
