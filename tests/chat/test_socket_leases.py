"""The chat sockets' leases, renewed once per server process (``chat.connections.Leases``).

Each test opens real sockets through the ASGI application; the renewal runs the process's database
calls as the server does (the thread pool on PostgreSQL, the one database thread on SQLite), so the
file is marked ``concurrency`` and CI runs it on both databases.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from chat import connections
from chat.connections import LEASE, open_connection
from chat.models import ChatConnection

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@database_sync_to_async
def row(key: str) -> ChatConnection | None:
    return ChatConnection.objects.filter(key=key).first()


@database_sync_to_async
def lapse(key: str) -> None:
    ChatConnection.objects.filter(key=key).update(expires_at=timezone.now() - timedelta(seconds=1))


async def open_page(chat_factory, sockets):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    assert await page.connect()
    await page.receive_until("history")
    return chat, page


async def test_every_open_socket_of_the_process_is_renewed_and_no_other(chat_factory, sockets):
    pages = [await open_page(chat_factory, sockets) for _ in range(3)]
    leases = connections.leases()
    assert sorted(leases.held.values()) == sorted(chat.participant.pk for chat, _ in pages)
    for key in leases.held:
        await lapse(key)
    died = timezone.now() - timedelta(seconds=1)
    await database_sync_to_async(ChatConnection.objects.create)(
        participant=pages[0][0].participant, key="died", server="a-process-that-died", expires_at=died
    )

    await leases.renew()

    soon = timezone.now() + LEASE - timedelta(seconds=10)
    for key in leases.held:
        renewed = await row(key)
        assert renewed.server == leases.server and renewed.expires_at > soon
    assert await row("died") is None  # it stopped counting when its lease ran out, and the renewal deleted it


async def test_a_row_lost_while_the_socket_was_open_is_recorded_again_and_counts(chat_factory, sockets, settings):
    settings.PARLEY_CHAT_MAX_SOCKETS = 2
    chat, _ = await open_page(chat_factory, sockets)
    leases = connections.leases()
    (key,) = leases.held
    # The database was away for longer than the lease: the row lapsed, and another process's renewal deleted it.
    await lapse(key)
    assert await database_sync_to_async(open_connection)(chat.participant.pk, "another-process")
    assert await database_sync_to_async(connections.renew_connections)("another-process", {}, frozenset()) == set()
    assert await row(key) is None

    await leases.renew()

    recorded = await row(key)
    assert recorded.server == leases.server and recorded.participant_id == chat.participant.pk
    assert await database_sync_to_async(open_connection)(chat.participant.pk, "another-process") is None


async def test_a_socket_closed_while_the_database_was_away_loses_its_row_at_the_next_renewal(
    chat_factory, sockets, monkeypatch, caplog
):
    _, page = await open_page(chat_factory, sockets)
    leases = connections.leases()
    (key,) = leases.held

    def database_away(key: str) -> None:
        raise ConnectionError("the database is restarting")

    with monkeypatch.context() as patch:
        patch.setattr(connections, "close_connection", database_away)
        await page.communicator.disconnect()
    assert "could not delete the row of chat socket" in caplog.text
    assert leases.held == {} and leases.unclosed == {key}
    assert await row(key) is not None

    await leases.renew()

    assert await row(key) is None
    assert leases.unclosed == set()


async def test_a_socket_closing_while_its_lost_row_is_recorded_again_loses_that_row_next(
    chat_factory, sockets, monkeypatch
):
    _, page = await open_page(chat_factory, sockets)
    leases = connections.leases()
    (key,) = leases.held
    await database_sync_to_async(ChatConnection.objects.filter(key=key).delete)()
    renew = connections.renew_connections

    def closing_meanwhile(*args):
        recorded = renew(*args)
        leases.held.pop(key)  # the socket closed (and deleted nothing) while the renewal ran
        return recorded

    monkeypatch.setattr(connections, "renew_connections", closing_meanwhile)
    await leases.renew()
    assert await row(key) is not None and leases.unclosed == {key}
    monkeypatch.undo()

    await leases.renew()

    assert await row(key) is None


async def test_the_renewal_runs_on_its_own_goes_on_after_a_failure_and_stops_with_the_last_socket(
    chat_factory, sockets, monkeypatch, caplog
):
    monkeypatch.setattr(connections, "RENEW_EVERY", 0.05)
    renew = connections.renew_connections
    failures = []

    def failing_once(*args):
        if not failures:
            failures.append(1)
            raise ConnectionError("the database is restarting")
        return renew(*args)

    monkeypatch.setattr(connections, "renew_connections", failing_once)
    _, page = await open_page(chat_factory, sockets)
    leases = connections.leases()
    (key,) = leases.held
    await lapse(key)
    assert leases.renewer is not None

    for _ in range(100):
        await asyncio.sleep(0.05)
        if (await row(key)).expires_at > timezone.now():
            break
    assert (await row(key)).expires_at > timezone.now()
    assert failures and "could not renew the chat sockets" in caplog.text

    await page.communicator.disconnect()
    for _ in range(100):
        if leases.renewer is None:
            break
        await asyncio.sleep(0.05)
    assert leases.renewer is None


async def test_a_new_event_loop_holds_its_sockets_under_a_new_server_name():
    here = connections.leases()
    assert connections.leases() is here

    elsewhere = await asyncio.to_thread(asyncio.run, _leases_of_a_new_loop())

    assert elsewhere is not here and elsewhere.server != here.server


async def _leases_of_a_new_loop() -> connections.Leases:
    return connections.leases()


@pytest.fixture(autouse=True)
def _logged(caplog):
    caplog.set_level(logging.ERROR, logger="chat.connections")


async def test_a_socket_whose_handler_raises_gives_up_its_lease_and_its_group(chat_factory, sockets, monkeypatch):
    """Channels does not call ``disconnect`` after a handler raised; the consumer gives its lease up anyway, so
    it neither counts against the participant's cap nor is renewed for as long as the process lives."""
    from chat import consumers

    chat, page = await open_page(chat_factory, sockets)
    key = next(iter(connections.leases().held))

    async def broken(self, content):
        raise RuntimeError("a handler that breaks")

    monkeypatch.setattr(consumers.ChatConsumer, "act", broken)
    await page.act("Hello there.")
    with pytest.raises(RuntimeError):
        await page.communicator.wait(timeout=5)

    assert key not in connections.leases().held
    assert await row(key) is None


async def test_the_agent_turn_starts_even_when_the_ack_cannot_be_sent(chat_factory, sockets, monkeypatch, stored_turns):
    """The socket can be gone by the time the participant's turn is stored (the connection was cut right after
    sending): the ack then fails, but the agent's turn the stored one made due still runs."""
    from chat import consumers
    from tests.chat.agent_tasks import wait_for_agent_turns

    chat, page = await open_page(chat_factory, sockets)
    send_json = consumers.ChatConsumer.send_json

    async def ack_fails(self, content, close=False):
        if content.get("type") == "ack":
            raise RuntimeError("the connection is gone")
        await send_json(self, content, close)

    monkeypatch.setattr(consumers.ChatConsumer, "send_json", ack_fails)
    await page.act("Hello there.")
    with pytest.raises(RuntimeError):
        await page.communicator.wait(timeout=5)
    await wait_for_agent_turns()

    assert [turn[:2] for turn in await stored_turns(chat.episode.pk)] == [(0, 0), (1, 1)]
