"""A ProMediate negotiation played turn by turn (spec §1.2, PM-3–PM-7): the loop of an episode whose
scenario takes turns ``promediate``.

1. The opening line: the mediator's, or, with no mediator (condition ``none``), a party's drawn
   from the episode's seed.
2. After every utterance not its own, the mediator decides first (``decide_when``); if it
   intervenes it says what ``decide_how`` gives and the parties do not think on that utterance.
   Every chance is stored as a :class:`MediatorDecision`, spoken or not, failed or not.
3. Otherwise every party but the last speaker has K = 2 thoughts and rates each; the rating gets the
   silence bonus; the floor goes to the best thought that passes its threshold under the predicted
   turn allocation, else to the best stored thought (:mod:`benchmark.scenarios.floor`). Every thought
   is stored as a :class:`PartyThought`; the chosen one is said and stored as the next turn.
4. At most ``episode.turn_cap`` = 1 + T utterances (the opening and T more, T the scenario's cap);
   fewer only when no party has anything left to say.

Every scripted choice is drawn from (seed, turn index, seat), and a step's decision and thoughts are
stored before its turn and redone when the turn was not, so a resumed episode continues exactly as
an uninterrupted one would.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.utils import timezone

from ..agents import llm
from ..agents.negotiation import prompts
from ..agents.negotiation.context import NegotiationContext, PartyView, TopicView, Utterance
from ..agents.negotiation.mediators import MediatorPolicy, SocialMediator, mediator_for
from ..agents.negotiation.parties import PartyAgent, Rated, Thought, predict_allocation
from ..agents.negotiation.replies import ask_json, total_usage
from ..agents.negotiation.tracker import track
from ..models import Episode, MediatorDecision, PartyThought, Preference, Scenario, Seat, Topic, Turn
from ..scenarios.floor import IM_THRESHOLD, INTERRUPT_THRESHOLD, choose_speaker, passes, silence_bonus

MODES_PREFIX = "promediate-"
DEFAULT_MEDIATOR = "social"  # the paper's own mediator, for an episode that names none


@dataclass
class Table:
    """An episode's seats as the loop uses them."""

    episode: Episode
    parties: dict[str, Seat]  # name -> seat, in seat order
    mediator: Seat | None
    context: NegotiationContext
    names: dict[int, str] = field(default_factory=dict)  # seat id -> name
    thresholds: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (motivation, interruption)


def settings_of(episode: Episode) -> dict[str, Any]:
    return dict(episode.settings.get("promediate") or {})


def mode_of(barrier_key: str) -> str:
    """The conflict mode a barrier stands for: ``promediate-competing`` -> ``competing``; others ``general``."""
    return barrier_key.removeprefix(MODES_PREFIX) if barrier_key.startswith(MODES_PREFIX) else "general"


