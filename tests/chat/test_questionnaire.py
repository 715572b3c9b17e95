"""The questionnaire a chat study asks: the default preset, the instruments offered, the participant's preview."""

import pytest
from django.test import RequestFactory
from django.urls import reverse

from benchmark.instruments.presets import CHAT_PRESET, CHAT_QUESTIONNAIRE, install_preset
from benchmark.models import Instrument
from chat.models import Participant
from chat.questionnaire import default_instrument, participant_preview, questionnaire_choices
from tests.builders import make_scenario
from tests.chat.builders import make_chat_study, make_participant, sign_in

pytestmark = pytest.mark.django_db


def test_the_default_is_the_shared_preset():
    instrument = default_instrument()

    assert (instrument.team, instrument.preset, instrument.name) == (None, CHAT_PRESET, CHAT_QUESTIONNAIRE.name)
    assert list(instrument.questions.values_list("key", flat=True)) == [
        "goal", "unresolved_confusion", "mutual_understanding", "comment"]


def test_only_instruments_participants_can_answer_are_offered():
    asked_per_episode = make_chat_study(questions=[{"key": "calm", "kind": "text", "prompt": "Calm?"}]).instrument
    with_a_quiz = make_chat_study(questions=[{"key": "q", "kind": "multiple_choice", "prompt": "Which?", "options": {
        "choices": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}], "correct": "a"}}]).instrument
    install_preset("sotopia-eval")  # asked per seat

    offered = questionnaire_choices(Instrument.objects.all())

    assert asked_per_episode in offered and default_instrument() in offered
    assert with_a_quiz not in offered
    assert not any(instrument.preset == "sotopia-eval" for instrument in offered)


def test_the_preview_is_the_participants_own_form():
    html = participant_preview(RequestFactory().get("/"), default_instrument())

    assert "How well did you reach your character" in html
    assert 'name="goal"' in html


def test_the_preview_says_why_participants_cannot_be_asked_an_instrument():
    html = participant_preview(RequestFactory().get("/"), install_preset("shrec-spans"))

    assert "Participants cannot be asked this instrument" in html
    assert "<form" not in html and 'name="' not in html


def test_a_study_without_questions_finishes_without_a_form(client):
    study = make_chat_study(questions=[])
    sign_in(client, make_participant(study, stage=Participant.Stage.QUESTIONNAIRE))

    assert study.instrument is None
    assert "Finish" in client.get(reverse("chat:questionnaire", args=[study.slug])).text


def test_the_default_questions_of_a_group_chat_speak_of_everyone_not_of_one_other_side(client):
    study = make_chat_study(scenarios=[make_scenario(roles=3)], conditions=["none"], human_position=1)
    sign_in(client, make_participant(study, stage=Participant.Stage.QUESTIONNAIRE))

    page = client.get(reverse("chat:questionnaire", args=[study.slug])).content.decode()

    assert "How well did you and everyone else in the conversation understand each other?" in page
    assert "other side" not in page
