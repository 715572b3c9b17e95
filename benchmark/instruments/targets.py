"""What an answer is about: the episode, a seat, a goal, a turn, or a span of turns.

Every answer (a judge's, an annotator's, a participant's, an interviewed agent's) is about one
**target** of its episode. The question says which kinds of target it may be asked of (its
``scope``); the answer stores its target in the ``Answer`` columns listed in :data:`COLUMNS`. This
module is the one place that turns those columns into a :class:`Target` and back, so readers,
forms, importers, exports, reports and the database triggers never build (seat, goal, turn)
tuples by hand.

- **episode**: no column set; the answer is about the whole conversation.
- **seat**: ``seat_position``, the seat (by its position in the episode) the answer is about.
- **goal**: ``goal``, the goal (a ``Goal`` row) the answer is about; AgentSense's typed goals.
- **turn**: ``turn``, the index of one turn (``Turn.index``), e.g. a rating of one reply.
- **span**: ``turn`` and ``end_turn``, a range of turns (inclusive), optionally narrowed by
  ``start_char`` (in the first turn, inclusive) and ``end_char`` (in the last turn, exclusive).

A target orders as the transcript reads: the episode first, then seats, goals, turns and spans.

In an export record (``benchmark.exporting``) the seat and goal keep their keys (``seat``;
``goal`` as the goal's role and position, which the exporter writes), and the turn columns are
written only when set (:meth:`Target.turn_record`) and read back with :meth:`Target.turn_keys`,
so every file written before turns and spans existed reads, and writes back, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["COLUMNS", "EPISODE", "GOAL", "KINDS", "SEAT", "SPAN", "TURN", "TURN_KEYS", "Target"]

EPISODE, SEAT, GOAL, TURN, SPAN = "episode", "seat", "goal", "turn", "span"
KINDS = (EPISODE, SEAT, GOAL, TURN, SPAN)

# The Answer (and draft) columns that hold a target, in the order ``Target.from_columns`` takes them.
COLUMNS = ("seat_position", "goal_id", "turn", "end_turn", "start_char", "end_char")
# The keys of an export record that hold a turn or span target (written only when set).
TURN_KEYS = ("turn", "end_turn", "start_char", "end_char")


@dataclass(frozen=True)
class Target:
    """One target; build it with the class methods, read it back with :meth:`from_columns`."""

    seat: int | None = None
    goal: int | None = None  # a Goal's primary key
    turn: int | None = None  # Turn.index: the turn, or a span's first turn
    end_turn: int | None = None  # a span's last turn (inclusive)
    start_char: int | None = None
    end_char: int | None = None

    # ----- building
    @classmethod
    def episode(cls) -> Target:
        return cls()

    @classmethod
    def of_seat(cls, position: int) -> Target:
        return cls(seat=position)

    @classmethod
    def of_goal(cls, goal_id: int) -> Target:
        return cls(goal=goal_id)

    @classmethod
    def of_turn(cls, index: int) -> Target:
        return cls(turn=index)

    @classmethod
    def of_span(cls, start_turn: int, end_turn: int, start_char: int | None = None,
                end_char: int | None = None) -> Target:
        if end_turn < start_turn:
            raise ValueError(f"a span ends (turn {end_turn}) before it starts (turn {start_turn})")
        if (start_char is None) != (end_char is None):
            raise ValueError("a span's character offsets come as a pair")
        if start_char is not None and start_turn == end_turn and end_char <= start_char:  # type: ignore[operator]
            raise ValueError(f"a span's characters end ({end_char}) before they start ({start_char})")
        return cls(turn=start_turn, end_turn=end_turn, start_char=start_char, end_char=end_char)

    @classmethod
    def from_columns(cls, seat_position: int | None = None, goal_id: int | None = None, turn: int | None = None,
                     end_turn: int | None = None, start_char: int | None = None,
                     end_char: int | None = None) -> Target:
        """The target stored in an answer's columns (in :data:`COLUMNS` order, e.g. from ``values_list``)."""
        return cls(seat_position, goal_id, turn, end_turn, start_char, end_char)

    @classmethod
    def of(cls, row: Any) -> Target:
        """The target of an ``Answer`` (or any object with the :data:`COLUMNS` attributes)."""
        return cls.from_columns(*(getattr(row, column, None) for column in COLUMNS))

    # ----- reading
    @property
    def kind(self) -> str:
        if self.goal is not None:
            return GOAL
        if self.end_turn is not None:
            return SPAN
        if self.turn is not None:
            return TURN
        if self.seat is not None:
            return SEAT
        return EPISODE

    def columns(self) -> dict[str, int | None]:
        """The answer's column values, for ``Answer(**target.columns())`` or a ``filter``."""
        return dict(zip(COLUMNS, (self.seat, self.goal, self.turn, self.end_turn, self.start_char,
                                  self.end_char), strict=True))

    def turn_record(self) -> dict[str, int]:
        """The :data:`TURN_KEYS` that are set, for an export record (nothing for the episode, a seat, a goal)."""
        return {key: value for key, value in zip(TURN_KEYS, (self.turn, self.end_turn, self.start_char,
                                                              self.end_char), strict=True) if value is not None}

    @staticmethod
    def turn_keys(record: Mapping[str, Any]) -> dict[str, Any]:
        """The turn columns an export record gives (absent keys are None), for :meth:`from_columns`."""
        return {key: record.get(key) for key in TURN_KEYS}

    @property
    def sort_key(self) -> tuple[int, ...]:
        """Orders targets as the transcript reads (the episode first, None before any number)."""
        return (KINDS.index(self.kind),) + tuple(-1 if value is None else value for value in (
            self.seat, self.goal, self.turn, self.end_turn, self.start_char, self.end_char))

    def describe(self, seat_names: Mapping[int, str] | None = None,
                 goal_names: Mapping[int, str] | None = None) -> str:
        """How a page or a prompt names the target: 'the episode', a seat's name, a goal, 'turn 3', 'turns 3–5'.

        Turns are numbered from 1 as people read them (``Turn.number``); the stored index is from 0.
        """
        kind = self.kind
        if kind == SEAT:
            return (seat_names or {}).get(self.seat, f"seat {self.seat}")  # type: ignore[arg-type]
        if kind == GOAL:
            return (goal_names or {}).get(self.goal, f"goal {self.goal}")  # type: ignore[arg-type]
        if kind == TURN:
            return f"turn {self.turn + 1}"  # type: ignore[operator]
        if kind == SPAN:
            turns = (f"turn {self.turn + 1}" if self.turn == self.end_turn  # type: ignore[operator]
                     else f"turns {self.turn + 1}–{self.end_turn + 1}")  # type: ignore[operator]
            return turns if self.start_char is None else f"{turns} (characters {self.start_char}–{self.end_char})"
        return "the episode"
