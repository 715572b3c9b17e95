"""Instruments are data: presets install cleanly, bad options are named, frozen instruments stay put."""

from itertools import count
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from benchmark.instruments.checks import check_options, check_questions
from benchmark.instruments.presets import PRESETS, install_preset
from benchmark.instruments.rubrics import JUDGE_DIMENSIONS
from benchmark.instruments.versions import check_editable, freeze, new_version
from benchmark.models import Instrument, Question, SocialAttribute
from tests.annotator.builders import make_question

pytestmark = pytest.mark.django_db

_numbers = count(1)
CHOICES = {"choices": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
LIKERT = {"anchors": [{"value": v, "label": f"L{v}", "description": f"Level {v}."} for v in range(1, 6)]}
SLIDER = {"min": 0, "max": 10, "step": 1}
SPAN = {"labels": ["error", "competency"], "attributes": ["emotions", "engagement"]}
PAIRWISE = {"choices": [{"value": "A", "label": "A"}, {"value": "B", "label": "B"}, {"value": "tie", "label": "Tie"}]}


def instrument_with(*questions: dict[str, Any]) -> Instrument:
    """An instrument holding the given questions (dicts of Question fields), positions in order."""
    instrument = Instrument.objects.create(name=f"Instrument {next(_numbers)}")
    for position, fields in enumerate(questions):
        make_question(instrument=instrument, position=position, **{"prompt": "A question?", **fields})
    return instrument


# Presets


@pytest.mark.parametrize("key", PRESETS)
def test_every_preset_installs_and_passes_check_questions(key):
    instrument = install_preset(key)
    check_questions(instrument.questions.all())
    assert (instrument.name, instrument.version, instrument.preset) == (PRESETS[key].name, 1, key)
    assert instrument.questions.count() == len(PRESETS[key].questions)


@pytest.mark.parametrize("key", PRESETS)
def test_installing_a_preset_twice_returns_the_same_instrument(key):
    first = install_preset(key)
    assert install_preset(key) == first
    assert Instrument.objects.filter(preset=key).count() == 1


def test_install_preset_returns_the_newest_version():
    copy = new_version(install_preset("socialveil"))
    assert install_preset("socialveil") == copy


def test_unknown_preset_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="socialveil, sotopia-eval, shrec-spans, promediate"):
        install_preset("nope")


def test_preset_takes_the_next_version_when_its_name_is_taken():
    Instrument.objects.create(name=PRESETS["promediate"].name, version=1)
    assert install_preset("promediate").version == 2


def test_sotopia_sliders_use_the_dimension_ranges_per_seat_with_required_rationale():
    instrument = install_preset("sotopia-eval")
    for question in instrument.questions.all():
        _, dimension = JUDGE_DIMENSIONS[question.key]
        assert question.dimension == dimension.key and question.per_seat and question.rationale == "required"
        assert (question.options["min"], question.options["max"], question.options["step"]) == (
            dimension.low, dimension.high, 1,
        )
    assert instrument.questions.count() == 7


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


def test_instrument_without_questions_is_refused():
    with pytest.raises(ValidationError, match="at least one question"):
        check_questions(Instrument.objects.create(name="Empty").questions.all())


def test_instrument_with_a_gap_in_positions_is_refused():
    instrument = instrument_with({"key": "a", "kind": "text"})
    Question.objects.create(instrument=instrument, position=2, key="b", kind="text", prompt="B?")
    with pytest.raises(ValidationError, match="positions"):
        check_questions(instrument.questions.all())


def test_key_that_clashes_with_a_per_seat_field_is_refused():
    instrument = instrument_with(
        {"key": "goal", "kind": "slider", "options": SLIDER, "scope": "seat"}, {"key": "goal-1", "kind": "text"}
    )
    with pytest.raises(ValidationError, match="goal-1: clashes"):
        check_questions(instrument.questions.all())


def test_a_dimension_that_is_not_a_name_is_refused():
    with pytest.raises(ValidationError, match="dimension: 'two words' is not a name"):
        check_questions(instrument_with({"key": "x", "kind": "likert", "options": LIKERT, "dimension": "two words"})
                        .questions.all())


def test_a_judge_dimension_must_be_asked_as_the_judge_asks_it():
    with pytest.raises(ValidationError, match="only Likert and slider questions can measure a dimension"):
        check_questions(instrument_with({"key": "x", "kind": "text", "dimension": "goal", "scope": "seat"})
                        .questions.all())


def test_a_researchers_own_dimension_links_questions_of_any_kind():
    check_questions(instrument_with({"key": "x", "kind": "multiple_choice", "options": {**CHOICES, "correct": "yes"},
                                     "dimension": "probe_goal"}).questions.all())


def test_truth_from_the_episode_barrier_needs_barrier_keys_as_choices():
    instrument = instrument_with(
        {"key": "barrier", "kind": "categorical", "options": CHOICES, "truth": "episode.barrier"}
    )
    with pytest.raises(ValidationError, match="no barrier has the key"):
        check_questions(instrument.questions.all())


# Freezing and versions


def test_frozen_instrument_refuses_edits():
    instrument = install_preset("socialveil")
    freeze(instrument)
    with pytest.raises(ValidationError, match="is frozen.*make a new version"):
        check_editable(instrument)


def test_unfrozen_instrument_is_editable():
    check_editable(install_preset("socialveil"))


def test_stale_copy_of_a_frozen_instrument_is_still_refused():
    instrument = install_preset("socialveil")
    stale = Instrument.objects.get(pk=instrument.pk)
    freeze(instrument)
    with pytest.raises(ValidationError, match="is frozen"):
        check_editable(stale)


