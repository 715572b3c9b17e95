"""The agent's turn in a live chat: written by exactly one server process, watched by every page.

Why it works the way it does:

- **A lease, not a lock in memory.** Several server processes may have pages of the same episode
  open. Before generating, a process claims the participant's agent lease with one conditional
  UPDATE (it succeeds only when no lease is held or the last one has expired), renews it while the
  model writes, and gives it up when the turn is stored (or, in a group chat whose next turn is
  another agent's, hands it to that turn in the same UPDATE). A process that dies mid-reply stops
  renewing, so after ``LEASE`` another process takes over. Storing checks the lease again, and the
  ``(episode, index)`` unique index is the last guard: whoever inserts second drops their reply.
- **Streaming is a preview.** Words are broadcast to the episode's group as they arrive
  (``delta``, with an offset so a page can tell it missed some), and the whole text so far every
  ``PARTIAL_INTERVAL`` (``partial``) so a page that joins mid-reply, in any process, catches up.
  The stored turn (``turn``) replaces the preview.
- **Not tied to a socket.** The turn runs as its own asyncio task (started by
  ``chat.state_machine``), so closing or reloading the page that asked for it loses nothing.
- **Failures end the chat plainly.** When the gateway's retries run out, or the reply is unusable
  even after one repair request, the episode ends as failed with reason ``model_error``; the
  participant is told in plain words and goes on to the questions. The error is kept in the
  episode's settings for the researchers, never sent to the page.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from uuid import uuid4

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from benchmark.agents import llm, prompt, scripted
from benchmark.models import ActionType, Episode, Turn, TurnTaking

from .lifecycle import ENDED, Ending, end_episode, ending_after, moved_fields, outcome_of
from .models import Participant
from .negotiation import Floor
from .orm import database_call
from .protocol import NOBODY, Cast, broadcast, ended_message, turn_message, typing_message
from .statements import DATETIME, Param, Update
from .streaming import ArgumentExtractor, utf16_length
from .turns import INSERT_TURN, ChatSetup, read_transcript

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=20)
RENEW_EVERY = 6.0  # seconds; three renewals fit in one lease
DELTA_INTERVAL = 0.1  # seconds between two delta messages (ten a second): words arriving faster go together
PARTIAL_INTERVAL = 0.5  # seconds between two partial messages (the whole text so far)


def scripted_delay() -> float:
    """Seconds between two words of the offline scripted model, so the page shows it typing."""
    return float(getattr(settings, "PARLEY_CHAT_SCRIPTED_DELAY", 0.04))


# --- the lease ----------------------------------------------------------------------------------


def new_owner() -> str:
    """A name for one attempt at one agent turn, unique across processes and machines."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid4().hex[:12]}"


def claim_lease(participant_pk: int, owner: str, now: datetime | None = None, *, seen: bool = False) -> bool:
    """Take the agent lease if nobody holds a live one; True when this call got it. ``seen``: the participant
    was just here (they sent the turn that made the agent's due); the same statement marks it."""
    now = now or timezone.now()
    return CLAIM[seen].run(participant=participant_pk, now=now, until=now + LEASE, owner=owner) == 1


def _holding(participant: Any, owner: Any) -> QuerySet[Participant]:
    """The participant while ``owner`` holds their agent lease and the episode runs (an end written by hand stops
    it too; in an EXISTS, as a join makes Django compile ``id IN (SELECT …)``)."""
    ended = Episode.objects.filter(pk=OuterRef("episode_id"), status__in=ENDED)
    ours = Participant.objects.filter(pk=participant, agent_lease_owner=owner, stage=Participant.Stage.CHAT)
    return ours.filter(~Exists(ended))


# Claiming the lease (by ``seen``) and giving it up with a stored turn, compiled once (``chat.statements``).
_FREE = Q(agent_lease_until__isnull=True) | Q(agent_lease_until__lte=Param("now", DATETIME))
CLAIM = {seen: Update(
    lambda: Participant.objects.filter(_FREE, pk=Param("participant"), stage=Participant.Stage.CHAT),
    agent_lease_until=Param("until", DATETIME), agent_lease_owner=Param("owner"),
    **({"last_seen_at": Param("now", DATETIME)} if seen else {}),
) for seen in (False, True)}
PASS_ON = Update(lambda: _holding(Param("participant"), Param("owner")), agent_lease_until=Param("until", DATETIME),
                 agent_lease_owner=Param("next"))


