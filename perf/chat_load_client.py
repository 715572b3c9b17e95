"""Simulated chat participants for ``perf/chat_load.py``: each one a chat page over a real websocket.

A participant behaves as ``static/chat/chat.js`` does, as far as timing and resending go: it
connects with its session cookie and an allowed Origin, rebuilds its view of the episode from the
``history``, waits for its turn (the agent may open), "thinks", sends an ``act`` with a fresh
``client_id`` and waits for the ``ack`` and then for the agent's stored ``turn``. With probability
``drop`` a message's connection is cut right after sending, the way a lost network cuts it (a TCP
reset, so the message may or may not have reached the server); the participant reconnects to a
server process drawn at random and, like the page, resends the message with the same
``client_id`` unless the new ``history`` already holds it (``resend="always"`` resends it anyway,
which the server must answer with the same ``ack`` and nothing stored twice).

Everything is timed with ``time.perf_counter`` when the message is read off the socket. Nothing
here knows Django: the records are plain data for ``chat_load.py`` to summarise and to check
against the database.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import struct
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

import aiohttp

CONNECT_ATTEMPTS = 6
FIRST_BACKOFF = 0.5  # seconds, doubling: the page's reconnect back-off


@dataclass(frozen=True)
class ParticipantSpec:
    """Who connects: the study's slug, the browser session's key, and a number for the message tags."""

    number: int
    slug: str
    session_key: str


@dataclass(frozen=True)
class LoadConfig:
    ports: tuple[int, ...]
    messages: int = 5
    think: tuple[float, float] = (1.0, 3.0)
    drop: float = 0.1
    resend: str = "page"  # "page": only when the history lacks it; "always": every dropped message
    timeout: float = 60.0  # seconds to wait for any one expected message before giving up on a session
    cookie_name: str = "sessionid"
    host: str = "127.0.0.1"


@dataclass
class MessageRecord:
    """One participant message: when it was sent, acknowledged and answered, and what was stored."""

    participant: int
    number: int
    client_id: str
    tag: str
    content: str
    sent_at: float = 0.0
    dropped: bool = False
    resent: bool = False
    in_history: bool = False  # after the drop, the new connection's history already held it
    acked_at: float | None = None
    index: int | None = None
    typing_at: float | None = None  # the agent's ``typing`` for its reply reached this page
    reply_at: float | None = None  # the agent's stored turn answering it reached this page

    @property
    def ack_seconds(self) -> float | None:
        return None if self.acked_at is None else self.acked_at - self.sent_at

    @property
    def reply_seconds(self) -> float | None:
        return None if self.reply_at is None else self.reply_at - self.sent_at


@dataclass
class SessionRecord:
    """One participant's whole session as their page saw it."""

    spec: ParticipantSpec
    messages: list[MessageRecord] = field(default_factory=list)
    sent_client_ids: list[str] = field(default_factory=list)  # every act sent at least once, leave included
    connects: int = 0
    connect_seconds: list[float] = field(default_factory=list)  # handshake start to history
    errors: Counter = field(default_factory=Counter)  # error codes the server sent
    syncs: int = 0
    streamed_ok: int = 0  # agent turns whose streamed text equalled the stored turn
    streamed_wrong: int = 0
    mismatches: list[tuple[int, str, str]] = field(default_factory=list)  # (index, streamed, stored) when unequal
    agent_opened: bool = False
    left: bool = False
    ended_reason: str | None = None
    failure: str | None = None
    trail: list[tuple[float, str]] = field(default_factory=list)  # the last messages seen, for a failure's report
    started_at: float = 0.0
    finished_at: float = 0.0


class Stopped(Exception):
    """The session cannot go on (timeout, unexpected close, refused message); the text says why."""