def test_freezing_twice_keeps_the_first_time():
    instrument = install_preset("socialveil")
    freeze(instrument)
    first = instrument.frozen_at
    freeze(Instrument.objects.get(pk=instrument.pk))
    instrument.refresh_from_db()
    assert instrument.frozen_at == first


def test_new_version_copies_questions():
    instrument = install_preset("sotopia-eval")
    copy = new_version(instrument)
    fields = ("key", "position", "kind", "prompt", "help_text", "required", "scope", "rationale", "options", "low",
              "high", "dimension", "truth")
    assert list(copy.questions.values_list(*fields)) == list(instrument.questions.values_list(*fields))


def test_new_version_is_the_next_editable_version_of_the_same_name():
    instrument = install_preset("socialveil")
    freeze(instrument)
    copy = new_version(instrument)
    assert (copy.name, copy.version, copy.preset, copy.frozen) == (instrument.name, 2, "socialveil", False)
    check_editable(copy)


def test_new_version_of_an_older_version_does_not_collide():
    first = install_preset("socialveil")
    new_version(first)
    assert new_version(first).version == 3


# The kinds beyond the annotation presets'


MULTIPLE = {**CHOICES, "correct": "yes"}
LABELS = {"choices": [{"value": v, "label": v.title()} for v in ("warm", "curt", "vague")]}


@pytest.mark.parametrize(
    ("kind", "options", "named"),
    [
        ("yes_no", {"choices": CHOICES["choices"]}, "options.choices: yes_no questions take no such option"),
        ("multiple_choice", CHOICES, "options.correct: give the value"),
        ("multiple_choice", {**CHOICES, "correct": "maybe"}, "options.correct: 'maybe' is not the value"),
        ("multiple_choice", {"choices": CHOICES["choices"][:1], "correct": "yes"}, "options.choices:"),
        ("multi_label", {**LABELS, "min": 4}, "options.min: must be a whole number from 0 to the number of choices"),
        ("multi_label", {**LABELS, "min": 2, "max": 1}, "options.max: must not be less than min"),
        ("multi_label", {**LABELS, "max": 0}, "options.max: must allow at least one pick"),
        ("multi_label", {**LABELS, "max": 1.5}, "options.max: must be a whole number"),
        ("multi_label", {**LABELS, "correct": "warm"}, "options.correct: multi_label questions take no such option"),
    ],
)
def test_the_new_kinds_name_their_bad_options(kind, options, named):
    with pytest.raises(ValidationError) as refused:
        check_options(kind, options)
    assert any(named in message for message in refused.value.messages), refused.value.messages


@pytest.mark.parametrize(
    ("kind", "options"),
    [("yes_no", {}), ("multiple_choice", MULTIPLE), ("multi_label", LABELS),
     ("multi_label", {**LABELS, "min": 1, "max": 2}), ("multi_label", {**LABELS, "min": 0})],
)
def test_the_new_kinds_accept_good_options(kind, options):
    check_options(kind, options)


def test_check_questions_sets_the_bounds_of_numeric_questions_from_their_options():
    questions = [
        Question(key="likert", position=0, kind="likert", prompt="?", options=LIKERT),
        Question(key="slider", position=1, kind="slider", prompt="?", options={"min": -5, "max": 5, "step": 0.5}),
        Question(key="choice", position=2, kind="categorical", prompt="?", options=CHOICES, low=0, high=1),
    ]

    check_questions(questions)

    assert [(q.low, q.high) for q in questions] == [(1, 5), (-5, 5), (None, None)]


def test_check_questions_leaves_the_bounds_alone_when_it_refuses():
    question = Question(key="likert", position=0, kind="likert", prompt="?", options={"anchors": []})

    with pytest.raises(ValidationError):
        check_questions([question])
    assert (question.low, question.high) == (None, None)


@pytest.mark.parametrize(("fields", "named"), [
    ({"kind": "span", "options": SPAN, "scope": "goal"}, "span questions cover the whole transcript"),
    ({"kind": "slider", "options": SLIDER, "scope": "goal", "dimension": "goal"}, "goal is scored per seat"),
    ({"kind": "text", "scope": "sentence"}, "'sentence' is not a scope"),  # "turn" and "span" are scopes since 0024
])
def test_scopes_are_checked(fields, named):
    question = Question(key="q", position=0, prompt="?", **{"options": {}, **fields})

    with pytest.raises(ValidationError) as refused:
        check_questions([question])
    assert any(named in message for message in refused.value.messages), refused.value.messages


def test_a_question_asked_per_goal_is_a_valid_question():
    check_questions([Question(key="reached", position=0, kind="yes_no", prompt="Reached?", scope="goal")])


def test_presets_are_shared_and_a_teams_own_copy_is_not_taken_for_the_preset():
    from tests.builders import default_team

    mine = Instrument.objects.create(name="Our SocialVeil", preset="socialveil", team=default_team())

    preset = install_preset("socialveil")

    assert preset.team is None and preset != mine


def test_a_new_version_stays_with_its_team():
    from tests.builders import default_team

    own = instrument_with({"key": "note", "kind": "text"})
    own.team = default_team()
    own.save()

    assert new_version(own).team == default_team()


def test_every_preset_question_has_its_bounds():
    for key in PRESETS:
        for question in install_preset(key).questions.all():
            expected = (None, None)
            if question.kind == "likert":
                expected = (1, 5)
            elif question.kind == "slider":
                expected = (question.options["min"], question.options["max"])
            assert (question.low, question.high) == expected, question