def renew_lease(participant_pk: int, owner: str, now: datetime | None = None) -> bool:
    """Extend our lease; False when it is no longer ours (taken over, or the episode ended)."""
    ours = Participant.objects.filter(pk=participant_pk, agent_lease_owner=owner, stage=Participant.Stage.CHAT)
    return ours.update(agent_lease_until=(now or timezone.now()) + LEASE) == 1


def release_lease(participant_pk: int, owner: str) -> None:
    Participant.objects.filter(pk=participant_pk, agent_lease_owner=owner).update(
        agent_lease_until=None, agent_lease_owner=""
    )


def lease_is_live(participant: Participant, now: datetime | None = None) -> bool:
    now = now or timezone.now()
    return participant.agent_lease_until is not None and participant.agent_lease_until > now


# --- the reply in progress ----------------------------------------------------------------------


@dataclass
class Reply:
    """The agent's reply while it is being written in this process, and what has been broadcast."""

    episode_pk: int
    index: int
    action_type: str | None = None
    text: str = ""
    lost: bool = False  # the lease was lost: another process (or the end of the chat) took over
    _sent_chars: int = 0
    _sent_units: int = 0
    _last_delta: float = 0.0
    _last_partial: float = 0.0
    _partial_chars: int = 0

    async def add(self, text: str) -> None:
        """Append newly written text; broadcast it unless a delta went out a moment ago.

        Partials start with the text: the first goes ``PARTIAL_INTERVAL`` after the first words, so a reply
        written faster needs none (a page that joined meanwhile gets the stored turn as soon).
        """
        now = time.monotonic()
        if not self.text:
            self._last_partial = now
        self.text += text
        if now - self._last_delta >= DELTA_INTERVAL:
            await self.flush(now)
        if now - self._last_partial >= PARTIAL_INTERVAL and len(self.text) > self._partial_chars:
            self._last_partial = now
            self._partial_chars = len(self.text)
            await broadcast(
                self.episode_pk,
                {"type": "partial", "index": self.index, "text": self.text, "action_type": self.action_type},
            )

    async def flush(self, now: float | None = None) -> None:
        """Broadcast whatever text has not been sent as a delta yet."""
        pending = self.text[self._sent_chars :]
        if not pending:
            return
        message = {
            "type": "delta",
            "index": self.index,
            "offset": self._sent_units,
            "text": pending,
            "action_type": self.action_type,
        }
        self._sent_chars = len(self.text)
        self._sent_units += utf16_length(pending)
        self._last_delta = now if now is not None else time.monotonic()
        await broadcast(self.episode_pk, message)


_replies: dict[int, Reply] = {}


def reply_in_progress(episode_pk: int, index: int) -> Reply | None:
    """The reply this process is writing for that turn, if any (a page in another process waits
    for the next ``partial`` instead)."""
    reply = _replies.get(episode_pk)
    return reply if reply is not None and reply.index == index else None


# --- one turn -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What the agent's next turn needs: the chat's setup (``chat.turns.ChatSetup``) and the transcript."""

    participant_pk: int
    episode_pk: int
    index: int
    seat_pk: int
    model: str
    temperature: float
    seed: int
    turn_cap: int
    context: prompt.AgentContext
    cast: Cast
    transcript: tuple[Turn, ...]  # the turns before this one
    min_turns: int = 0  # the study's minimum of participant turns (``chat.lifecycle.stage_after``)
    text: str = ""  # what the seat says, decided with the floor (a negotiation's agents: ``chat.negotiation``)
    pending: bool = False  # the episode had not started when the plan's setup was read (it never goes back)


