"""Reading an annotation form: answers per question and seat, drafts kept as typed, spans checked."""

import json
from itertools import count
from typing import Any

import pytest
from django.http import QueryDict

from annotator.answer_forms import field_name, parse_form
from benchmark.instruments.presets import install_preset
from benchmark.instruments.targets import Target
from benchmark.models import Instrument, Question
from tests.annotator.builders import make_question

pytestmark = pytest.mark.django_db

_numbers = count(1)
CHOICES = {"choices": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
LIKERT = {"anchors": [{"value": v, "label": f"L{v}", "description": f"Level {v}."} for v in range(1, 6)]}
SLIDER = {"min": 0, "max": 10, "step": 1}
SPAN = {"labels": ["error", "competency"], "attributes": ["emotions", "engagement"]}
PAIRWISE = {"choices": [{"value": "A", "label": "A"}, {"value": "B", "label": "B"}, {"value": "tie", "label": "Tie"}]}
TURNS = [20, 30, 10]  # content lengths of a three-turn transcript


def instrument_with(*questions: dict[str, Any]) -> Instrument:
    """An instrument holding the given questions (dicts of Question fields), positions in order."""
    instrument = Instrument.objects.create(name=f"Instrument {next(_numbers)}")
    for position, fields in enumerate(questions):
        make_question(instrument=instrument, position=position, **{"prompt": "A question?", **fields})
    return instrument


def parse(instrument: Instrument, data: dict[str, Any], *, complete: bool = True, **kwargs: Any):
    kwargs.setdefault("seats", [0, 1])
    kwargs.setdefault("turn_lengths", TURNS)
    return parse_form(instrument, data, complete=complete, **kwargs)


def spans(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


def span(**fields: Any) -> dict[str, Any]:
    values = {
        "label": "competency", "start_turn": 0, "end_turn": 0, "start_char": 2, "end_char": 8,
        "attributes": ["emotions"], "rationale": "Noticed the worry.", "correction": "",
    }
    return {**values, **fields}


# Field names


def test_field_names_follow_question_key_and_seat():
    question = Question(key="goal")
    assert field_name(question) == "answer-goal"
    assert field_name(question, Target.of_seat(1)) == "answer-goal-1"
    assert field_name(question, Target.of_seat(1), "rationale") == "rationale-goal-1"
    assert field_name(question, part="spans") == "spans-goal"


# parse_form: categorical and pairwise


def test_categorical_choice_is_read_as_its_value():
    parsed = parse(install_preset("socialveil"), {
        "answer-barrier_type": "semantic", "answer-unresolved_confusion": "4", "answer-mutual_understanding": "5",
    })
    assert parsed.ok and parsed.answer("barrier_type").value == "semantic"


def test_unknown_choice_is_refused_on_submit():
    parsed = parse(instrument_with({"key": "ok", "kind": "categorical", "options": CHOICES}), {"answer-ok": "maybe"})
    assert "choose one of: Yes, No" in parsed.errors["answer-ok"]


def test_missing_required_answer_is_refused_on_submit():
    parsed = parse(instrument_with({"key": "ok", "kind": "categorical", "options": CHOICES}), {})
    assert parsed.errors == {"answer-ok": "Ok: choose one of: Yes, No."}


def test_missing_required_answer_is_allowed_in_a_draft():
    parsed = parse(instrument_with({"key": "ok", "kind": "categorical", "options": CHOICES}), {}, complete=False)
    assert parsed.ok and parsed.answers == []


def test_optional_question_may_be_left_empty_on_submit():
    parsed = parse(instrument_with({"key": "ok", "kind": "categorical", "options": CHOICES, "required": False}), {})
    assert parsed.ok and parsed.answers == []


def test_pairwise_choice_is_read_as_its_value():
    instrument = instrument_with({"key": "better", "kind": "pairwise", "options": PAIRWISE})
    parsed = parse(instrument, {"answer-better": "tie"})
    assert parsed.ok and parsed.answer("better").value == "tie"


def test_pairwise_unknown_choice_is_refused():
    parsed = parse(instrument_with({"key": "better", "kind": "pairwise", "options": PAIRWISE}), {"answer-better": "C"})
    assert "answer-better" in parsed.errors


# parse_form: likert and slider


def test_likert_value_is_read_as_text_and_number():
    parsed = parse(instrument_with({"key": "calm", "kind": "likert", "options": LIKERT}), {"answer-calm": " 4 "})
    answer = parsed.answer("calm")
    assert parsed.ok and (answer.value, answer.number) == ("4", 4.0)


def test_likert_value_out_of_range_is_refused():
    parsed = parse(instrument_with({"key": "calm", "kind": "likert", "options": LIKERT}), {"answer-calm": "6"})
    assert parsed.errors == {"answer-calm": "Calm: choose a value from 1 to 5."}


def test_likert_value_between_anchors_is_refused():
    parsed = parse(instrument_with({"key": "calm", "kind": "likert", "options": LIKERT}), {"answer-calm": "2.5"})
    assert "answer-calm" in parsed.errors


def test_slider_is_read_for_every_seat():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER, "scope": "seat"})
    parsed = parse(instrument, {"answer-goal-0": "7.0", "answer-goal-1": "0"})
    assert parsed.ok
    assert [(a.target.seat, a.value, a.number) for a in parsed.answers] == [(0, "7", 7.0), (1, "0", 0.0)]


