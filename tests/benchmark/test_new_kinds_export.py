"""Ranking and per-item choice answers leave in the Parley export and come back byte for byte."""

import io
import json

import pytest

from benchmark.exporting import export_episodes, select_episodes
from benchmark.models import (
    Answer,
    Character,
    Episode,
    Instrument,
    Probe,
    Question,
    Respondent,
    Response,
    Scenario,
    Turn,
)
from tests.benchmark.import_checks import assert_rejected, import_file
from tests.builders import default_team, make_episode, make_scenario

pytestmark = pytest.mark.django_db


def exported() -> str:
    out = io.StringIO()
    export_episodes(select_episodes(default_team()), out, format="parley")
    return out.getvalue()


@pytest.fixture
def answered():
    """An episode whose scenario has a probe, and a judge's answers to a ranking and to the probe as an item choice."""
    scenario = make_scenario()
    Probe.objects.create(scenario=scenario, about=scenario.roles.first(), position=0, topic="private_info",
                         text="What is hidden?", options=["a debt", "a dog"], correct=1)
    episode = make_episode(scenario=scenario, external_id="ranked")
    instrument = Instrument.objects.create(name="Ranking and item choice", team=default_team())
    order = Question.objects.create(instrument=instrument, key="order", position=0, kind="ranking", prompt="Order",
                                    options={"choices": [{"value": "x", "label": "X"}, {"value": "y", "label": "Y"}]})
    hidden = Question.objects.create(instrument=instrument, key="hidden", position=1, kind="item_choice",
                                     prompt="Hidden?", options={"source": "scenario.probe", "position": 0})
    respondent = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="gpt-4o")
    response = Response.objects.create(instrument=instrument, episode=episode, respondent=respondent)
    Answer.objects.create(response=response, question=order, value='["y", "x"]', reasoning="Y first.")
    Answer.objects.create(response=response, question=hidden, value="1", reasoning="The dog.")
    return episode


def test_the_export_carries_the_order_and_the_items_choice(answered):
    answers = json.loads(exported())["responses"][0]["answers"]

    assert [(a["question"], a["value"]) for a in answers] == [("order", '["y", "x"]'), ("hidden", "1")]


def test_export_import_into_an_empty_database_export_is_byte_identical(answered, tmp_path):
    first = exported()
    Turn.objects.all().delete()
    Episode.objects.all().delete()
    Scenario.objects.all().delete()
    Character.objects.all().delete()
    path = tmp_path / "episodes.jsonl"
    path.write_text(first, encoding="utf-8")

    import_file(path)

    assert exported() == first
    assert Answer.objects.get(question__key="order").value == '["y", "x"]'


@pytest.mark.parametrize(
    ("key", "bad", "message"),
    [("order", '["y"]', "does not list every choice once"), ("hidden", "seven", "is not a choice index")],
)
def test_an_imported_answer_its_question_does_not_allow_is_refused(answered, tmp_path, key, bad, message):
    record = json.loads(exported())
    for answer in record["responses"][0]["answers"]:
        if answer["question"] == key:
            answer["value"] = bad
    record["external_id"] = "another"
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(record), encoding="utf-8")

    assert_rejected(path, message)  # the database's words, on SQLite and PostgreSQL alike
