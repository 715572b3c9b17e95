"""Schemes are data: presets install cleanly, bad options are named, frozen schemes stay put, forms are read right."""

import json
from itertools import count
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.http import QueryDict

from annotator.models import Question, Scheme, SocialAttribute
from annotator.schemes import (
    PRESETS,
    check_editable,
    check_options,
    check_questions,
    field_name,
    freeze,
    install_preset,
    new_version,
    parse_form,
)
from benchmark.evaluation.rubrics import JUDGE_DIMENSIONS

pytestmark = pytest.mark.django_db

_numbers = count(1)
CHOICES = {"choices": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
LIKERT = {"anchors": [{"value": v, "label": f"L{v}", "description": f"Level {v}."} for v in range(1, 6)]}
SLIDER = {"min": 0, "max": 10, "step": 1}
SPAN = {"labels": ["error", "competency"], "attributes": ["emotions", "engagement"]}
PAIRWISE = {"choices": [{"value": "A", "label": "A"}, {"value": "B", "label": "B"}, {"value": "tie", "label": "Tie"}]}
TURNS = [20, 30, 10]  # content lengths of a three-turn transcript


def scheme_with(*questions: dict[str, Any]) -> Scheme:
    """A scheme holding the given questions (dicts of Question fields), positions in order."""
    scheme = Scheme.objects.create(name=f"Scheme {next(_numbers)}")
    for position, fields in enumerate(questions):
        fields = {"prompt": "A question?", **fields}
        Question.objects.create(scheme=scheme, position=position, **fields)
    return scheme


def parse(scheme: Scheme, data: dict[str, Any], *, complete: bool = True, **kwargs: Any):
    kwargs.setdefault("seats", [0, 1])
    kwargs.setdefault("turn_lengths", TURNS)
    return parse_form(scheme, data, complete=complete, **kwargs)


def spans(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


def span(**fields: Any) -> dict[str, Any]:
    values = {
        "label": "competency", "start_turn": 0, "end_turn": 0, "start_char": 2, "end_char": 8,
        "attributes": ["emotions"], "rationale": "Noticed the worry.", "correction": "",
    }
    return {**values, **fields}


# Presets


@pytest.mark.parametrize("key", PRESETS)
def test_every_preset_installs_and_passes_check_questions(key):
    scheme = install_preset(key)
    check_questions(scheme.questions.all())
    assert (scheme.name, scheme.version, scheme.preset) == (PRESETS[key].name, 1, key)
    assert scheme.questions.count() == len(PRESETS[key].questions)


@pytest.mark.parametrize("key", PRESETS)
def test_installing_a_preset_twice_returns_the_same_scheme(key):
    first = install_preset(key)
    assert install_preset(key) == first
    assert Scheme.objects.filter(preset=key).count() == 1


def test_install_preset_returns_the_newest_version():
    copy = new_version(install_preset("socialveil"))
    assert install_preset("socialveil") == copy


def test_unknown_preset_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="socialveil, sotopia-eval, shrec-spans, promediate"):
        install_preset("nope")


def test_preset_takes_the_next_version_when_its_name_is_taken():
    Scheme.objects.create(name=PRESETS["promediate"].name, version=1)
    assert install_preset("promediate").version == 2


def test_sotopia_sliders_use_the_dimension_ranges_per_seat_with_required_rationale():
    scheme = install_preset("sotopia-eval")
    for question in scheme.questions.all():
        _, dimension = JUDGE_DIMENSIONS[question.key]
        assert question.dimension == dimension.key and question.per_seat and question.rationale == "required"
        assert (question.options["min"], question.options["max"], question.options["step"]) == (
            dimension.low, dimension.high, 1,
        )
    assert scheme.questions.count() == 7


def test_socialveil_asks_barrier_then_two_likert_dimensions():
    barrier, confusion, understanding = install_preset("socialveil").questions.all()
    assert [c["value"] for c in barrier.options["choices"]] == ["semantic", "sociocultural", "emotional", "none"]
    assert barrier.truth == "episode.barrier"
    assert [a["value"] for a in confusion.options["anchors"]] == [1, 2, 3, 4, 5]
    assert (confusion.dimension, understanding.dimension) == ("unresolved_confusion", "mutual_understanding")


def test_shrec_spans_offer_every_seeded_attribute_and_are_optional():
    question = install_preset("shrec-spans").questions.get(key="spans")
    assert set(question.options["attributes"]) == set(SocialAttribute.objects.values_list("key", flat=True))
    assert question.options["labels"] == ["error", "competency"] and not question.required


# check_options


@pytest.mark.parametrize(
    ("kind", "options", "named"),
    [
        ("categorical", {"choices": [{"value": "a", "label": "A"}]}, "options.choices:"),
        ("categorical", {"choices": "a,b"}, "options.choices:"),
        ("categorical", {"choices": [{"value": "a", "label": "A"}, {"value": "a", "label": "B"}]},
         "options.choices[1].value"),
        ("categorical", {"choices": [{"value": "a"}, {"value": "b", "label": "B"}]}, "options.choices[0].label"),
        ("categorical", {"choices": [{"value": "", "label": "A"}, {"value": "b", "label": "B"}]},
         "options.choices[0].value"),
        ("likert", {"anchors": LIKERT["anchors"][:2]}, "options.anchors:"),
        ("likert", {"anchors": [LIKERT["anchors"][i] for i in (0, 1, 3)]}, "options.anchors[2].value"),
        ("likert", {"anchors": [{**LIKERT["anchors"][0], "value": 1.5}, *LIKERT["anchors"][1:]]},
         "options.anchors[0].value"),
        ("likert", {"anchors": [{**a, "description": ""} for a in LIKERT["anchors"]]},
         "options.anchors[1].description"),
        ("likert", {"anchor": LIKERT["anchors"]}, "options.anchor:"),
        ("slider", {"min": 5, "max": 5, "step": 1}, "options.max"),
        ("slider", {"min": 0, "max": 10, "step": 0}, "options.step"),
        ("slider", {"min": 0, "max": 10, "step": 3}, "options.step"),
        ("slider", {"max": 10, "step": 1}, "options.min"),
        ("slider", {**SLIDER, "labels": {"middle": "meh"}}, "options.labels.middle"),
        ("span", {**SPAN, "labels": ["mistake"]}, "options.labels[0]"),
        ("span", {**SPAN, "labels": []}, "options.labels:"),
        ("span", {**SPAN, "attributes": ["emotions", "telepathy"]}, "options.attributes[1]"),
        ("span", {**SPAN, "attributes": []}, "options.attributes:"),
        ("text", {"max_length": 0}, "options.max_length"),
        ("pairwise", {"choices": [{"value": "A", "label": "A"}]}, "options.choices:"),
        ("essay", {}, "kind:"),
    ],
)
def test_check_options_names_the_bad_option(kind, options, named):
    with pytest.raises(ValidationError) as refused:
        check_options(kind, options)
    assert any(named in message for message in refused.value.messages), refused.value.messages


@pytest.mark.parametrize(
    ("kind", "options"),
    [("categorical", CHOICES), ("likert", LIKERT), ("slider", {**SLIDER, "labels": {"min": "none", "max": "all"}}),
     ("span", SPAN), ("text", {}), ("text", {"max_length": 50}), ("pairwise", PAIRWISE)],
)
def test_check_options_accepts_good_options(kind, options):
    check_options(kind, options)


# check_questions


def test_scheme_without_questions_is_refused():
    with pytest.raises(ValidationError, match="at least one question"):
        check_questions(Scheme.objects.create(name="Empty").questions.all())


def test_scheme_with_a_gap_in_positions_is_refused():
    scheme = scheme_with({"key": "a", "kind": "text"})
    Question.objects.create(scheme=scheme, position=2, key="b", kind="text", prompt="B?")
    with pytest.raises(ValidationError, match="positions"):
        check_questions(scheme.questions.all())


def test_key_that_clashes_with_a_per_seat_field_is_refused():
    scheme = scheme_with(
        {"key": "goal", "kind": "slider", "options": SLIDER, "per_seat": True}, {"key": "goal-1", "kind": "text"}
    )
    with pytest.raises(ValidationError, match="goal-1: clashes"):
        check_questions(scheme.questions.all())


def test_unknown_dimension_is_refused():
    with pytest.raises(ValidationError, match="dimension"):
        scheme = scheme_with({"key": "x", "kind": "likert", "options": LIKERT, "dimension": "charisma"})
        check_questions(scheme.questions.all())


def test_truth_from_the_episode_barrier_needs_barrier_keys_as_choices():
    scheme = scheme_with({"key": "barrier", "kind": "categorical", "options": CHOICES, "truth": "episode.barrier"})
    with pytest.raises(ValidationError, match="no barrier has the key"):
        check_questions(scheme.questions.all())


# Freezing and versions


def test_frozen_scheme_refuses_edits():
    scheme = install_preset("socialveil")
    freeze(scheme)
    with pytest.raises(ValidationError, match="is frozen.*make a new version"):
        check_editable(scheme)


def test_unfrozen_scheme_is_editable():
    check_editable(install_preset("socialveil"))


def test_stale_copy_of_a_frozen_scheme_is_still_refused():
    scheme = install_preset("socialveil")
    stale = Scheme.objects.get(pk=scheme.pk)
    freeze(scheme)
    with pytest.raises(ValidationError, match="is frozen"):
        check_editable(stale)


def test_freezing_twice_keeps_the_first_time():
    scheme = install_preset("socialveil")
    freeze(scheme)
    first = scheme.frozen_at
    freeze(Scheme.objects.get(pk=scheme.pk))
    scheme.refresh_from_db()
    assert scheme.frozen_at == first


def test_new_version_copies_questions():
    scheme = install_preset("sotopia-eval")
    copy = new_version(scheme)
    fields = ("key", "position", "kind", "prompt", "help_text", "required", "per_seat", "rationale", "options",
              "dimension", "truth")
    assert list(copy.questions.values_list(*fields)) == list(scheme.questions.values_list(*fields))


def test_new_version_is_the_next_editable_version_of_the_same_name():
    scheme = install_preset("socialveil")
    freeze(scheme)
    copy = new_version(scheme)
    assert (copy.name, copy.version, copy.preset, copy.frozen) == (scheme.name, 2, "socialveil", False)
    check_editable(copy)


def test_new_version_of_an_older_version_does_not_collide():
    first = install_preset("socialveil")
    new_version(first)
    assert new_version(first).version == 3


# Field names


def test_field_names_follow_question_key_and_seat():
    question = Question(key="goal")
    assert field_name(question) == "answer-goal"
    assert field_name(question, 1) == "answer-goal-1"
    assert field_name(question, 1, "rationale") == "rationale-goal-1"
    assert field_name(question, part="spans") == "spans-goal"


# parse_form: categorical and pairwise


def test_categorical_choice_is_read_as_its_value():
    parsed = parse(install_preset("socialveil"), {
        "answer-barrier_type": "semantic", "answer-unresolved_confusion": "4", "answer-mutual_understanding": "5",
    })
    assert parsed.ok and parsed.answer("barrier_type").value == "semantic"


def test_unknown_choice_is_refused_on_submit():
    parsed = parse(scheme_with({"key": "ok", "kind": "categorical", "options": CHOICES}), {"answer-ok": "maybe"})
    assert "choose one of: Yes, No" in parsed.errors["answer-ok"]


def test_missing_required_answer_is_refused_on_submit():
    parsed = parse(scheme_with({"key": "ok", "kind": "categorical", "options": CHOICES}), {})
    assert parsed.errors == {"answer-ok": "Ok: choose one of: Yes, No."}


def test_missing_required_answer_is_allowed_in_a_draft():
    parsed = parse(scheme_with({"key": "ok", "kind": "categorical", "options": CHOICES}), {}, complete=False)
    assert parsed.ok and parsed.answers == []


def test_optional_question_may_be_left_empty_on_submit():
    parsed = parse(scheme_with({"key": "ok", "kind": "categorical", "options": CHOICES, "required": False}), {})
    assert parsed.ok and parsed.answers == []


def test_pairwise_choice_is_read_as_its_value():
    parsed = parse(scheme_with({"key": "better", "kind": "pairwise", "options": PAIRWISE}), {"answer-better": "tie"})
    assert parsed.ok and parsed.answer("better").value == "tie"


def test_pairwise_unknown_choice_is_refused():
    parsed = parse(scheme_with({"key": "better", "kind": "pairwise", "options": PAIRWISE}), {"answer-better": "C"})
    assert "answer-better" in parsed.errors


# parse_form: likert and slider


def test_likert_value_is_read_as_text_and_number():
    parsed = parse(scheme_with({"key": "calm", "kind": "likert", "options": LIKERT}), {"answer-calm": " 4 "})
    answer = parsed.answer("calm")
    assert parsed.ok and (answer.value, answer.number) == ("4", 4.0)


def test_likert_value_out_of_range_is_refused():
    parsed = parse(scheme_with({"key": "calm", "kind": "likert", "options": LIKERT}), {"answer-calm": "6"})
    assert parsed.errors == {"answer-calm": "Calm: choose a value from 1 to 5."}


def test_likert_value_between_anchors_is_refused():
    parsed = parse(scheme_with({"key": "calm", "kind": "likert", "options": LIKERT}), {"answer-calm": "2.5"})
    assert "answer-calm" in parsed.errors


def test_slider_is_read_for_every_seat():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER, "per_seat": True})
    parsed = parse(scheme, {"answer-goal-0": "7.0", "answer-goal-1": "0"})
    assert parsed.ok
    assert [(a.seat, a.value, a.number) for a in parsed.answers] == [(0, "7", 7.0), (1, "0", 0.0)]


