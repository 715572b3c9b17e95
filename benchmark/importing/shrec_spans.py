"""SHREC's annotation columns (``Annotations_A``, ``_B``, ``_C``) read into plain span records.

Each column holds one annotator's segments of the video: a list (a Python literal in a CSV, a list or
array in parquet) of dicts with ``timestamp {start, end}`` (seconds), ``error`` (True: a social
error, False: a competency), ``source {"Verbal": bool, "Non-Verbal": bool}``, ``attribute {name:
bool}``, ``rationale`` and ``correction``. The rules, and why:

- **Never evaluated**: a CSV cell is read with ``ast.literal_eval``, which reads literals only.
- **Attributes by normalised name** (:func:`attribute_key`): the released files spell the seven
  attributes in several ways (``Social Context &  Relationships`` with two spaces, ``Social and
  Context Relationships``, ``Recognizing Social Norms including toxicity`` ...). A name is lower-cased,
  ``&`` read as "and", punctuation and repeated spaces dropped, then looked up in :data:`ALIASES`; a
  name that is not there is refused, naming the segment (``Annotations_B[3].attribute``), rather
  than guessed. A ticked attribute (true) counts; an unticked one (false or empty) does not.
- **Channel**: ``source`` Verbal and Non-Verbal ticked -> ``both``; one of them -> ``verbal`` or
  ``non-verbal``; none -> blank.
- **A segment without a start or end time** cannot be placed on the recording, so it is skipped and
  counted (the import's summary says how many), as SHREC's own pipeline drops it.
- **A segment outside its recording** (a negative time, an end before its start, or an end more than
  :data:`SLACK_S` seconds after the recording's known end) is refused, naming it.
- **Empty rationale or correction** import as they are (SHREC's files often leave them empty); the
  import counts them in its notes.
- **The turns a span covers** are found as the annotation page finds them
  (``benchmark.episodes.turn_times.turns_overlapping``): the turns its times overlap; a span that falls
  in a silence between turns covers the turn the silence follows, so every span has at least one turn.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .records import Origin, describe

# The seven attribute keys (benchmark.SocialAttribute, seeded) under every spelling met in SHREC's files
# and the paper, normalised by ``normalised_name``.
ALIASES: dict[str, str] = {
    "emotions": "emotions",
    "emotion": "emotions",
    "engagement": "engagement",
    "conversational mechanics": "conversational-mechanics",
    "conversation mechanics": "conversational-mechanics",
    "knowledge state": "knowledge-state",
    "knowledge state of others and self": "knowledge-state",
    "knowledge": "knowledge-state",
    "intention": "intention",
    "intentions": "intention",
    "user intention": "intention",
    "user intentions": "intention",
    "social context and relationships": "social-context",
    "social and context relationships": "social-context",
    "social context and relationship": "social-context",
    "social relationships": "social-context",
    "social context": "social-context",
    "social norms and routines": "social-norms",
    "social norms": "social-norms",
    "recognizing social norms including toxicity": "social-norms",
    "recognising social norms including toxicity": "social-norms",
    "social norms including toxicity": "social-norms",
}
KEYS = ("emotions", "engagement", "conversational-mechanics", "knowledge-state", "intention", "social-context",
        "social-norms")
ALIASES.update({key.replace("-", " "): key for key in KEYS})
SLACK_S = 30.0  # how far past the last transcribed word (or the last frame) a segment may end
COLUMNS = ("Annotations_A", "Annotations_B", "Annotations_C")


def normalised_name(name: str) -> str:
    """``Social Context &  Relationships`` -> ``social context and relationships``."""
    text = name.casefold().replace("&", " and ").replace("-", " ").replace("_", " ")
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


@functools.cache  # a file spells the same seven names in every one of its thousands of segments
def attribute_key(name: str) -> str | None:
    """The attribute key SHREC's ``name`` means, or None when it is none of the seven."""
    return ALIASES.get(normalised_name(name))


@dataclass
class SpanRecord:
    """One annotator's segment, as an import hands it to the annotator app (``signals.spans_imported``)."""

    label: str  # "error" or "competency"
    start_s: float
    end_s: float
    attributes: list[str]  # sorted keys
    channel: str  # "verbal", "non-verbal", "both" or ""
    rationale: str
    correction: str
    start_turn: int = 0  # the turns the times overlap (episodes.turn_times), set once the turns are known
    end_turn: int = 0
    seat_position: int = 0  # the agent's seat: SHREC's spans are about the robot's behaviour

    def signature(self) -> tuple[Any, ...]:
        """What makes two stored spans the same annotation (for re-imports)."""
        return (self.label, round(self.start_s, 3), round(self.end_s, 3), tuple(self.attributes), self.channel,
                self.rationale, self.correction)


@dataclass
class AnnotatorSpans:
    """One annotator column's segments of one video: ``number`` 1 for A, 2 for B, 3 for C."""

    column: str
    number: int
    spans: list[SpanRecord] = field(default_factory=list)
    skipped: int = 0  # segments without a start or end time


