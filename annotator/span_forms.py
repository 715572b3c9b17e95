"""Reading the spans an annotator marked (the ``spans-<key>`` field: a JSON list), and writing them back.

A span is anchored in one of two ways. Marked on the transcript, by turn indexes (inclusive) and,
when it does not cover whole turns, character offsets in the first and last turn (start inclusive,
end exclusive; the page snaps a selection to whole words). Marked on the recording, by seconds
(``start_s``, ``end_s``): then its turns are the turns those seconds overlap
(``benchmark.episodes.turn_times``), worked out here again whatever the page sent, and it has no
character offsets. Every span also says whose behaviour it is about (``seat``: a seat position of
the episode; the agent's when not given) and through which channel (``channel``: verbal,
non-verbal, both, or not said).

What a complete span needs depends on the study (``Study.spans_need_rationale``): a label, at
least one social attribute and, when the study asks for them, a rationale and, for an error, a
correction. A draft keeps every span that can be stored at all, complete or not: the ``Span``
table allows an empty rationale and correction.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmark.episodes.turn_times import TurnTime, turns_overlapping
from benchmark.instruments.checks import is_whole
from benchmark.models import Question

from .models import Span

CHANNELS = tuple(Span.Channel.values)


@dataclass
class SpanValue:
    """One marked span as read from the form (turn indexes inclusive, character end exclusive)."""

    question: Question
    label: str
    start_turn: int
    end_turn: int
    start_char: int | None
    end_char: int | None
    attributes: list[str]
    rationale: str
    correction: str
    start_s: float | None = None
    end_s: float | None = None
    seat_position: int | None = None
    channel: str = ""


@dataclass(frozen=True)
class SpanRules:
    """What a span of one item is checked against.

    ``turn_lengths[i]``: characters in turn i; ``turn_times``: (index, start_s, end_s) of each turn;
    ``seats``: the episode's seat positions, ``default_seat`` the one a span is about when it names
    none; ``need_rationale``: the study's ``spans_need_rationale``.
    """

    turn_lengths: Sequence[int]
    turn_times: Sequence[TurnTime] = ()
    seats: Sequence[int] = ()
    default_seat: int | None = None
    need_rationale: bool = True


def read_spans(question: Question, raw: str, rules: SpanRules, *, complete: bool,
               known: set[str]) -> tuple[list[SpanValue], str]:
    """The spans in ``raw`` (the field's text) that can be stored, and what is wrong ("" when nothing is)."""
    items: Any = []
    if raw.strip():
        try:
            items = json.loads(raw)
        except (ValueError, RecursionError):  # deep nesting ([[[[…) is a RecursionError
            return [], "the marked spans could not be read; reload the page and mark them again."
    if not isinstance(items, list):
        return [], "the marked spans could not be read (expected a list); reload the page."
    allowed = set(question.options.get("attributes", [])) & known
    problems, found = [], []
    for number, item in enumerate(items, start=1):
        span, span_problems = _read_span(question, item, rules, complete=complete, allowed=allowed)
        if span_problems:
            problems.append(f"span {number}: {', '.join(span_problems)}")
        if span is not None:
            found.append(span)
    if complete and question.required and not found and not problems:
        problems.append("mark at least one span")
    return found, "; ".join(problems) + "." if problems else ""


def _read_span(
    question: Question, item: Any, rules: SpanRules, *, complete: bool, allowed: set[str]
) -> tuple[SpanValue | None, list[str]]:
    """The span in ``item`` (None when it cannot be stored at all) and what is wrong with it."""
    if not isinstance(item, dict):
        return None, ["not a span (expected an object)"]
    labels = question.options.get("labels", [])
    label = item.get("label")
    if label not in labels:
        return None, [f"label it {' or '.join(labels)}"]
    times, problem = _times(item)
    if problem:
        return None, [problem]
    covered = turns_overlapping(rules.turn_times, *times) if times else None
    if covered is not None:
        anchors: tuple[int, int, int | None, int | None] = (*covered, None, None)
    else:
        anchors, problem = _span_anchors(item, rules.turn_lengths)
        if problem:
            return None, [problem]
    seat, problem = _seat(item, rules)
    if problem:
        return None, [problem]
    channel = item.get("channel") or ""
    if channel not in ("", *CHANNELS):
        return None, [f"the channel is one of {', '.join(CHANNELS)}"]
    problems = []
    attributes = item.get("attributes") or []
    if not isinstance(attributes, list):
        problems.append("attributes must be a list of social attribute keys")
        attributes = []
    kept = []
    for key in attributes:
        if key not in allowed:
            problems.append(f"{key!r} is not one of this question's social attributes")
        elif key not in kept:
            kept.append(key)
    texts = {}
    for part in ("rationale", "correction"):
        text = item.get(part)
        if text is not None and not isinstance(text, str):
            problems.append(f"the {part} must be text")
            text = None
        texts[part] = (text or "").replace("\x00", "")  # PostgreSQL stores no NUL in text
    rationale, correction = texts["rationale"], texts["correction"]
    if complete:
        rationale, correction = rationale.strip(), correction.strip()
        if rules.need_rationale and not rationale:
            problems.append("say why you marked it (rationale)")
        if rules.need_rationale and label == "error" and not correction:
            problems.append("write what the agent should have done instead (correction)")
        if not kept:
            problems.append("choose at least one social attribute")
    start_s, end_s = times or (None, None)
    return SpanValue(question, label, *anchors, kept, rationale, correction, start_s, end_s, seat, channel), problems


def _times(item: dict[str, Any]) -> tuple[tuple[float, float] | None, str]:
    """The span's (start_s, end_s) rounded to a millisecond, None when it has no times, and a problem."""
    start, end = item.get("start_s"), item.get("end_s")
    if start is None and end is None:
        return None, ""
    if start is None or end is None:
        return None, "give both the start and the end time, or neither"
    numbers = [value for value in (start, end) if isinstance(value, int | float) and not isinstance(value, bool)]
    if len(numbers) != 2 or not all(math.isfinite(value) for value in numbers):
        return None, "the start and end times must be numbers of seconds"
    start, end = (round(float(value), 3) for value in numbers)
    if start < 0:
        return None, "the start time must be 0 s or later"
    if end < start:
        return None, f"it ends ({end:g} s) before it starts ({start:g} s)"
    return (start, end), ""


def _seat(item: dict[str, Any], rules: SpanRules) -> tuple[int | None, str]:
    """The seat position the span is about (the default when it names none), and a problem."""
    seat = item.get("seat")
    if seat is None or seat == "":
        return rules.default_seat, ""
    if isinstance(seat, str) and seat.isdigit():
        seat = int(seat)
    if not is_whole(seat) or (rules.seats and seat not in rules.seats):
        return None, f"seat {seat!r} is not a seat of this conversation"
    return seat, ""


def _span_anchors(
    item: dict[str, Any], turn_lengths: Sequence[int]
) -> tuple[tuple[int, int, int | None, int | None], str]:
    """(start_turn, end_turn, start_char, end_char) and a problem ("" when the anchors are sound)."""
    unsound = (0, 0, None, None)
    start_turn = item.get("start_turn")
    end_turn = item.get("end_turn", start_turn)
    if end_turn is None:
        end_turn = start_turn
    if not (is_whole(start_turn) and is_whole(end_turn)):
        return unsound, "start_turn and end_turn must be whole numbers"
    if start_turn < 0:
        return unsound, f"turn {start_turn} is outside the transcript"
    if end_turn < start_turn:
        return unsound, f"it ends (turn {end_turn}) before it starts (turn {start_turn})"
    if end_turn >= len(turn_lengths):
        return unsound, f"turn {end_turn} is outside the transcript, which has {len(turn_lengths)} turns (from 0)"
    start_char, end_char = item.get("start_char"), item.get("end_char")
    if start_char is None and end_char is None:
        return (start_turn, end_turn, None, None), ""
    if start_char is None or end_char is None:
        return unsound, "give both start_char and end_char, or neither"
    if not (is_whole(start_char) and is_whole(end_char)) or start_char < 0 or end_char < 0:
        return unsound, "start_char and end_char must be whole numbers from 0"
    for name, offset, turn in (("start_char", start_char, start_turn), ("end_char", end_char, end_turn)):
        if offset > turn_lengths[turn]:
            return unsound, f"{name} {offset} is past the end of turn {turn} ({turn_lengths[turn]} characters)"
    if start_turn == end_turn and end_char <= start_char:
        return unsound, f"the character range {start_char}–{end_char} is empty or reversed"
    return (start_turn, end_turn, start_char, end_char), ""


def span_json(span: Span) -> dict[str, Any]:
    """A stored span as the span editor (static/annotator/spans.js) and ``read_spans`` read it."""
    return {
        "label": span.label,
        "start_turn": span.start_turn,
        "end_turn": span.end_turn,
        "start_char": span.start_char,
        "end_char": span.end_char,
        "start_s": span.start_s,
        "end_s": span.end_s,
        "seat": span.seat_position,
        "channel": span.channel,
        "attributes": [attribute.key for attribute in span.attributes.all()],
        "rationale": span.rationale,
        "correction": span.correction,
    }


def span_row(value: SpanValue) -> dict[str, Any]:
    """The ``Span`` columns of a read span (all but its annotation and attributes)."""
    return {
        "question": value.question, "label": value.label, "start_turn": value.start_turn, "end_turn": value.end_turn,
        "start_char": value.start_char, "end_char": value.end_char, "start_s": value.start_s, "end_s": value.end_s,
        "seat_position": value.seat_position, "channel": value.channel, "rationale": value.rationale,
        "correction": value.correction,
    }