def test_slider_out_of_range_message_names_question_and_character():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER, "per_seat": True})
    parsed = parse(scheme, {"answer-goal-0": "11", "answer-goal-1": "3"}, seat_labels={0: "Ana Ruiz"})
    assert parsed.errors == {"answer-goal-0": "Goal (Ana Ruiz): choose a value from 0 to 10."}


def test_slider_value_off_the_step_grid_is_refused():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER})
    parsed = parse(scheme, {"answer-goal": "6.5"})
    assert parsed.errors == {"answer-goal": "Goal: choose a whole number from 0 to 10."}


def test_slider_value_on_a_fractional_step_is_accepted():
    scheme = scheme_with({"key": "mood", "kind": "slider", "options": {"min": -1, "max": 1, "step": 0.25}})
    answer = parse(scheme, {"answer-mood": "-0.75"}).answer("mood")
    assert (answer.value, answer.number) == ("-0.75", -0.75)


def test_slider_value_that_is_not_a_number_is_refused():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER})
    assert "answer-goal" in parse(scheme, {"answer-goal": "nan"}).errors


def test_missing_required_rationale_is_refused_on_submit():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER, "rationale": "required"})
    parsed = parse(scheme, {"answer-goal": "5", "rationale-goal": "  "})
    assert list(parsed.errors) == ["rationale-goal"]


