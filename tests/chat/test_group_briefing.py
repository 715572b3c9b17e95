"""The briefing of a participant in a three-party chat: every other character named, who opens, how turns go."""

import pytest
from django.urls import reverse

from benchmark.models import Seat, TurnTaking
from chat.models import Participant
from chat.participant_briefing import build_briefing
from tests.builders import make_character, make_scenario
from tests.chat.builders import make_chat_study, make_participant, sign_in

pytestmark = pytest.mark.django_db


def briefing_of(human_position, **scenario_fields):
    roles = [{"character": make_character(first_name=name, last_name="Lane")} for name in ("Ana", "Ben", "Cleo")]
    scenario = make_scenario(roles=roles, **scenario_fields)  # strangers: a two-party chat would hide the names
    study = make_chat_study(scenarios=[scenario], conditions=["none"], human_position=human_position)
    participant = make_participant(study, stage=Participant.Stage.BRIEFING)
    seats = list(participant.episode.seats.select_related("role", "character", "episode__scenario"))
    human = next(seat for seat in seats if seat.player == Seat.Player.HUMAN)
    return study, participant, build_briefing(study, human, [seat for seat in seats if seat.pk != human.pk])


def test_a_group_briefing_names_every_other_character_and_counts_the_participants_turns():
    _, _, briefing = briefing_of(1, turn_cap=9)

    assert briefing["group"] and briefing["human_test"]
    assert [other["name"] for other in briefing["others"]] == ["Ana Lane", "Cleo Lane"]
    rules = briefing["rules"]
    assert (rules["turn_cap"], rules["my_turns"], rules["opens"], rules["first_speaker"]) == (9, 3, False, "Ana Lane")


def test_the_participant_who_greets_is_told_so(client):
    study, participant, briefing = briefing_of(0, turn_taking=TurnTaking.RANDOM_AFTER_GREETING, greeter_position=0)
    sign_in(client, participant)

    page = client.get(reverse("chat:briefing", args=[study.slug])).content.decode()

    assert briefing["rules"]["greets"] and briefing["rules"]["random_order"]
    assert "You open the conversation with a greeting." in page
    assert "Ben Lane" in page and "Cleo Lane" in page
