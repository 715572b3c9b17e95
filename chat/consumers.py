"""The participant's chat socket: who is asking, what they may touch, which function does the work.

What the chat needs for its whole life is read once when the socket connects and kept on the
consumer: who the participant is and the browser they are bound to, the episode's setup (seats,
characters, roles, the study's limits: ``chat.turns.ChatSetup``) and its cast, which the turns heard
over the episode's group keep current (a leave steps its seat round). That is safe because none of it
is trusted for a write: storing a turn locks the episode row and checks, in the same statement, the
committed transcript (the last index, the leaves, the binding, the rate window), so a view gone stale
costs a refusal or one more read, never a wrong turn. Turns are in the database, fan-out is the
episode's channel-layer group, and what happens next is decided by ``chat.state_machine`` from the
stored transcript, so a page reconnecting to another server process sees the same episode. The
protocol is described in ``docs/chat-protocol.md``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import transaction

from . import connections, negotiation, state_machine
from .access import SESSION_KEY, is_bound_to
from .models import ChatStudy, Participant
from .negotiation import FloorRefused
from .orm import database_call
from .protocol import (
    CLOSE_FLOOD,
    CLOSE_NO_PARTICIPANT,
    CLOSE_NOT_IN_CHAT,
    CLOSE_TOO_MANY_PAGES,
    CLOSE_UNKNOWN_STUDY,
    Cast,
    broadcast,
    ended_message,
    episode_group,
    turn_message,
)
from .statements import Param, Select
from .throttle import allow_frame
from .turns import ChatSetup, Submitted, TurnRefused, participants, submit_human_turn

OPEN_STAGES = frozenset({
    Participant.Stage.CHAT, Participant.Stage.QUESTIONNAIRE, Participant.Stage.DONE, Participant.Stage.SCREENED_OUT,
    Participant.Stage.TECHNICAL_PROBLEM,
})
BAD_MESSAGE = {
    "type": "error", "code": "bad_message", "message": 'Send JSON with "type": "act", "floor" or "sync".'
}


def find_participant(session: Any, slug: str) -> Participant | int:
    """The participant this browser session plays in the study, with their row locked (in the caller's
    transaction), or a close code.

    Only the session says who the participant is (the flow pages wrote
    ``session["chat_participants"][str(study.pk)]``), and only while the participant is bound to
    this browser (``chat.access``), so nobody reaches another participant's episode by changing
    the URL, nor by bringing their id to another browser. A finished chat may still be opened:
    the page then shows the end. The participant comes with what the chat's setup needs
    (``chat.turns.participants``), in one statement when the session remembers one participant.
    """
    remembered = session.get(SESSION_KEY) if session is not None else None
    remembered = remembered if isinstance(remembered, dict) else {}
    candidates = [pk for pk in remembered.values() if isinstance(pk, int)]
    participant = next((p for pk in candidates for p in FIND_AND_LOCK.fetch(participant=pk, slug=slug)), None)
    if participant is None or remembered.get(str(participant.study_id)) != participant.pk:
        if not ChatStudy.objects.filter(slug=slug).exists():
            return CLOSE_UNKNOWN_STUDY
        return CLOSE_NO_PARTICIPANT
    if not is_bound_to(participant, session):
        return CLOSE_NO_PARTICIPANT
    if participant.episode_id is None or participant.stage not in OPEN_STAGES:
        return CLOSE_NOT_IN_CHAT
    return participant


# At most one row: no ORDER BY. Compiled once (``chat.statements``), as the message's own statements are.
FIND_AND_LOCK = Select(
    lambda: participants().select_for_update(of=("self",)).filter(pk=Param("participant"), study__slug=Param("slug"))
    .order_by()
)


def open_socket(session: Any, slug: str, server: str) -> tuple[Participant | int, str | None]:
    """The participant this socket's session plays (:func:`find_participant`: them, or a close code) and, for
    a participant found, the socket's lease held by ``server`` (``chat.connections.open_connection``: its key,
    or None when they hold the most sockets), in one transaction: the statement that finds the participant
    locks their row, which orders sockets opening at the same moment."""
    with transaction.atomic():
        found = find_participant(session, slug)
        if isinstance(found, int):
            return found, None
        return found, connections.open_connection(found.pk, server, locked=True)


def still_bound(participant_pk: int, token: str) -> bool:
    """True while the participant is still bound to the browser that opened this socket."""
    return Participant.objects.filter(pk=participant_pk, browser_token=token).exclude(browser_token="").exists()


class ChatConsumer(AsyncJsonWebsocketConsumer):
    """One open chat page. The agent's turns run as tasks of their own and outlive it."""

    participant_pk: int
    episode_pk: int
    browser: str  # the token of the browser the socket was opened from (``chat.access``)
    setup: ChatSetup  # what never changes while the chat runs, read once
    cast: Cast  # the episode's cast, kept current from the turns heard over the group
    heard: int  # how many turns the socket has heard of (the history, then each ``turn`` over the group)
    leases: connections.Leases  # the open sockets of this server process
    connection: str | None = None  # this socket's key in ``chat.connections``
    released: bool = False  # its lease, watch and group given up (``release``)

    async def connect(self) -> None:
        self.leases = connections.leases()
        found, self.connection = await database_call(open_socket)(
            self.scope.get("session"), self.scope["url_route"]["kwargs"]["slug"], self.leases.server
        )
        # Accept before refusing: a close code sent during the handshake never reaches the browser.
        await self.accept()
        if isinstance(found, int):
            await self.close(code=found)
            return
        participant_pk, episode_pk, self.browser = found.pk, found.episode_id, found.browser_token
        if self.connection is not None:
            self.leases.hold(self.connection, participant_pk)
        if not await allow_frame(participant_pk):  # each new socket reads the whole transcript
            await self.close(code=CLOSE_FLOOD)
            return
        if self.connection is None:
            limit = connections.max_sockets()
            await self.send_json({
                "type": "error",
                "code": "too_many_pages",
                "message": f"This conversation is already open in {limit} tabs or windows, the most allowed. "
                "Close one of them; this page tries again by itself.",
            })
            await self.close(code=CLOSE_TOO_MANY_PAGES)
            return
        self.participant_pk, self.episode_pk = participant_pk, episode_pk
        self.watcher: asyncio.Task | None = None
        await self.channel_layer.group_add(episode_group(self.episode_pk), self.channel_name)
        opened = await database_call(state_machine.open_episode)(found)
        self.setup, self.cast, history = opened.setup, opened.cast, opened.history
        self.heard = len(history["turns"])
        await self.send_json(history)
        if opened.ended:
            await broadcast(self.episode_pk, {"type": "ended", **history["ended"]})
        if history["ended"] is None:
            if opened.owner:
                state_machine.start_agent_turn(self.participant_pk, opened.owner, self.setup, opened.transcript)
            elif opened.look_again:
                await state_machine.advance(self.participant_pk, self.cast, setup=self.setup)
            watch = state_machine.watch(
                self.participant_pk, self.episode_pk, self.send_json, setup=self.setup, first_wait=opened.wait,
                idle_in=opened.idle_in, heard=lambda: (self.cast, self.heard),
            )
            self.watcher = asyncio.create_task(watch)

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Hand a message to its handler, as Channels does, without Channels' hop to the process's one
        sync thread before each (``aclose_old_connections``).

        That hop closes stale connections of the sync thread; this consumer never touches the database in
        it, only through ``database_call``, which looks at its connection around each call itself. Every
        frame and every group message (a streamed reply sends a dozen) paid the hop, queued behind every
        other socket's session reads in that thread.
        """
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Run the socket, and whatever ends it (a disconnect, or a handler that raised, which Channels never
        follows with ``disconnect``), give up its lease, its watch and its group."""
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.release()

    async def disconnect(self, code: int) -> None:
        await self.release()

    async def release(self) -> None:
        """Give up what the open socket holds; a second call does nothing."""
        if self.connection is not None:
            key, self.connection = self.connection, None
            await self.leases.close(key)
        if not hasattr(self, "episode_pk") or self.released:
            return
        self.released = True
        if self.watcher is not None:
            self.watcher.cancel()
        await self.channel_layer.group_discard(episode_group(self.episode_pk), self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        """Parse JSON ourselves: a malformed frame gets an error message, not a dropped socket.

        Python's parser gives up on deep nesting (``[[[[…``) with RecursionError, not ValueError;
        both are a bad frame.
        """
        try:
            content = json.loads(text_data) if text_data else None
        except (ValueError, RecursionError):
            content = None
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not hasattr(self, "episode_pk"):
            return
        if not await allow_frame(self.participant_pk):
            await self.close(code=CLOSE_FLOOD)
            return
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "act":
            await self.act(content)
        elif kind == "floor":
            await self.floor(content)
        elif kind == "sync":
            history, self.cast = await database_call(state_machine.snapshot)(self.participant_pk, None, self.setup)
            self.heard = max(self.heard, len(history["turns"]))
            await self.send_json(history)
        else:
            await self.send_json(BAD_MESSAGE)

    async def act(self, content: dict[str, Any]) -> None:
        """The participant's turn: store it (or find it stored), acknowledge, tell every page, go on."""
        client_id = content.get("client_id")
        try:
            submitted = await database_call(submit_human_turn)(
                self.participant_pk,
                client_id=client_id,
                action_type=content.get("action_type"),
                content=content.get("content"),
                cast=self.cast,
                browser=self.browser,
                setup=self.setup,
            )
        except TurnRefused as refusal:
            await self.send_json(refusal.as_message(client_id))
            if refusal.code == "not_your_browser":
                await self.close(code=CLOSE_NO_PARTICIPANT)
            return
        try:
            await self.send_json({"type": "ack", "client_id": submitted.turn.client_id, "index": submitted.turn.index})
        finally:  # the socket may be gone already; what the stored turn sets going must not be lost with it
            await self.go_on(submitted)

    async def go_on(self, submitted: Submitted) -> None:
        """Tell every page of the participant's stored turn (and the end it brought), then start what comes next."""
        ending = submitted.ending
        if submitted.created:
            await broadcast(self.episode_pk, turn_message(submitted.turn, submitted.cast, ended=ending is not None))
        if ending is not None:  # written with the turn
            await broadcast(self.episode_pk, ended_message(
                ending.reason, outcome=ending.outcome, participant_left=ending.participant_left,
                group=submitted.cast.is_group,
            ))
        elif submitted.owner:  # the agent's turn, claimed with the participant's and planned from its transcript
            state_machine.start_agent_turn(self.participant_pk, submitted.owner, self.setup, submitted.transcript)
        elif not submitted.created or submitted.cast.is_negotiation:
            await state_machine.advance(self.participant_pk, self.cast, setup=self.setup)

    async def floor(self, content: dict[str, Any]) -> None:
        """The participant's choice in a negotiation's open window (``chat.negotiation.choose``).

        Only the participant bound to this browser may choose, only the choice their role makes, and only
        while the window is open on the server's clock; then every page hears where the floor stands.
        """
        if not await database_call(still_bound)(self.participant_pk, self.browser):
            await self.close(code=CLOSE_NO_PARTICIPANT)
            return
        try:
            await database_call(negotiation.choose)(self.participant_pk, content.get("choice"), content.get("index"))
        except FloorRefused as refusal:
            await self.send_json(refusal.as_message())
        await state_machine.advance(self.participant_pk, announce=True, setup=self.setup)

    async def chat_forward(self, event: dict[str, Any]) -> None:
        """A message broadcast to the episode's group (see ``chat.protocol.broadcast``); a leave among them
        keeps this socket's cast current, and each turn what it has heard of (``heard``)."""
        message = event["message"]
        if hasattr(self, "cast"):
            self.cast = self.cast.after_message(message)
            if message.get("type") == "turn":
                self.heard = max(self.heard, message["index"] + 1)
        await self.send_json(message)

    async def chat_rebound(self, event: dict[str, Any]) -> None:
        """The participant's browser changed (``chat.protocol.announce_rebinding``): close if it is not ours."""
        if not await database_call(still_bound)(self.participant_pk, self.browser):
            await self.close(code=CLOSE_NO_PARTICIPANT)
