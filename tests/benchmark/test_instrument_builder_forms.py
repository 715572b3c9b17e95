"""The builder's question form: fields drawn from the kind's options, each option read from plain text, each problem
on its field in the kind's own words."""

import pytest

from benchmark.instrument_builder.forms import OPTION_PREFIX, QuestionForm
from benchmark.instrument_builder.option_fields import ChoicesEditor, LinesEditor, PointsEditor, editor_for
from benchmark.instrument_builder.transfer import create_instrument
from benchmark.instruments.kinds import all_kinds, get_kind
from tests.builders import default_team

pytestmark = pytest.mark.django_db

LIKERT_POINTS = "1 | Not at all | No sign of it\n2\n3 | Somewhat | Some\n4\n5 | Completely | Throughout"


def form(kind, instrument=None, question=None, **data):
    instrument = instrument or create_instrument(default_team(), "Form test", "", [])
    base = {"key": "q", "prompt": "How?", "scope": "episode", "rationale": "none", "required": "on"}
    return QuestionForm({**base, **data}, kind=get_kind(kind), instrument=instrument, question=question)


@pytest.mark.parametrize("kind", all_kinds(), ids=lambda kind: kind.name)
def test_every_kind_gets_one_field_per_option_it_takes(kind):
    fields = QuestionForm(kind=kind, instrument=create_instrument(default_team(), "K", "", [])).fields

    assert sorted(name for name in fields if name.startswith(OPTION_PREFIX)) == sorted(
        OPTION_PREFIX + name for name in kind.option_names)


def test_a_likert_scale_is_read_from_lines_of_points():
    filled = form("likert", option_anchors=LIKERT_POINTS)

    assert filled.is_valid(), filled.errors
    assert filled.cleaned_data["options"]["anchors"][:2] == [
        {"value": 1, "label": "Not at all", "description": "No sign of it"}, {"value": 2}]
    assert filled.build(filled.cleaned_data["options"]).high == 5


def test_points_that_do_not_rise_by_one_are_refused_on_the_anchors_line():
    filled = form("likert", option_anchors="1 | Low | Low\n3 | Mid | Mid\n4 | High | High")

    assert not filled.is_valid()
    assert "Line 2 (value): expected 2" in " ".join(filled.errors[OPTION_PREFIX + "anchors"])


def test_a_point_that_is_no_number_is_named_by_its_line():
    filled = form("likert", option_anchors="1 | Low | Low\nmid | Mid | Mid")

    assert filled.errors[OPTION_PREFIX + "anchors"] == [
        "Line 2: start with the point's whole number, e.g. “2 | label | description”."]


def test_a_correct_answer_must_be_one_of_the_choices():
    filled = form("multiple_choice", option_choices="a | Alice\nb | Bob", option_correct="c")

    assert not filled.is_valid()
    assert "'c' is not the value of one of the choices" in filled.errors[OPTION_PREFIX + "correct"][0]


def test_choices_and_the_correct_one_are_stored_as_the_kind_wants_them():
    filled = form("multiple_choice", option_choices="a | Alice | the host\nBob", option_correct="a")

    assert filled.is_valid(), filled.errors
    assert filled.cleaned_data["options"] == {
        "choices": [{"value": "a", "label": "Alice", "description": "the host"}, {"value": "Bob", "label": "Bob"}],
        "correct": "a"}


def test_a_scope_the_kind_refuses_is_shown_on_the_scope():
    filled = form("item_choice", option_source="scenario.probe", option_position="0", scope="seat")

    assert "asked once per item" in filled.errors["scope"][0]


def test_a_key_another_question_has_is_refused():
    instrument = create_instrument(default_team(), "Keys", "", [])
    first = form("yes_no", instrument=instrument)
    assert first.is_valid()
    from benchmark.instrument_builder.editing import save_question
    save_question(instrument, first.build(first.cleaned_data["options"]))

    second = form("yes_no", instrument=instrument)

    assert second.errors["key"] == ["Another question of this instrument has the key “q”."]


def test_a_slider_number_that_is_not_a_number_is_named():
    filled = form("slider", option_min="0", option_max="ten", option_step="1")

    assert filled.errors[OPTION_PREFIX + "max"] == ["“ten” is not a number."]


def test_editing_shows_the_stored_options_as_text():
    instrument = create_instrument(default_team(), "Shown", "", [])
    filled = form("likert", instrument=instrument, option_anchors=LIKERT_POINTS)
    assert filled.is_valid()
    from benchmark.instrument_builder.editing import save_question
    question = save_question(instrument, filled.build(filled.cleaned_data["options"]))

    again = QuestionForm(kind=get_kind("likert"), instrument=instrument, question=question)

    assert again.initial[OPTION_PREFIX + "anchors"] == LIKERT_POINTS
    assert again.initial["prompt"] == "How?"


@pytest.mark.parametrize(("editor", "value"), [
    (PointsEditor(), [{"value": 1, "label": "Low", "description": "L"}, {"value": 2}, {"value": 3, "label": "High",
                                                                                      "description": "H"}]),
    (ChoicesEditor(), [{"value": "a", "label": "A"}, {"value": "b", "label": "Bee", "description": "second"}]),
    (LinesEditor(), {"min": "Not at all", "max": "Completely"}),
    (LinesEditor(), ["error", "competency"]),
    (editor_for("max_length"), 500),
    (editor_for("step"), 0.5),
    (editor_for("not_applicable"), {"label": "Not applicable", "description": "It never arose"}),
])
def test_each_editor_reads_back_what_it_writes(editor, value):
    assert editor.read(editor.to_text(value)) == value
