"""How many SQL statements one answered message costs, through the real socket (issue 27).

A participant's message and the agent's reply that answers it should cost at most ``ANSWERED`` statements,
the same per agent turn in a group chat as in a two-party one, and a reconnect's handshake a handful. The
counts are every statement any thread sends to the database while the step runs (the chat's database calls
run in a thread pool on PostgreSQL), so a read added anywhere on the path shows here. Marked ``concurrency``
so CI runs them on PostgreSQL and again on SQLite.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.db.backends import utils

from benchmark.models import TurnTaking
from tests.chat.agent_tasks import wait_for_agent_turns
from tests.chat.test_group_chat import make_group_chat

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

ACT = 4  # the participant's turn stored, the agent's turn claimed
AGENT_TURN = 5  # the agent's turn planned, stored, and what comes next decided
ANSWERED = ACT + AGENT_TURN
HANDSHAKE = 9  # the binding, the socket's lease, the seen mark, the transcript, the watch


class Statements:
    """Every SQL statement sent by any thread, in order."""

    def __init__(self) -> None:
        self.sql: list[str] = []
        self._lock = threading.Lock()

    def add(self, sql: str) -> None:
        with self._lock:
            self.sql.append(sql)

    def take(self) -> list[str]:
        """The statements so far, and start counting again."""
        with self._lock:
            taken, self.sql = self.sql, []
        return taken


@pytest.fixture
def statements(monkeypatch) -> Iterator[Statements]:
    counted = Statements()
    execute = utils.CursorWrapper._execute_with_wrappers

    def counting(self, sql, params, many, executor):
        counted.add(sql)
        return execute(self, sql, params, many, executor)

    monkeypatch.setattr(utils.CursorWrapper, "_execute_with_wrappers", counting)
    yield counted


def shown(sql: list[str]) -> str:
    return "\n".join(f"{number}. {line[:200]}" for number, line in enumerate(sql, 1))


async def settled(page) -> None:
    """Wait until the socket's handlers and the agent turns they started are done."""
    await wait_for_agent_turns()
    await page.nothing_more()  # gives the handlers still running time to finish
    await wait_for_agent_turns()


async def test_a_two_party_answered_message_costs_at_most_a_handful_of_statements(chat_factory, sockets, statements):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    assert await page.connect()
    await page.receive_until("history")
    await settled(page)
    handshake = statements.take()

    await page.act("Hello there.")
    await page.receive_until("ack")
    await page.receive_until("turn", index=1)
    await settled(page)
    answered = statements.take()

    assert len(answered) <= ANSWERED, shown(answered)
    assert len(handshake) <= HANDSHAKE, shown(handshake)


async def test_each_agent_turn_of_a_group_chat_costs_what_a_two_party_one_does(sockets, statements):
    from channels.db import database_sync_to_async

    chat = await database_sync_to_async(make_group_chat)(human_position=0, policy=TurnTaking.ROUND_ROBIN)
    page = sockets(chat)
    assert await page.connect()
    await page.receive_until("history")
    await settled(page)
    statements.take()

    await page.act("Hello, both of you.")
    await page.receive_until("ack")
    await page.receive_until("turn", index=1)
    await page.receive_until("turn", index=2)
    await settled(page)
    answered = statements.take()

    assert len(answered) <= ACT + 2 * AGENT_TURN, shown(answered)


async def test_a_reconnect_sends_the_history_from_one_read_of_the_turns(chat_factory, sockets, statements):
    chat = await chat_factory(human_position=0)
    first = sockets(chat)
    assert await first.connect()
    await first.receive_until("history")
    await first.act("Hello there.")
    await first.receive_until("turn", index=1)
    await settled(first)
    await first.communicator.disconnect()
    statements.take()

    again = sockets(chat)
    assert await again.connect()
    history = await again.receive_until("history")
    await settled(again)
    handshake = statements.take()

    assert [turn["index"] for turn in history["turns"]] == [0, 1]
    assert len(handshake) <= HANDSHAKE, shown(handshake)
    assert sum('"benchmark_turn"' in sql and sql.lstrip().upper().startswith("SELECT") for sql in handshake) == 1, (
        shown(handshake)
    )