def plain(value: Any) -> Any:
    """A parquet cell as plain Python: numpy arrays as lists, numpy scalars as numbers, NaN as None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def segments_of(cell: Any, origin: Origin) -> list[Any]:
    """A column's cell as a list of segments; an empty cell (blank, None, ``[]``) is an empty list."""
    cell = plain(cell)
    if cell is None:
        return []
    if isinstance(cell, str):
        if not cell.strip():
            return []
        try:
            cell = ast.literal_eval(cell.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise origin.problem("cannot be read as a list of segments (a Python literal list of dicts)") from None
    if not isinstance(cell, (list, tuple)):
        raise origin.problem(f"expected a list of segments, got {describe(cell)}")
    return list(cell)


def read_annotator(
    cell: Any, column: str, number: int, origin: Origin, end_of_recording: float
) -> AnnotatorSpans:
    """One annotator column of one row, every segment checked as the module's docstring says."""
    read = AnnotatorSpans(column, number)
    at = origin.at(column)
    for index, segment in enumerate(segments_of(cell, at)):
        where = at.at(index)
        if not isinstance(segment, dict):
            raise where.problem(f"expected a segment (a dict), got {describe(segment)}")
        span = read_segment(segment, where, end_of_recording)
        if span is None:
            read.skipped += 1
        else:
            read.spans.append(span)
    return read


def read_segment(segment: dict[str, Any], origin: Origin, end_of_recording: float) -> SpanRecord | None:
    timestamp = segment.get("timestamp")
    if timestamp is None:
        timestamp = {}
    if not isinstance(timestamp, dict):
        raise origin.at("timestamp").problem(f"expected {{start, end}}, got {describe(timestamp)}")
    start, end = (seconds_value(timestamp.get(name), origin.at("timestamp").at(name)) for name in ("start", "end"))
    if start is None or end is None:
        return None
    if start < 0:
        raise origin.at("timestamp").at("start").problem(f"{start:g} s is before the recording starts")
    if end < start:
        raise origin.at("timestamp").at("end").problem(f"{end:g} s is before the segment's start ({start:g} s)")
    if end > end_of_recording + SLACK_S:
        raise origin.at("timestamp").at("end").problem(
            f"{end:g} s is past the end of the recording (its transcript and frames end at {end_of_recording:g} s)"
        )
    error = segment.get("error")
    if isinstance(error, str) and error.strip().casefold() in {"true", "false"}:
        error = error.strip().casefold() == "true"
    if not isinstance(error, bool):
        raise origin.at("error").problem(f"expected True (an error) or False (a competency), got {describe(error)}")
    return SpanRecord(
        label="error" if error else "competency",
        start_s=start,
        end_s=end,
        attributes=_attributes(segment.get("attribute"), origin.at("attribute")),
        channel=_channel(segment.get("source"), origin.at("source")),
        rationale=_text(segment.get("rationale"), origin.at("rationale")),
        correction=_text(segment.get("correction"), origin.at("correction")),
    )


def seconds_value(value: Any, origin: Origin, what: str = "seconds") -> float | None:
    """A number of ``what`` as a file may give it (a number, or text in a CSV); blank, None or NaN: None."""
    if value is None or (isinstance(value, str) and value.strip().casefold() in {"", "none", "nan", "null"}):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise origin.problem(f"expected {what}, got {describe(value)}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise origin.problem(f"expected {what}, got {describe(value)}")
    if math.isnan(value):
        return None
    if math.isinf(value):
        raise origin.problem("is infinite")
    return float(value)


def _attributes(value: Any, origin: Origin) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        named = [(name, str(name), _ticked(on, origin, str(name))) for name, on in value.items()]
    elif isinstance(value, (list, tuple)):
        named = [(name, index, True) for index, name in enumerate(value)]
    else:
        raise origin.problem(f"expected {{name: true or false}}, got {describe(value)}")
    keys = set()
    for name, where, ticked in named:  # every name is checked, ticked or not: an unknown one is a scheme we misread
        if not isinstance(name, str):
            raise origin.at(where).problem(f"expected an attribute's name, got {describe(name)}")
        key = attribute_key(name)
        if key is None:
            raise origin.at(where).problem(
                f"{name!r} is not one of SHREC's seven social attributes (emotions, engagement, conversational "
                "mechanics, knowledge state, intention, social context and relationships, social norms and routines)"
            )
        if ticked:
            keys.add(key)
    return sorted(keys)


def _ticked(value: Any, origin: Origin, name: str) -> bool:
    """Whether ``origin``'s ``name`` is ticked (its place is named only when it is neither true nor false)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().casefold() in {"true", "false", ""}:
        return value.strip().casefold() == "true"
    raise origin.at(name).problem(f"expected true or false, got {describe(value)}")


def _channel(value: Any, origin: Origin) -> str:
    if value is None:
        return ""
    if not isinstance(value, dict):
        raise origin.problem(f"expected {{'Verbal': bool, 'Non-Verbal': bool}}, got {describe(value)}")
    ticked = {normalised_name(name) for name, on in value.items() if _ticked(on, origin, str(name))}
    unknown = ticked - {"verbal", "non verbal", "nonverbal"}
    if unknown:
        raise origin.problem(f"names {', '.join(sorted(unknown))}; a segment's source is Verbal or Non-Verbal")
    verbal, non_verbal = "verbal" in ticked, bool(ticked & {"non verbal", "nonverbal"})
    return "both" if verbal and non_verbal else "verbal" if verbal else "non-verbal" if non_verbal else ""


def _text(value: Any, origin: Origin) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise origin.problem(f"expected text, got {describe(value)}")
    return value.strip()
