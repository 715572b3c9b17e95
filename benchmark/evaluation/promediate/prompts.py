"""What the ProMediate judges are asked (J1–J5, spec §1.3), in Parley's own words, and how a reply is checked.

Each prompt follows the meaning of the paper's (Tables 15–17) and of the public code's two topic
classifiers; none copies their sentences. ``PROMPT_VERSION`` names this wording: every row a language
model writes through these prompts carries it, so a changed prompt is a new version and never mixes
with readings made under the old one.

Differences from upstream, on purpose: the attitude judge sees the few turns before the speech (the
paper asks it to resolve replies such as "Totally agree", which it cannot do from the speech alone);
the mention judge answers every topic of one turn in one reply instead of one call per topic; topics
are named ``T1``, ``T2``... in replies so a long title need not be copied back exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...models import PairAgreement
from .negotiation import Negotiation, TopicInfo, Utterance

PROMPT_VERSION = "promediate-judges-1"
DIMENSIONS = PairAgreement.DIMENSIONS
OVERALL = "overall_consensus_score"
CONTEXT_TURNS = 3  # turns shown before a speech whose stance is read


def _topics_block(negotiation: Negotiation, *, options: bool = True) -> str:
    lines = []
    for topic in negotiation.topics:
        lines.append(f"{topic.key}: {topic.title}" + (f" — {topic.question}" if topic.question else ""))
        if options:
            lines.extend(f"    ({key}) {text}" for key, text in topic.options)
    return "\n".join(lines)


def _turns_block(turns: Sequence[Utterance]) -> str:
    return "\n".join(f"{turn.speaker}: {turn.text}" for turn in turns) or "(nothing was said before)"


def _system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


# --- J1: attitudes --------------------------------------------------------------------------------

_ATTITUDE_SYSTEM = """\
You are an experienced negotiation analyst. You read what one party in a multi-party negotiation says
and record where that party stands on each topic under negotiation."""

_ATTITUDE_TASK = """\
The topics under negotiation, with their options:
{topics}

{source}

For every topic, write the party's stance in a short sentence of your own: which option it wants or
accepts, on what condition, and what it rejects. Spell options out in words as well as by their
letter, e.g. "wants (b) a 12% discount; would accept (c) only with marketing support". If the party
only agrees or disagrees with someone ("Totally agree"), state the stance that agreement amounts to.
When the text does not take a clear position on a topic, write exactly "No mention".

Reply with one JSON object and nothing else:
{{"attitudes": {{{keys}}}}}"""


def attitude_messages(negotiation: Negotiation, utterance: Utterance) -> list[dict[str, str]]:
    """J1 on one party turn, with the turns just before it for references."""
    source = (
        f"The conversation just before:\n{_turns_block(negotiation.context_before(utterance.index, CONTEXT_TURNS))}"
        f"\n\nThe speech to read, by {utterance.speaker}:\n{utterance.speaker}: {utterance.text}"
    )
    return _attitude_request(negotiation, source)


def brief_attitude_messages(negotiation: Negotiation, party: str, briefs: dict[str, str]) -> list[dict[str, str]]:
    """J1 on a party's private brief, for the topics whose starting stance is not a ranking."""
    text = "\n\n".join(f"On {negotiation.topic(key).title}:\n{brief}" for key, brief in briefs.items())
    source = f"The private brief of {party}, before the negotiation starts:\n{text}"
    return _attitude_request(negotiation, source)


def _attitude_request(negotiation: Negotiation, source: str) -> list[dict[str, str]]:
    keys = ", ".join(f'"{topic.key}": "..."' for topic in negotiation.topics)
    return [
        _system(_ATTITUDE_SYSTEM),
        _user(_ATTITUDE_TASK.format(topics=_topics_block(negotiation), source=source, keys=keys)),
    ]


def read_attitudes(negotiation: Negotiation, data: dict[str, Any]) -> dict[str, str | None]:
    """The stance per topic key in a J1 reply; ``ValueError`` (worded for the model) when it is not one."""
    attitudes = data.get("attitudes")
    if not isinstance(attitudes, dict):
        raise ValueError("expected a JSON object with 'attitudes', an object keyed by topic (T1, T2, ...)")
    missing = [topic.key for topic in negotiation.topics if topic.key not in attitudes]
    wrong = [key for key, value in attitudes.items() if not isinstance(value, str)]
    if missing or wrong:
        raise ValueError(
            "; ".join(
                ([f"'attitudes' lacks {', '.join(missing)}"] if missing else [])
                + ([f"'attitudes' → {', '.join(wrong)} must be text"] if wrong else [])
            )
        )
    return {topic.key: attitudes[topic.key] for topic in negotiation.topics}


# --- J2: pair agreement ---------------------------------------------------------------------------

_PAIR_SYSTEM = """\
You are an experienced negotiation analyst. You judge how close two parties of a negotiation are to
agreeing on one topic, from where each of them currently stands."""

_PAIR_TASK = """\
Background of the negotiation:
{context}

The topic: {title}{question}
Its options:
{options}

Where the first party stands: {a}
Where the second party stands: {b}

Rate each of the following from 0 (none at all) to 1 (complete), then give one overall consensus score
from 0 to 1 for this pair on this topic:
- shared_goals: do they want the same outcome on this topic?
- common_understanding: do they understand the topic and each other's position the same way?
- agreement_on_terms: do the options or terms they accept overlap?
- tone_and_willingness: are they open to meeting each other?
- shared_decision_making: are they settling it together rather than each insisting alone?

Reply with one JSON object and nothing else:
{{"reasoning": "two sentences at most", "shared_goals": 0.0, "common_understanding": 0.0,
"agreement_on_terms": 0.0, "tone_and_willingness": 0.0, "shared_decision_making": 0.0,
"overall_consensus_score": 0.0}}"""