def test_slider_out_of_range_message_names_question_and_character():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER, "scope": "seat"})
    parsed = parse(instrument, {"answer-goal-0": "11", "answer-goal-1": "3"}, seat_labels={0: "Ana Ruiz"})
    assert parsed.errors == {"answer-goal-0": "Goal (Ana Ruiz): choose a value from 0 to 10."}


def test_slider_value_off_the_step_grid_is_refused():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER})
    parsed = parse(instrument, {"answer-goal": "6.5"})
    assert parsed.errors == {"answer-goal": "Goal: choose a whole number from 0 to 10."}


def test_slider_value_on_a_fractional_step_is_accepted():
    instrument = instrument_with({"key": "mood", "kind": "slider", "options": {"min": -1, "max": 1, "step": 0.25}})
    answer = parse(instrument, {"answer-mood": "-0.75"}).answer("mood")
    assert (answer.value, answer.number) == ("-0.75", -0.75)


def test_slider_value_that_is_not_a_number_is_refused():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER})
    assert "answer-goal" in parse(instrument, {"answer-goal": "nan"}).errors


def test_missing_required_rationale_is_refused_on_submit():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER, "rationale": "required"})
    parsed = parse(instrument, {"answer-goal": "5", "rationale-goal": "  "})
    assert list(parsed.errors) == ["rationale-goal"]


def test_rationale_is_read_with_the_answer():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER, "rationale": "required"})
    parsed = parse(instrument, {"answer-goal": "5", "rationale-goal": " Got halfway. "})
    assert parsed.ok and parsed.answer("goal").rationale == "Got halfway."


def test_sotopia_preset_reads_every_dimension_for_every_seat():
    instrument = install_preset("sotopia-eval")
    data = {}
    for question in instrument.questions.all():
        for seat in (0, 1):
            data[field_name(question, Target.of_seat(seat))] = str(question.options["max"])
            data[field_name(question, Target.of_seat(seat), "rationale")] = "Because."
    parsed = parse(instrument, data)
    assert parsed.ok and len(parsed.answers) == 14


# parse_form: drafts keep what was typed


def test_draft_keeps_typed_text_that_is_not_a_number():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER})
    parsed = parse(instrument, {"answer-goal": "7,"}, complete=False)
    answer = parsed.answer("goal")
    assert parsed.ok and (answer.value, answer.number) == ("7,", None)


