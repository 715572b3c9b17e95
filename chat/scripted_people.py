"""Scripted stand-ins for the people in a live negotiation (spec PM-21), so tests can play one to the end.

They answer the floor's windows as a participant would, on a fixed schedule: the mediator intervenes after
turns 5 and 12 and otherwise lets the parties continue; the party asks for the floor on turns 3 and 7 and
otherwise stays silent. What they say is plain and names the turn, so a test can find each line.
"""

from __future__ import annotations

from dataclasses import dataclass

from .negotiation import CLAIM, CLAIM_WINDOW, CONTINUE, INTERVENE, INTERVENE_WINDOW, Floor


@dataclass(frozen=True)
class ScriptedMediatorPerson:
    """A participant in the mediator's seat: intervenes after the turns listed, lets the parties go on otherwise."""

    intervene_after: tuple[int, ...] = (5, 12)
    silent: bool = False  # let every window run out instead of pressing "Let them continue"

    def choice(self, floor: Floor) -> str | None:
        if floor.window != INTERVENE_WINDOW:
            return None
        if floor.index - 1 in self.intervene_after:
            return INTERVENE
        return None if self.silent else CONTINUE

    def line(self, index: int) -> str:
        if index == 0:
            return "Welcome, everyone. Let's go through the issues one by one."
        return f"Let me step in here (turn {index}): what would each of you need to move?"


@dataclass(frozen=True)
class ScriptedPartyPerson:
    """A participant in a party's seat: asks for the floor for the turns listed, and only for those."""

    claim_on: tuple[int, ...] = (3, 7)

    def choice(self, floor: Floor) -> str | None:
        if floor.window == CLAIM_WINDOW and floor.index in self.claim_on:
            return CLAIM
        return None

    def line(self, index: int) -> str:
        return f"I'd like to make a proposal (turn {index}): we take option (a) on the first topic."