def load_table(episode: Episode, seats: list[Seat], turns: list[Turn], seed: int) -> Table:
    """The negotiation's context from the database: topics, preferences, seats and what was said."""
    options = settings_of(episode)
    # an episode made outside a ProMediate run (no settings): the scenario's greeter mediates
    mediator_position = options.get("mediator_position", episode.scenario.greeter_position)
    topics = list(Topic.objects.filter(scenario_id=episode.scenario_id).order_by("position"))
    views = tuple(
        TopicView(t.title, t.question, tuple((str(o["key"]), str(o.get("text", ""))) for o in t.options))
        for t in topics
    )
    preferences = Preference.objects.filter(topic__scenario_id=episode.scenario_id).select_related("topic")
    rankings: dict[int, dict[str, tuple[str, ...]]] = {}
    refused: dict[int, dict[str, tuple[str, ...]]] = {}
    for preference in preferences:
        rankings.setdefault(preference.role_id, {})[preference.topic.title] = tuple(map(str, preference.ranking))
        refused.setdefault(preference.role_id, {})[preference.topic.title] = tuple(map(str, preference.unacceptable))
    persona = episode.barrier.style_directive
    mode = options.get("mode") or mode_of(episode.barrier.key)
    mediator = next((seat for seat in seats if seat.position == mediator_position), None)
    parties = [seat for seat in seats if seat is not mediator]
    names = {seat.pk: seat.character.name for seat in seats}
    context = NegotiationContext(
        shared=episode.scenario.context,
        topics=views,
        parties=tuple(
            PartyView(
                name=names[seat.pk],
                position=seat.position,
                brief=seat.role.private_knowledge,
                persona=persona if seat.carries_barrier else "",
                mode=mode,
                rankings=rankings.get(seat.role_id, {}),
                unacceptable=refused.get(seat.role_id, {}),
            )
            for seat in parties
        ),
        transcript=tuple(
            Utterance(
                turn.index, names[turn.seat_id], turn.content, mediator is not None and turn.seat_id == mediator.pk
            )
            for turn in turns
        ),
        seed=seed,
        mediator_name=names[mediator.pk] if mediator else None,
        mediator_brief=mediator.role.private_knowledge if mediator else "",
        mediator_persona=persona if mediator and mediator.carries_barrier else "",
        consensus=options.get("consensus"),
    )
    return Table(
        episode,
        {names[seat.pk]: seat for seat in parties},
        mediator,
        context,
        names,
        case_thresholds(episode.scenario, [names[seat.pk] for seat in parties]),
    )


def case_thresholds(scenario: Scenario, parties: list[str]) -> dict[str, tuple[float, float]]:
    """Each party's (motivation, interruption) thresholds from the case's ``config`` (imported into
    ``Scenario.settings["promediate"]["config"]``, matched by name without regard to case); the defaults
    3.0 and 2.5 for a party it does not list."""
    config = (scenario.settings.get("promediate") or {}).get("config") or {}
    by_name = {str(name).lower(): values for name, values in config.items() if isinstance(values, dict)}
    found = {}
    for party in parties:
        values = by_name.get(party.strip().lower())
        if values:
            found[party] = (
                float(values.get("im_threshold", IM_THRESHOLD)),
                float(values.get("interrupt_threshold", INTERRUPT_THRESHOLD)),
            )
    return found


def forget_unfinished_step(episode: Episode, turns: list[Turn]) -> None:
    """A resumed episode redoes the step whose turn was not stored: its decision and thoughts go.

    A decision to intervene whose turn was stored but not yet linked to it is linked instead.
    """
    if not turns:
        return
    last = turns[-1].index
    MediatorDecision.objects.filter(episode=episode, after_index__gte=last).delete()
    PartyThought.objects.filter(episode=episode, after_index__gte=last).delete()
    by_index = {turn.index: turn for turn in turns}
    for decision in MediatorDecision.objects.filter(episode=episode, engaged=True, turn__isnull=True):
        spoken = by_index.get(decision.after_index + 1)
        if spoken is not None:
            MediatorDecision.objects.filter(pk=decision.pk).update(turn=spoken)


def reservoir(episode: Episode) -> dict[int, tuple[str, float]]:
    """Each seat's most salient stored thought: its best-rated one from the last step it thought in."""
    found: dict[int, tuple[int, str, float]] = {}
    for seat_id, after, content, rating in (
        PartyThought.objects.filter(episode=episode)
        .order_by("after_index", "pk")
        .values_list("seat_id", "after_index", "content", "rating")
    ):
        rating = rating if rating is not None else 1.0
        kept = found.get(seat_id)
        if kept is None or after > kept[0] or rating > kept[2]:
            found[seat_id] = (after, content, rating)
    return {seat_id: (content, rating) for seat_id, (_, content, rating) in found.items()}