def plan_turn(
    participant_pk: int, owner: str, setup: ChatSetup | None = None, transcript: tuple[Turn, ...] | None = None
) -> Plan | None:
    """The agent's next turn, or None when it is not the agent's turn or the lease is not ours.

    Pass the socket's ``setup`` (``chat.turns.ChatSetup``): the plan then reads only the lease and the
    transcript (and a negotiation's floor), two statements. Pass the ``transcript`` too when it was read in
    the transaction that claimed (or was handed) the lease ``owner`` names, and the plan reads nothing.
    """
    setup = setup or ChatSetup.load(participant_pk)
    episode = setup.episode
    if transcript is None:
        if not _holding(participant_pk, owner).exists():
            return None
        transcript = tuple(read_transcript(episode.pk))
        if episode.scenario.turn_taking == TurnTaking.PROMEDIATE:  # the floor moves with every turn
            episode.settings = Episode.objects.values_list("settings", flat=True).get(pk=episode.pk)
    turns = list(transcript)
    cast = setup.cast(turns)
    index = len(turns)
    if index >= episode.turn_cap or cast.is_human_turn(index) or cast.seat_at(index) == NOBODY:
        return None  # the participant's turn, or a negotiation's floor not given yet
    seat = next(s for s in setup.seats if s.pk == cast.seat_at(index))
    context = prompt.AgentContext.for_seat(
        episode, seat, turns, seats=setup.seats, cues=setup.cues, has_probes=setup.has_probes,
        scenario_barrier=setup.scenario_barrier,
    )
    return Plan(
        participant_pk=participant_pk,
        episode_pk=episode.pk,
        index=index,
        seat_pk=seat.pk,
        model=seat.model or llm.model_for("agent"),
        temperature=float(episode.settings.get("temperature", 0.7)),
        seed=int(episode.settings.get("seed", episode.pk)),
        turn_cap=episode.turn_cap,
        context=context,
        cast=cast,
        transcript=transcript,
        min_turns=setup.min_turns,
        text=_floor_text(episode, index) if cast.is_negotiation else "",
        pending=episode.status == Episode.Status.PENDING,
    )


class _LeaseLost(Exception):
    """Another process took the turn over, or the chat ended while the agent was writing."""


