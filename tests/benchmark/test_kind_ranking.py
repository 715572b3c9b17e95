"""The ranking kind: an order of all the options, stored as one JSON value; majority by mean rank; Kendall's W."""

import json
from types import SimpleNamespace

import pandas as pd
import pytest
from django.db import IntegrityError, connection, transaction

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.kinds.checks import kind_problems
from benchmark.instruments.kinds.ranking import Ranking, ordinal
from benchmark.models import Answer, Instrument, Question, Respondent, Response
from tests.builders import make_episode

CHOICES = [
    {"value": "calm", "label": "Calm"},
    {"value": "firm", "label": "Firm"},
    {"value": "warm", "label": "Warm", "description": "friendly"},
]


def question(choices=CHOICES) -> Question:
    return Question(key="tone", kind="ranking", prompt="Order the replies", options={"choices": choices})


@pytest.fixture
def kind() -> Ranking:
    return get_kind("ranking")


def test_the_registry_finds_it(kind):
    assert isinstance(kind, Ranking) and not kind.numeric and not kind.multi_valued


def test_options_need_two_distinct_choices(kind):
    assert kind.option_problems({"choices": CHOICES}) == []
    assert "options.choices: give at least two choices" in kind.option_problems({"choices": CHOICES[:1]})
    assert any("already the value" in p for p in kind.option_problems({"choices": [CHOICES[0], CHOICES[0]]}))


def test_a_full_order_is_stored_as_canonical_json(kind):
    value, number, problem = kind.check_value(question(), '["warm","calm", "firm"]')
    assert (value, number, problem) == ('["warm", "calm", "firm"]', None, "")
    assert kind.order_of(value) == ["warm", "calm", "firm"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("calm, firm, warm", "give the order as a JSON list"),
        ('{"a": 1}', "list of the choices' values"),
        ('["calm", "firm"]', "missing: Warm"),
        ('["calm", "calm", "firm", "warm"]', "'calm' is placed twice"),
        ('["calm", "firm", "rude"]', "'rude' is not one of the choices"),
    ],
)
def test_a_bad_order_says_what_is_wrong(kind, text, message):
    _, _, problem = kind.check_value(question(), text)
    assert message in problem
    assert "put all of these in order, best first: Calm, Firm, Warm." in problem


def test_a_forms_posted_places_become_one_value(kind):
    assert kind.check_values(question(), ["firm", "warm", "calm"]) == (['["firm", "warm", "calm"]'], "")
    # The whole order in one field, as stored (an external rating's CSV cell).
    assert kind.check_values(question(), ['["firm","warm","calm"]']) == (['["firm", "warm", "calm"]'], "")
    stored, problem = kind.check_values(question(), ["firm", "", "calm"])
    assert stored == ['["firm", "calm"]'] and "missing: Warm" in problem  # a draft keeps what was placed


def test_a_models_reply_is_a_json_list(kind):
    assert "a JSON list of all of these values in order, best first" in kind.instruction(question())
    reply = kind.parse_reply(question(), ["warm", "firm", "calm"])
    assert (reply.value, reply.problem) == ('["warm", "firm", "calm"]', "")
    assert kind.parse_reply(question(), '["calm", "firm", "warm"]').value == '["calm", "firm", "warm"]'
    wrong = kind.parse_reply(question(), "warm")
    assert wrong.value == "" and "JSON list" in wrong.problem
    assert "give a JSON list" in kind.parse_reply(question(), {"calm": 1}).problem


def test_the_majority_is_the_order_by_mean_rank(kind):
    rows = [SimpleNamespace(value=json.dumps(order)) for order in (
        ["calm", "firm", "warm"], ["firm", "calm", "warm"], ["calm", "warm", "firm"], ["not", "an", "order"]
    )]
    assert kind.majority(question(), rows, 4) == [('["calm", "firm", "warm"]', None)]
    assert kind.majority(question(), rows[3:], 1) == []


def test_agreement_is_kendalls_w_per_item(kind):
    orders = [["calm", "firm", "warm"], ["calm", "firm", "warm"], ["warm", "firm", "calm"], ["calm", "firm", "warm"]]
    table = pd.DataFrame({
        "item": ["e1", "e1", "e2", "e2"], "annotator": ["a", "b", "a", "b"],
        "value": [json.dumps(order) for order in orders],
    })
    result = kind.agreement_statistic(question(), table)
    # e1: full agreement (W = 1); e2: reversed orders (W = 0).
    assert result["per_item"] == {"e1": pytest.approx(1.0), "e2": pytest.approx(0.0)}
    assert result["kendall_w"] == pytest.approx(0.5)
    assert "Kendall's W" in result["methods"]["kendall_w"]
    assert result["own_statistics"] == [{"key": "kendall_w", "label": "Kendall's W, mean over items", "value": 0.5}]


def test_places_and_ordinals(kind):
    assert [p["ordinal"] for p in kind.places(question())] == ["1st", "2nd", "3rd"]
    assert [p["value"] for p in kind.places(question(), '["warm", "calm", "firm"]')] == ["warm", "calm", "firm"]
    ordinals = ["4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
    assert [ordinal(n) for n in (4, 11, 12, 13, 21, 22, 101)] == ordinals


# --- the database's check ----------------------------------------------------------------------------


@pytest.fixture
def ranking_response(db):
    instrument = Instrument.objects.create(name="Ranking test")
    saved = Question.objects.create(instrument=instrument, position=0, **{
        f: getattr(question(), f) for f in ("key", "kind", "prompt", "options")
    })
    respondent = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="test-model")
    response = Response.objects.create(instrument=instrument, episode=make_episode(), respondent=respondent)
    return saved, response


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize(
    "value",
    ['["calm", "firm"]', '["calm", "calm", "firm"]', '["calm", "firm", "rude"]', "calm", '["calm", "firm", "warm", 1]'],
)
def test_the_database_refuses_an_order_that_is_not_a_full_ranking(ranking_response, value):
    saved, response = ranking_response
    with pytest.raises(IntegrityError, match="does not list every choice once"), transaction.atomic():
        Answer.objects.create(response=response, question=saved, value=value)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_database_takes_a_full_ranking(ranking_response):
    saved, response = ranking_response
    Answer.objects.create(response=response, question=saved, value='["warm", "calm", "firm"]')
    assert connection.vendor in ("sqlite", "postgresql")


def test_a_form_posts_one_place_per_field_and_the_check_knows_its_agreement(kind):
    assert kind.posts_several_values and not kind.multi_valued
    assert kind.agreement == "own"
    assert kind_problems(kind) == []


def test_offline_the_options_are_ordered_by_the_words_they_share_with_the_transcript(kind):
    choices = [{"value": "a", "label": "talk about money"}, {"value": "b", "label": "a quiet evening at home"},
               {"value": "c", "label": "the noisy party"}]
    transcript = "Your party was noisy until three. Can we have a quiet evening tonight? The party must end."

    value, reasoning = kind.scripted_answer(question(choices), transcript)

    # b shares quiet, evening; c shares the, noisy, party; a shares nothing.
    assert value == '["c", "b", "a"]'
    assert reasoning.startswith("Scripted heuristic, not a model judgement")
    assert kind.check_value(question(choices), value)[2] == ""
