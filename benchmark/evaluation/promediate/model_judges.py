"""ProMediate's five judges asked of a language model, through the one gateway (``benchmark.agents.llm``).

Every call runs at temperature 0 and must return the JSON its prompt asks for (``prompts``). A reply
that is not usable gets the gateway's one repair request; if the repaired reply is still unusable the
question is asked afresh, up to ``retries`` more times. What then happens depends on the judge:

- a pair score (J2) that stays unusable is stored as failed (``PairAgreement.failed``, no scores; the
  pair then counts as 0, as upstream counts a reply it could not parse) and the pass goes on;
- any other judge's unusable reply, and a model that cannot be reached, fail the episode's pass, and
  nothing of it is stored.

The MI judge (J3) is a respondent like any other: it answers the per-intervention instrument through
``benchmark.agents.respondent.ask_instrument``, its values read by the question's kind (a Likert point,
or "na").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ...agents import llm
from ...agents.respondent import Answered, Asked, ask_instrument, default_retries
from ...instruments.targets import Target
from . import prompts
from .negotiation import Negotiation, TopicInfo, Utterance

T = TypeVar("T")


@dataclass(frozen=True)
class PairScore:
    dimensions: tuple[float | None, ...]
    overall: float | None
    reasoning: str
    failed: bool = False


async def _ask(messages: list[dict], *, model: str, read: Callable[[dict[str, Any]], T], retries: int | None) -> T:
    retries = default_retries() if retries is None else retries
    last: llm.LLMOutputError | None = None
    for _ in range(retries + 1):
        try:
            data, _usage = await llm.complete_json(messages, model=model, temperature=0, validate=read)
        except llm.LLMOutputError as error:
            last = error
            continue
        return read(data)
    assert last is not None
    attempts = retries + 1
    raise llm.LLMOutputError(f"{last} (after {attempts} attempt{'s' if attempts > 1 else ''})", last.text, attempts)


async def attitudes(negotiation: Negotiation, utterance: Utterance, *, model: str, retries: int | None = None) -> dict:
    """J1 on one party turn: {topic key: stance text or "No mention"}."""
    return await _ask(
        prompts.attitude_messages(negotiation, utterance),
        model=model,
        retries=retries,
        read=lambda data: prompts.read_attitudes(negotiation, data),
    )


async def brief_attitudes(
    negotiation: Negotiation, party: str, briefs: dict[str, str], *, model: str, retries: int | None = None
) -> dict:
    """J1 on a party's brief (the topics whose starting stance is not ranked): {topic key: stance}."""
    return await _ask(
        prompts.brief_attitude_messages(negotiation, party, briefs),
        model=model,
        retries=retries,
        read=lambda data: prompts.read_attitudes(negotiation, data),
    )


async def pair(
    negotiation: Negotiation,
    topic: TopicInfo,
    attitude_a: str | None,
    attitude_b: str | None,
    *,
    model: str,
    retries: int | None = None,
) -> PairScore:
    """J2 on one pair and topic. A pair where one party has no stance scores 0 on everything, with no call."""
    if not attitude_a or not attitude_b:
        return PairScore((0.0,) * len(prompts.DIMENSIONS), 0.0, "One of the two has stated no position on this topic.")
    try:
        dimensions, overall, reasoning = await _ask(
            prompts.pair_messages(negotiation, topic, attitude_a, attitude_b),
            model=model,
            retries=retries,
            read=prompts.read_pair,
        )
    except llm.LLMOutputError as error:
        return PairScore((None,) * len(prompts.DIMENSIONS), None, f"Unusable reply: {error}", failed=True)
    return PairScore(dimensions, overall, reasoning)


async def mentions(negotiation: Negotiation, utterance: Utterance, *, model: str, retries: int | None = None):
    """J4 on one turn: the topic keys it talks about."""
    return await _ask(
        prompts.mention_messages(negotiation, utterance),
        model=model,
        retries=retries,
        read=lambda data: prompts.read_mentions(negotiation, data),
    )


async def addressed(negotiation: Negotiation, utterance: Utterance, *, model: str, retries: int | None = None):
    """J5 on one intervention: the topic keys it addresses (empty: none)."""
    return await _ask(
        prompts.addressed_messages(negotiation, utterance),
        model=model,
        retries=retries,
        read=lambda data: prompts.read_addressed(negotiation, data),
    )


async def intervention(
    context: Sequence[Utterance],
    utterance: Utterance,
    questions: Sequence[Any],
    *,
    model: str,
    retries: int | None = None,
) -> list[Answered]:
    """J3 on one intervention: one checked answer (a point or "na", with reasoning) per rating question."""
    asked = [
        Asked(
            (question.key,),
            question.pk,
            Target.of_turn(utterance.index),
            question.kind,
            field="score",
            instrument_id=question.instrument_id,
            question=question,
        )
        for question in questions
    ]
    reply = await ask_instrument(
        prompts.intervention_messages(context, utterance.text, questions), asked, model=model, retries=retries
    )
    return reply.answers