class View:
    """The episode as one page knows it, rebuilt from ``history`` and kept up by the messages after it."""

    def __init__(self, record: SessionRecord) -> None:
        self.record = record
        self.turns: dict[int, dict[str, Any]] = {}
        self.turn_at: dict[int, float] = {}
        self.typing_at: dict[int, float] = {}  # the agent's ``typing`` for that index reached this page
        self.next: dict[str, Any] | None = None
        self.acks: dict[str, tuple[float, int]] = {}
        self.errors: dict[str, dict[str, Any]] = {}
        self.ended: str | None = None
        self.histories = 0
        self.closed_code: int | None = None
        self._streams: dict[int, str | None] = {}
        self._changed = asyncio.Event()
        self.want_sync = False
        self.trail: deque[tuple[float, str]] = deque(maxlen=12)

    # --- reading messages --------------------------------------------------------------------

    def take(self, message: dict[str, Any], at: float) -> None:
        kind = message.get("type")
        self.trail.append((at, f"{kind} {message.get('index', '')} {message.get('next', '')}"))
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(message, at)
        self._changed.set()

    def lost(self, code: int | None) -> None:
        self.closed_code = code if code is not None else -1
        self._changed.set()

    def _on_history(self, message: dict[str, Any], at: float) -> None:
        self.histories += 1
        for turn in message["turns"]:
            self.turns[turn["index"]] = turn
            self.turn_at.setdefault(turn["index"], at)
            self._streams.pop(turn["index"], None)  # a reply cut off mid-stream, finished while we were away
        self.next = message.get("next")
        if message.get("ended"):
            self.ended = message["ended"]["reason"]
        typing = message.get("typing")
        if typing:
            self._streams[typing["index"]] = typing["text"] or ""

    def _on_ack(self, message: dict[str, Any], at: float) -> None:
        self.acks.setdefault(message["client_id"], (at, message["index"]))

    def _on_error(self, message: dict[str, Any], at: float) -> None:
        self.record.errors[message.get("code", "?")] += 1
        if isinstance(message.get("client_id"), str):
            self.errors[message["client_id"]] = message

    def _on_turn(self, message: dict[str, Any], at: float) -> None:
        index = message["index"]
        highest = max(self.turns, default=-1)
        if index > highest + 1:
            self.want_sync = True  # a turn went missing: ask for the whole history, as the page does
        known = self.turns.get(index)  # already in a history: its text was never streamed to this page
        if known is not None and known.get("content") != message.get("content"):
            self.record.streamed_wrong += 1  # the same turn sent twice with two texts
            self.record.mismatches.append((index, known.get("content"), message.get("content")))
        self.turns[index] = message
        self.turn_at.setdefault(index, at)
        if index >= highest:
            following = message.get("next")
            self.next = None if following is None else {"index": index + 1, "side": following}
        if message["side"] == "partner" and known is None:
            streamed = self._streams.pop(index, None)
            if streamed is not None:
                if streamed == message["content"]:
                    self.record.streamed_ok += 1
                else:
                    self.record.streamed_wrong += 1
                    self.record.mismatches.append((index, streamed, message["content"]))

    def _on_typing(self, message: dict[str, Any], at: float) -> None:
        self.typing_at.setdefault(message["index"], at)
        self._streams[message["index"]] = message.get("text") or ""

    def _on_delta(self, message: dict[str, Any], at: float) -> None:
        index = message["index"]
        if index in self.turns:
            return
        text = self._streams.get(index)
        if text is None:
            return  # some words went past before we joined: wait for the next partial
        if message["offset"] > _utf16(text):
            self._streams[index] = None
        else:  # as the page does: the delta replaces whatever we have from its offset on
            self._streams[index] = _utf16_prefix(text, message["offset"]) + message["text"]

    def _on_partial(self, message: dict[str, Any], at: float) -> None:
        index = message["index"]
        if index in self.turns:
            return
        text = self._streams.get(index)
        if text is None or _utf16(message["text"]) >= _utf16(text):
            self._streams[index] = message["text"]

    def _on_ended(self, message: dict[str, Any], at: float) -> None:
        self.ended = message["reason"]

    # --- waiting -------------------------------------------------------------------------------

    def my_turn(self) -> bool:
        return self.ended is None and self.next is not None and self.next["side"] == "you"

    def index_of(self, client_id: str) -> int | None:
        return next((i for i, t in self.turns.items() if t.get("client_id") == client_id), None)

    async def until(
        self, condition: Callable[[], bool], what: str, timeout: float, *, link_needed: bool = True
    ) -> None:
        """Wait until ``condition()`` holds; Stopped after ``timeout`` or when the socket closed under us."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if link_needed and self.closed_code is not None:
                raise Stopped(f"socket closed (code {self.closed_code}) while waiting for {what}")
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise Stopped(f"no {what} within {timeout:.0f} s")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _utf16_prefix(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text`` (JavaScript's ``slice(0, units)``)."""
    return text.encode("utf-16-le")[: 2 * units].decode("utf-16-le", errors="ignore")


