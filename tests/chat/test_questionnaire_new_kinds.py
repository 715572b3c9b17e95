"""A chat participant answers a ranking and a per-item choice about their own episode after the chat."""

import pytest
from django.urls import reverse

from benchmark.models import Probe
from chat.models import Participant
from tests.builders import make_scenario
from tests.chat.builders import answers_of, make_chat_study, make_participant, sign_in

pytestmark = pytest.mark.django_db

PLANTED = ["a lost bet", "a move abroad", "a new dog"]
QUESTIONS = [
    {"key": "order", "kind": "ranking", "prompt": "Order what mattered most to you",
     "options": {"choices": [{"value": "money", "label": "Money"}, {"value": "time", "label": "Time"},
                             {"value": "peace", "label": "Peace"}]}},
    {"key": "hidden", "kind": "item_choice", "prompt": "What was the other side hiding?",
     "options": {"source": "scenario.probe", "position": 0}},
]


@pytest.fixture
def study():
    scenario = make_scenario()
    study = make_chat_study(scenarios=[scenario], conditions=["none"], questions=QUESTIONS)
    # A probe about the agent's role, asked of that role only: the questionnaire's item choice reads it, and
    # the participant gets no human test of their own (chat.human_test), so the page holds just these two.
    agent_role = scenario.roles.exclude(position=study.human_position).first()
    Probe.objects.create(scenario=scenario, about=agent_role, position=0, topic="private_info",
                         text="What was hidden?", options=PLANTED, correct=1, asked_of=Probe.AskedOf.SELF)
    return study


@pytest.fixture
def participant(client, study):
    participant = make_participant(study, participant_id="ranker", stage=Participant.Stage.QUESTIONNAIRE)
    sign_in(client, participant)
    return participant


def url(study):
    return reverse("chat:questionnaire", args=[study.slug])


def test_the_page_asks_the_ranking_place_by_place_and_the_episodes_own_choices(client, study, participant):
    page = client.get(url(study)).text

    assert page.count('<select id="order-') == 3 and ">2nd</label>" in page
    assert 'type="radio" name="hidden" value="2"' in page and "a new dog" in page
    assert "correct" not in page.lower().replace("incorrect", "")


def test_submitting_stores_one_ranking_row_and_the_choice(client, study, participant):
    response = client.post(url(study), {"order": ["peace", "money", "time"], "hidden": "1"})

    assert response.url == reverse("chat:done", args=[study.slug])
    assert answers_of(participant) == {"order": '["peace", "money", "time"]', "hidden": "1"}


def test_an_unfinished_ranking_or_a_choice_the_episode_lacks_is_refused(client, study, participant):
    response = client.post(url(study), {"order": ["peace", "money", "money"], "hidden": "5"})

    assert response.status_code == 200
    assert "Question 1: &#x27;money&#x27; is placed twice; put all of these in order, best first" in response.text
    assert "Question 2: " in response.text and "a lost bet, a move abroad, a new dog" in response.text
    participant.refresh_from_db()
    assert participant.response is None
