"""Synthetic recordings in SHREC's released format, for the demo, the end-to-end test and the speed check.

SHREC's data are gated, so Parley makes its own: ``synthetic_videos(count, seed=...)`` writes ``count``
short talks between a companion robot ("AI Agent") and its user ("User A") from the lines in
``shrec_lines.py``, and marks them as SHREC's annotators would. ``shrec_csv(videos)`` lays them out as
the CSV files of SHREC's scripts (spec §2.2): ``file_name``; ``source`` (the subset: empathic,
wellness-dorm, wellness-home); ``transcript`` in the diarised format (a speaker line, then a line of
``(hh:mm:ss) word`` pairs); ``Annotations_A``/``_B``/``_C`` as Python-literal lists of dicts
(``timestamp {start, end}`` in seconds, ``error``, ``source {"Verbal", "Non-Verbal"}``, ``attribute``
with all seven names spelled the way that annotator spells them, ``rationale``, ``correction``); and
``framerate``.

How the annotators behave, so that pairing, agreement, None stretches and all eight tasks have
something to work on:

- **A** marks every error and competency exchange from just after the user starts speaking to about
  when the robot stops, with the exchange's attributes (now and then one more), its rationale and, for
  an error, its correction.
- **B** marks most of the same exchanges a little earlier or later (within SHREC's pairing tolerances),
  now and then with the other label (a disagreeing pair) or a slightly different attribute set, writes
  shorter notes of its own, misses some exchanges and marks some plain talk as competent (singletons).
- **C** annotates every third recording, like A with its own timing; in a few recordings of a large
  set (``empty_first_every``) A's column is empty, so the first two non-empty annotators are B and C.
- With ``imperfect=True`` some annotations lack a start or an end, and some errors lack a correction,
  as in the released data.

Word times are whole seconds, as in the released transcripts; the robot speaks about three words a
second. Everything is drawn from ``random.Random(seed)``, so a seed gives the same file on every
machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..csv_output import csv_text
from .shrec_lines import (
    COMPETENCIES,
    COMPETENCY,
    ERROR,
    ERRORS,
    GREETINGS,
    NAMES,
    PLAIN,
    PLAIN_TALK,
    SECOND_NOTES,
    Exchange,
)

AGENT = "AI Agent"
USER = "User A"
SUBSETS = ("empathic", "wellness-dorm", "wellness-home")
COLUMNS = ("file_name", "source", "transcript", "Annotations_A", "Annotations_B", "Annotations_C", "framerate")
ANNOTATOR_COLUMNS = ("Annotations_A", "Annotations_B", "Annotations_C")
FRAMERATE = 1.0  # SHREC releases its frames at 1 Hz
WORDS_PER_SECOND = 3
ATTRIBUTE_KEYS = (
    "emotions", "engagement", "conversational-mechanics", "knowledge-state", "intention", "social-context",
    "social-norms",
)
# How each annotator spells the seven attributes: the released files are not consistent.
SPELLINGS = {
    "Annotations_A": (
        "Emotions", "Engagement", "Conversational Mechanics", "Knowledge State", "Intention",
        "Social Context &  Relationships", "Social Norms and Routines",
    ),
    "Annotations_B": (
        "Emotions", "Engagement", "Conversational Mechanics", "Knowledge State", "User Intention",
        "Social and Context Relationships", "Recognizing Social Norms including toxicity",
    ),
    "Annotations_C": (
        "Emotions", "Engagement", "Conversational Mechanics", "Knowledge State", "Intention",
        "Social Relationships", "Social Norms and Routines",
    ),
}


@dataclass(frozen=True)
class SyntheticTurn:
    speaker: str  # AGENT or USER
    words: tuple[tuple[int, str], ...]  # (whole second, word)

    @property
    def start_s(self) -> float:
        return float(self.words[0][0])

    @property
    def end_s(self) -> float:
        """When the speaker stops: within the second of the last word."""
        return self.words[-1][0] + 0.9

    @property
    def text(self) -> str:
        return " ".join(word for _, word in self.words)


@dataclass
class SyntheticVideo:
    file_name: str
    source: str  # one of SUBSETS
    user_name: str
    turns: list[SyntheticTurn]
    exchanges: list[Exchange]  # in order; exchange i is turns 2i+1 (the user) and 2i+2 (the robot)
    annotations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by column
    framerate: float = FRAMERATE

    @property
    def duration_s(self) -> float:
        return self.turns[-1].end_s + 0.6


def synthetic_videos(
    count: int, *, seed: int = 0, exchanges: int = 4, labelled: int = 3, imperfect: bool = False,
    empty_first_every: int = 0,
) -> list[SyntheticVideo]:
    """``count`` recordings of a greeting and ``exchanges`` exchanges, ``labelled`` of them an error or a
    competency (the others plain talk, never last), annotated by two or three annotators."""
    if not 1 <= labelled <= exchanges:
        raise ValueError("labelled must be between 1 and the number of exchanges")
    rng = random.Random(seed)
    decks = _Decks(rng)
    videos = []
    for number in range(count):
        source = SUBSETS[number % len(SUBSETS)]
        name = rng.choice(NAMES)
        chosen = _exchanges(rng, decks, exchanges, labelled)
        turns = _turns(rng, source, name, chosen)
        video = SyntheticVideo(
            file_name=f"SYN{number // 3 + 1:02d}_s{number % 3 + 1:03d}-{rng.randrange(1, 40):03d}",
            source=source, user_name=name, turns=turns, exchanges=chosen,
        )
        empty_first = bool(empty_first_every) and number % empty_first_every == empty_first_every - 1
        third = number % 3 == 2 or empty_first
        video.annotations = {
            "Annotations_A": [] if empty_first else _first_annotator(rng, video, "Annotations_A", imperfect),
            "Annotations_B": _second_annotator(rng, video, imperfect),
            "Annotations_C": _first_annotator(rng, video, "Annotations_C", imperfect) if third else [],
        }
        videos.append(video)
    return videos


class _Decks:
    """Lines and labels dealt like cards from shuffled decks, reshuffled when a deck runs out, so a small
    set uses each line at most once and has about as many errors as competencies."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._decks: dict[str, list] = {}
        self._full = {ERROR: ERRORS, COMPETENCY: COMPETENCIES, PLAIN: PLAIN_TALK, "label": (ERROR, COMPETENCY) * 3}

    def deal(self, deck: str) -> Any:
        if not self._decks.get(deck):
            self._decks[deck] = list(self._full[deck])
            self._rng.shuffle(self._decks[deck])
        return self._decks[deck].pop()


