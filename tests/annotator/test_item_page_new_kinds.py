"""An annotator answers the two kinds added on the kinds registry: a ranking and a per-item multiple choice."""

import json

import pytest
from django.urls import reverse

from annotator.models import Annotation, Assignment, Membership
from benchmark.models import Answer, Instrument, Probe
from tests.annotator.builders import make_question, make_study
from tests.builders import make_episode, make_scenario, make_user

pytestmark = pytest.mark.django_db

PLANTED = ["the party was for a lost bet", "she is moving out", "the landlord knows"]
REPLIES = {"choices": [{"value": v, "label": f"Reply {v.upper()}"} for v in ("a", "b", "c")]}


@pytest.fixture
def annotator():
    return make_user(username="annotator-r")


def _study(annotator, *, probe=True):
    scenario = make_scenario()
    if probe:
        Probe.objects.create(scenario=scenario, about=scenario.roles.first(), position=0, topic="private_info",
                             text="What does the neighbour hide?", options=PLANTED, correct=2)
    instrument = Instrument.objects.create(name="Ranking and item choice")
    make_question(instrument=instrument, key="order", position=0, kind="ranking",
                  prompt="Order the replies, best first", options=REPLIES)
    make_question(instrument=instrument, key="hidden", position=1, kind="item_choice",
                  prompt="What does the neighbour hide?", options={"source": "scenario.probe", "position": 0})
    study = make_study(instrument=instrument, items=[make_episode(scenario=scenario)], overlap=1,
                       annotators=[annotator])
    Membership.objects.filter(study=study).update(instructions_read_at="2025-01-01T00:00:00Z")
    return Assignment.objects.create(item=study.items.get(), annotator=annotator, claimed_at="2025-01-01T00:00:00Z",
                                     lease_expires_at="2999-01-01T00:00:00Z")


@pytest.fixture
def assignment(annotator):
    return _study(annotator)


def _entries(response):
    return {entry.question.key: entry for section in response.context["sections"] for entry in section.entries}


def test_the_page_asks_a_ranking_place_by_place_and_the_items_own_choices(client, annotator, assignment):
    client.force_login(annotator)

    response = client.get(reverse("annotator:item", args=[assignment.pk]))

    page = response.text
    assert page.count('<select id="answer-order-') == 3 and ">3rd</label>" in page
    assert page.count('<option value="b">Reply B</option>') == 3
    assert 'type="radio" name="answer-hidden" value="2"' in page and "she is moving out" in page
    hidden = _entries(response)["hidden"]
    assert [option.label for option in hidden.options] == PLANTED
    assert "correct" not in json.dumps(hidden.question.options)


def test_a_submit_stores_the_order_as_one_row_and_the_items_choice(client, annotator, assignment):
    client.force_login(annotator)
    data = {"answer-order": ["c", "a", "b"], "answer-hidden": "1", "revision": "0"}

    assert client.post(reverse("annotator:submit", args=[assignment.pk]), data).status_code == 302

    rows = Answer.objects.filter(response__annotation__assignment=assignment, response__status="submitted")
    assert sorted(rows.values_list("question__key", "value")) == [("hidden", "1"), ("order", '["c", "a", "b"]')]


def test_an_incomplete_ranking_is_refused_naming_what_is_missing(client, annotator, assignment):
    client.force_login(annotator)
    data = {"answer-order": ["c", "", "b"], "answer-hidden": "1", "revision": "0"}

    response = client.post(reverse("annotator:submit", args=[assignment.pk]), data, follow=True)

    assert "place every choice (missing: Reply A)" in response.text
    assert not Annotation.objects.filter(assignment=assignment, status="submitted").exists()
    # The places picked so far are shown again.
    assert [place["value"] for place in _entries(response)["order"].widget["places"]] == ["c", "b", ""]


def test_a_choice_the_item_does_not_offer_is_refused(client, annotator, assignment):
    client.force_login(annotator)
    data = {"answer-order": ["a", "b", "c"], "answer-hidden": "7", "revision": "0"}

    response = client.post(reverse("annotator:submit", args=[assignment.pk]), data, follow=True)

    assert "is not one of the choices; choose one of: the party was for a lost bet, she is moving out" in response.text
    assert not Annotation.objects.filter(assignment=assignment, status="submitted").exists()


def test_a_draft_keeps_a_partial_ranking_in_one_row_and_shows_it_again(client, annotator, assignment):
    client.force_login(annotator)

    client.post(reverse("annotator:draft", args=[assignment.pk]), {"answer-order": ["b", "", ""], "revision": "0"})

    rows = Answer.objects.filter(response__annotation__assignment=assignment, question__key="order")
    assert list(rows.values_list("value", flat=True)) == ['["b"]']
    response = client.get(reverse("annotator:item", args=[assignment.pk]))
    assert [place["value"] for place in _entries(response)["order"].widget["places"]] == ["b", "", ""]
    assert '<option value="b" selected>Reply B</option>' in response.text


def test_an_item_without_the_probe_is_not_asked_the_item_choice(client, annotator):
    assignment = _study(annotator, probe=False)
    client.force_login(annotator)

    response = client.get(reverse("annotator:item", args=[assignment.pk]))

    assert "hidden" not in _entries(response)
    data = {"answer-order": ["a", "b", "c"], "revision": "0"}
    assert client.post(reverse("annotator:submit", args=[assignment.pk]), data).status_code == 302
