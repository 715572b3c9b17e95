"""What a negotiating agent sees: the case, the parties, the conversation so far, as plain values.

No database here, so the simulation loop (``benchmark.runs.negotiation``) and a live chat build the
same context and hand it to the same party agents and mediator policies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

RECENT = 5  # utterances an agent reads at each step, as the ProMediate code gives them


@dataclass(frozen=True)
class Utterance:
    index: int
    speaker: str
    text: str
    mediator: bool = False


@dataclass(frozen=True)
class TopicView:
    """One issue under negotiation: its title, what must be settled, and its options ``(key, text)``."""

    title: str
    question: str = ""
    options: tuple[tuple[str, str], ...] = ()

    def option_text(self, key: str) -> str:
        return next((text for option, text in self.options if option == key), "")


@dataclass(frozen=True)
class PartyView:
    """One party at the table: its private brief, its conflict-mode persona and its preferences.

    ``rankings`` maps a topic title to option keys from most to least wanted; ``unacceptable`` to the
    keys it refuses.
    """

    name: str
    position: int
    brief: str = ""
    persona: str = ""
    mode: str = "general"
    rankings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unacceptable: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class NegotiationContext:
    """The negotiation as it stands before the next utterance.

    ``shared`` is the case every participant reads (background, issues, options); ``seed`` the
    episode's, from which every scripted choice is drawn with the turn index and the seat;
    ``consensus`` the latest consensus state a tracker produced for the mediator (None: none kept).
    """

    shared: str
    topics: tuple[TopicView, ...]
    parties: tuple[PartyView, ...]
    transcript: tuple[Utterance, ...] = ()
    seed: int = 0
    mediator_name: str | None = None
    mediator_brief: str = ""
    mediator_persona: str = ""
    consensus: Mapping[str, Any] | None = None

    @property
    def turn(self) -> int:
        """The index the next utterance will have."""
        return len(self.transcript)

    @property
    def last(self) -> Utterance | None:
        return self.transcript[-1] if self.transcript else None

    def recent(self, count: int = RECENT) -> tuple[Utterance, ...]:
        return self.transcript[-count:]

    def party(self, name: str) -> PartyView:
        return next(party for party in self.parties if party.name == name)

    def party_names(self) -> list[str]:
        return [party.name for party in self.parties]

    def silence(self, name: str) -> int:
        """Turns since ``name`` last spoke; the turn number when it never has."""
        for utterance in reversed(self.transcript):
            if utterance.speaker == name:
                return self.turn - 1 - utterance.index
        return self.turn

    def since_mediator(self) -> tuple[Utterance, ...]:
        """The utterances after the mediator's last one (all of them if it never spoke)."""
        for number in range(len(self.transcript) - 1, -1, -1):
            if self.transcript[number].mediator:
                return self.transcript[number + 1 :]
        return self.transcript

    def with_utterance(self, utterance: Utterance) -> NegotiationContext:
        return NegotiationContext(**{**self.__dict__, "transcript": (*self.transcript, utterance)})


def lines(utterances: tuple[Utterance, ...]) -> str:
    """Utterances as the agents read them, one ``Name: text`` a line."""
    return "\n".join(f"{u.speaker}: {u.text}" for u in utterances) or "(nothing has been said yet)"


def draw(*parts: object) -> int:
    """A stable number from the parts (seed, turn index, seat, ...): the scripted agents' only randomness."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")
