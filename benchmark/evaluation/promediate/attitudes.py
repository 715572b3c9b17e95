"""Attitudes as text, and the bookkeeping of ProMediate's consensus tracking (spec §1.4, Algorithm 1).

A party's attitude on a topic is free text. It starts from the party's brief and changes only when
the party itself speaks and states a stance on the topic; the mediator's turns change nothing. After
each party turn, only the pairs containing the speaker, on the topics it took a stance on, are scored
again; every other pair keeps its score. This module is the pure part: which attitude holds when, and
which pairs need a new score; the judges (LLM or scripted) fill in the texts and the scores.

``normalise_attitude`` stands in for ``benchmark.stats.promediate.normalise_attitude`` until helper
pmstats' module is merged (same rule: the "no mention" spellings, case and final period ignored, mean
no stance).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .negotiation import Negotiation, Stance, TopicInfo

_NO_MENTION = frozenset({"no mention", "no explicit mention", "no explicit mention in this speech", ""})


def normalise_attitude(text: str | None) -> str | None:
    """The attitude text stripped, or None for no stance ("No Mention." and its spellings, empty text)."""
    if text is None:
        return None
    stripped = str(text).strip()
    return None if stripped.rstrip(".").strip().lower() in _NO_MENTION else stripped


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
    no stance). Point 0 scores every pair on every topic; point k + 1 (after turn k) scores the
    speaker's pairs on the topics it took a stance on. Attitude rows are kept only where the text changes.
    """
    current = {key: normalise_attitude(value) for key, value in initial.items()}
    changes = [
        AttitudeChange(0, position, topic, text)
        for (position, topic), text in sorted(current.items())
        if text is not None
    ]
    pairs = [
        PairRequest(
            0,
            topic.key,
            a.position,
            b.position,
            current.get((a.position, topic.key)),
            current.get((b.position, topic.key)),
        )
        for topic in negotiation.topics
        for a, b in negotiation.pairs()
    ]
    mentioned: dict[int, frozenset[str]] = {}
    for utterance in negotiation.utterances:
        if utterance.by_mediator or negotiation.party(utterance.seat_position) is None:
            continue
        reading = {topic: normalise_attitude(text) for topic, text in (extracted.get(utterance.index) or {}).items()}
        stated = [topic.key for topic in negotiation.topics if reading.get(topic.key) is not None]
        mentioned[utterance.index] = frozenset(stated)
        point, speaker = utterance.index + 1, utterance.seat_position
        for topic in stated:
            if current.get((speaker, topic)) != reading[topic]:
                current[(speaker, topic)] = reading[topic]
                changes.append(AttitudeChange(point, speaker, topic, reading[topic]))  # type: ignore[arg-type]
            for a, b in negotiation.pairs():
                if speaker in (a.position, b.position):
                    pairs.append(
                        PairRequest(
                            point,
                            topic,
                            a.position,
                            b.position,
                            current.get((a.position, topic)),
                            current.get((b.position, topic)),
                        )
                    )
    return Trace(tuple(changes), tuple(pairs), mentioned)


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
