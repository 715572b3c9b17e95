"""A live ProMediate negotiation for chat tests: the real HMO case, a study seating the participant as the
mediator or as a party, and a driver that plays the floor to the end with a scripted person (PM-21).

The case is imported from the shared data (``../shared/data/promediate/hmo.json``) as researchers do; its
turn-taking is set to the negotiation policy and its cap shortened so a test plays it whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmark.models import Episode, Scenario, Turn, TurnTaking
from chat.models import ChatStudy, Participant
from chat.negotiation import choose as choose_floor
from chat.negotiation import mediator_position, settle_floor
from chat.protocol import NOBODY
from chat.scripted_people import ScriptedMediatorPerson, ScriptedPartyPerson
from chat.turns import load_cast, submit_human_turn
from tests.benchmark.import_checks import import_file
from tests.chat.builders import make_chat_study, make_participant

HMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "promediate" / "hmo.json"


def hmo_negotiation(turn_cap: int = 16) -> Scenario:
    """The HMO case as imported (Alex, Jamie, Lee and the Mediator, who opens), cut to ``turn_cap`` turns."""
    import_file(HMO)
    scenario = Scenario.objects.get(external_id="promediate-hmo")
    assert scenario.turn_taking == TurnTaking.PROMEDIATE, "the importer makes it a negotiation"
    assert scenario.topics.exists()
    scenario.turn_cap = turn_cap
    scenario.save(update_fields=["turn_cap"])
    return scenario


def negotiation_study(*, mediating: bool, turn_cap: int = 16, **fields: Any) -> ChatStudy:
    """A chat study of the HMO negotiation; the participant is the Mediator, or Alex (position 0)."""
    scenario = hmo_negotiation(turn_cap)
    fields.setdefault("human_position", mediator_position(scenario) if mediating else 0)
    fields.setdefault("min_participant_turns", 1)
    fields.setdefault("conditions", ("none",))
    return make_chat_study(scenarios=[scenario], target=5, **fields)


@dataclass
class Played:
    """What a played negotiation left: the participant, the floors seen with a window, and the clock."""

    participant: Participant
    windows: list[int]
    now: datetime


def play(
    participant: Participant,
    person: ScriptedMediatorPerson | ScriptedPartyPerson,
    *,
    now: datetime,
    think: float = 1.5,
) -> Played:
    """Play the participant's negotiation to its cap on a clock of our own: each open window is answered by
    ``person`` after ``think`` seconds (or left to run out), agents' turns are stored as the floor gives them
    (their words are not the point here), and the participant writes ``person.line`` when it is theirs."""
    windows: list[int] = []
    episode = Episode.objects.get(pk=participant.episode_id)
    for _ in range(10 * episode.turn_cap):
        index = episode.turns.count()
        if index >= episode.turn_cap:
            break
        floor = settle_floor(participant.pk, now).floor
        if floor is not None and floor.window:
            windows.append(floor.index)
            choice = person.choice(floor)
            if choice is not None:
                now += timedelta(seconds=think)
                choose_floor(participant.pk, choice, floor.index, now)
            else:
                now = floor.closes_at + timedelta(milliseconds=1)
            continue
        cast = load_cast(participant)
        seat = cast.seat_at(index)
        assert seat != NOBODY, f"turn {index} was given to nobody"
        now += timedelta(seconds=2)
        if seat == cast.human_seat:
            submit_human_turn(
                participant.pk,
                client_id=f"scripted-person-{index:04d}",
                action_type="speak",
                content=person.line(index),
                now=now,
            )
        else:
            Turn.objects.create(
                episode=episode,
                index=index,
                seat_id=seat,
                action_type="speak",
                content=f"An agent's line at turn {index}.",
                created_at=now,
            )
    else:
        raise AssertionError("the negotiation did not reach its cap")
    settle_floor(participant.pk, now)  # ties the last intervention to its turn
    participant.refresh_from_db()
    return Played(participant, windows, now)


def chatting(study: ChatStudy, participant_id: str = "negotiator") -> Participant:
    return make_participant(study, participant_id=participant_id, stage=Participant.Stage.CHAT)