def pair_messages(negotiation: Negotiation, topic: TopicInfo, attitude_a: str, attitude_b: str) -> list[dict]:
    """J2 on one pair and topic (both parties have a stance; an empty one scores 0 without a call)."""
    options = "\n".join(f"({key}) {text}" for key, text in topic.options) or "(none listed)"
    return [
        _system(_PAIR_SYSTEM),
        _user(
            _PAIR_TASK.format(
                context=negotiation.context.strip(),
                title=topic.title,
                question=f" — {topic.question}" if topic.question else "",
                options=options,
                a=attitude_a,
                b=attitude_b,
            )
        ),
    ]


def read_pair(data: dict[str, Any]) -> tuple[tuple[float, ...], float, str]:
    """(five dimensions, overall, reasoning) from a J2 reply; ``ValueError`` naming every bad field."""
    problems, values = [], {}
    for name in (*DIMENSIONS, OVERALL):
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            problems.append(f"'{name}' must be a number from 0 to 1")
        else:
            values[name] = float(value)
    reasoning = data.get("reasoning", "")
    if not isinstance(reasoning, str):
        problems.append("'reasoning' must be text")
    if problems:
        raise ValueError("; ".join(problems))
    return tuple(values[name] for name in DIMENSIONS), values[OVERALL], reasoning.strip()


# --- J4 and J5: topics mentioned, topics addressed --------------------------------------------------

_TAGGER_SYSTEM = """\
You read one turn of a multi-party negotiation and say which topics under negotiation it is about."""

_MENTION_TASK = """\
The topics under negotiation:
{topics}

The turn, by {speaker}:
{text}

For every topic, say whether this turn talks about it (true) or not (false). Passing words in a
greeting do not count; a stance, a question, a proposal or an argument about the topic does.

Reply with one JSON object and nothing else:
{{"mentions": {{{keys}}}}}"""

_ADDRESSED_TASK = """\
The topics under negotiation, with their options for reference:
{topics}

The mediator's intervention:
{text}

Which topics does the intervention address, that is, try to move forward (by summing up, asking,
proposing or reframing)? List their keys; an empty list when it addresses none of them.

Reply with one JSON object and nothing else:
{{"addressed": ["T1", ...]}}"""


def mention_messages(negotiation: Negotiation, utterance: Utterance) -> list[dict[str, str]]:
    keys = ", ".join(f'"{topic.key}": false' for topic in negotiation.topics)
    return [
        _system(_TAGGER_SYSTEM),
        _user(
            _MENTION_TASK.format(
                topics=_topics_block(negotiation, options=False),
                speaker=utterance.speaker,
                text=utterance.text,
                keys=keys,
            )
        ),
    ]


def read_mentions(negotiation: Negotiation, data: dict[str, Any]) -> frozenset[str]:
    mentions = data.get("mentions")
    if not isinstance(mentions, dict):
        raise ValueError("expected a JSON object with 'mentions', an object of true/false keyed by topic")
    bad = [topic.key for topic in negotiation.topics if not isinstance(mentions.get(topic.key), bool)]
    if bad:
        raise ValueError(f"'mentions' → {', '.join(bad)} must be true or false")
    return frozenset(topic.key for topic in negotiation.topics if mentions[topic.key])


def addressed_messages(negotiation: Negotiation, utterance: Utterance) -> list[dict[str, str]]:
    return [
        _system(_TAGGER_SYSTEM),
        _user(_ADDRESSED_TASK.format(topics=_topics_block(negotiation), text=utterance.text)),
    ]


def read_addressed(negotiation: Negotiation, data: dict[str, Any]) -> frozenset[str]:
    addressed = data.get("addressed")
    if isinstance(addressed, str) and addressed.strip().lower() in ("none", ""):
        addressed = []
    if not isinstance(addressed, list):
        raise ValueError("expected a JSON object with 'addressed', a list of topic keys such as [\"T1\"]")
    keys = {topic.key for topic in negotiation.topics}
    unknown = [str(item) for item in addressed if item not in keys]
    if unknown:
        raise ValueError(f"'addressed' names unknown topics {', '.join(unknown)}; use {', '.join(sorted(keys))}")
    return frozenset(addressed)


# --- J3: mediator intelligence ----------------------------------------------------------------------

_MI_SYSTEM = """\
You are an experienced mediator who assesses other mediators. You read part of a multi-party
negotiation and the mediator's intervention that followed it, and judge how well the intervention
dealt with four kinds of problem."""

_MI_TASK = """\
The conversation since the mediator last spoke:
{context}

The mediator's intervention:
{speech}

For each question below, first decide whether the problem it names was present in the conversation
before the intervention, and say who showed it and on which topic. If it was not present, the
question does not apply: answer "na". If it was, rate the intervention from 1 to 5: 1 = it did not
notice or did not handle the problem, 3 = it noticed the problem but did not resolve it, 5 = it
handled it well and resolved it (4 when it helped but the way it did so was not the best, 2 when it
barely touched it).

{questions}

Reply with one JSON object and nothing else, one entry per question:
{{{shape}}}"""


def intervention_messages(context: Sequence[Utterance], speech: str, questions: Sequence[Any]) -> list[dict]:
    """J3 on one intervention; ``questions`` are the instrument's four rating questions."""
    listed = "\n".join(f"- {q.key}: {q.prompt} {q.help_text}".strip() for q in questions)
    shape = ", ".join(f'"{q.key}": {{"reasoning": "...", "score": 1-5 or "na"}}' for q in questions)
    return [
        _system(_MI_SYSTEM),
        _user(
            _MI_TASK.format(
                context=_turns_block(context),
                speech=speech,
                questions=listed,
                shape=shape,
            )
        ),
    ]