def test_rationale_is_read_with_the_answer():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER, "rationale": "required"})
    parsed = parse(scheme, {"answer-goal": "5", "rationale-goal": " Got halfway. "})
    assert parsed.ok and parsed.answer("goal").rationale == "Got halfway."


def test_sotopia_preset_reads_every_dimension_for_every_seat():
    scheme = install_preset("sotopia-eval")
    data = {}
    for question in scheme.questions.all():
        for seat in (0, 1):
            data[field_name(question, seat)] = str(question.options["max"])
            data[field_name(question, seat, "rationale")] = "Because."
    parsed = parse(scheme, data)
    assert parsed.ok and len(parsed.answers) == 14


# parse_form: drafts keep what was typed


def test_draft_keeps_typed_text_that_is_not_a_number():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER})
    parsed = parse(scheme, {"answer-goal": "7,"}, complete=False)
    answer = parsed.answer("goal")
    assert parsed.ok and (answer.value, answer.number) == ("7,", None)


def test_draft_keeps_an_out_of_range_value_without_a_number():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER})
    answer = parse(scheme, {"answer-goal": "12"}, complete=False).answer("goal")
    assert (answer.value, answer.number) == ("12", None)


def test_draft_sets_the_number_of_a_valid_value():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER})
    assert parse(scheme, {"answer-goal": "8"}, complete=False).answer("goal").number == 8.0


