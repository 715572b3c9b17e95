"""The stretch of transcript a task item shows: four ways to cut an excerpt around a segment.

Each line is ``"<speaker>: <text>"``, lines joined by a newline, as SHREC's released pipeline
prints them (``User A: Good. How was yours?``).

- ``pair`` (SHREC's turn mode, buffer 0 by default): the user–agent pair around where the segment
  starts. Take the last turn that starts strictly before the segment's start (the first turn if
  none does); if the agent spoke it, show the turn before it and it, otherwise it and the turn after
  it (one turn at either end of the episode). A segment marked on turns only starts at its first
  turn. "The agent" is the seat the span is about, or the episode's agent seat.
- ``seconds`` (SHREC's exact mode, ±5 s): every word whose time is within ``[start − 5, end + 5]``
  (the start no earlier than 0), regrouped into lines by speaker. Needs word times.
- ``span``: the turns the segment covers; ``span+N`` adds N turns on either side.

Turns with no text are skipped, as the released pipeline drops them before cutting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .records import EpisodeRecord, TurnRecord

EXCERPT_MODES = ("pair", "seconds", "span")
_SPAN_PLUS = re.compile(r"^span\+(\d+)$")


@dataclass(frozen=True)
class Excerpt:
    """The lines shown and the turns they come from (indexes, inclusive; None when empty)."""

    lines: tuple[str, ...]
    first_turn: int | None
    last_turn: int | None
    turns: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


EMPTY = Excerpt((), None, None)


def check_mode(mode: str) -> str | None:
    """None when ``mode`` is an excerpt mode, else what is wrong with it."""
    if mode in EXCERPT_MODES or _SPAN_PLUS.match(mode):
        return None
    return f"unknown excerpt mode {mode!r}: choose pair, seconds, span or span+N (e.g. span+1)"


def line(turn: TurnRecord) -> str:
    return f"{turn.speaker}: {turn.text.strip()}"


def _spoken(episode: EpisodeRecord) -> list[TurnRecord]:
    return [turn for turn in episode.turns if turn.text.strip()]


def _of_turns(turns: list[TurnRecord]) -> Excerpt:
    if not turns:
        return EMPTY
    return Excerpt(tuple(line(turn) for turn in turns), turns[0].index, turns[-1].index, tuple(t.index for t in turns))


def pair_excerpt(
    episode: EpisodeRecord,
    *,
    start_s: float | None = None,
    start_turn: int | None = None,
    agent_seat: int | None = None,
    buffer_s: float = 0.0,
) -> Excerpt:
    """SHREC's turn mode: the user–agent pair around the segment's start (see the module docstring)."""
    turns = _spoken(episode)
    if not turns:
        return EMPTY
    agent = episode.agent_seat if agent_seat is None else agent_seat
    if start_s is not None:
        start = max(0.0, start_s - buffer_s)
        before = [i for i, turn in enumerate(turns) if turn.start_s is not None and turn.start_s < start]
        position = before[-1] if before else 0
    else:
        at_or_after = [i for i, turn in enumerate(turns) if turn.index >= (start_turn or 0)]
        position = at_or_after[0] if at_or_after else len(turns) - 1
    if turns[position].seat == agent:
        chosen = turns[max(0, position - 1) : position + 1]
    else:
        chosen = turns[position : position + 2]
    return _of_turns(chosen)


def seconds_excerpt(episode: EpisodeRecord, start_s: float, end_s: float, buffer_s: float = 5.0) -> Excerpt:
    """SHREC's exact mode: the words timed within the buffered window, regrouped by speaker."""
    low, high = max(0.0, start_s - buffer_s), end_s + buffer_s
    groups: list[tuple[str, list[str], list[int]]] = []
    for turn in episode.turns:
        words = turn.words or (((turn.start_s, turn.text),) if turn.start_s is not None else ())
        for seconds, word in words:
            word = str(word).strip()
            if not word or not low <= float(seconds) <= high:
                continue
            if groups and groups[-1][0] == turn.speaker:
                groups[-1][1].append(word)
                if groups[-1][2][-1] != turn.index:
                    groups[-1][2].append(turn.index)
            else:
                groups.append((turn.speaker, [word], [turn.index]))
    if not groups:
        return EMPTY
    indexes = tuple(index for _, _, group_turns in groups for index in group_turns)
    lines = tuple(f"{speaker}: {' '.join(words)}" for speaker, words, _ in groups)
    return Excerpt(lines, min(indexes), max(indexes), indexes)


def span_excerpt(episode: EpisodeRecord, start_turn: int, end_turn: int, around: int = 0) -> Excerpt:
    """The turns from ``start_turn`` to ``end_turn`` (inclusive), ``around`` more on either side."""
    low, high = start_turn - around, end_turn + around
    return _of_turns([turn for turn in _spoken(episode) if low <= turn.index <= high])


def excerpt(
    episode: EpisodeRecord,
    mode: str,
    *,
    start_s: float | None,
    end_s: float | None,
    start_turn: int,
    end_turn: int,
    agent_seat: int | None = None,
    seconds_buffer: float = 5.0,
) -> Excerpt:
    """The excerpt of a segment in ``mode``; a segment without times is cut by its turns (pair, span)."""
    problem = check_mode(mode)
    if problem:
        raise ValueError(problem)
    if mode == "pair":
        return pair_excerpt(episode, start_s=start_s, start_turn=start_turn, agent_seat=agent_seat)
    if mode == "seconds":
        if start_s is None or end_s is None:
            raise ValueError(
                f"episode {episode.key}: the seconds excerpt needs spans with times; these are marked on turns "
                "only (choose pair, span or span+N)"
            )
        return seconds_excerpt(episode, start_s, end_s, seconds_buffer)
    plus = _SPAN_PLUS.match(mode)
    return span_excerpt(episode, start_turn, end_turn, int(plus.group(1)) if plus else 0)