def store_agent_turn(
    plan: Plan, owner: str, action: prompt.Action, usage: llm.Usage, *, next_owner: str = "",
    ending: Ending | None = None,
) -> Turn | None:
    """Store the agent's turn if the lease is still ours and nobody stored that index; else None.

    Giving the lease up is the ownership check: it updates no row when the lease is no longer ours (another
    process took the turn over, or the chat ended: every end lets the lease go, ``chat.lifecycle``), and the
    turn inserted before it is then rolled back. With ``next_owner`` (the next turn is an agent's too, in a
    group chat) the lease is handed to that attempt instead of given up, in the same statement, so the next
    turn needs no claim of its own. With ``ending`` (the turn ends the chat: the agent left, or the turn cap)
    that statement moves the participant on too, and the episode is ended in the same transaction.

    A turn that writes the episode's row (one that ends the chat, or one planned before the episode started)
    takes the episode's lock first, as a participant's turn and every end do, and so does a negotiation's (its
    floor is settled under that lock from the transcript). Any other turn is two
    statements and takes no lock of the episode: a turn stored at the same index meanwhile fails it on the
    ``(episode, index)`` unique index, and it inserts before it touches the participant's row, so it never
    holds that row while waiting for a writer that holds the episode's lock and then wants the row (a
    participant's turn claiming the agent's, an end moving the participant on). Nor does its commit wait
    for one: the episode's lock is PostgreSQL's ``FOR NO KEY UPDATE`` everywhere (``no_key``), which orders
    the writers that take it but lets through the check of the turn's foreign key to the episode, made at
    commit (``FOR KEY SHARE``); a full ``FOR UPDATE`` would make that check wait for an end holding the
    lock while the end waits for the participant's row: a deadlock.
    """
    now = timezone.now()
    try:
        with transaction.atomic():
            status = None
            if ending is not None or plan.pending or plan.cast.is_negotiation:
                locked = Episode.objects.select_for_update(no_key=True).filter(pk=plan.episode_pk)
                status = locked.values_list("status", flat=True).get()
                if status in ENDED:
                    return None
            turn = INSERT_TURN.create(
                episode_id=plan.episode_pk,
                index=plan.index,
                seat_id=plan.seat_pk,
                action_type=action.action_type,
                content=action.content,
                model=usage.model,
                latency_ms=usage.latency_ms,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
            if ending is not None:  # the participant moves on, if the lease is still ours
                ours = _holding(plan.participant_pk, owner).update(**moved_fields(ending.stage, now))
            else:  # the lease given up, or handed to the next turn
                until = now + LEASE if next_owner else None
                ours = PASS_ON.run(participant=plan.participant_pk, owner=owner, until=until, next=next_owner)
            if not ours:
                raise _LeaseLost  # the turn goes with the transaction
            if ending is not None:
                Episode.objects.filter(pk=plan.episode_pk).update(
                    status=ending.status, end_reason=ending.reason, finished_at=now,
                    **({"started_at": now} if status == Episode.Status.PENDING else {}),
                )
            elif status == Episode.Status.PENDING:
                Episode.objects.filter(pk=plan.episode_pk).update(status=Episode.Status.RUNNING, started_at=now)
    except (IntegrityError, _LeaseLost):
        return None  # stored meanwhile (by another process; the lease stays as it was), or no longer ours
    return turn


def fail_episode(participant_pk: int, owner: str, error: BaseException) -> str:
    """End the chat as failed (reason ``model_error``) if this attempt still holds the lease.

    The error text goes into ``episode.settings["failure"]`` for the researchers; the participant
    only ever sees ``chat.lifecycle.end_message``. Returns where the end sends the participant
    (``chat.lifecycle.outcome_of``) when this call ended the episode, "" otherwise. The lease
    is checked with the episode and then the participant locked (the order every writer of a turn
    takes), so a process that took the lease over a moment ago keeps its chat.
    """
    episode_pk = Participant.objects.values_list("episode_id", flat=True).get(pk=participant_pk)
    with transaction.atomic():
        episode = Episode.objects.select_for_update(no_key=True).get(pk=episode_pk)
        participant = Participant.objects.select_for_update().get(pk=participant_pk)
        if participant.agent_lease_owner != owner:
            return ""
        if not end_episode(participant, Episode.EndReason.MODEL_ERROR, status=Episode.Status.FAILED):
            return ""
        episode.settings = {**episode.settings, "failure": f"{type(error).__name__}: {error}"[:2000]}
        episode.save(update_fields=["settings"])
    return outcome_of(participant.stage)


@dataclass(frozen=True)
class Taken:
    """An agent turn this process stored: the cast after it, and the lease handed on to the next agent turn
    (``owner``) when that is due at once."""

    cast: Cast
    ending: Ending | None = None  # the end this turn brought, written with it
    owner: str = ""
    transcript: tuple[Turn, ...] = ()  # every turn stored by then, this one included


async def take_turn(
    participant_pk: int, owner: str, setup: ChatSetup | None = None, transcript: tuple[Turn, ...] | None = None
) -> Taken | None:
    """Write, stream and store the agent's next turn under the lease ``owner`` holds.

    ``transcript``: the turns as read (or written) in the transaction that claimed or handed on that lease;
    the turn is then planned from them without a read (``plan_turn``). Returns what the caller needs to go
    on when this call stored a turn, None when there was nothing to do, another process took over, or the
    model failed (the episode has then ended and the pages were told).
    """
    if transcript is not None and setup is not None:
        plan = plan_turn(participant_pk, owner, setup, transcript)
    else:
        plan = await database_call(plan_turn)(participant_pk, owner, setup)
    if plan is None:
        await database_call(release_lease)(participant_pk, owner)
        return None
    reply = Reply(plan.episode_pk, plan.index)
    _replies[plan.episode_pk] = reply
    keeper = asyncio.create_task(_keep_lease(participant_pk, owner, reply))
    try:
        await broadcast(plan.episode_pk, typing_message(plan.index, plan.cast))
        try:
            action, usage = await _generate(plan, reply)
        except _LeaseLost:
            return None
        except llm.LLMError as error:
            logger.warning("agent turn %s of episode %s failed: %s", plan.index, plan.episode_pk, error)
            await _fail(plan, owner, error)
            return None
        cast = plan.cast.with_leave(plan.index, plan.seat_pk) if action.action_type == ActionType.LEAVE else plan.cast
        ends = cast.end_reason_after(plan.index + 1)
        ending = None
        if ends is not None:  # decided from the transcript as it will be stored
            last = Turn(index=plan.index, seat_id=plan.seat_pk, action_type=action.action_type, content=action.content)
            ending = ending_after(ends, (*plan.transcript, last), cast.human_seat, plan.min_turns)
        next_owner = new_owner() if cast.agent_due_after(plan.index + 1) else ""
        turn = await database_call(store_agent_turn)(plan, owner, action, usage, next_owner=next_owner, ending=ending)
        if turn is None:
            return None
        await broadcast(plan.episode_pk, turn_message(turn, cast, ended=ending is not None))
        if ending is not None:
            await broadcast(plan.episode_pk, ended_message(
                ending.reason, outcome=ending.outcome, participant_left=ending.participant_left, group=cast.is_group
            ))
        return Taken(cast, ending, next_owner, (*plan.transcript, turn))
    except asyncio.CancelledError:
        await database_call(release_lease)(participant_pk, owner)
        raise
    except Exception as error:
        logger.exception("agent turn %s of episode %s broke", plan.index, plan.episode_pk)
        await _fail(plan, owner, error)
        return None
    finally:
        keeper.cancel()
        if _replies.get(plan.episode_pk) is reply:
            del _replies[plan.episode_pk]


async def _fail(plan: Plan, owner: str, error: BaseException) -> None:
    if outcome := await database_call(fail_episode)(plan.participant_pk, owner, error):
        await broadcast(plan.episode_pk, ended_message(Episode.EndReason.MODEL_ERROR, outcome=outcome))


async def _keep_lease(participant_pk: int, owner: str, reply: Reply) -> None:
    """Renew the lease while the reply is written; flag the reply as lost when renewal fails."""
    while True:
        await asyncio.sleep(RENEW_EVERY)
        if not await database_call(renew_lease)(participant_pk, owner):
            reply.lost = True
            return


def _floor_text(episode: Episode, index: int) -> str:
    floor = Floor.read(episode.settings)
    return floor.text if floor is not None and floor.index == index else ""


async def _generate(plan: Plan, reply: Reply) -> tuple[prompt.Action, llm.Usage]:
    if plan.text:
        return await _generate_decided(plan, reply)
    if llm.is_scripted(plan.model):
        return await _generate_scripted(plan, reply)
    return await _generate_with_model(plan, reply)


async def _generate_decided(plan: Plan, reply: Reply) -> tuple[prompt.Action, llm.Usage]:
    """Words already decided (a negotiation's agents chose them with the floor): shown as they are typed."""
    started = time.monotonic()
    reply.action_type = ActionType.SPEAK.value
    words = plan.text.split(" ")
    for number, word in enumerate(words):
        if reply.lost:
            raise _LeaseLost
        await reply.add(word if number == 0 else f" {word}")
        await asyncio.sleep(scripted_delay())
    await reply.flush()
    usage = llm.Usage(plan.model, round((time.monotonic() - started) * 1000), None, None, 0)
    return prompt.Action(ActionType.SPEAK.value, plan.text), usage


async def _generate_scripted(plan: Plan, reply: Reply) -> tuple[prompt.Action, llm.Usage]:
    """The offline model: its action is known at once; its words arrive with a typing delay."""
    stream = scripted.scripted_stream(plan.context, seed=plan.seed, delay=scripted_delay())
    reply.action_type = stream.action.action_type
    async for delta in stream:
        if reply.lost:
            raise _LeaseLost
        await reply.add(delta)
    await reply.flush()
    assert stream.usage is not None  # set once the words are exhausted
    return stream.action, stream.usage


async def _generate_with_model(plan: Plan, reply: Reply) -> tuple[prompt.Action, llm.Usage]:
    """A language model through the gateway: stream the argument, then parse (and repair) the JSON."""
    messages = prompt.build_agent_messages(plan.context)
    # litellm was imported and rehearsed when this server started (loading.start), so no thread hop here.
    stream = await llm.stream(messages, model=plan.model, temperature=plan.temperature)
    extractor = ArgumentExtractor()
    async for delta in stream:
        if reply.lost:
            await stream.aclose()
            raise _LeaseLost
        visible = extractor.feed(delta)
        if reply.action_type is None and extractor.action_type is not None:
            reply.action_type = _known_action_type(extractor.action_type)
        if visible:
            await reply.add(visible)
    await reply.flush()
    assert stream.usage is not None
    validate = partial(prompt.parse_action, allowed=plan.context.action_types)
    try:
        return validate(llm.parse_json_object(stream.text)), stream.usage
    except ValueError as problem:
        logger.info("agent reply in episode %s is unusable (%s); asking for a repair", plan.episode_pk, problem)
        data, repair_usage = await llm.repair_json(
            messages, stream.text, str(problem), model=plan.model, temperature=plan.temperature, validate=validate
        )
        return validate(data), stream.usage + repair_usage


def _known_action_type(raw: Any) -> str | None:
    try:
        return prompt.normalise_action_type(raw)
    except ValueError:
        return None