def test_draft_keeps_a_rationale_written_before_the_answer():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER, "rationale": "required"})
    answer = parse(scheme, {"rationale-goal": "She never asked "}, complete=False).answer("goal")
    assert (answer.value, answer.rationale) == ("", "She never asked ")


def test_draft_keeps_text_longer_than_the_limit():
    scheme = scheme_with({"key": "note", "kind": "text", "options": {"max_length": 5}})
    parsed = parse(scheme, {"answer-note": "far too long"}, complete=False)
    assert parsed.ok and parsed.answer("note").value == "far too long"


# parse_form: text


def test_text_answer_is_stripped_on_submit():
    parsed = parse(scheme_with({"key": "note", "kind": "text"}), {"answer-note": "  Fine.\n"})
    assert parsed.answer("note").value == "Fine."


def test_text_longer_than_max_length_is_refused_on_submit():
    scheme = scheme_with({"key": "note", "kind": "text", "options": {"max_length": 5}})
    parsed = parse(scheme, {"answer-note": "far too long"})
    assert parsed.errors == {"answer-note": "Note: keep the answer to 5 characters (it has 12)."}


def test_form_may_be_a_querydict():
    scheme = scheme_with({"key": "ok", "kind": "categorical", "options": CHOICES})
    assert parse(scheme, QueryDict("answer-ok=yes")).answer("ok").value == "yes"


# parse_form: spans


def span_scheme(**fields: Any) -> Scheme:
    return scheme_with({"key": "marks", "kind": "span", "options": SPAN, "required": False, **fields})


