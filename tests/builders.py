"""Small builders for test data: each makes a valid object with sensible defaults, any field overridable.

They need a database (use them inside a ``db`` test). Barriers come from the seeded rows when
present and are created otherwise, so the builders also work after a flushed transactional test.
"""

from collections.abc import Sequence
from itertools import count
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser

from benchmark.models import ActionType, Barrier, Character, Episode, Role, Scenario, Seat, Turn

_numbers = count(1)
PASSWORD = "correct horse battery staple"


def make_user(*, staff: bool = False, superuser: bool = False, **fields: Any) -> AbstractUser:
    """A user whose password is ``PASSWORD``; ``staff=True`` makes a researcher."""
    number = next(_numbers)
    fields.setdefault("username", f"user{number}")
    fields.setdefault("email", f"user{number}@example.org")
    manager = get_user_model().objects
    if superuser:
        return manager.create_superuser(password=PASSWORD, **fields)
    return manager.create_user(password=PASSWORD, is_staff=staff, **fields)


def make_character(**fields: Any) -> Character:
    number = next(_numbers)
    fields.setdefault("first_name", f"Person{number}")
    fields.setdefault("last_name", "Tester")
    fields.setdefault("occupation", "teacher")
    fields.setdefault("gender", "woman")
    fields.setdefault("pronouns", "she/her")
    return Character.objects.create(**fields)


def make_scenario(*, roles: int | Sequence[dict[str, Any]] = 2, **fields: Any) -> Scenario:
    """A scenario with ``roles`` roles (a number, or one dict of Role fields per role), each cast."""
    number = next(_numbers)
    fields.setdefault("codename", f"scenario-{number}")
    fields.setdefault("context", "Two neighbours meet in the stairwell to talk about a noisy party.")
    scenario = Scenario.objects.create(**fields)
    role_fields = [{} for _ in range(roles)] if isinstance(roles, int) else list(roles)
    for position, overrides in enumerate(role_fields):
        values = {"goal": f"Reach goal {position + 1}.", **overrides}
        if "character" not in values:
            values["character"] = make_character()
        Role.objects.create(scenario=scenario, position=position, **values)
    return scenario


def get_barrier(key: str = "none") -> Barrier:
    """The barrier with ``key``: the seeded one, or a minimal stand-in when the table was flushed."""
    barrier, _ = Barrier.objects.get_or_create(
        key=key, defaults={"name": key.title(), "definition": f"The {key} condition."}
    )
    return barrier


def make_episode(
    *,
    scenario: Scenario | None = None,
    barrier: Barrier | str = "none",
    turns: int | Sequence[tuple[ActionType | str, str]] = 4,
    barrier_seat: int | None = 0,
    seat_fields: dict[str, Any] | None = None,
    **fields: Any,
) -> Episode:
    """An episode with one seat per scenario role, cast with the role's character.

    ``turns`` is a number of speech turns, or a list of ``(action_type, content)`` pairs; seats take
    turns in order. ``barrier_seat`` is the position of the seat under the barrier (None: no seat).
    ``seat_fields`` apply to every seat (e.g. ``{"model": "scripted"}``).
    """
    scenario = scenario or make_scenario()
    if isinstance(barrier, str):
        barrier = get_barrier(barrier)
    fields.setdefault("source", Episode.Source.SIMULATED)
    fields.setdefault("status", Episode.Status.FINISHED)
    episode = Episode.objects.create(scenario=scenario, barrier=barrier, **fields)
    seats = [
        Seat.objects.create(
            episode=episode,
            position=role.position,
            role=role,
            character=role.character or make_character(),
            carries_barrier=role.position == barrier_seat,
            **(seat_fields or {}),
        )
        for role in scenario.roles.select_related("character")
    ]
    actions = (
        [(ActionType.SPEAK, f"Line {index + 1}.") for index in range(turns)] if isinstance(turns, int) else turns
    )
    Turn.objects.bulk_create(
        Turn(episode=episode, index=index, seat=seats[index % len(seats)], action_type=action, content=content,
             model=seats[index % len(seats)].model)
        for index, (action, content) in enumerate(actions)
    )
    return episode