def test_draft_keeps_an_out_of_range_value_without_a_number():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER})
    answer = parse(instrument, {"answer-goal": "12"}, complete=False).answer("goal")
    assert (answer.value, answer.number) == ("12", None)


def test_draft_sets_the_number_of_a_valid_value():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER})
    assert parse(instrument, {"answer-goal": "8"}, complete=False).answer("goal").number == 8.0


def test_draft_keeps_a_rationale_written_before_the_answer():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER, "rationale": "required"})
    answer = parse(instrument, {"rationale-goal": "She never asked "}, complete=False).answer("goal")
    assert (answer.value, answer.rationale) == ("", "She never asked ")


def test_draft_keeps_text_longer_than_the_limit():
    instrument = instrument_with({"key": "note", "kind": "text", "options": {"max_length": 5}})
    parsed = parse(instrument, {"answer-note": "far too long"}, complete=False)
    assert parsed.ok and parsed.answer("note").value == "far too long"


def test_nul_characters_are_dropped_from_drafts_answers_and_spans():
    """PostgreSQL stores no NUL in text: a draft keeping one as posted was a 500 there."""
    note = parse(instrument_with({"key": "note", "kind": "text"}), {"answer-note": "a\x00b"}, complete=False)
    marked = parse(span_instrument(), {"spans-marks": spans(span(rationale="Saw\x00 it."))})
    assert note.answer("note").value == "ab"
    assert marked.spans[0].rationale == "Saw it."


# parse_form: text


def test_text_answer_is_stripped_on_submit():
    parsed = parse(instrument_with({"key": "note", "kind": "text"}), {"answer-note": "  Fine.\n"})
    assert parsed.answer("note").value == "Fine."


def test_text_longer_than_max_length_is_refused_on_submit():
    instrument = instrument_with({"key": "note", "kind": "text", "options": {"max_length": 5}})
    parsed = parse(instrument, {"answer-note": "far too long"})
    assert parsed.errors == {"answer-note": "Note: keep the answer to 5 characters (it has 12)."}


def test_form_may_be_a_querydict():
    instrument = instrument_with({"key": "ok", "kind": "categorical", "options": CHOICES})
    assert parse(instrument, QueryDict("answer-ok=yes")).answer("ok").value == "yes"


# parse_form: spans


def span_instrument(**fields: Any) -> Instrument:
    return instrument_with({"key": "marks", "kind": "span", "options": SPAN, "required": False, **fields})


def test_valid_span_is_read():
    parsed = parse(span_instrument(), {"spans-marks": spans(span())})
    (read,) = parsed.spans
    assert parsed.ok
    assert (read.label, read.start_turn, read.end_turn, read.start_char, read.end_char, read.attributes) == (
        "competency", 0, 0, 2, 8, ["emotions"],
    )


def test_span_over_whole_turns_needs_no_character_offsets():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(start_turn=1, end_turn=2, start_char=None,
                                                             end_char=None))})
    assert parsed.ok and (parsed.spans[0].start_char, parsed.spans[0].end_char) == (None, None)


def test_span_across_turns_may_end_at_a_smaller_offset_than_it_starts():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(start_turn=0, end_turn=1, start_char=15, end_char=3))})
    assert parsed.ok


def test_overlapping_spans_are_allowed():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(), span(start_char=4, end_char=12))})
    assert parsed.ok and len(parsed.spans) == 2


def test_no_spans_is_fine_when_the_question_is_optional():
    assert parse(span_instrument(), {"spans-marks": "[]"}).ok


def test_required_span_question_needs_a_span_on_submit():
    parsed = parse(span_instrument(required=True), {"spans-marks": "[]"})
    assert "mark at least one span" in parsed.errors["spans-marks"]


@pytest.mark.parametrize("complete", [True, False])
def test_spans_that_are_not_json_are_refused(complete):
    parsed = parse(span_instrument(), {"spans-marks": "[{label: error"}, complete=complete)
    assert "could not be read" in parsed.errors["spans-marks"] and parsed.spans == []


