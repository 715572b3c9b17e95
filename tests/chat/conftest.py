"""Fixtures for the chat socket tests: a participant in the chat stage, and sockets to talk to it.

The setup uses ``chat.models`` and ``benchmark.runs.simulation.create_episode`` directly, as the chat
contract describes assignment, so these tests do not depend on the flow pages. Sockets go through
``config.asgi.application`` (origin check, session cookie, routing) like a browser's would.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from itertools import count
from typing import Any
from uuid import uuid4

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.sessions.backends.db import SessionStore
from django.utils import timezone

from benchmark.models import Episode, Seat, Turn
from benchmark.runs.simulation import create_episode
from chat.access import BROWSER_KEY, SESSION_KEY
from chat.models import ChatStudy, Participant
from tests.builders import default_team, get_barrier, make_scenario, make_user
from tests.chat.agent_tasks import wait_for_agent_turns

ORIGIN = "http://127.0.0.1:8000"
TIMEOUT = 10  # seconds to wait for an expected message; generous for a loaded 2-core machine
_numbers = count(1)


@dataclass
class Chat:
    """One participant in the chat stage of a fresh study, and their browser session."""

    study: ChatStudy
    participant: Participant
    episode: Episode
    session_key: str
    human_seat: Seat
    agent_seat: Seat

    @property
    def path(self) -> str:
        return f"/ws/chat/{self.study.slug}/"


def make_chat(
    *,
    human_position: int = 1,
    model: str = "scripted",
    turn_cap: int = 20,
    barrier: str = "none",
    stage: str = Participant.Stage.CHAT,
    **study_fields: Any,
) -> Chat:
    """A study with one scenario, a participant assigned to it and their episode, as assignment makes it."""
    number = next(_numbers)
    study = ChatStudy.objects.create(
        team=default_team(),
        slug=f"socket-study-{number}-{uuid4().hex[:6]}",
        title=f"Socket study {number}",
        created_by=make_user(staff=True),
        human_position=human_position,
        agent_model=model,
        turn_cap=turn_cap,
        completion_code="C0MPLETE",
        **study_fields,
    )
    scenario = make_scenario()
    study.scenarios.add(scenario)
    barrier_row = get_barrier(barrier) if isinstance(barrier, str) else barrier
    agent_position = 1 - human_position
    episode = create_episode(
        scenario,
        barrier_row,
        barrier_seats=(agent_position,),
        models={agent_position: model},
        source=Episode.Source.HUMAN_CHAT,
        turn_cap=turn_cap,
        tag=study.episode_tag,
        settings={"chat_study": study.slug, "temperature": 0.7},
    )
    Seat.objects.filter(episode=episode, position=human_position).update(
        player=Seat.Player.HUMAN, model="", strategy=study.partner_strategy
    )
    browser = secrets.token_urlsafe(24)
    participant = Participant.objects.create(
        study=study,
        participant_id=f"pid-{number}",
        stage=stage,
        scenario=scenario,
        barrier=barrier_row,
        episode=episode,
        consented_at=timezone.now(),
        browser_token=browser,
    )
    return Chat(
        study=study,
        participant=participant,
        episode=episode,
        session_key=session_for({str(study.pk): participant.pk}, browser=browser),
        human_seat=Seat.objects.select_related("character").get(episode=episode, position=human_position),
        agent_seat=Seat.objects.select_related("character").get(episode=episode, position=agent_position),
    )


def session_for(chat_participants: dict[str, int], *, browser: str | None = None) -> str:
    """A saved browser session that remembers these participants, as the flow pages leave it; with
    ``browser``, the session's token (the participants it may act as carry the same)."""
    session = SessionStore()
    session[SESSION_KEY] = chat_participants
    session[BROWSER_KEY] = browser or secrets.token_urlsafe(24)
    session.save()
    return session.session_key


