"""A chat study chooses the agent mediator of its negotiations as a simulation run does (none, generic,
social, on the mediator seat's model), records it in the episode as simulations do, and refuses options
that make no sense."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from itertools import pairwise

import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse
from django.utils import timezone

from benchmark.agents.negotiation.context import Utterance
from benchmark.agents.negotiation.tracker import track
from benchmark.evaluation.promediate import passes
from benchmark.models import Episode, MediatorDecision, PartyThought
from benchmark.results.promediate.traces import ProMediateFilters, load_records
from chat.assignment import create_chat_episode
from chat.forms import ChatStudyForm
from chat.negotiation import CLAIM, CLAIM_WINDOW, choose, settle_floor
from chat.negotiation_agents import table_of
from chat.scripted_people import ScriptedPartyPerson
from tests.builders import get_barrier, make_scenario, make_user
from tests.chat.builders import join
from tests.chat.negotiation_builders import chatting, hmo_negotiation, negotiation_study, play
from tests.chat.test_negotiation import agent_says, briefing_of, seats_by_name, speak
from tests.chat.test_research import form_data

pytestmark = pytest.mark.django_db


# --- the social agent mediator, the participant a party -----------------------------------------------


def test_a_social_study_records_the_condition_and_the_mediator_seats_model_as_a_simulation_does():
    study = negotiation_study(mediating=False, mediator_condition="social", seat_models="3=openai/gpt-4o-mini")

    episode = create_chat_episode(study, study.scenarios.get(), get_barrier("none"))

    assert episode.settings["promediate"] == {
        "mediator": "social",
        "mediator_position": 3,
        "mediator_model": "openai/gpt-4o-mini",
        "human": "party",
    }
    assert episode.seats.get(position=3).model == "openai/gpt-4o-mini"


def contrary_line(participant) -> str:
    """A line of the participant's (Alex's) that lowers the table's agreement on a topic by 0.1 or more, by
    the offline tracker's reading: what the scripted social mediator reacts to."""
    context = table_of(participant.episode).context
    before = track(context).topics
    for topic in context.topics:
        for key, _ in topic.options:
            line = f"On {topic.title} I will only accept ({key})."
            said = context.with_utterance(Utterance(len(context.transcript), "Alex", line))
            if track(said).topics[topic.title] <= before[topic.title] - 0.1:
                return line
    raise AssertionError("no option of the case lowers the agreement")


@dataclass(frozen=True)
class ContraryPartyPerson(ScriptedPartyPerson):
    """The scripted party person, who says the contrary line whenever it speaks."""

    words: str = ""

    def line(self, index: int) -> str:
        return self.words


def test_the_social_agent_mediator_decides_first_and_steps_in_when_the_participant_breaks_the_agreement():
    participant = chatting(negotiation_study(mediating=False, mediator_condition="social"))
    now = timezone.now()
    seats = seats_by_name(participant)
    agent_says(participant, seats["Mediator"], 0, now)
    settle_floor(participant.pk, now)  # the participant's window for turn 1 runs out: an agent party speaks
    agent_says(participant, settle_floor(participant.pk, now + timedelta(seconds=21)).floor.seat, 1, now)
    assert settle_floor(participant.pk, now + timedelta(seconds=22)).floor.window == CLAIM_WINDOW
    choose(participant.pk, CLAIM, 2, now + timedelta(seconds=23))
    speak(participant, 2, now + timedelta(seconds=25), contrary_line(participant))

    floor = settle_floor(participant.pk, now + timedelta(seconds=26)).floor

    decision = MediatorDecision.objects.get(after_index=2)
    assert (decision.by, decision.policy, decision.model, decision.engaged) == ("scripted", "social", "scripted", True)
    assert floor.seat == seats["Mediator"].pk and floor.text and not floor.window
    assert not PartyThought.objects.filter(after_index=2).exists()  # the parties never got to think


def test_a_party_person_with_the_social_mediator_plays_to_the_end_with_a_social_decision_on_every_chance():
    participant = chatting(negotiation_study(mediating=False, mediator_condition="social", turn_cap=16))
    person = ContraryPartyPerson(claim_on=(3, 7, 11), words=contrary_line(participant))

    played = play(participant, person, now=timezone.now())

    episode = played.participant.episode
    mediator = seats_by_name(participant)["Mediator"].pk
    speakers = list(episode.turns.order_by("index").values_list("seat_id", flat=True))
    assert speakers[0] == mediator and all(a != b for a, b in pairwise(speakers))
    decisions = MediatorDecision.objects.filter(episode=episode)
    assert sorted(decisions.values_list("after_index", flat=True)) == [
        index for index, seat in enumerate(speakers[:-1]) if seat != mediator
    ]
    assert set(decisions.values_list("policy", flat=True)) == {"social"}
    engaged = [d.turn.index for d in decisions.filter(engaged=True).order_by("after_index")]
    assert engaged and engaged == [index for index, seat in enumerate(speakers) if seat == mediator][1:]


# --- no mediator ----------------------------------------------------------------------------------------


def test_none_gives_the_mediator_no_seat_and_an_agent_party_opens_whatever_the_seed():
    study = negotiation_study(mediating=False, mediator_condition="none")
    for seed in range(5):  # the study wants five participants
        participant = chatting(study, participant_id=f"party-{seed}")
        episode = participant.episode
        episode.settings = {**episode.settings, "seed": seed}
        episode.save(update_fields=["settings"])

        opening = settle_floor(participant.pk, timezone.now()).floor

        seats = seats_by_name(participant)
        assert set(seats) == {"Alex", "Jamie", "Lee"}
        assert opening.seat in {seats["Jamie"].pk, seats["Lee"].pk} and opening.text
    assert episode.settings["promediate"] == {
        "mediator": "none",
        "mediator_position": None,
        "mediator_model": "",
        "human": "party",
    }


