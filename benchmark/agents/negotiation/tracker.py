"""The consensus state a mediator is shown (PM-7): where each party stands on each topic, and how far
the table agrees.

The ProMediate code keeps such a state for its mediators with a model call after every party
utterance (``consensus_upgrade``); it is not the evaluation's consensus tracking. Offline, Parley
reads it from the words: a party's stance on a topic is the option letter it last named after the
topic's title (``... Contract Term ... (b)``), its first choice before it has spoken. Two stances
agree 1.0 when they are the same option, 0.5 when one is the other's second choice or the letters
are adjacent, 0 otherwise (the scripted pair judge's rule, PM-9); a topic's agreement is the mean
over pairs, the table's the mean over topics.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from .context import NegotiationContext, PartyView, TopicView, Utterance

_LETTER = re.compile(r"\(([a-z])\)", re.I)
_SENTENCE_END = re.compile(r"[.!?;]\s")


@dataclass(frozen=True)
class TrackedState:
    """Stances by party then topic title (an option key, or None), agreement per topic and overall."""

    stances: dict[str, dict[str, str | None]]
    topics: dict[str, float]
    overall: float

    def as_dict(self) -> dict[str, object]:
        return {
            topic: {
                "label": "resolved" if score >= 1.0 else "unresolved",
                "mind_state": {party: stances.get(topic) for party, stances in self.stances.items()},
                "agreement": round(score, 4),
            }
            for topic, score in self.topics.items()
        }


def stated_option(text: str, topic: TopicView) -> str | None:
    """The option ``text`` names for ``topic``: the first ``(x)`` after the topic's title in the same sentence."""
    keys = {key.lower() for key, _ in topic.options}
    lowered = text.lower()
    start = lowered.find(topic.title.lower())
    while start >= 0:
        tail = text[start + len(topic.title) :]
        end = _SENTENCE_END.search(tail)
        sentence = tail[: end.start() + 1] if end else tail
        for match in _LETTER.finditer(sentence):
            if not keys or match.group(1).lower() in keys:
                return match.group(1).lower()
        start = lowered.find(topic.title.lower(), start + 1)
    return None


def pair_agreement(first: str | None, second: str | None, ranking_a: Sequence[str], ranking_b: Sequence[str]) -> float:
    """1.0 same option; 0.5 one's stance is the other's second choice, or adjacent letters; else 0."""
    if first is None or second is None:
        return 0.0
    if first == second:
        return 1.0
    if (len(ranking_b) > 1 and ranking_b[1] == first) or (len(ranking_a) > 1 and ranking_a[1] == second):
        return 0.5
    if len(first) == len(second) == 1 and abs(ord(first) - ord(second)) == 1:
        return 0.5
    return 0.0


def track(context: NegotiationContext, transcript: Sequence[Utterance] | None = None) -> TrackedState:
    """The state after ``transcript`` (default: the context's whole transcript)."""
    stances = {party.name: _starting(party, context.topics) for party in context.parties}
    for utterance in context.transcript if transcript is None else transcript:
        if utterance.mediator or utterance.speaker not in stances:
            continue
        for topic in context.topics:
            option = stated_option(utterance.text, topic)
            if option is not None:
                stances[utterance.speaker][topic.title] = option
    return _scored(context, stances)


def states(context: NegotiationContext, start: int = 0) -> list[TrackedState]:
    """The tracked state after the first ``start`` utterances and after each later one."""
    return [track(context, context.transcript[:length]) for length in range(start, len(context.transcript) + 1)]


def series(context: NegotiationContext) -> list[float]:
    """The overall agreement before anything was said and after each utterance."""
    return [state.overall for state in states(context)]


def largest_fall(points: list[TrackedState]) -> tuple[float, str | None]:
    """The largest fall of agreement from its peak to the last state, overall or on one topic (None: overall)."""
    falls = [(max(p.overall for p in points) - points[-1].overall, None)]
    for topic in points[-1].topics:
        falls.append((max(p.topics[topic] for p in points) - points[-1].topics[topic], topic))
    return max(falls, key=lambda fall: fall[0])


def most_contested(context: NegotiationContext, state: TrackedState | None = None) -> TopicView | None:
    """The topic the table agrees on least (the first on ties)."""
    if not context.topics:
        return None
    state = state or track(context)
    return min(context.topics, key=lambda topic: state.topics[topic.title])


def _starting(party: PartyView, topics: Sequence[TopicView]) -> dict[str, str | None]:
    return {topic.title: (party.rankings.get(topic.title) or (None,))[0] for topic in topics}


def _scored(context: NegotiationContext, stances: dict[str, dict[str, str | None]]) -> TrackedState:
    parties = context.parties
    topics: dict[str, float] = {}
    for topic in context.topics:
        pairs = list(combinations(parties, 2))
        scores = [
            pair_agreement(
                stances[a.name][topic.title],
                stances[b.name][topic.title],
                a.rankings.get(topic.title, ()),
                b.rankings.get(topic.title, ()),
            )
            for a, b in pairs
        ]
        topics[topic.title] = sum(scores) / len(scores) if scores else 1.0
    overall = sum(topics.values()) / len(topics) if topics else 0.0
    return TrackedState(stances, topics, overall)