@dataclass
class Socket:
    """A WebsocketCommunicator with helpers to wait for one message type among streamed ones."""

    communicator: WebsocketCommunicator
    seen: list[dict[str, Any]] = field(default_factory=list)

    async def connect(self) -> bool:
        connected, _ = await self.communicator.connect(timeout=TIMEOUT)
        return connected

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        message = await self.communicator.receive_json_from(timeout=timeout)
        self.seen.append(message)
        return message

    async def receive_until(self, kind: str, timeout: float = TIMEOUT, **fields: Any) -> dict[str, Any]:
        """The next message of type ``kind`` (with ``fields``), skipping others (kept in ``seen``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            message = await self.receive(timeout=max(0.01, deadline - loop.time()))
            if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                return message

    async def closed_with(self, timeout: float = TIMEOUT) -> int:
        """The close code the server ended the socket with (skipping messages sent before)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            output = await self.communicator.receive_output(timeout=max(0.01, deadline - loop.time()))
            if output["type"] == "websocket.close":
                return output.get("code", 1000)
            self.seen.append(json.loads(output["text"]))

    async def act(self, content: str = "Hello.", action_type: str = "speak", client_id: str | None = None) -> str:
        client_id = client_id or uuid4().hex
        await self.send({"type": "act", "client_id": client_id, "action_type": action_type, "content": content})
        return client_id

    async def send(self, message: dict[str, Any]) -> None:
        await self.communicator.send_json_to(message)

    async def nothing_more(self) -> bool:
        return await self.communicator.receive_nothing(timeout=0.3)


@pytest.fixture(autouse=True)
def chat_settings(settings):
    """The offline model without typing delay, gateway retries that cost milliseconds, and no limit on
    new participants per address (every test client is 127.0.0.1; the throttle's own tests set one)."""
    settings.PARLEY_ENTRY_RATE = None
    settings.PARLEY_CHAT_SCRIPTED_DELAY = 0
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}
    settings.PARLEY_LLM_MAX_RETRIES = 1
    settings.PARLEY_LLM_BACKOFF = 0.01
    return settings


@pytest.fixture
async def sockets(transactional_db, django_db_serialized_rollback) -> AsyncIterator[Callable[..., Socket]]:
    """Open sockets to the ASGI application; all are closed, and agent turns finished, afterwards."""
    from config.asgi import application

    opened: list[WebsocketCommunicator] = []
    layer = get_channel_layer()

    def open_socket(
        chat: Chat | None = None,
        *,
        path: str | None = None,
        session_key: str | None = None,
        origin: str | None = ORIGIN,
        host: str = "127.0.0.1:8000",
        extra_headers: list[tuple[bytes, bytes]] = (),
    ) -> Socket:
        headers = [(b"host", host.encode()), *extra_headers]
        if origin is not None:
            headers.append((b"origin", origin.encode()))
        key = session_key if session_key is not None else (chat.session_key if chat else None)
        if key:
            headers.append((b"cookie", f"{django_settings.SESSION_COOKIE_NAME}={key}".encode()))
        communicator = WebsocketCommunicator(application, path or chat.path, headers=headers)
        opened.append(communicator)
        return Socket(communicator)

    yield open_socket
    for communicator in opened:
        if communicator.response_headers is None:
            # Refused at the handshake (origin check): nothing to disconnect, only the app to stop.
            communicator.future.cancel()
            await asyncio.gather(communicator.future, return_exceptions=True)
            continue
        try:
            await communicator.disconnect(timeout=TIMEOUT)
        except Exception:  # an app that already closed the socket has nothing left to disconnect
            pass
    await wait_for_agent_turns(timeout=TIMEOUT)
    await layer.flush()
    if hasattr(layer, "close_pools"):  # Redis: close this test's connections before its event loop goes
        await layer.close_pools()


@pytest.fixture
def build_chat(db) -> Callable[..., Chat]:
    """``build_chat(**options)`` for synchronous tests (options as ``make_chat``)."""
    return make_chat


@pytest.fixture
def chat_factory(transactional_db, django_db_serialized_rollback) -> Callable[..., Any]:
    """``await chat_factory(**options)``: a fresh ``Chat`` (options as ``make_chat``)."""

    async def new_chat(**options: Any) -> Chat:
        return await database_sync_to_async(make_chat)(**options)

    return new_chat


@pytest.fixture
def stored_turns(transactional_db, django_db_serialized_rollback) -> Callable[..., Any]:
    """``await stored_turns(episode_pk)``: (index, seat position, action type, content) of each turn."""

    def read(episode_pk: int) -> list[tuple[int, int, str, str]]:
        return [
            (t.index, t.seat.position, t.action_type, t.content)
            for t in Turn.objects.filter(episode_id=episode_pk).select_related("seat").order_by("index")
        ]

    return database_sync_to_async(read)


@pytest.fixture
def saved_session(transactional_db, django_db_serialized_rollback) -> Callable[..., Any]:
    """``await saved_session({str(study.pk): participant.pk})``: the key of a session remembering them."""
    return database_sync_to_async(session_for)


@pytest.fixture
def reload(transactional_db, django_db_serialized_rollback) -> Callable[..., Any]:
    """``await reload(instance)``: the row as stored now."""

    def read(instance: Any) -> Any:
        return type(instance).objects.get(pk=instance.pk)

    return database_sync_to_async(read)