class Link:
    """One websocket to one server process, read by a task that feeds the view."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, view: View, live: LiveCount) -> None:
        self.ws = ws
        self.view = view
        self.live = live
        live.opened()
        self._open = True
        self._abandoned = False  # closed or cut on purpose: the view no longer listens to this socket
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                if frame.type == aiohttp.WSMsgType.TEXT:
                    at = time.perf_counter()
                    self.view.take(json.loads(frame.data), at)
                    if self.view.want_sync:
                        self.view.want_sync = False
                        self.view.record.syncs += 1
                        await self.ws.send_str('{"type": "sync"}')
                elif frame.type in (aiohttp.WSMsgType.ERROR, aiohttp.WSMsgType.CLOSED):
                    break
        except (aiohttp.ClientError, ConnectionError):
            pass
        finally:
            self._closed()
            if not self._abandoned:
                self.view.lost(self.ws.close_code)

    def _closed(self) -> None:
        if self._open:
            self._open = False
            self.live.closed()

    async def send(self, payload: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(payload))

    def cut(self) -> None:
        """Drop the connection as a lost network does: a TCP reset, no closing handshake."""
        self._abandoned = True
        self.reader.cancel()
        self._closed()
        sock = self.ws.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection = getattr(self.ws, "_conn", None)  # aiohttp keeps no public handle on the connection
        if connection is not None:
            connection.close()  # closing a socket that lingers 0 s sends a reset

    async def close(self) -> None:
        self._abandoned = True
        self._closed()
        await self.ws.close()
        self.reader.cancel()


@dataclass
class LiveCount:
    """Sockets open right now across all participants, and the most at any moment."""

    now: int = 0
    peak: int = 0

    def opened(self) -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)

    def closed(self) -> None:
        self.now -= 1


async def _connect(
    http: aiohttp.ClientSession, spec: ParticipantSpec, config: LoadConfig, view: View, live: LiveCount,
    rng: random.Random,
) -> Link:
    """Open a socket to a random server process and wait for its history (retrying as the page does)."""
    backoff = FIRST_BACKOFF
    problem = ""
    for _attempt in range(CONNECT_ATTEMPTS):
        port = rng.choice(config.ports)
        started = time.perf_counter()
        try:
            ws = await http.ws_connect(
                f"ws://{config.host}:{port}/ws/chat/{spec.slug}/",
                headers={
                    "Origin": f"http://{config.host}:{port}",
                    "Cookie": f"{config.cookie_name}={spec.session_key}",
                },
                autoping=True,
                heartbeat=None,
                timeout=aiohttp.ClientWSTimeout(ws_close=5.0),
            )
        except (aiohttp.ClientError, OSError, TimeoutError) as error:
            problem = f"{type(error).__name__}: {error}"
        else:
            view.closed_code = None
            link = Link(ws, view, live)
            seen = view.histories
            try:
                await view.until(lambda seen=seen: view.histories > seen, "history", config.timeout)
            except Stopped as stop:
                problem = str(stop)
                await link.close()
                if view.closed_code in (4401, 4404, 4409):
                    raise Stopped(f"refused with close code {view.closed_code}") from None
            else:
                view.record.connects += 1
                view.record.connect_seconds.append(time.perf_counter() - started)
                return link
        await asyncio.sleep(backoff * rng.uniform(0.8, 1.2))
        backoff = min(backoff * 2, 15.0)
    raise Stopped(f"could not connect after {CONNECT_ATTEMPTS} attempts: {problem}")


async def run_participant(
    http: aiohttp.ClientSession, spec: ParticipantSpec, config: LoadConfig, live: LiveCount, rng: random.Random,
) -> SessionRecord:
    """One participant's whole session; problems end up in ``record.failure``, never raised."""
    record = SessionRecord(spec, started_at=time.perf_counter())
    view = View(record)
    link: Link | None = None
    try:
        link = await _connect(http, spec, config, view, live, rng)
        record.agent_opened = bool(view.next and view.next["side"] == "partner" and view.next["index"] == 0)
        for number in range(config.messages):
            link = await _one_message(http, spec, config, view, live, rng, link, number)
        link = await _leave(http, spec, config, view, live, rng, link)
    except Stopped as stop:
        record.failure = str(stop)
        record.trail = list(view.trail)
    except Exception as error:  # a bug in the benchmark must not hide the other sessions' figures
        record.failure = f"{type(error).__name__}: {error}"
    finally:
        if link is not None:
            await link.close()
        record.ended_reason = view.ended
        record.finished_at = time.perf_counter()
    return record