def test_spans_nested_too_deeply_for_the_json_parser_are_refused():
    parsed = parse(span_instrument(), {"spans-marks": "[" * 1000 + "]" * 1000})
    assert "could not be read" in parsed.errors["spans-marks"] and parsed.spans == []


@pytest.mark.parametrize("complete", [True, False])
def test_span_on_a_turn_outside_the_transcript_is_refused(complete):
    parsed = parse(span_instrument(), {"spans-marks": spans(span(start_turn=2, end_turn=3))}, complete=complete)
    assert "outside the transcript" in parsed.errors["spans-marks"] and parsed.spans == []


@pytest.mark.parametrize("complete", [True, False])
def test_inverted_character_range_is_refused(complete):
    parsed = parse(span_instrument(), {"spans-marks": spans(span(start_char=8, end_char=2))}, complete=complete)
    assert "empty or reversed" in parsed.errors["spans-marks"] and parsed.spans == []


def test_inverted_turn_range_is_refused():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(start_turn=2, end_turn=1))})
    assert "before it starts" in parsed.errors["spans-marks"]


def test_character_offset_past_the_end_of_its_turn_is_refused():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(start_turn=2, end_turn=2, start_char=0, end_char=11))})
    assert "past the end of turn 2" in parsed.errors["spans-marks"]


def test_error_span_without_correction_is_refused_on_submit():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(label="error", correction=" "))})
    assert parsed.errors == {
        "spans-marks": "Marks: span 1: write what the agent should have done instead (correction)."
    }


def test_error_span_without_correction_is_kept_in_a_draft():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(label="error", correction=""))}, complete=False)
    assert parsed.ok and parsed.spans[0].correction == ""


def test_span_without_rationale_is_refused_on_submit():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(rationale=""))})
    assert "rationale" in parsed.errors["spans-marks"]


def test_span_with_an_unknown_attribute_is_refused():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(attributes=["emotions", "telepathy"]))})
    assert "'telepathy' is not one of this question's social attributes" in parsed.errors["spans-marks"]


def test_attribute_the_question_does_not_offer_is_refused():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(attributes=["social-norms"]))})
    assert "'social-norms'" in parsed.errors["spans-marks"]


def test_draft_drops_an_unknown_attribute_and_says_so():
    data = {"spans-marks": spans(span(attributes=["emotions", "telepathy"]))}
    parsed = parse(span_instrument(), data, complete=False)
    assert parsed.spans[0].attributes == ["emotions"] and "telepathy" in parsed.errors["spans-marks"]


def test_span_without_attribute_is_refused_on_submit():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(attributes=[]))})
    assert "choose at least one social attribute" in parsed.errors["spans-marks"]


def test_span_without_attribute_is_kept_in_a_draft():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(attributes=[]))}, complete=False)
    assert parsed.ok and parsed.spans[0].attributes == []


def test_span_with_an_unknown_label_is_refused():
    parsed = parse(span_instrument(), {"spans-marks": spans(span(label="oops"))}, complete=False)
    assert "label it error or competency" in parsed.errors["spans-marks"] and parsed.spans == []


def test_untouched_required_slider_is_refused_on_submit():
    instrument = instrument_with({"key": "goal", "kind": "slider", "options": SLIDER})
    parsed = parse(instrument, {"answer-goal": ""})
    assert "answer-goal" in parsed.errors


# parse_form: yes/no, multiple choice and multi-label

LABELS = {"choices": [{"value": v, "label": v.title()} for v in ("warm", "curt", "vague")]}


def test_yes_no_is_read_as_yes_or_no():
    instrument = instrument_with({"key": "reached", "kind": "yes_no"})

    assert parse(instrument, {"answer-reached": "no"}).answer("reached").value == "no"
    assert "choose one of: Yes, No" in parse(instrument, {"answer-reached": "nope"}).errors["answer-reached"]