def test_without_a_mediator_nobody_decides_to_intervene_and_only_the_parties_speak():
    participant = chatting(negotiation_study(mediating=False, mediator_condition="none", turn_cap=12))

    played = play(participant, ScriptedPartyPerson(claim_on=(2, 5)), now=timezone.now())

    episode = played.participant.episode
    seats = seats_by_name(participant)
    speakers = list(episode.turns.order_by("index").values_list("seat_id", flat=True))
    assert len(speakers) == episode.turn_cap
    assert set(speakers) <= {seat.pk for seat in seats.values()}
    assert {2, 5} <= {index for index, seat in enumerate(speakers) if seat == seats["Alex"].pk}
    assert all(a != b for a, b in pairwise(speakers))
    assert not MediatorDecision.objects.filter(episode=episode).exists()


def test_the_briefing_of_a_study_without_a_mediator_says_so(client):
    study = negotiation_study(mediating=False, mediator_condition="none")
    participant = join(client, study, "reader")
    briefing = briefing_of(participant)

    page = client.get(reverse("chat:briefing", args=[study.slug])).text

    assert (briefing["negotiation"]["mediated"], briefing["negotiation"]["mediating"]) == (False, False)
    assert (briefing["rules"]["opens"], briefing["rules"]["first_speaker"]) == (False, "")
    assert "Nobody mediates this meeting" in page and "The mediator opens the meeting" not in page


# --- the study form ---------------------------------------------------------------------------------------


def study_form(user, scenarios, **overrides):
    data = form_data(scenarios, target_none="1", min_participant_turns="1", **overrides)
    return ChatStudyForm(data=data, user=user)


@pytest.fixture
def researcher():
    return make_user(staff=True, username="negotiation-owner")


def test_the_form_stores_the_condition_of_a_negotiation_study_with_a_party_participant(client, researcher):
    form = study_form(researcher, [hmo_negotiation()], human_position="0", mediator_condition="social")

    assert form.is_valid(), form.errors
    study = form.save(created_by=researcher)
    assert study.mediator_condition == "social"
    client.force_login(researcher)
    page = client.get(reverse("chat:monitor", args=[study.slug])).text
    assert "Agent mediator" in page and "social: a mediator that tracks" in page


def test_the_form_refuses_no_mediator_when_the_participant_is_the_mediator(researcher):
    scenario = hmo_negotiation()
    form = study_form(researcher, [scenario], human_position="3", mediator_condition="none")

    assert not form.is_valid()
    assert form.errors["mediator_condition"] == [
        f"The participant is the mediator in {scenario}; 'none' would take their chair away. "
        "Seat the participant as a party, or choose another condition."
    ]


@pytest.mark.parametrize("condition", ["generic", "social"])
def test_the_form_refuses_an_agent_mediator_where_the_participant_mediates_every_negotiation(researcher, condition):
    form = study_form(researcher, [hmo_negotiation()], human_position="3", mediator_condition=condition)

    assert not form.is_valid()
    assert "mediator in every chosen scenario" in form.errors["mediator_condition"][0]


@pytest.mark.parametrize("condition", ["none", "generic", "social"])
def test_the_form_refuses_a_mediator_condition_on_a_scenario_that_is_not_a_negotiation(researcher, condition):
    plain = make_scenario()
    form = study_form(researcher, [hmo_negotiation(), plain], human_position="0", mediator_condition=condition)

    assert not form.is_valid()
    assert form.errors["mediator_condition"] == [
        f"{plain} is not a negotiation, so no mediator sits there: leave the agent mediator empty, "
        "or choose negotiation scenarios only."
    ]


def test_the_form_leaves_the_condition_empty_for_other_studies_and_negotiations_get_the_generic_mediator(researcher):
    plain = study_form(researcher, [make_scenario()], slug="plain-chats")
    assert plain.is_valid(), plain.errors
    assert plain.save(created_by=researcher).mediator_condition == ""

    study = negotiation_study(mediating=False)
    episode = create_chat_episode(study, study.scenarios.get(), get_barrier("none"))
    assert (episode.settings["promediate"]["mediator"], episode.settings["promediate"]["mediator_model"]) == (
        "generic",
        "scripted",
    )


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_promediate_report_reads_chats_under_their_mediator_condition_as_it_reads_simulations():
    study = negotiation_study(mediating=False, mediator_condition="social", turn_cap=12)
    social = play(chatting(study, "social-party"), ScriptedPartyPerson(), now=timezone.now()).participant.episode
    study.mediator_condition = "none"
    study.save(update_fields=["mediator_condition"])
    alone = play(chatting(study, "lone-party"), ScriptedPartyPerson(), now=timezone.now()).participant.episode
    async_to_sync(passes.evaluate_negotiations)([social.pk, alone.pk], model="scripted")

    records, skipped = load_records(Episode.objects.filter(pk__in=[social.pk, alone.pk]), ProMediateFilters())

    assert not skipped
    assert {(r.episode_id, r.condition, r.mediator_model) for r in records} == {
        (social.pk, "social", "scripted"),
        (alone.pk, "none", ""),
    }
