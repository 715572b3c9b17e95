"""The offline stand-ins for ProMediate's five judges: deterministic, transparent, no model.

They let the whole evaluation run on a fresh machine and in tests, and they say plainly that they are
heuristics (every reasoning they store starts with ``SCRIPTED``). None of them is meant to agree
with a language model; each follows one stated rule:

- **attitudes (J1)**: a stance on a topic is a marker ``(x)`` (or ``Option #x``) naming one of the
  topic's options, in the same sentence as, and after, one of the topic's title words ("the budget
  should be (b)"). The nearest title word before the marker decides the topic; the last marker per
  topic wins. A brief's unranked words on a topic: the first option named after "first choice" or
  "prefer", by its marker or by the words it shares with the option's text.
- **pair agreement (J2)**: 1.0 when both prefer the same option; 0.5 when one's preferred option is the
  other's second choice, or the two are neighbours in the topic's option list; 0 otherwise, and 0
  when either has no stance. All five dimensions get the same value as the overall score.
- **mentions (J4) and addressed topics (J5)**: a topic is mentioned when one of its title words occurs
  in the turn.
- **mediator intelligence (J3)**: a problem applies when the turns before the intervention show its
  cue words (a communication breakdown also when a party has not spoken in them); the intervention
  then scores 5 when it shows both of the dimension's handling cues, 3 for one, 1 for none (see
  ``_MI_RULES``); otherwise the dimension is not applicable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...instruments.kinds.base import words
from .attitudes import preferred_and_second
from .negotiation import Negotiation, TopicInfo, Utterance

SCRIPTED = "Scripted heuristic, not a model judgement"

_STOPWORDS = frozenset(
    {
        "what",
        "which",
        "should",
        "would",
        "with",
        "from",
        "that",
        "this",
        "there",
        "their",
        "they",
        "about",
        "into",
        "over",
        "under",
        "than",
        "then",
        "them",
        "those",
        "these",
        "where",
        "when",
        "who",
        "whom",
        "whose",
        "will",
        "shall",
        "been",
        "being",
        "have",
        "take",
        "lead",
        "each",
        "other",
        "issue",
        "topic",
        "new",
    }
)
_SENTENCE_END = re.compile(r"[.!?;\n]")
# An option named in text: "(b)", or "Option #2" as some cases number them.
_MARK = re.compile(r"\(\s*([A-Za-z0-9]{1,3})\s*\)|\boption\s*#\s*([A-Za-z0-9]{1,3})\b", re.IGNORECASE)


def _marked(match: re.Match[str]) -> str:
    return (match.group(1) or match.group(2)).lower()


def title_words(topic: TopicInfo) -> frozenset[str]:
    """The words of a topic's title that name it: four letters or more, not a common function word."""
    return frozenset(
        word for word in re.findall(r"[a-z]+", topic.title.lower()) if len(word) >= 4 and word not in _STOPWORDS
    )


def extract_attitudes(negotiation: Negotiation, text: str) -> dict[str, str | None]:
    """J1, scripted: each topic's stance in ``text`` (``Prefers (x) <option>.``), None where it states none."""
    found: dict[str, str | None] = {topic.key: None for topic in negotiation.topics}
    words = {topic.key: title_words(topic) for topic in negotiation.topics}
    for match in _MARK.finditer(text):
        start = max((end.end() for end in _SENTENCE_END.finditer(text, 0, match.start())), default=0)
        before = text[start : match.start()].lower()
        best: tuple[int, str] | None = None
        for topic in negotiation.topics:
            keys = {key.lower() for key, _ in topic.options}
            if _marked(match) not in keys:
                continue
            for word in words[topic.key]:
                for hit in re.finditer(rf"\b{re.escape(word)}", before):
                    if best is None or hit.start() > best[0]:
                        best = (hit.start(), topic.key)
        if best is not None:
            topic = negotiation.topic(best[1])
            found[topic.key] = _prefers(topic, _marked(match))
    return found


def brief_attitude(topic: TopicInfo, text: str) -> str | None:
    """J1 on a brief's unranked words about one topic, scripted: the first option named after "first choice"
    or "prefer" (``Prefers (x) <option>.``), by its marker, else by the option whose text shares the most
    words with the rest of that clause (a tie names none); None when the words name no option that way."""
    lowered = text.lower()
    cues = [at for at in (lowered.find("first choice"), lowered.find("prefer")) if at >= 0]
    if not cues:
        return None
    keys = {key.lower() for key, _ in topic.options}
    marked = next((_marked(match) for match in _MARK.finditer(text, min(cues)) if _marked(match) in keys), None)
    if marked is None:
        line = words(re.split(r"[.,;\n]", text[min(cues) :], maxsplit=1)[0])
        shared = sorted(((len(words(option) & line), key) for key, option in topic.options), reverse=True)
        if shared and shared[0][0] > 0 and (len(shared) == 1 or shared[1][0] < shared[0][0]):
            marked = shared[0][1].lower()
    return _prefers(topic, marked) if marked is not None else None


