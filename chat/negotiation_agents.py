"""The agents' side of a live negotiation, played by the simulation's ProMediate agents (spec PM-4 to PM-6).

The chat decides who may speak (a participant's window, who just spoke); the agents decide the rest with
the very classes simulated negotiations use: the mediator policy's ``decide_when``/``decide_how``
(``benchmark.agents.negotiation.mediators``), each party's ``think``/``rate``/``articulate``
(``benchmark.agents.negotiation.parties``) and the floor rules (``benchmark.scenarios.floor``). Their context
is read from the database as the simulation reads it (``benchmark.runs.negotiation.load_table``). The
functions here take no lock and write nothing: ``chat.negotiation`` stores what they decided, once it has
checked, under the episode's lock, that nobody changed the transcript meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync

from benchmark.agents.negotiation import prompts
from benchmark.agents.negotiation.context import NegotiationContext
from benchmark.agents.negotiation.mediators import SocialMediator, mediator_for
from benchmark.agents.negotiation.parties import PartyAgent, Thought, predict_allocation
from benchmark.agents.negotiation.tracker import track
from benchmark.models import Episode, Seat
from benchmark.runs.negotiation import Table, load_table, reservoir, settings_of
from benchmark.scenarios.floor import choose_speaker, passes, silence_bonus

OPENING_LINE = prompts.OPENING_LINE


@dataclass(frozen=True)
class MediatorOutcome:
    """The agent mediator's decision on the last utterance, and its words when it intervenes."""

    engaged: bool
    text: str
    fields: dict[str, Any]  # the MediatorDecision's fields


@dataclass(frozen=True)
class ThoughtRow:
    seat_pk: int
    content: str
    raw_rating: float | None
    rating: float
    selected: bool = False
    spoken: bool = False


@dataclass(frozen=True)
class PartiesOutcome:
    """Who of the agent parties takes the floor and what they say; every thought they had."""

    seat_pk: int | None
    text: str
    thoughts: list[ThoughtRow] = field(default_factory=list)
    decided_ms: int = 0


def table_of(episode: Episode) -> Table:
    """The negotiation's seats and context, as the simulation loads them (``episode`` with scenario and barrier)."""
    seats = list(episode.seats.select_related("role", "character").order_by("position"))
    turns = list(episode.turns.order_by("index"))
    return load_table(episode, seats, turns, int(episode.settings.get("seed", episode.pk)))


def mediator_decides(episode: Episode, table: Table) -> MediatorOutcome:
    """The agent mediator's decision after the last utterance (and, when it intervenes, what it says)."""
    return async_to_sync(_mediator_decides)(episode, table)


async def _mediator_decides(episode: Episode, table: Table) -> MediatorOutcome:
    started = time.monotonic()
    options = settings_of(episode)
    policy = mediator_for(
        options.get("mediator", "generic"),
        table.mediator.model,
        strategies=int(options.get("strategies", 3)),
        articulation_model=options.get("articulation_model") or None,
        temperature=float(episode.settings.get("temperature", 0.7)),
    )
    context = table.context
    if policy.scripted and isinstance(policy, SocialMediator):  # the scripted tracker, as simulations feed it
        context = NegotiationContext(**{**context.__dict__, "consensus": track(context).as_dict()})
    when = await policy.decide_when(context)
    how = await policy.decide_how(context) if when.engage and not when.failed else None
    engaged = how is not None and not how.failed and bool(how.text)
    return MediatorOutcome(
        engaged,
        how.text if engaged else "",
        {
            "by": "scripted" if policy.scripted else "agent",
            "policy": policy.key,
            "model": policy.model,
            "engaged": engaged,
            "rating": when.rating,
            "reason": when.reason,
            "candidates": how.candidates if how else [],
            "chosen": how.chosen if how else "",
            "decided_ms": round((time.monotonic() - started) * 1000),
            "failed": when.failed or bool(how and how.failed),
            "raw": when.raw or (how.raw if how else ""),
        },
    )


def parties_decide(episode: Episode, table: Table, eligible: list[Seat]) -> PartiesOutcome:
    """The ``eligible`` agent parties think on the last utterance; the floor goes by the simulation's rules."""
    return async_to_sync(_parties_decide)(episode, table, eligible, reservoir(episode))


async def _parties_decide(
    episode: Episode, table: Table, eligible: list[Seat], stored: dict[int, tuple[str, float]]
) -> PartiesOutcome:
    started = time.monotonic()
    context = table.context
    temperature = float(episode.settings.get("temperature", 0.7))
    names = {seat.pk: table.names[seat.pk] for seat in eligible}
    agents = {
        seat.pk: PartyAgent(context.party(names[seat.pk]), seat.model, temperature=temperature) for seat in eligible
    }
    if not agents:
        return PartiesOutcome(None, "")
    allocation, _ = await predict_allocation(context, eligible[0].model, temperature=temperature)
    results = await asyncio.gather(*(_think(agent, context) for agent in agents.values()))
    rows: list[ThoughtRow] = []
    best: dict[str, float | None] = {}
    best_row: dict[str, ThoughtRow] = {}
    for seat, rated in zip(eligible, results, strict=True):
        name = names[seat.pk]
        best[name] = None
        for thought, raw in rated:
            row = ThoughtRow(
                seat.pk, thought.content, raw, silence_bonus(raw if raw is not None else 1.0, context.silence(name))
            )
            rows.append(row)
            if best[name] is None or row.rating > best[name]:
                best[name], best_row[name] = row.rating, row
    kept = {names[pk]: value for pk, value in stored.items() if pk in names}
    kept.update({name: (row.content, row.rating) for name, row in best_row.items()})
    speaker = choose_speaker(best, allocation, None, fallback={name: value[1] for name, value in kept.items()})
    if speaker is None:
        return PartiesOutcome(None, "", rows)
    seat_pk = next(pk for pk, name in names.items() if name == speaker)
    chosen = best_row.get(speaker)
    if chosen is None or not passes(chosen.rating, speaker, allocation):
        content, rating = kept[speaker]
        if chosen is None or chosen.content != content:
            chosen = ThoughtRow(seat_pk, content, None, rating)
            rows.append(chosen)
    text, _ = await agents[seat_pk].articulate(context, Thought(chosen.content))
    marked = [
        ThoughtRow(
            r.seat_pk,
            r.content,
            r.raw_rating,
            r.rating,
            selected=best_row.get(names[r.seat_pk]) is r and passes(r.rating, names[r.seat_pk], allocation),
            spoken=r is chosen,
        )
        for r in rows
    ]
    return PartiesOutcome(seat_pk, text, marked, round((time.monotonic() - started) * 1000))


async def _think(agent: PartyAgent, context: NegotiationContext) -> list[tuple[Thought, float | None]]:
    thoughts, _ = await agent.think(context)
    rated = await asyncio.gather(*(agent.rate(context, thought, number) for number, thought in enumerate(thoughts)))
    return [(thought, rating.rating) for thought, (rating, _) in zip(thoughts, rated, strict=True)]
