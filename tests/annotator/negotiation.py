"""A small mediated negotiation to build ProMediate studies on: a mediator and three parties, speaking in a
given order, with a barrier (the conflict mode) and models planted so blinding tests can look for them."""

from __future__ import annotations

from collections.abc import Sequence

from benchmark.models import ActionType, Barrier, Episode, Seat, Turn
from tests.builders import make_character, make_scenario

PARTIES = ("Alex", "Jamie", "Lee")
MEDIATOR_MODEL = "planted-mediator-model-x9"
# M = the mediator; A, J, L = the parties. Turn 0 is the welcome; interventions at 4 and 8.
SPEAKERS = "MAJLMAJLMAL"


def competing_mode() -> Barrier:
    """The competing conflict mode, the condition raters must not see (seeded with the ProMediate cases)."""
    return Barrier.objects.get(key="promediate-competing", team=None)


def make_negotiation(
    speakers: str = SPEAKERS, *, mediator_name: str = "Mediator", scenario=None, barrier: Barrier | None = None
) -> Episode:
    """An episode whose turn ``i`` is spoken by ``speakers[i]`` (M the mediator, else a party's initial); each
    turn's text names its speaker and index ("Lee says line 3.")."""
    scenario = scenario or make_scenario(
        codename=f"negotiation-{Episode.objects.count() + 1}",
        context="Three colleagues settle a supply contract with a mediator.",
        roles=[{"character": make_character(first_name=name, last_name="")} for name in (mediator_name, *PARTIES)],
    )
    episode = Episode.objects.create(
        team=scenario.team,
        scenario=scenario,
        barrier=barrier or competing_mode(),
        source=Episode.Source.SIMULATED,
        status=Episode.Status.FINISHED,
        settings={"promediate": {"mediator": "social", "mediator_position": 0, "mediator_model": MEDIATOR_MODEL}},
    )
    seats: Sequence[Seat] = [
        Seat.objects.create(
            episode=episode,
            position=role.position,
            role=role,
            character=role.character,
            model=MEDIATOR_MODEL if role.position == 0 else "planted-party-model",
            carries_barrier=role.position != 0,
        )
        for role in scenario.roles.select_related("character").order_by("position")
    ]
    by_initial = {"M": seats[0], **{name[0]: seat for name, seat in zip(PARTIES, seats[1:], strict=True)}}
    names = {"M": "Mediator", **{name[0]: name for name in PARTIES}}
    Turn.objects.bulk_create(
        Turn(
            episode=episode,
            index=index,
            seat=by_initial[initial],
            action_type=ActionType.SPEAK,
            content=f"{names[initial]} says line {index}.",
            model=by_initial[initial].model,
        )
        for index, initial in enumerate(speakers)
    )
    return episode
