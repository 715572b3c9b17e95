"""The transcript as the item page shows it: its turns, and beside each agent turn the questions asked of it.

A question asked per turn (scope ``turn``, e.g. the "Rate each reply" preset) is shown beside every
turn it is asked of (``answer_forms.agent_turns``), not in the form's list; its inputs name the form
they belong to (``templates/annotator/partials/_turn_rating.html``), and its guide (the prompt, help
and anchors) once above the transcript.

An item that shows a window of its episode (``StudyItem.first_turn``…, ``annotator.windows``) passes only
the window's turns, the one turn its questions are about (``rated``) and that turn to highlight: a
ProMediate intervention, whose speaker is shown as "Mediator" whoever played it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmark.models import Seat, Turn

from .answer_forms import agent_turns

MEDIATOR = "Mediator"


@dataclass
class TurnView:
    index: int
    number: int
    speaker: str
    action_type: str
    content: str
    ratings: list[Any] = field(default_factory=list)  # the form entries of the questions asked of this turn
    highlighted: bool = False  # the turn the item's questions are about
    start_s: float | None = None  # where the turn is in the episode's recording (seconds)
    end_s: float | None = None

    @property
    def time_label(self) -> str:
        """The turn's start as the player shows time, m:ss.s ("" without a time)."""
        if self.start_s is None:
            return ""
        minutes, seconds = divmod(self.start_s, 60)
        return f"{int(minutes)}:{seconds:04.1f}"


@dataclass
class ConversationView:
    label: str
    turns: list[TurnView]
    spans_target: bool
    rating_guide: list[Any] = field(default_factory=list)  # the questions asked per turn, explained once


def conversation(
    label: str, seats: Sequence[Seat], turns: Sequence[Turn], *, spans_target: bool, guide: Sequence[Any] = (),
    rate: Callable[[int], list[Any]] | None = None, rated: Collection[int] | None = None,
    highlight: int | None = None,
) -> ConversationView:
    """The transcript of one episode (or of the window of it in ``turns``); with a ``guide`` (the questions
    asked per turn, as the page shows them), ``rate(index)`` gives the form entries shown beside each turn
    in ``rated`` (by default every agent turn). The ``highlight`` turn is marked and its speaker is named
    "Mediator"."""
    names = {seat.pk: seat.character.name for seat in seats}
    highlighted = next((turn for turn in turns if turn.index == highlight), None)
    if highlighted is not None:
        names[highlighted.seat_id] = MEDIATOR
    if not guide or rate is None:
        rated = set()
    elif rated is None:
        rated = set(agent_turns(seats, turns))
    return ConversationView(
        label=label,
        turns=[
            TurnView(turn.index, turn.number, names.get(turn.seat_id, ""), turn.action_type, turn.content,
                     ratings=rate(turn.index) if rate is not None and turn.index in rated else [],
                     highlighted=turn.index == highlight, start_s=turn.start_s, end_s=turn.end_s)
            for turn in turns
        ],
        spans_target=spans_target,
        rating_guide=list(guide) if rated else [],
    )


def rated_turns(item: Any, seats: Sequence[Seat], turns: Sequence[Turn]) -> list[int]:
    """The turns of ``item`` (a ``StudyItem``) a per-turn question is asked of: its target turn, else every agent
    turn it shows."""
    if item.target_turn is not None:
        return [item.target_turn]
    if item.windowed:
        shown = item.windows()
        turns = [turn for turn in turns if any(first <= turn.index <= last for first, last in shown)]
    return agent_turns(seats, turns)


def rated_speaker(item: Any, turns: dict[int, list[Turn]]) -> int | None:
    """The seat (pk) whose turn ``item`` rates, shown as "Mediator"; None for an item without a target turn."""
    return next((turn.seat_id for turn in turns[item.episode_id] if turn.index == item.target_turn), None)


def item_conversations(
    item: Any, seats: dict[int, list[Seat]], turns: dict[int, list[Turn]], *, has_spans: bool, guide: Sequence[Any],
    rate: Callable[[int], list[Any]],
) -> list[ConversationView]:
    """The transcripts an item shows (``seats`` and ``turns`` by episode pk): its episode (and the compared one,
    "Conversation A" and "B"), or its windows of its episode ("First excerpt" and "Second excerpt" for two)."""
    main_seats, main_turns = seats[item.episode_id], turns[item.episode_id]
    if item.windowed:
        windows = item.windows()
        labels = ["First excerpt", "Second excerpt"] if len(windows) > 1 else [""]
        rated = rated_turns(item, main_seats, main_turns)
        return [
            conversation(
                label, main_seats, [turn for turn in main_turns if first <= turn.index <= last], spans_target=False,
                guide=guide, rate=rate, rated=rated, highlight=item.target_turn,
            )
            for label, (first, last) in zip(labels, windows, strict=True)
        ]
    conversations = [
        conversation(
            "Conversation A" if item.compared_episode_id else "", seats[episode], turns[episode],
            spans_target=has_spans and episode == item.episode_id, guide=guide if episode == item.episode_id else [],
            rate=rate,
        )
        for episode in seats
    ]
    if len(conversations) > 1:
        conversations[1].label = "Conversation B"
    return conversations