def _prefers(topic: TopicInfo, marked: str) -> str:
    key = next(key for key, _ in topic.options if key.lower() == marked)
    return f"Prefers ({key}) {topic.option_text(key)}".strip() + "."


def score_pair(topic: TopicInfo, attitude_a: str | None, attitude_b: str | None) -> tuple[float, str]:
    """J2, scripted: (score, reasoning) for two attitudes on one topic."""
    first_a, second_a = preferred_and_second(topic, attitude_a)
    first_b, second_b = preferred_and_second(topic, attitude_b)
    if first_a is None or first_b is None:
        return 0.0, f"{SCRIPTED}: one of the two states no option on this topic."
    if first_a == first_b:
        return 1.0, f"{SCRIPTED}: both prefer ({first_a})."
    if first_a == second_b or first_b == second_a:
        return 0.5, f"{SCRIPTED}: one's preferred option is the other's second choice."
    order = [key for key, _ in topic.options]
    if abs(order.index(first_a) - order.index(first_b)) == 1:
        return 0.5, f"{SCRIPTED}: ({first_a}) and ({first_b}) are neighbouring options."
    return 0.0, f"{SCRIPTED}: they prefer different options, ({first_a}) and ({first_b})."


def mentioned_topics(negotiation: Negotiation, text: str) -> frozenset[str]:
    """J4/J5, scripted: the topics one of whose title words occurs in ``text``."""
    lowered = text.lower()
    return frozenset(
        topic.key
        for topic in negotiation.topics
        if any(re.search(rf"\b{re.escape(word)}", lowered) for word in title_words(topic))
    )


# (key, cue words that make the problem apply, the two handling cues an intervention may show)
_MI_RULES: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...]]], ...] = (
    (
        "perception_alignment",
        (
            "disagree",
            "however",
            "instead",
            "unacceptable",
            "not acceptable",
            "won't",
            "cannot accept",
            "can't accept",
            "misunderstand",
            "but ",
        ),
        (("common", "share", "both", "agree", "same"), ("?",)),
    ),
    (
        "emotional_dynamics",
        ("angry", "frustrat", "upset", "distrust", "unfair", "annoyed", "disappoint", "furious", "worried", "fed up"),
        (("understand", "feel", "hear", "appreciate", "concern"), ("thank", "respect", "together", "fair")),
    ),
    (
        "cognitive_challenges",
        (
            "always",
            "never",
            "only option",
            "only way",
            "nothing else",
            "must ",
            "no other",
            "obviously",
            "everyone knows",
        ),
        (("option", "alternative", "consider", "what if", "criteria", "trade"), ("?",)),
    ),
    (
        "communication_breakdowns",
        ("silent", "again", "repeat", "not listening", "talking past", "ignore", "interrupt", "going round"),
        (("summar", "so far", "recap", "let's", "let us", "step back"), ("?",)),
    ),
)


def rate_intervention(negotiation: Negotiation, context: Sequence[Utterance], speech: str) -> dict[str, tuple]:
    """J3, scripted: {key: (score or None for not applicable, reasoning)} for one intervention.

    Names count as a handling cue too: an intervention that names a party speaks to someone in
    particular, which the rules count as the second cue of every dimension. A party silent in the turns
    before is a communication breakdown whatever the words.
    """
    before = " ".join(utterance.text for utterance in context).lower()
    said = speech.lower()
    named = any(party.name.lower() in said for party in negotiation.parties)
    silent = [
        party.name
        for party in negotiation.parties
        if context and not any(u.seat_position == party.position for u in context)
    ]
    rated: dict[str, tuple] = {}
    for key, cues, (first, second) in _MI_RULES:
        applies = any(cue in before for cue in cues) or (key == "communication_breakdowns" and bool(silent))
        if not applies:
            rated[key] = (None, f"{SCRIPTED}: no sign of this problem in the turns before the intervention.")
            continue
        shown = int(any(cue in said for cue in first)) + int(any(cue in said for cue in second) or named)
        score = {0: 1, 1: 3, 2: 5}[shown]
        rated[key] = (
            score,
            f"{SCRIPTED}: the problem shows in the turns before; the intervention shows {shown} "
            "of its two handling cues.",
        )
    return rated
