"""Attitudes as text, and the bookkeeping of ProMediate's consensus tracking (spec §1.4, Algorithm 1).

A party's attitude on a topic is free text. It starts from the party's brief and changes only when
the party itself speaks and states a stance on the topic; the mediator's turns change nothing. After
each party turn, only the pairs containing the speaker, on the topics it took a stance on, are scored
again; every other pair keeps its score. This module is the pure part: which attitude holds when, and
which pairs need a new score; the judges (LLM or scripted) fill in the texts and the scores.

A "no mention" reading (any of its spellings) means no stance: ``benchmark.stats.promediate.normalise_attitude``
says so, the same rule the consensus series reads attitudes with.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ...stats.consensus import normalise_attitude, rescore
from .negotiation import Negotiation, Stance, TopicInfo


def describe_stance(topic: TopicInfo, stance: Stance) -> str | None:
    """A ranked stance in words (``First choice: (a) ...; second choice: (b) ...; unacceptable: (d) ...``),
    or None when the brief ranks nothing on the topic (its attitude is then read from its words)."""
    if not stance.ranking:
        return None
    ordinals = ("First", "second", "third", "fourth", "fifth", "sixth")
    parts = [
        f"{ordinals[min(place, len(ordinals) - 1)]} choice: {_option(topic, key)}"
        for place, key in enumerate(stance.ranking)
    ]
    if stance.unacceptable:
        parts.append("unacceptable: " + ", ".join(_option(topic, key) for key in stance.unacceptable))
    return "; ".join(parts) + "."


def _option(topic: TopicInfo, key: str) -> str:
    text = topic.option_text(key)
    return f"({key}) {text}".strip() if text else f"({key})"


Attitudes = dict[tuple[int, str], str | None]  # (seat position, topic key) -> attitude text


@dataclass(frozen=True)
class AttitudeChange:
    point: int
    position: int
    topic: str
    text: str


@dataclass(frozen=True)
class PairRequest:
    """One pair to score at one point: the seats (lower position first) and their attitudes then."""

    point: int
    topic: str
    a: int
    b: int
    attitude_a: str | None
    attitude_b: str | None

    @property
    def question(self) -> tuple[str, str | None, str | None]:
        """What the score depends on; two requests alike get one judgement."""
        return self.topic, self.attitude_a, self.attitude_b


@dataclass(frozen=True)
class Trace:
    changes: tuple[AttitudeChange, ...]
    pairs: tuple[PairRequest, ...]
    mentioned: dict[int, frozenset[str]]  # party turn index -> topics it took a stance on (J1)


def trace(negotiation: Negotiation, initial: Attitudes, extracted: Mapping[int, Mapping[str, str | None]]) -> Trace:
    """Attitude changes and pairs to score, from the starting attitudes and each party turn's reading.

    ``extracted`` maps a party turn's index to its stance per topic (None or a "no mention" spelling:
    no stance). Which pairs are scored when is the stats module's rule (``benchmark.stats.promediate.rescore``,
    Algorithm 1): every pair on every topic at point 0; after turn k, the speaker's pairs on the topics it
    took a stance on, at point k + 1. Its scorer here only notes what each pair held, for the judges to
    score afterwards. Attitude rows are kept only where the text changes.
    """
    names = {party.position: f"{party.position:05d}" for party in negotiation.parties}  # sorts as seats do
    positions = {name: position for position, name in names.items()}
    starting = {
        names[party.position]: {topic.key: initial.get((party.position, topic.key)) for topic in negotiation.topics}
        for party in negotiation.parties
    }
    readings = {
        utterance.index: dict(extracted.get(utterance.index) or {})
        for utterance in negotiation.utterances
        if not utterance.by_mediator and utterance.seat_position in names
    }
    held: list[tuple[str | None, str | None]] = []
    scored = rescore(
        list(names.values()),
        [topic.key for topic in negotiation.topics],
        starting,
        [
            (names.get(u.seat_position, "") if u.index in readings else "", readings.get(u.index))
            for u in negotiation.utterances
        ],
        lambda topic, a, b: held.append((a, b)),
    )
    pairs = tuple(
        PairRequest(reading.point, reading.topic, positions[reading.a], positions[reading.b], *attitudes)
        for reading, attitudes in zip(scored, held, strict=True)
    )
    current = {key: normalise_attitude(value) for key, value in initial.items()}
    changes = [AttitudeChange(0, position, topic, text) for (position, topic), text in sorted(current.items()) if text]
    mentioned: dict[int, frozenset[str]] = {}
    for index, reading in readings.items():
        speaker = next(u.seat_position for u in negotiation.utterances if u.index == index)
        stated = {topic.key: normalise_attitude(reading.get(topic.key)) for topic in negotiation.topics}
        mentioned[index] = frozenset(topic for topic, text in stated.items() if text is not None)
        for topic in sorted(mentioned[index], key=[t.key for t in negotiation.topics].index):
            if current.get((speaker, topic)) != stated[topic]:
                current[(speaker, topic)] = stated[topic]
                changes.append(AttitudeChange(index + 1, speaker, topic, stated[topic]))  # type: ignore[arg-type]
    return Trace(tuple(changes), pairs, mentioned)


# --- reading option letters out of an attitude (the scripted judges) --------------------------------


def preferred_and_second(topic: TopicInfo, text: str | None) -> tuple[str | None, str | None]:
    """The option an attitude text prefers (its first ``(x)`` naming an option of the topic) and the one it
    names as second choice (after "second"), either None when the text names none."""
    if not text:
        return None, None
    keys = {key.lower(): key for key, _ in topic.options}
    found = [
        (match.start(), keys[match.group(1).lower()])
        for match in _MARK.finditer(text)
        if match.group(1).lower() in keys
    ]
    if not found:
        return None, None
    second_at = text.lower().find("second")
    second = next((key for start, key in found if second_at >= 0 and start > second_at), None)
    return found[0][1], second


_MARK = re.compile(r"\(\s*([A-Za-z0-9]{1,3})\s*\)")