def _exchanges(rng: random.Random, decks: _Decks, count: int, labelled: int) -> list[Exchange]:
    plain_positions = set(rng.sample(range(count - 1), count - labelled)) if count > labelled else set()
    return [decks.deal(PLAIN if position in plain_positions else decks.deal("label")) for position in range(count)]


def _turns(rng: random.Random, source: str, name: str, exchanges: list[Exchange]) -> list[SyntheticTurn]:
    greetings = GREETINGS["empathic" if source == "empathic" else "wellness"]
    lines = [(AGENT, rng.choice(greetings))]
    for exchange in exchanges:
        lines += [(USER, exchange.user), (AGENT, exchange.agent)]
    turns, second = [], rng.randrange(0, 2)
    for speaker, line in lines:
        words = line.format(name=name).split()
        timed = tuple((second + index // WORDS_PER_SECOND, word) for index, word in enumerate(words))
        turns.append(SyntheticTurn(speaker, timed))
        second = timed[-1][0] + 1 + rng.choice((0, 0, 0, 1))  # the next speaker answers within a second or two
    return turns


def _attribute_dict(column: str, keys: set[str]) -> dict[str, bool]:
    return {spelling: key in keys for key, spelling in zip(ATTRIBUTE_KEYS, SPELLINGS[column], strict=True)}


def _channel(channel: str) -> dict[str, bool]:
    return {"Verbal": channel in ("verbal", "both"), "Non-Verbal": channel in ("non-verbal", "both")}


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _annotation(column: str, start: float | None, end: float | None, label: str, keys: set[str], channel: str,
                rationale: str, correction: str) -> dict[str, Any]:
    return {
        "timestamp": {"start": _seconds(start), "end": _seconds(end)},
        "error": label == ERROR,
        "source": _channel(channel),
        "attribute": _attribute_dict(column, keys),
        "rationale": rationale,
        "correction": correction,
    }


def _labelled(video: SyntheticVideo) -> list[tuple[int, Exchange]]:
    return [(index, exchange) for index, exchange in enumerate(video.exchanges) if exchange.kind != PLAIN]


def _bounds(video: SyntheticVideo, index: int) -> tuple[float, float]:
    """When exchange ``index`` starts (the user speaks) and ends (the robot stops)."""
    return video.turns[2 * index + 1].start_s, video.turns[2 * index + 2].end_s


def _limit(video: SyntheticVideo) -> float:
    return video.turns[-1].end_s  # no annotation runs past the last word


def _first_annotator(rng: random.Random, video: SyntheticVideo, column: str, imperfect: bool) -> list[dict]:
    """A (or C): every labelled exchange, the exchange's own words, one more attribute now and then."""
    marks = []
    for index, exchange in _labelled(video):
        if column != "Annotations_A" and rng.random() < 0.15:
            continue
        start, end = _bounds(video, index)
        keys = set(exchange.attributes)
        if rng.random() < 0.15:
            keys.add(rng.choice(ATTRIBUTE_KEYS))
        correction = exchange.correction.format(name=video.user_name)
        if imperfect and exchange.kind == ERROR and rng.random() < 0.03:
            correction = ""
        start, end = start + rng.uniform(0.1, 0.6), min(end + rng.uniform(-0.3, 0.5), _limit(video))
        if imperfect and rng.random() < 0.02:
            start = None
        marks.append(_annotation(column, start, end, exchange.kind, keys, exchange.channel,
                                 exchange.rationale.format(name=video.user_name), correction))
    return marks


def _second_annotator(rng: random.Random, video: SyntheticVideo, imperfect: bool) -> list[dict]:
    """B: most labelled exchanges with its own timing and notes, some disagreements, some plain talk marked."""
    marks = []
    for index, exchange in enumerate(video.exchanges):
        start, end = _bounds(video, index)
        start, end = start + rng.uniform(0.1, 1.4), min(end + rng.uniform(-0.8, 1.2), _limit(video))
        if exchange.kind == PLAIN:
            if rng.random() < 0.2:
                key = rng.choice(ATTRIBUTE_KEYS)
                note, _ = SECOND_NOTES[COMPETENCY][key]
                marks.append(_annotation("Annotations_B", start, end, COMPETENCY, {key}, "verbal", note, ""))
            continue
        if rng.random() < 0.1:
            continue
        label = exchange.kind
        if rng.random() < 0.08:
            label = COMPETENCY if label == ERROR else ERROR
        keys = set(exchange.attributes)
        if rng.random() < 0.25:
            if len(keys) > 1:
                keys.discard(sorted(keys)[0])
            else:
                keys.add(rng.choice(ATTRIBUTE_KEYS))
        rationale, correction = SECOND_NOTES[label][sorted(keys)[0]]
        if imperfect and rng.random() < 0.02:
            end = None
        marks.append(_annotation("Annotations_B", start, end, label, keys, exchange.channel, rationale, correction))
    return marks


def _clock(second: int) -> str:
    return f"({second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d})"


def transcript(video: SyntheticVideo) -> str:
    """The diarised transcript: a speaker line, then the speaker's words each after its time."""
    lines = []
    for turn in video.turns:
        lines += [f"{turn.speaker}:", " ".join(f"{_clock(second)} {word}" for second, word in turn.words)]
    return "\n".join(lines)


def shrec_rows(videos: list[SyntheticVideo]) -> list[list[Any]]:
    """One row per video, in ``COLUMNS`` order; annotation lists as Python literals, as SHREC's CSVs have them."""
    return [
        [video.file_name, video.source, transcript(video),
         *(repr(video.annotations[column]) for column in ANNOTATOR_COLUMNS), video.framerate]
        for video in videos
    ]


def shrec_csv(videos: list[SyntheticVideo]) -> str:
    return csv_text(COLUMNS, shrec_rows(videos))


def write_shrec_csv(path: Path, videos: list[SyntheticVideo]) -> Path:
    path.write_text(shrec_csv(videos), encoding="utf-8")
    return path