async def run_negotiation(
    episode: Episode,
    seats: list[Seat],
    turns: list[Turn],
    *,
    seed: int,
    save_turn: Callable[[Turn], Awaitable[Turn]],
) -> str:
    """Play the negotiation on from ``turns`` to its end; the end reason.

    ``episode`` is loaded with its scenario and barrier, ``seats`` with role and character; the
    caller marks the episode running and finished (``benchmark.runs.simulation.run_episode``).
    """
    await sync_to_async(forget_unfinished_step)(episode, turns)
    table = await sync_to_async(load_table)(episode, seats, turns, seed)
    options = settings_of(episode)
    temperature = float(episode.settings.get("temperature", 0.7))
    policy = (
        mediator_for(
            options.get("mediator", DEFAULT_MEDIATOR),
            table.mediator.model,
            strategies=int(options.get("strategies", 3)),
            articulation_model=options.get("articulation_model") or None,
            temperature=temperature,
        )
        if table.mediator
        else None
    )
    agents = {
        name: PartyAgent(table.context.party(name), seat.model, temperature=temperature)
        for name, seat in table.parties.items()
    }
    stored = await sync_to_async(reservoir)(episode)
    kept = {name: stored[seat.pk] for name, seat in table.parties.items() if seat.pk in stored}
    context = table.context
    if not turns:
        opener = (
            table.mediator or table.parties[random.Random(f"promediate-opening|{seed}").choice(list(table.parties))]
        )
        turn = await save_turn(_turn(episode, 0, opener, prompts.OPENING_LINE, opener.model, 0, None))
        context = context.with_utterance(Utterance(0, table.names[opener.pk], turn.content, opener is table.mediator))
    while context.turn < episode.turn_cap:
        started = time.monotonic()
        last = context.last
        if policy is not None and not last.mediator:
            spoken = await _mediator_step(table, policy, context, save_turn, started)
            if spoken is not None:
                context = context.with_utterance(spoken)
                continue
        step = await _party_step(table, agents, kept, context, save_turn, started)
        if step is None:
            return Episode.EndReason.LEAVE  # nobody has anything left to say
        context = step
        if isinstance(policy, SocialMediator) and not policy.scripted:
            context = await _track(table, policy, context)
    return Episode.EndReason.TURN_CAP


async def _mediator_step(
    table: Table,
    policy: MediatorPolicy,
    context: NegotiationContext,
    save_turn: Callable[[Turn], Awaitable[Turn]],
    started: float,
) -> Utterance | None:
    """The mediator's decision on the last utterance, stored; its utterance when it intervenes."""
    if policy.scripted and isinstance(policy, SocialMediator):
        context = NegotiationContext(**{**context.__dict__, "consensus": track(context).as_dict()})
    when = await policy.decide_when(context)
    how = await policy.decide_how(context) if when.engage and not when.failed else None
    decided_ms = _elapsed_ms(started)
    engaged = how is not None and not how.failed and bool(how.text)
    decision = MediatorDecision(
        episode=table.episode,
        after_index=context.last.index,
        by=MediatorDecision.By.SCRIPTED if policy.scripted else MediatorDecision.By.AGENT,
        policy=policy.key,
        model=policy.model,
        engaged=engaged,
        rating=when.rating,
        reason=when.reason,
        candidates=how.candidates if how else [],
        chosen=how.chosen if how else "",
        decided_ms=decided_ms,
        decided_at=timezone.now(),
        failed=when.failed or bool(how and how.failed),
        raw=when.raw or (how.raw if how else ""),
    )
    await decision.asave(force_insert=True)
    if not engaged:
        return None
    usage = total_usage(when.usage, how.usage)
    turn = await save_turn(
        _turn(table.episode, context.turn, table.mediator, how.text, policy.model, decided_ms, usage)
    )
    await MediatorDecision.objects.filter(pk=decision.pk).aupdate(turn=turn)
    return Utterance(turn.index, context.mediator_name or "", turn.content, True)