async def _one_message(
    http: aiohttp.ClientSession, spec: ParticipantSpec, config: LoadConfig, view: View, live: LiveCount,
    rng: random.Random, link: Link, number: int,
) -> Link:
    await view.until(lambda: view.my_turn() or view.ended is not None, "turn to speak", config.timeout)
    if view.ended is not None:
        raise Stopped(f"the conversation ended ({view.ended}) before message {number + 1}")
    await asyncio.sleep(rng.uniform(*config.think))
    tag = f"bench-{spec.number:04d}-{number:02d}"
    message = MessageRecord(
        participant=spec.number,
        number=number,
        client_id=uuid4().hex,
        tag=tag,
        content=f"Message {number + 1} ({tag}): could we find a way to settle this that works for both of us?",
    )
    view.record.messages.append(message)
    act = {"type": "act", "client_id": message.client_id, "action_type": "speak", "content": message.content}
    link = await _deliver(http, spec, config, view, live, rng, link, message, act)
    index = message.index
    assert index is not None
    await view.until(lambda: index + 1 in view.turns or view.ended is not None, "agent's reply", config.timeout)
    if index + 1 not in view.turns:
        raise Stopped(f"the conversation ended ({view.ended}) before the reply to message {number + 1}")
    message.reply_at = view.turn_at[index + 1]
    message.typing_at = view.typing_at.get(index + 1)
    return link


async def _deliver(
    http: aiohttp.ClientSession, spec: ParticipantSpec, config: LoadConfig, view: View, live: LiveCount,
    rng: random.Random, link: Link, message: MessageRecord, act: dict[str, Any],
) -> Link:
    """Send ``act`` until it is stored: once, or again on a new connection after a drop."""
    view.record.sent_client_ids.append(message.client_id)
    message.sent_at = time.perf_counter()
    await link.send(act)
    if rng.random() < config.drop:
        message.dropped = True
        link.cut()
        link = await _connect(http, spec, config, view, live, rng)
        stored = view.index_of(message.client_id)
        message.in_history = stored is not None
        if stored is None or config.resend == "always":
            message.resent = True
            await link.send(act)
        else:
            message.index = stored
            return link
    client_id = message.client_id
    while True:
        await view.until(
            lambda: client_id in view.acks or client_id in view.errors, f"ack of {message.tag}", config.timeout
        )
        if client_id in view.acks:
            message.acked_at, message.index = view.acks[client_id]
            return link
        error = view.errors.pop(client_id)
        if error.get("code") != "rate_limited":
            raise Stopped(f"{message.tag} refused: {error.get('code')}: {error.get('message')}")
        await asyncio.sleep(float(error.get("retry_after", 1)))
        await link.send(act)


async def _leave(
    http: aiohttp.ClientSession, spec: ParticipantSpec, config: LoadConfig, view: View, live: LiveCount,
    rng: random.Random, link: Link,
) -> Link:
    """Say goodbye with a ``leave`` act and wait for the ``ended`` message."""
    await view.until(lambda: view.my_turn() or view.ended is not None, "turn to leave", config.timeout)
    if view.ended is not None:
        raise Stopped(f"the conversation ended ({view.ended}) before the participant left")
    client_id = uuid4().hex
    view.record.sent_client_ids.append(client_id)
    await link.send({"type": "act", "client_id": client_id, "action_type": "leave", "content": ""})
    await view.until(lambda: view.ended is not None, "end of the conversation", config.timeout)
    view.record.left = client_id in view.acks or view.index_of(client_id) is not None
    return link


async def run_load(
    specs: list[ParticipantSpec], config: LoadConfig, *, ramp: float, seed: int
) -> tuple[list[SessionRecord], LiveCount, float, float]:
    """All participants, arriving evenly over ``ramp`` seconds; returns records, socket counts and the span."""
    live = LiveCount()
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    started = time.perf_counter()
    async with aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar()) as http:

        async def arrive(position: int, spec: ParticipantSpec) -> SessionRecord:
            await asyncio.sleep(ramp * position / max(1, len(specs)))
            return await run_participant(http, spec, config, live, random.Random(seed * 100_003 + spec.number))

        records = await asyncio.gather(*(arrive(position, spec) for position, spec in enumerate(specs)))
    return list(records), live, started, time.perf_counter()
