"""The floor of a live negotiation with a participant in it (PM-19, PM-20, PM-21): windows on the server's clock,
claims, intervening, the decisions stored with their times, and the mediator never speaking twice in a row."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

import pytest
from django.utils import timezone

from benchmark.models import MediatorDecision, PartyThought, Turn
from chat.models import ChatConnection
from chat.negotiation import (
    CLAIM,
    CLAIM_WINDOW,
    CONTINUE,
    INTERVENE,
    INTERVENE_WINDOW,
    FloorRefused,
    choose,
    is_mediator,
    settle_floor,
)
from chat.participant_briefing import build_briefing
from chat.protocol import NOBODY
from chat.scripted_people import ScriptedMediatorPerson, ScriptedPartyPerson
from chat.turns import TurnRefused, load_cast, submit_human_turn
from tests.builders import get_barrier
from tests.chat.negotiation_builders import chatting, negotiation_study, play

pytestmark = pytest.mark.django_db


def seats_by_name(participant):
    return {seat.character.name: seat for seat in participant.episode.seats.select_related("character")}


def speak(participant, index, now, text="Hello."):
    return submit_human_turn(
        participant.pk, client_id=f"client-{index:06d}", action_type="speak", content=text, now=now
    )


def agent_says(participant, seat, index, now):
    seat_pk = seat if isinstance(seat, int) else seat.pk
    Turn.objects.create(
        episode_id=participant.episode_id,
        index=index,
        seat_id=seat_pk,
        action_type="speak",
        content=f"Line {index}.",
        created_at=now,
    )


# --- the participant as the mediator (PM-20) -------------------------------------------------------


def test_the_participant_mediator_opens_and_the_parties_answer_without_a_window():
    participant = chatting(negotiation_study(mediating=True))
    now = timezone.now()

    first = settle_floor(participant.pk, now).floor
    assert first.seat == participant.episode.seats.get(player="human").pk and not first.window
    speak(participant, 0, now, "Welcome.")
    second = settle_floor(participant.pk, now).floor

    assert second.index == 1 and not second.window  # the mediator never follows itself
    assert seats_by_name(participant)["Mediator"].pk != second.seat
    assert not MediatorDecision.objects.exists()
    assert PartyThought.objects.filter(after_index=0, spoken=True).get().seat_id == second.seat


def test_after_a_party_speaks_the_mediator_window_opens_and_silence_lets_them_continue():
    study = negotiation_study(mediating=True, intervene_window=15)
    participant = chatting(study)
    now = timezone.now()
    settle_floor(participant.pk, now)
    speak(participant, 0, now)
    party = settle_floor(participant.pk, now).floor.seat
    agent_says(participant, party, 1, now)

    window = settle_floor(participant.pk, now).floor
    assert (window.index, window.window, window.seat) == (2, INTERVENE_WINDOW, None)
    assert load_cast(participant).seat_at(2) == NOBODY
    with pytest.raises(TurnRefused):  # nobody may write while the window is open, the mediator neither
        speak(participant, 2, now)
    assert settle_floor(participant.pk, now + timedelta(seconds=14.9)).floor.window  # still open
    closed = settle_floor(participant.pk, now + timedelta(seconds=15)).floor

    assert closed.seat is not None and closed.seat != party and not closed.window
    decision = MediatorDecision.objects.get()
    assert (decision.after_index, decision.by, decision.engaged, decision.decided_ms) == (1, "human", False, 15000)
    assert decision.reason == "window closed"


def test_intervening_gives_the_mediator_the_next_turn_and_stores_the_time_it_took():
    participant = chatting(negotiation_study(mediating=True))
    now = timezone.now()
    settle_floor(participant.pk, now)
    speak(participant, 0, now)
    agent_says(participant, settle_floor(participant.pk, now).floor.seat, 1, now)
    settle_floor(participant.pk, now)

    choose(participant.pk, INTERVENE, 2, now + timedelta(seconds=4.25))
    speak(participant, 2, now + timedelta(seconds=9), "Let's hear Lee on the price.")
    settle_floor(participant.pk, now + timedelta(seconds=9))

    decision = MediatorDecision.objects.get()
    assert (decision.engaged, decision.decided_ms, decision.policy) == (True, 4250, "human")
    assert decision.turn.index == 2 and decision.turn.content == "Let's hear Lee on the price."


def test_let_them_continue_is_stored_at_once_and_a_party_takes_the_floor():
    participant = chatting(negotiation_study(mediating=True))
    now = timezone.now()
    settle_floor(participant.pk, now)
    speak(participant, 0, now)
    agent_says(participant, settle_floor(participant.pk, now).floor.seat, 1, now)
    settle_floor(participant.pk, now)

    chosen = choose(participant.pk, CONTINUE, 2, now + timedelta(seconds=2)).floor
    assert (chosen.seat, chosen.window) == (None, "")  # the parties deliberate on the next look
    floor = settle_floor(participant.pk, now + timedelta(seconds=2)).floor

    assert floor.seat != participant.episode.seats.get(player="human").pk and not floor.window
    assert MediatorDecision.objects.get().decided_ms == 2000
    assert PartyThought.objects.filter(after_index=1, spoken=True).get().seat_id == floor.seat


def test_a_choice_after_the_deadline_or_for_another_turn_or_of_the_other_role_is_refused():
    participant = chatting(negotiation_study(mediating=True, intervene_window=5))
    now = timezone.now()
    settle_floor(participant.pk, now)
    speak(participant, 0, now)
    agent_says(participant, settle_floor(participant.pk, now).floor.seat, 1, now)
    settle_floor(participant.pk, now)

    refusals = []
    for choice, index, at in [(INTERVENE, 2, 5.0), (INTERVENE, 1, 1.0), (CLAIM, 2, 1.0), ("speak", 2, 1.0)]:
        with pytest.raises(FloorRefused) as refused:
            choose(participant.pk, choice, index, now + timedelta(seconds=at))
        refusals.append(refused.value.code)

    assert refusals == ["window_closed", "no_window", "not_your_choice", "bad_choice"]
    assert not MediatorDecision.objects.exists()


def test_the_scripted_mediator_person_plays_to_the_end_and_every_chance_is_a_decision():
    participant = chatting(negotiation_study(mediating=True, turn_cap=16))

    played = play(participant, ScriptedMediatorPerson(), now=timezone.now())

    episode = played.participant.episode
    mediator = seats_by_name(participant)["Mediator"].pk
    speakers = list(episode.turns.order_by("index").values_list("seat_id", flat=True))
    assert len(speakers) == 16
    interventions = [index for index, seat in enumerate(speakers) if seat == mediator]
    assert interventions == [0, 6, 13]  # the opening, then after turns 5 and 12
    assert all(a != b for a, b in pairwise(speakers))  # nobody twice in a row, the mediator neither
    decisions = list(MediatorDecision.objects.filter(episode=episode).order_by("after_index"))
    party_turns = [index for index, seat in enumerate(speakers[:-1]) if seat != mediator]
    assert [d.after_index for d in decisions] == party_turns  # one decision per chance, none after its own turns
    assert [d.after_index for d in decisions if d.engaged] == [5, 12]
    assert [d.turn.index for d in decisions if d.engaged] == [6, 13]
    assert all(d.by == "human" and d.decided_ms == 1500 for d in decisions)


def test_a_silent_mediator_person_lets_every_window_run_out():
    participant = chatting(negotiation_study(mediating=True, turn_cap=8, intervene_window=3))

    played = play(participant, ScriptedMediatorPerson(intervene_after=(), silent=True), now=timezone.now())

    decisions = MediatorDecision.objects.filter(episode=played.participant.episode)
    assert decisions.count() == 6 and not decisions.filter(engaged=True).exists()  # after turns 1..6
    assert set(decisions.values_list("decided_ms", "reason")) == {(3000, "window closed")}


# --- the participant as a party (PM-19) ------------------------------------------------------------


def test_the_agent_mediator_opens_then_the_floor_opens_to_the_participant():
    participant = chatting(negotiation_study(mediating=False, claim_window=20))
    now = timezone.now()
    mediator = seats_by_name(participant)["Mediator"]

    opening = settle_floor(participant.pk, now).floor
    assert opening.seat == mediator.pk
    agent_says(participant, mediator, 0, now)
    window = settle_floor(participant.pk, now).floor

    assert (window.index, window.window) == (1, CLAIM_WINDOW)
    assert window.closes_at - window.opened_at == timedelta(seconds=20)
    assert not MediatorDecision.objects.exists()  # the mediator does not react to its own welcome


def test_an_unclaimed_floor_goes_to_the_most_motivated_agent():
    participant = chatting(negotiation_study(mediating=False, claim_window=20))
    now = timezone.now()
    agent_says(participant, seats_by_name(participant)["Mediator"], 0, now)
    settle_floor(participant.pk, now)

    floor = settle_floor(participant.pk, now + timedelta(seconds=20)).floor

    thoughts = list(PartyThought.objects.filter(after_index=0).select_related("seat__character"))
    assert {t.seat.character.name for t in thoughts} == {"Jamie", "Lee"}  # the participant (Alex) thinks no thoughts
    spoken = [t for t in thoughts if t.spoken]
    assert len(spoken) == 1 and spoken[0].seat_id == floor.seat
    selected = [t for t in thoughts if t.selected]
    if selected:  # a thought that passed its threshold wins over any that did not
        assert spoken[0].rating == max(t.rating for t in selected)
    assert floor.text  # what the chosen party says was decided with the floor


def test_a_claim_preempts_the_agents_and_counts_as_motivation_five():
    participant = chatting(negotiation_study(mediating=False))
    now = timezone.now()
    agent_says(participant, seats_by_name(participant)["Mediator"], 0, now)
    settle_floor(participant.pk, now)

    floor = choose(participant.pk, CLAIM, 1, now + timedelta(seconds=3)).floor
    speak(participant, 1, now + timedelta(seconds=8))

    me = participant.episode.seats.get(player="human")
    assert floor.seat == me.pk
    thought = PartyThought.objects.get(after_index=0)
    assert (thought.seat_id, thought.rating, thought.selected, thought.spoken) == (me.pk, 5.0, True, True)
    with pytest.raises(FloorRefused):  # the window is gone once claimed
        choose(participant.pk, CLAIM, 1, now + timedelta(seconds=4))


def test_the_participant_party_gets_no_window_right_after_speaking():
    participant = chatting(negotiation_study(mediating=False))
    now = timezone.now()
    agent_says(participant, seats_by_name(participant)["Mediator"], 0, now)
    settle_floor(participant.pk, now)
    choose(participant.pk, CLAIM, 1, now)
    speak(participant, 1, now)

    floor = settle_floor(participant.pk, now).floor

    assert not floor.window and floor.seat != participant.episode.seats.get(player="human").pk
    assert MediatorDecision.objects.get().after_index == 1  # the mediator still decided first


def test_the_scripted_party_person_claims_turns_three_and_seven_and_the_mediator_never_follows_itself():
    participant = chatting(negotiation_study(mediating=False, turn_cap=16))

    played = play(participant, ScriptedPartyPerson(), now=timezone.now())

    episode = played.participant.episode
    seats = seats_by_name(participant)
    speakers = list(episode.turns.order_by("index").values_list("seat_id", flat=True))
    mine = [index for index, seat in enumerate(speakers) if seat == seats["Alex"].pk]
    assert {3, 7} <= set(mine) and set(mine) <= set(played.windows)  # spoke only on floors it claimed
    assert set(played.windows) - {3, 7}  # other windows opened and ran out
    assert all(a != b for a, b in pairwise(speakers))
    claims = PartyThought.objects.filter(episode=episode, seat=seats["Alex"])
    assert sorted(claims.values_list("after_index", flat=True)) == [index - 1 for index in mine]
    decisions = MediatorDecision.objects.filter(episode=episode)
    mediator_turns = [index for index, seat in enumerate(speakers) if seat == seats["Mediator"].pk]
    assert sorted(decisions.values_list("after_index", flat=True)) == [
        index for index in range(len(speakers) - 1) if index not in mediator_turns
    ]
    assert [d.turn.index for d in decisions.filter(engaged=True).order_by("after_index")] == mediator_turns[1:]
    assert set(decisions.values_list("by", flat=True)) == {"scripted"}


# --- the pieces --------------------------------------------------------------------------------------


def test_the_mediator_seat_is_the_cases_mediator():
    participant = chatting(negotiation_study(mediating=True))
    assert [seat.character.name for seat in participant.episode.seats.all() if is_mediator(seat)] == ["Mediator"]
    assert participant.episode.seats.get(player="human").character.name == "Mediator"
    assert participant.episode.settings["promediate"] == {
        "mediator": "human",
        "human": "mediator",
        "mediator_position": 3,
        "mediator_model": "",
    }


def test_a_party_participants_episode_names_the_agents_mediator_policy():
    participant = chatting(negotiation_study(mediating=False))
    assert participant.episode.settings["promediate"] == {
        "mediator": "generic",
        "human": "party",
        "mediator_position": 3,
        "mediator_model": "scripted",
    }
    assert participant.episode.seats.get(player="human").character.name == "Alex"


def briefing_of(participant):
    seats = list(participant.episode.seats.select_related("role", "character", "episode__scenario"))
    human = next(seat for seat in seats if seat.player == "human")
    return build_briefing(participant.study, human, [seat for seat in seats if seat is not human])


def test_a_party_is_briefed_with_its_private_brief_and_the_conditions_persona():
    barrier = get_barrier("promediate-competing")
    if not barrier.style_directive:  # the seeded condition, or its stand-in when the table was flushed
        barrier.style_directive = "Hold firm on what you want; soften only when offered your second choice."
        barrier.save(update_fields=["style_directive"])
    participant = chatting(negotiation_study(mediating=False, conditions=("promediate-competing",), claim_window=7))

    briefing = briefing_of(participant)

    assert briefing["negotiation"] == {
        "mediating": False,
        "mediated": True,
        "intervene_window": "15",
        "claim_window": "7",
        "persona": barrier.style_directive,
    }
    assert "Opinions" in briefing["private_knowledge"] and briefing["rules"]["first_speaker"] == "Mediator"
    seats = participant.episode.seats.select_related("character")
    assert [s.character.name for s in seats if s.carries_barrier] == ["Jamie", "Lee"]  # the agent parties only


def test_the_mediator_is_briefed_as_the_mediator_without_a_persona():
    participant = chatting(negotiation_study(mediating=True, conditions=("promediate-competing",)))

    briefing = briefing_of(participant)

    assert briefing["negotiation"]["mediating"] and briefing["negotiation"]["persona"] == ""
    assert briefing["me"]["name"] == "Mediator" and briefing["rules"]["opens"]


@pytest.mark.parametrize("page_open", [True, False])
def test_letting_a_window_run_out_counts_as_presence_only_with_the_page_open(page_open):
    participant = chatting(negotiation_study(mediating=True, intervene_window=5))
    now = timezone.now()
    settle_floor(participant.pk, now)
    speak(participant, 0, now)
    agent_says(participant, settle_floor(participant.pk, now).floor.seat, 1, now)
    settle_floor(participant.pk, now)
    if page_open:
        ChatConnection.objects.create(
            participant=participant, key="page", opened_at=now, expires_at=now + timedelta(60)
        )
    later = now + timedelta(seconds=5)

    settle_floor(participant.pk, later)

    participant.refresh_from_db()
    assert (participant.last_seen_at == later) is page_open
