"""What happens next in a chat episode: end it, start the agent's turn, or wait for the participant.

Every path that changes an episode (a participant's turn, the agent's turn, a page connecting, the
inactivity watch) decides from the committed transcript. That makes the episode self-healing across
processes: if the process that stored a turn dies before acting on it, the next page to connect (or
the watch of a page still open) picks it up.

The common steps decide inside the transaction that stored the turn: a participant's turn claims the
agent's lease when it makes the agent's turn due (``chat.turns.submit_human_turn``), an agent's turn
hands the lease on when the next turn is an agent's too (``chat.agent_turn.store_agent_turn``), and a
page connecting decides from the transcript it sends. :func:`advance` reads everything again, for the
rest: the end of the chat, a negotiation's floor, a resent message, a watch that found a stalled turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from benchmark.models import ActionType, Episode, Turn

from . import agent_turn, negotiation
from .lifecycle import (
    ENDED,
    QUESTIONS,
    end_episode,
    end_if_idle,
    ended_by_participant,
    outcome_of,
    seconds_until_idle,
    seen_lately,
)
from .models import Participant
from .orm import database_call
from .protocol import Cast, broadcast, ended_message, floor_message, history_message
from .turns import ChatSetup, load_cast, mark_seen, read_participant, read_transcript

logger = logging.getLogger(__name__)

# Running agent turns, held so the event loop does not garbage-collect them mid-turn.
_agent_tasks: set[asyncio.Task] = set()
WATCH_RETRY = 5.0  # seconds before a page's watch looks again after a failed check


@dataclass(frozen=True)
class Step:
    episode_pk: int | None = None
    ended: str = ""  # the end reason, when this step ended the episode
    outcome: str = QUESTIONS  # where the end sends the participant (``chat.lifecycle.outcome_of``)
    participant_left: bool = False  # the end is the participant's own leave
    owner: str = ""  # the lease owner, when this step claimed the agent's turn
    group: bool = False  # three seats or more (the end message of a leave differs)
    floor: dict[str, Any] | None = None  # a negotiation's floor, when the pages must hear of it
    wake_in: float = 0.0  # seconds until the participant's window closes (a negotiation)


def next_step(participant_pk: int, cast: Cast | None = None, *, announce: bool = False) -> Step:
    """End the episode if its last turn finished it, or claim the agent's turn if it is due.

    In a negotiation the next turn is first settled (``chat.negotiation.settle_floor``): while the
    participant's window is open nobody's turn is due, and the step says when it closes; the floor is
    told to the pages when it changed (or when ``announce``). Pass the episode's ``cast`` when known to
    save its queries.
    """
    participant = with_transcript_counts(Participant.objects.select_related("study", "episode")).get(pk=participant_pk)
    episode = participant.episode
    if participant.stage != Participant.Stage.CHAT or episode is None or episode.status in ENDED:
        return Step()
    cast = current_cast(participant, cast)
    count = participant.turns_stored
    reason = cast.end_reason_after(count)
    if reason is not None:
        if not end_episode(participant, reason):
            return Step(episode.pk)
        return Step(
            episode.pk, ended=reason, outcome=outcome_of(participant.stage),
            participant_left=reason == Episode.EndReason.LEAVE and ended_by_participant(episode, reason),
            group=cast.is_group,
        )
    floor, wake_in = None, 0.0
    if cast.is_negotiation:
        now = timezone.now()
        change = negotiation.settle_floor(participant_pk, now)
        cast = cast.current()
        if change.floor is not None and change.floor.index == count:
            if change.changed or announce or change.floor.window:
                floor = floor_message(change.floor, cast, now)
            if change.floor.window:
                return Step(episode.pk, floor=floor, wake_in=change.floor.seconds_left(now))
    if cast.is_human_turn(count):
        return Step(episode.pk, floor=floor, wake_in=wake_in)
    owner = agent_turn.new_owner()
    if agent_turn.claim_lease(participant_pk, owner):
        return Step(episode.pk, owner=owner, floor=floor)
    return Step(episode.pk, floor=floor)


async def advance(
    participant_pk: int, cast: Cast | None = None, *, announce: bool = False, setup: ChatSetup | None = None
) -> None:
    """Act on the episode's state: tell the pages it ended, or start the agent's turn.

    In a negotiation, tell the pages where the floor stands and look again when the participant's window closes.
    """
    step = await database_call(next_step)(participant_pk, cast, announce=announce)
    if step.floor is not None:
        await broadcast(step.episode_pk, step.floor)
    if step.wake_in:
        wake_at_deadline(participant_pk, step.wake_in, setup)
    if step.ended:
        message = ended_message(
            step.ended, outcome=step.outcome, participant_left=step.participant_left, group=step.group
        )
        await broadcast(step.episode_pk, message)
    if step.owner:
        start_agent_turn(participant_pk, step.owner, setup)


def wake_at_deadline(participant_pk: int, seconds: float, setup: ChatSetup | None = None) -> asyncio.Task:
    """Look at the episode again just after a window closes (the server's clock decides, not the page)."""
    task = asyncio.create_task(_advance_later(participant_pk, seconds + 0.05, setup))
    _agent_tasks.add(task)
    task.add_done_callback(_agent_tasks.discard)
    return task


async def _advance_later(participant_pk: int, seconds: float, setup: ChatSetup | None) -> None:
    await asyncio.sleep(seconds)
    try:
        await advance(participant_pk, setup=setup)
    except Exception:
        logger.exception("the negotiation of participant %s could not go on after a window", participant_pk)


def start_agent_turn(
    participant_pk: int, owner: str, setup: ChatSetup | None = None, transcript: tuple[Turn, ...] | None = None
) -> asyncio.Task:
    """Run the agent's turn as a task of its own, so a closing socket does not cancel it. ``transcript``: the
    turns read in the transaction that claimed the lease ``owner`` (``chat.agent_turn.take_turn``)."""
    task = asyncio.create_task(_agent_turn_then_advance(participant_pk, owner, setup, transcript))
    _agent_tasks.add(task)
    task.add_done_callback(_agent_tasks.discard)
    return task


async def _agent_turn_then_advance(
    participant_pk: int, owner: str, setup: ChatSetup | None, transcript: tuple[Turn, ...] | None = None
) -> None:
    """The agent's turn, then the next: another agent's under the lease it was handed, or the end (or a
    negotiation's floor) through :func:`advance`; the participant's needs nothing."""
    try:
        taken = await agent_turn.take_turn(participant_pk, owner, setup, transcript)
        if taken is None:
            return
        if taken.owner:  # handed on with the turn just stored: the next agent's turn needs no read
            start_agent_turn(participant_pk, taken.owner, setup, taken.transcript)
        elif taken.ending is None and taken.cast.is_negotiation:
            await advance(participant_pk, taken.cast, setup=setup)
    except Exception:
        logger.exception("the agent's turn for participant %s could not go on", participant_pk)


def with_transcript_counts(participants: QuerySet[Participant]) -> QuerySet[Participant]:
    """Participants with how many turns their episode has stored (``turns_stored``) and how many of them are
    leaves (``leaves_stored``), read in the statement that reads them."""
    turns = Turn.objects.filter(episode_id=OuterRef("episode_id")).order_by().values("episode_id")
    counted = turns.annotate(n=Count("pk")).values("n")
    leaves = turns.filter(action_type=ActionType.LEAVE).annotate(n=Count("pk")).values("n")
    return participants.annotate(
        turns_stored=Coalesce(Subquery(counted), 0), leaves_stored=Coalesce(Subquery(leaves), 0)
    )


def current_cast(participant: Participant, cast: Cast | None) -> Cast:
    """The episode's cast now: ``cast`` (a socket's, kept current from what it heard) when it knows every leave
    stored (``with_transcript_counts``), else read. A negotiation's floor is always read."""
    if cast is None:
        return load_cast(participant)
    if cast.is_negotiation or len(cast.leaves) != participant.leaves_stored:
        return cast.current()
    return cast


# --- opening a page and watching it ---------------------------------------------------------------


@dataclass(frozen=True)
class Opened:
    """A page connected (:func:`open_episode`): what to send it and what to do next."""

    history: dict[str, Any]
    setup: ChatSetup
    cast: Cast
    ended: bool  # this call ended the episode (the history's ``ended`` says how, for the other pages)
    owner: str = ""  # the agent lease this call claimed: start the agent's turn
    transcript: tuple[Turn, ...] = ()  # with ``owner``: the turns read, which the agent's turn is planned from
    look_again: bool = False  # the transcript needs :func:`advance` (an end not acted on, a negotiation's floor)
    wait: float = 0.0  # seconds before the page's watch first looks
    idle_in: float = 0.0  # seconds until the chat would be idle


def open_episode(participant: Participant, now: datetime | None = None) -> Opened:
    """A page connected: end the chat if it sat idle too long, else note the participant is here.

    Takes the participant as ``chat.turns.participants`` reads them (the socket's binding check did), so
    the chat's setup, the transcript and the seen mark cost three to five statements (the seats, their goals,
    the barrier's cues when a seat carries one); when the agent's turn is due and nobody holds its lease, the
    seen mark comes with its claim, and a participant seen moments ago (``chat.lifecycle.seen_lately``) needs none.
    """
    now = now or timezone.now()
    ended = end_if_idle(participant, now)
    if ended:
        participant = read_participant(participant.pk)
    setup = ChatSetup.of(participant)
    episode = participant.episode
    chatting = participant.stage == Participant.Stage.CHAT
    if chatting and episode.status == Episode.Status.PENDING:
        Episode.objects.filter(pk=episode.pk, status=Episode.Status.PENDING).update(
            status=Episode.Status.RUNNING, started_at=now
        )
        episode.status, episode.started_at = Episode.Status.RUNNING, now
    turns = read_transcript(episode.pk)
    history, cast = _history(setup, participant, turns, now)
    count = len(turns)
    owner = ""
    if chatting and history["ended"] is None and not cast.is_negotiation and cast.agent_due_after(count):
        if not agent_turn.lease_is_live(participant, now):
            owner = agent_turn.new_owner()
            owner = owner if agent_turn.claim_lease(participant.pk, owner, now, seen=True) else ""
    if chatting and not owner and not seen_lately(participant, now):
        mark_seen(participant.pk, now)
        participant.last_seen_at = now
    elif owner:  # the claim marked it
        participant.last_seen_at = now
    if history["ended"] is not None or not chatting:
        return Opened(history, setup, cast, ended)
    idle_in = seconds_until_idle(participant, now)
    if cast.is_human_turn(count) and not cast.is_negotiation and cast.end_reason_after(count) is None:
        return Opened(history, setup, cast, ended, wait=idle_in, idle_in=idle_in)
    wait = min(idle_in, agent_turn.LEASE.total_seconds() / 2)
    if cast.is_negotiation or cast.end_reason_after(count) is not None:
        return Opened(history, setup, cast, ended, look_again=True, wait=wait, idle_in=idle_in)
    transcript = tuple(turns) if owner else ()
    return Opened(history, setup, cast, ended, owner=owner, transcript=transcript, wait=wait, idle_in=idle_in)


def snapshot(
    participant_pk: int, now: datetime | None = None, setup: ChatSetup | None = None
) -> tuple[dict[str, Any], Cast]:
    """The ``history`` message for the participant's episode as stored right now.

    With the socket's ``setup``, two statements: the participant with their episode, and the transcript.
    """
    now = now or timezone.now()
    if setup is None:
        participant = read_participant(participant_pk)
        setup = ChatSetup.of(participant)
    else:
        participant = Participant.objects.select_related("episode").get(pk=participant_pk)
    turns = read_transcript(participant.episode_id)
    return _history(setup, participant, turns, now)


def _history(
    setup: ChatSetup, participant: Participant, turns: list[Turn], now: datetime
) -> tuple[dict[str, Any], Cast]:
    """The ``history`` message from what the caller read: the participant (with the episode as it is now)
    and the whole transcript."""
    episode = participant.episode
    setup.episode.settings = episode.settings  # a negotiation's floor lives there
    cast = setup.cast(turns)
    typing = None
    index = len(turns)
    if episode.status not in ENDED and not cast.is_human_turn(index) and agent_turn.lease_is_live(participant, now):
        reply = agent_turn.reply_in_progress(episode.pk, index)
        typing = {
            "index": index,
            "speaker": cast.names.get(cast.seat_at(index), ""),
            "action_type": reply.action_type if reply else None,
            "text": reply.text if reply else "",
        }
        if cast.is_group:
            typing["seat"] = cast.position_of(cast.seat_at(index))
    limits = {
        "max_chars": setup.max_chars,
        "messages_per_minute": setup.messages_per_minute,
        "turn_cap": episode.turn_cap,
        "min_turns": setup.min_turns,
    }
    outcome = outcome_of(participant.stage)
    floor = negotiation.Floor.read(episode.settings) if cast.is_negotiation else None
    floor = floor_message(floor, cast, now) if floor is not None and floor.index == index else None
    history = history_message(episode, turns, cast, limits=limits, typing=typing, outcome=outcome, floor=floor)
    return history, cast


@dataclass(frozen=True)
class Watch:
    over: bool
    ended: str = ""  # TIMEOUT when this check ended the episode
    ended_elsewhere: str = ""  # the end reason when something that tells no page ended it (a researcher's monitor)
    outcome: str = QUESTIONS  # where the end (either kind) sends the participant
    participant_left: bool = False  # the end elsewhere was the participant's own leave
    group: bool = False  # the episode has three seats or more
    agent_due: bool = False  # the agent's turn is due and nobody holds a live lease on it
    wait: float = 0.0  # seconds until the next check
    idle_in: float = 0.0  # seconds until the chat would be idle (``wait`` when that is the reason to look)


def check_episode(
    participant_pk: int, now: datetime | None = None, setup: ChatSetup | None = None, cast: Cast | None = None
) -> Watch:
    """One look by a connected page's watch: idle too long? an agent turn nobody is writing?

    With the socket's ``cast`` (kept current from what it hears), one statement; with its ``setup`` only, the
    cast costs its leaves."""
    now = now or timezone.now()
    participant = with_transcript_counts(Participant.objects.select_related("study", "episode")).get(pk=participant_pk)
    if participant.stage != Participant.Stage.CHAT or participant.episode_id is None:
        episode = participant.episode
        ended = episode.end_reason if episode is not None and episode.status in ENDED else ""
        outcome = outcome_of(participant.stage)
        left = ended == Episode.EndReason.LEAVE and ended_by_participant(episode, ended)
        group = bool(ended) and episode.seats.count() > 2
        return Watch(over=True, ended_elsewhere=ended, outcome=outcome, participant_left=left, group=group)
    if end_if_idle(participant, now):
        outcome = outcome_of(participant.stage)
        return Watch(over=True, ended=Episode.EndReason.TIMEOUT, outcome=outcome)
    idle_in = seconds_until_idle(participant, now)
    count = participant.turns_stored
    cast = setup.cast() if cast is None and setup is not None else current_cast(participant, cast)
    agents_turn = not cast.is_human_turn(count)
    wait = min(idle_in, agent_turn.LEASE.total_seconds() / 2) if agents_turn else idle_in
    due = agents_turn and not agent_turn.lease_is_live(participant, now)
    return Watch(over=False, agent_due=due, wait=max(0.1, wait), idle_in=idle_in)


async def watch(
    participant_pk: int, episode_pk: int, tell: Callable[[dict[str, Any]], Awaitable[None]],
    setup: ChatSetup | None = None, first_wait: float = 0.0, idle_in: float | None = None,
    heard: Callable[[], tuple[Cast, int]] | None = None,
) -> None:
    """While a page is open: end the chat once it has been idle for the study's timeout, and
    restart an agent turn whose process stopped renewing its lease. ``tell`` sends a message to
    this page only: an end that was not broadcast (e.g. the researcher's monitor ended an idle
    chat) still reaches it. ``first_wait`` and ``idle_in``: the page's connecting just looked (``Opened``);
    ``heard``: the socket's cast, kept current from what it hears, and how many turns it has heard of.

    A look sooner than the idle deadline is for an agent's turn that may have stalled; when the page has heard
    that turn stored by then (the participant's turn is next), the look waits for the idle deadline instead.
    """
    wait = first_wait
    idle_in = first_wait if idle_in is None else idle_in
    while True:
        await asyncio.sleep(wait)
        if wait < idle_in and heard is not None and _participants_turn(*heard()):
            await asyncio.sleep(idle_in - wait)
        try:
            state = await database_call(check_episode)(participant_pk, None, setup, heard()[0] if heard else None)
        except Exception:  # e.g. the database restarting: log it and look again shortly
            logger.exception("could not check on the chat of participant %s", participant_pk)
            wait = idle_in = WATCH_RETRY
            continue
        if state.ended:
            await broadcast(episode_pk, ended_message(state.ended, outcome=state.outcome))
        elif state.ended_elsewhere:
            await tell(ended_message(
                state.ended_elsewhere, outcome=state.outcome, participant_left=state.participant_left,
                group=state.group,
            ))
        if state.over:
            return
        if state.agent_due:
            await advance(participant_pk, setup=setup)
        wait, idle_in = state.wait, state.idle_in


def _participants_turn(cast: Cast, heard: int) -> bool:
    """True when, after the turns a page has heard of, the participant speaks next (a negotiation's floor is
    the server's to say)."""
    return not cast.is_negotiation and cast.is_human_turn(heard)