async def _party_step(
    table: Table,
    agents: dict[str, PartyAgent],
    kept: dict[str, tuple[str, float]],
    context: NegotiationContext,
    save_turn: Callable[[Turn], Awaitable[Turn]],
    started: float,
) -> NegotiationContext | None:
    """The parties think, the floor is chosen and the chosen thought said; the context after it, or None."""
    last = context.last
    thinkers = [name for name in table.parties if name != last.speaker]
    first_model = next(iter(table.parties.values())).model
    # who the floor is handed to is read while the parties think: neither waits for the other
    (allocation, allocation_usage), *results = await asyncio.gather(
        predict_allocation(context, first_model), *(_think(agents[name], context) for name in thinkers)
    )
    usages = [allocation_usage]
    rows: list[PartyThought] = []
    best: dict[str, float | None] = {}
    best_row: dict[str, PartyThought] = {}
    for name, (rated, usage) in zip(thinkers, results, strict=True):
        usages.append(usage)
        gap = context.silence(name)
        best[name] = None
        for thought, rating in rated:
            row = PartyThought(
                episode=table.episode,
                after_index=last.index,
                seat=table.parties[name],
                content=thought.content,
                raw_rating=rating.rating,
                rating=silence_bonus(rating.rating if rating.rating is not None else 1.0, gap),
            )
            rows.append(row)
            if best[name] is None or row.rating > best[name]:
                best[name], best_row[name] = row.rating, row
    for name, row in best_row.items():
        kept[name] = (row.content, row.rating)
        im, interrupt = table.thresholds.get(name, (IM_THRESHOLD, INTERRUPT_THRESHOLD))
        row.selected = passes(row.rating, name, allocation, im_threshold=im, interrupt_threshold=interrupt)
    fallback = {name: kept[name][1] for name in thinkers if name in kept}
    speaker = choose_speaker(best, allocation, last.speaker, fallback=fallback, thresholds=table.thresholds)
    if speaker is None:
        await PartyThought.objects.abulk_create(rows)
        return None
    chosen = best_row.get(speaker) if best_row.get(speaker) is not None and best_row[speaker].selected else None
    if chosen is None:
        content, rating = kept[speaker]
        chosen = best_row.get(speaker)
        if chosen is None or chosen.content != content:
            chosen = PartyThought(
                episode=table.episode,
                after_index=last.index,
                seat=table.parties[speaker],
                content=content,
                raw_rating=None,
                rating=rating,
            )
            rows.append(chosen)
    chosen.spoken = True
    text, usage = await agents[speaker].articulate(context, Thought(chosen.content))
    usages.append(usage)
    await PartyThought.objects.abulk_create(rows)
    seat = table.parties[speaker]
    turn = await save_turn(
        _turn(table.episode, context.turn, seat, text, seat.model, _elapsed_ms(started), total_usage(*usages))
    )
    return context.with_utterance(Utterance(turn.index, speaker, turn.content))


async def _think(
    agent: PartyAgent, context: NegotiationContext
) -> tuple[list[tuple[Thought, Rated]], llm.Usage | None]:
    thoughts, usage = await agent.think(context)
    rated = await asyncio.gather(*(agent.rate(context, thought, number) for number, thought in enumerate(thoughts)))
    return [(thought, rating) for thought, (rating, _) in zip(thoughts, rated, strict=True)], total_usage(
        usage, *(u for _, u in rated)
    )


async def _track(table: Table, policy: SocialMediator, context: NegotiationContext) -> NegotiationContext:
    """The model tracker's consensus state after a party's utterance, kept on the episode for a resume."""
    previous = context.consensus or {}
    data, _, _ = await ask_json(prompts.tracker_update(context, previous), policy.model, 0.0, _check_object)
    if data is None:
        return context
    episode = table.episode
    episode.settings = {**episode.settings, "promediate": {**settings_of(episode), "consensus": data}}
    await episode.asave(update_fields=["settings"])
    return NegotiationContext(**{**context.__dict__, "consensus": data})


def _check_object(data: dict[str, Any]) -> None:
    if not all(isinstance(value, dict) for value in data.values()):
        raise ValueError("each issue's state must be an object")


def _turn(
    episode: Episode, index: int, seat: Seat, content: str, model: str, latency_ms: int, usage: llm.Usage | None
) -> Turn:
    return Turn(
        episode=episode,
        index=index,
        seat=seat,
        content=content,
        model=model,
        latency_ms=latency_ms,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
    )


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