def test_multiple_choice_is_read_like_a_categorical_choice():
    instrument = instrument_with({"key": "guess", "kind": "multiple_choice", "options": {**CHOICES, "correct": "no"}})

    assert parse(instrument, {"answer-guess": "yes"}).answer("guess").value == "yes"


def test_multi_label_reads_every_ticked_box_once_in_the_order_of_the_choices():
    instrument = instrument_with({"key": "tone", "kind": "multi_label", "options": LABELS, "rationale": "optional"})
    data = QueryDict(mutable=True)
    data.setlist("answer-tone", ["vague", "warm", "vague"])
    data["rationale-tone"] = "Both, at times."

    parsed = parse(instrument, data)

    assert parsed.ok and parsed.labels("tone") == ["warm", "vague"]
    assert {answer.rationale for answer in parsed.answers} == {"Both, at times."}


def test_multi_label_refuses_a_label_it_does_not_offer_and_too_few_picks():
    instrument = instrument_with({"key": "tone", "kind": "multi_label", "options": {**LABELS, "min": 2}})

    assert "'rude' is not one of the choices" in parse(instrument, {"answer-tone": ["rude"]}).errors["answer-tone"]
    assert "pick at least 2" in parse(instrument, {"answer-tone": ["warm"]}).errors["answer-tone"]
    assert "pick any of: Warm, Curt, Vague" in parse(instrument, {}).errors["answer-tone"]


def test_multi_label_is_read_for_every_seat_and_kept_as_posted_in_a_draft():
    instrument = instrument_with({"key": "tone", "kind": "multi_label", "options": LABELS, "scope": "seat"})

    parsed = parse(instrument, {"answer-tone-0": ["curt"], "answer-tone-1": ["rude", "warm"]}, complete=False)

    assert parsed.labels("tone", Target.of_seat(0)) == ["curt"]
    assert parsed.labels("tone", Target.of_seat(1)) == ["rude", "warm"]


# --- questions asked per turn (issue 22): one answer per agent turn, named by the turn


def test_a_per_turn_field_is_named_by_the_turn_index():
    question = instrument_with({"key": "helpful", "kind": "text", "scope": "turn"}).questions.get()
    assert field_name(question, Target.of_turn(3)) == "answer-helpful-t3"
    assert field_name(question, Target.of_turn(3), "rationale") == "rationale-helpful-t3"
    with pytest.raises(ValueError, match="span"):
        field_name(question, Target.of_span(1, 2))


def test_a_per_turn_question_is_read_once_for_each_agent_turn():
    anchors = {"anchors": [{"value": v, "label": str(v)} for v in range(1, 6)]}
    instrument = instrument_with(
        {"key": "helpful", "kind": "likert", "options": anchors, "scope": "turn"},
        {"key": "comment", "kind": "text", "scope": "turn", "required": False},
    )
    data = {"answer-helpful-t1": "4", "answer-helpful-t3": "2", "answer-comment-t3": "Curt.", "answer-helpful-t2": "5"}

    parsed = parse(instrument, data, agent_turns=[1, 3])

    assert parsed.ok
    assert [(a.question.key, a.target, a.value, a.number) for a in parsed.answers] == [
        ("helpful", Target.of_turn(1), "4", 4.0), ("helpful", Target.of_turn(3), "2", 2.0),
        ("comment", Target.of_turn(3), "Curt.", None),
    ]  # turn 2 is no agent turn: its field is not read


def test_a_missing_per_turn_answer_names_the_turn():
    anchors = {"anchors": [{"value": v, "label": str(v)} for v in range(1, 6)]}
    instrument = instrument_with({"key": "helpful", "kind": "likert", "options": anchors, "scope": "turn"})

    parsed = parse(instrument, {"answer-helpful-t1": "4"}, agent_turns=[1, 3])

    assert list(parsed.errors) == ["answer-helpful-t3"]
    assert "turn 4" in parsed.errors["answer-helpful-t3"]