def test_valid_span_is_read():
    parsed = parse(span_scheme(), {"spans-marks": spans(span())})
    (read,) = parsed.spans
    assert parsed.ok
    assert (read.label, read.start_turn, read.end_turn, read.start_char, read.end_char, read.attributes) == (
        "competency", 0, 0, 2, 8, ["emotions"],
    )


def test_span_over_whole_turns_needs_no_character_offsets():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(start_turn=1, end_turn=2, start_char=None,
                                                             end_char=None))})
    assert parsed.ok and (parsed.spans[0].start_char, parsed.spans[0].end_char) == (None, None)


def test_span_across_turns_may_end_at_a_smaller_offset_than_it_starts():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(start_turn=0, end_turn=1, start_char=15, end_char=3))})
    assert parsed.ok


def test_overlapping_spans_are_allowed():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(), span(start_char=4, end_char=12))})
    assert parsed.ok and len(parsed.spans) == 2


def test_no_spans_is_fine_when_the_question_is_optional():
    assert parse(span_scheme(), {"spans-marks": "[]"}).ok


def test_required_span_question_needs_a_span_on_submit():
    parsed = parse(span_scheme(required=True), {"spans-marks": "[]"})
    assert "mark at least one span" in parsed.errors["spans-marks"]


@pytest.mark.parametrize("complete", [True, False])
def test_spans_that_are_not_json_are_refused(complete):
    parsed = parse(span_scheme(), {"spans-marks": "[{label: error"}, complete=complete)
    assert "could not be read" in parsed.errors["spans-marks"] and parsed.spans == []


@pytest.mark.parametrize("complete", [True, False])
def test_span_on_a_turn_outside_the_transcript_is_refused(complete):
    parsed = parse(span_scheme(), {"spans-marks": spans(span(start_turn=2, end_turn=3))}, complete=complete)
    assert "outside the transcript" in parsed.errors["spans-marks"] and parsed.spans == []


@pytest.mark.parametrize("complete", [True, False])
def test_inverted_character_range_is_refused(complete):
    parsed = parse(span_scheme(), {"spans-marks": spans(span(start_char=8, end_char=2))}, complete=complete)
    assert "empty or reversed" in parsed.errors["spans-marks"] and parsed.spans == []


def test_inverted_turn_range_is_refused():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(start_turn=2, end_turn=1))})
    assert "before it starts" in parsed.errors["spans-marks"]


def test_character_offset_past_the_end_of_its_turn_is_refused():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(start_turn=2, end_turn=2, start_char=0, end_char=11))})
    assert "past the end of turn 2" in parsed.errors["spans-marks"]


def test_error_span_without_correction_is_refused_on_submit():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(label="error", correction=" "))})
    assert parsed.errors == {
        "spans-marks": "Marks: span 1: write what the agent should have done instead (correction)."
    }


def test_error_span_without_correction_is_kept_in_a_draft():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(label="error", correction=""))}, complete=False)
    assert parsed.ok and not parsed.spans[0].fits_span_table


def test_span_without_rationale_is_refused_on_submit():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(rationale=""))})
    assert "rationale" in parsed.errors["spans-marks"]


def test_span_with_an_unknown_attribute_is_refused():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(attributes=["emotions", "telepathy"]))})
    assert "'telepathy' is not one of this question's social attributes" in parsed.errors["spans-marks"]


def test_attribute_the_question_does_not_offer_is_refused():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(attributes=["social-norms"]))})
    assert "'social-norms'" in parsed.errors["spans-marks"]


def test_draft_drops_an_unknown_attribute_and_says_so():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(attributes=["emotions", "telepathy"]))}, complete=False)
    assert parsed.spans[0].attributes == ["emotions"] and "telepathy" in parsed.errors["spans-marks"]


def test_span_without_attribute_is_refused_on_submit():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(attributes=[]))})
    assert "choose at least one social attribute" in parsed.errors["spans-marks"]


def test_span_without_attribute_is_kept_in_a_draft():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(attributes=[]))}, complete=False)
    assert parsed.ok and not parsed.spans[0].is_complete


def test_span_with_an_unknown_label_is_refused():
    parsed = parse(span_scheme(), {"spans-marks": spans(span(label="oops"))}, complete=False)
    assert "label it error or competency" in parsed.errors["spans-marks"] and parsed.spans == []


def test_untouched_required_slider_is_refused_on_submit():
    scheme = scheme_with({"key": "goal", "kind": "slider", "options": SLIDER})
    parsed = parse(scheme, {"answer-goal": ""})
    assert "answer-goal" in parsed.errors
