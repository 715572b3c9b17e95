"""Who speaks next in an agent episode, and for how many turns at most.

Two policies, a property of the scenario (``Scenario.turn_taking``):

- **Round robin** (Sotopia's, the default): the seats speak in the order of their positions,
  0, 1, 2, 0, 1, 2, ... With two seats that is today's alternation.
- **Random order after a greeting** (AgentSense's): the greeter (``Scenario.greeter_position``,
  else the first role) opens; after that each turn goes to a seat drawn at random among those who
  may speak, never the one who just spoke unless it is the only one left. The draw depends only
  on the episode's seed and the turn's index, so an episode is reproducible and a resumed one
  continues exactly as an uninterrupted one would; the same seed in every condition of a run
  gives paired episodes the same order as long as their transcripts agree on who left.

A ProMediate negotiation (``promediate``) gives the floor by motivation, not by order: the mediator
decides first, then the most motivated party speaks (:mod:`benchmark.scenarios.floor`, played by
:mod:`benchmark.runs.negotiation`). Here it counts as random order after the mediator's opening, which
is what an order drawn without the parties' thoughts can say of it (expected turns, a briefing).

A seat that leaves speaks no more. An episode ends when fewer than two seats can still speak
(with two seats, as soon as one leaves) or at its turn cap. A scenario's own turn cap, when set,
overrides the run's (:func:`turn_cap_for`).

Everything here is a pure function of plain values, so the runner, the tests and any later
policy share one place.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from functools import lru_cache

from ..models import Scenario, TurnTaking


def next_speaker(
    policy: str,
    positions: Sequence[int],
    spoken: Sequence[int],
    left: Collection[int] = (),
    *,
    seed: int = 0,
    greeter: int | None = None,
) -> int:
    """The seat position that takes the next turn.

    ``positions`` are the episode's seat positions, ``spoken`` the seat position of each turn so
    far in order, ``left`` the positions that have left. Raises ``ValueError`` when no seat can
    speak (the caller ends the episode before that).
    """
    order = sorted(positions)
    active = [position for position in order if position not in left]
    if not active:
        raise ValueError("no seat is left to speak")
    if policy == TurnTaking.ROUND_ROBIN:
        if not left:
            return order[len(spoken) % len(order)]
        last = spoken[-1] if spoken else order[-1]
        later = [position for position in active if position > last]
        return (later or active)[0]
    if policy in (TurnTaking.RANDOM_AFTER_GREETING, TurnTaking.PROMEDIATE):
        if not spoken:
            opener = order[0] if greeter is None else greeter
            if opener not in order:
                raise ValueError(f"the greeter, role {opener}, has no seat (seats: {order})")
            return opener
        candidates = [position for position in active if position != spoken[-1]] or active
        return random.Random(f"parley-turns|{seed}|{len(spoken)}").choice(candidates)
    raise ValueError(f"unknown turn-taking policy {policy!r}; use one of {', '.join(TurnTaking.values)}")


@lru_cache(maxsize=1024)
def speaking_order(
    policy: str,
    positions: tuple[int, ...],
    length: int,
    *,
    seed: int = 0,
    greeter: int | None = None,
    leaves: tuple[tuple[int, int], ...] = (),
) -> tuple[int, ...]:
    """The seat positions of the first ``length`` turns under ``policy``, drawn as :func:`next_speaker` draws them.

    ``leaves`` are the (turn index, seat position) of each leave so far: from the turn after a leave on,
    that seat is stepped round, as in a running episode. Seats not listed are assumed to stay.
    """
    gone = {position: index for index, position in leaves}
    spoken: list[int] = []
    for index in range(length):
        left = [position for position, at in gone.items() if at < index]
        spoken.append(next_speaker(policy, positions, spoken, left, seed=seed, greeter=greeter))
    return tuple(spoken)


def expected_turns(
    policy: str, positions: Collection[int], position: int, turn_cap: int, *, greeter: int | None = None
) -> float:
    """How many of the first ``turn_cap`` turns seat ``position`` takes, nobody leaving.

    Exact under round robin. Under random order after a greeting the count depends on the episode's
    seed, so this is its expectation over seeds: after the greeting each turn goes to one of the
    ``n - 1`` seats that did not just speak, so the chance ``p`` that the seat speaks at a turn follows
    ``p' = (1 - p) / (n - 1)`` from ``p = 1`` (it greets) or ``0`` (it does not).
    """
    order = tuple(sorted(positions))
    if policy not in (TurnTaking.RANDOM_AFTER_GREETING, TurnTaking.PROMEDIATE):
        return float(speaking_order(policy, order, turn_cap).count(position))
    chance, total = (1.0 if position == (order[0] if greeter is None else greeter) else 0.0), 0.0
    for _ in range(turn_cap):
        total += chance
        chance = (1 - chance) / (len(order) - 1)
    return total


def can_go_on(positions: Collection[int], left: Collection[int]) -> bool:
    """Whether at least two seats can still speak: a conversation needs two."""
    return len(set(positions) - set(left)) >= 2


def turn_cap_for(scenario: Scenario, run_cap: int) -> int:
    """The scenario's own turn cap when it has one, else the run's."""
    return scenario.turn_cap or run_cap


def check_greeter(scenario: Scenario, role_positions: Collection[int]) -> str | None:
    """A problem with the scenario's greeter, as a sentence, or None when there is none."""
    if scenario.greeter_position is None:
        return None
    if scenario.turn_taking not in (TurnTaking.RANDOM_AFTER_GREETING, TurnTaking.PROMEDIATE):
        return f"Scenario {scenario} names a greeter but takes turns {scenario.get_turn_taking_display()}."
    if scenario.greeter_position not in role_positions:
        return (
            f"Scenario {scenario} names role {scenario.greeter_position} as its greeter, but its roles are "
            f"{', '.join(map(str, sorted(role_positions)))}."
        )
    return None
