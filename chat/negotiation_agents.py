"""The agents' side of a live negotiation: the mediator's decision to intervene, the parties' thoughts and
who of them takes the floor, and the lines the offline model says.

This is the seam between the chat and the ProMediate agents of ``benchmark`` (spec PM-4, PM-5, PM-6): the
chat asks only these four functions. Until the simulation's party agent and mediator policies are merged
they are small deterministic stand-ins, drawn from a hash of (episode seed, turn index, seat) like every
scripted agent in Parley, so a reconnecting page or another server process reaches the same decision.
Only the offline behaviour lives here; the motivation rules (threshold, silence bonus, fallback) are the
spec's (§1.2), written as plain values so they can be swapped for the simulation's without touching the chat.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

IM_THRESHOLD = 3.0  # a party's thought must reach this to be voiced when anyone may speak (spec §1.2)
THOUGHTS_PER_PARTY = 2
MEDIATOR_EVERY = 4  # the offline mediator steps in once this many party turns passed since it spoke
SCRIPTED = "scripted"


@dataclass(frozen=True)
class Thought:
    """One candidate contribution of a party, with the motivation it was rated and the one after the bonus."""

    seat_pk: int
    content: str
    raw_rating: float
    rating: float


@dataclass(frozen=True)
class Decision:
    """Whether the (agent) mediator speaks next, with its rating and reason."""

    engaged: bool
    rating: float | None
    reason: str


def _rng(seed: int, index: int, seat_position: int, purpose: str) -> random.Random:
    return random.Random(f"parley-negotiation|{purpose}|{seed}|{index}|{seat_position}")


def silence_bonus(rating: float, gap: int) -> float:
    """Motivation after ``gap`` turns of silence: rating × 1.01^gap, clipped to [1, 5], rounded to 0.1 (§1.2)."""
    return round(min(5.0, max(1.0, rating * 1.01**gap)), 1)


def mediator_decides(*, seed: int, index: int, party_turns_since: int) -> Decision:
    """The offline mediator: steps in after ``MEDIATOR_EVERY`` party turns without it (a Generic-style rule)."""
    engaged = party_turns_since >= MEDIATOR_EVERY
    rating = 4.0 if engaged else round(_rng(seed, index, -1, "mediator").uniform(1.0, 3.5), 1)
    reason = (
        f"{party_turns_since} party turns since the mediator last spoke."
        if engaged
        else "The parties are still exchanging views."
    )
    return Decision(engaged, rating, reason)


def party_thoughts(
    *, seed: int, index: int, seat_pk: int, seat_position: int, gap: int, topics: Sequence[str]
) -> list[Thought]:
    """The offline party's thoughts after turn ``index - 1``: two, rated 1–5, with the silence bonus."""
    rng = _rng(seed, index, seat_position, "thoughts")
    thoughts = []
    for _ in range(THOUGHTS_PER_PARTY):
        topic = rng.choice(list(topics)) if topics else "the terms"
        raw = round(rng.uniform(1.0, 5.0), 1)
        content = f"Push for my preferred option on {topic}."
        thoughts.append(Thought(seat_pk, content, raw, silence_bonus(raw, gap)))
    return thoughts


def select_speaker(thoughts: Sequence[Thought]) -> Thought | None:
    """The thought that takes the floor: the most motivated one at or above the threshold, else the most
    motivated of all (each party's stored thought, threshold 0); the first on ties. None without thoughts."""
    if not thoughts:
        return None
    eager = [thought for thought in thoughts if thought.rating >= IM_THRESHOLD]
    pool = eager or list(thoughts)
    best = max(thought.rating for thought in pool)
    return next(thought for thought in pool if thought.rating == best)


def party_lines(*, name: str, preferences: Sequence[tuple[str, Sequence[str]]], count: int) -> list[str]:
    """What the offline party says, turn after turn: its first choice on each topic, then its second."""
    lines = []
    for round_number in range(count):
        if not preferences:
            lines.append(f"{name} here: I want terms my side can live with.")
            continue
        title, ranking = preferences[round_number % len(preferences)]
        choice = round_number // len(preferences)
        if ranking and choice < len(ranking):
            lines.append(f"On {title}, I would go for option ({ranking[choice]}).")
        else:
            lines.append(f"On {title}, I could move if the rest of the package works for me.")
    return lines


def mediator_lines(*, topics: Sequence[str], count: int) -> list[str]:
    """What the offline mediator says: the welcome, then one topic after another to take stock of."""
    lines = ["Welcome everyone! Let's discuss the issues in front of us, one at a time."]
    for number in range(1, count):
        topic = topics[(number - 1) % len(topics)] if topics else "the open issues"
        lines.append(f"Let's take stock on {topic}: where does each of you stand, and what could you accept?")
    return lines
