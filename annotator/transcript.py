"""The transcript as the item page shows it: its turns, and beside each agent turn the questions asked of it.

A question asked per turn (scope ``turn``, e.g. the "Rate each reply" preset) is shown beside every
turn it is asked of (``answer_forms.agent_turns``), not in the form's list; its inputs name the form
they belong to (``templates/annotator/partials/_turn_rating.html``), and its guide (the prompt, help
and anchors) once above the transcript.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmark.models import Seat, Turn

from .answer_forms import agent_turns


@dataclass
class TurnView:
    index: int
    number: int
    speaker: str
    action_type: str
    content: str
    ratings: list[Any] = field(default_factory=list)  # the form entries of the questions asked of this turn


@dataclass
class ConversationView:
    label: str
    turns: list[TurnView]
    spans_target: bool
    rating_guide: list[Any] = field(default_factory=list)  # the questions asked per turn, explained once


def conversation(
    label: str, seats: Sequence[Seat], turns: Sequence[Turn], *, spans_target: bool, guide: Sequence[Any] = (),
    rate: Callable[[int], list[Any]] | None = None,
) -> ConversationView:
    """The transcript of one episode; with a ``guide`` (the questions asked per turn, as the page shows them),
    ``rate(index)`` gives the form entries shown beside each agent turn."""
    names = {seat.pk: seat.character.name for seat in seats}
    rated = set(agent_turns(seats, turns)) if guide and rate is not None else set()
    return ConversationView(
        label=label,
        turns=[
            TurnView(turn.index, turn.number, names.get(turn.seat_id, ""), turn.action_type, turn.content,
                     ratings=rate(turn.index) if rate is not None and turn.index in rated else [])
            for turn in turns
        ],
        spans_target=spans_target,
        rating_guide=list(guide) if rated else [],
    )
