"""How many SQL statements one answered message costs, through the real socket (issue 27).

A participant's message and the agent's reply that answers it should cost at most ``ANSWERED`` statements,
the same per agent turn in a group chat as in a two-party one, a reconnect's handshake a handful, and the
leases of a server process's open sockets one statement per renewal, however many sockets it holds. The
counts are every statement any thread sends to the database while the step runs (the chat's database calls
run in a thread pool on PostgreSQL), so a read added anywhere on the path shows here. Marked ``concurrency``
so CI runs them on PostgreSQL and again on SQLite.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from uuid import uuid4

import pytest
from django.db.backends import utils

from benchmark.agents import llm
from benchmark.agents.prompt import Action
from benchmark.models import ActionType, Episode, Turn, TurnTaking
from chat import agent_turn, connections
from chat.models import Participant
from chat.turns import ChatSetup, read_participant, submit_human_turn
from tests.chat.agent_tasks import wait_for_agent_turns
from tests.chat.conftest import make_chat
from tests.chat.test_group_chat import make_group_chat

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

ACT = 4  # the episode locked, the transcript, the participant's turn stored, the agent's turn claimed (and seen)
PLAN = 0  # planned from the transcript read where the lease was claimed or handed on
PLAN_ALONE = 2  # a turn claimed elsewhere (a page connecting, a watch taking over): the lease, the transcript
STORE = 2  # the turn stored, the lease given up (or handed on); no lock of the episode
ENDING = 2  # a turn that ends the chat locks the episode first, and ends it
AGENT_TURN = PLAN + STORE
USAGE = llm.Usage(model="scripted", latency_ms=5, prompt_tokens=None, completion_tokens=None, attempts=0)
ANSWERED = ACT + AGENT_TURN
LEAVE = 5  # the episode locked, the transcript, the leave stored, the episode ended, the participant moved on
HANDSHAKE = 6  # the session, the binding (it locks the participant; the scenario's barrier prompt comes with it), the
# socket's lease (counted and recorded in one), the seats and their goals (2), the transcript; no seen mark for a
# participant seen in the last 10 s (``chat.lifecycle.seen_lately``)


class Statements:
    """Every SQL statement sent by any thread, in order.

    SQLite's ``BEGIN IMMEDIATE`` is left out: psycopg begins PostgreSQL's transactions without a statement
    Django sees, so counting it would charge SQLite for the same work.
    """

    def __init__(self) -> None:
        self.sql: list[str] = []
        self._lock = threading.Lock()

    def add(self, sql: str) -> None:
        if sql.startswith("BEGIN"):
            return
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


async def opened(page) -> None:
    """Connect ``page``, take its history and let what the connecting started finish."""
    assert await page.connect()
    await page.receive_until("history")
    await settled(page)


async def settled(page) -> None:
    """Wait until the socket's handlers and the agent turns they started are done."""
    await wait_for_agent_turns()
    await page.nothing_more()  # gives the handlers still running time to finish
    await wait_for_agent_turns()


async def test_a_two_party_answered_message_costs_at_most_a_handful_of_statements(chat_factory, sockets, statements):
    chat = await chat_factory(human_position=0)
    statements.take()
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
    assert len(handshake) <= HANDSHAKE + 1, shown(handshake)  # the first page also marks the episode running


async def test_each_agent_turn_of_a_group_chat_costs_what_a_two_party_one_does(sockets, statements):
    from channels.db import database_sync_to_async

    chat = await database_sync_to_async(make_group_chat)(human_position=0, policy=TurnTaking.ROUND_ROBIN)
    page = sockets(chat)
    await opened(page)
    statements.take()

    await page.act("Hello, both of you.")
    await page.receive_until("ack")
    await page.receive_until("turn", index=1)
    await page.receive_until("turn", index=2)
    await settled(page)
    answered = statements.take()

    assert len(answered) <= ACT + 2 * AGENT_TURN, shown(answered)


@pytest.mark.parametrize(("minimum", "outcome"), [(0, "questions"), (2, "screened_out")])
async def test_a_leave_ends_the_chat_in_the_transaction_that_stores_it(
    chat_factory, sockets, statements, minimum, outcome
):
    from channels.db import database_sync_to_async

    chat = await chat_factory(human_position=0, min_participant_turns=minimum)
    page = sockets(chat)
    assert await page.connect()
    await page.receive_until("history")
    await page.act("Hello there.")
    await page.receive_until("turn", index=1)
    await settled(page)
    statements.take()

    await page.act("", action_type="leave")
    ended = await page.receive_until("ended")
    await settled(page)
    left = statements.take()

    assert len(left) <= LEAVE, shown(left)
    assert ended["outcome"] == outcome and ended["reason"] == Episode.EndReason.LEAVE
    episode = await database_sync_to_async(Episode.objects.get)(pk=chat.episode.pk)
    participant = await database_sync_to_async(Participant.objects.get)(pk=chat.participant.pk)
    assert participant.stage == (Participant.Stage.QUESTIONNAIRE if minimum == 0 else Participant.Stage.SCREENED_OUT)
    assert episode.status == (Episode.Status.FINISHED if minimum == 0 else Episode.Status.ABANDONED)
    assert episode.end_reason == Episode.EndReason.LEAVE and episode.finished_at is not None
    assert (participant.agent_lease_owner, participant.agent_lease_until) == ("", None)


async def test_an_agent_turn_that_reaches_the_cap_ends_the_chat_with_it(chat_factory, sockets, statements):
    chat = await chat_factory(human_position=0, turn_cap=2)
    page = sockets(chat)
    await opened(page)
    statements.take()

    await page.act("Hello there.")
    ended = await page.receive_until("ended")
    await settled(page)
    answered = statements.take()

    assert len(answered) <= ACT + STORE + ENDING, shown(answered)
    assert ended["reason"] == Episode.EndReason.TURN_CAP and ended["outcome"] == "questions"
    told = [message["type"] for message in page.seen if message["type"] in ("turn", "ended")]
    assert told == ["turn", "turn", "ended"]


async def test_the_open_sockets_of_a_server_process_are_renewed_by_one_statement(chat_factory, sockets, statements):
    """Six sockets, one UPDATE; and one DELETE of the rows whose lease ran out (a dead process's), however many."""
    pages = []
    for _ in range(3):
        chat = await chat_factory(human_position=0)
        pages += [sockets(chat), sockets(chat)]
    for page in pages:
        assert await page.connect()
        await page.receive_until("history")
    for page in pages:
        await settled(page)
    leases = connections.leases()
    assert len(leases.held) == 6
    statements.take()

    await leases.renew()
    renewal = statements.take()

    assert [statement.split()[0] for statement in renewal] == ["DELETE", "UPDATE"], shown(renewal)


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


def answer(
    participant_pk: int, setup: ChatSetup, owner: str, transcript: tuple, statements: Statements
) -> tuple[str, tuple]:
    """One agent turn through its two database steps, each counted; the lease it hands on, if any, and the
    transcript after it."""
    statements.take()
    plan = agent_turn.plan_turn(participant_pk, owner, setup, transcript)
    assert len(planned := statements.take()) == PLAN, shown(planned)
    next_owner = "" if plan.cast.is_human_turn(plan.index + 1) else agent_turn.new_owner()
    turn = agent_turn.store_agent_turn(plan, owner, Action(ActionType.SPEAK, "Fine."), USAGE, next_owner=next_owner)
    assert len(stored := statements.take()) == STORE, shown(stored)
    assert turn is not None and turn.index == plan.index
    return next_owner, (*transcript, turn)


@pytest.mark.parametrize("seats", [2, 3])
def test_every_step_of_an_answered_message_costs_the_same_in_a_group(seats, statements):
    if seats == 2:
        chat = make_chat(human_position=0)
    else:
        chat = make_group_chat(human_position=0, policy=TurnTaking.ROUND_ROBIN)
    participant = chat.participant
    Episode.objects.filter(pk=chat.episode.pk).update(status=Episode.Status.RUNNING)  # as the page connecting does
    setup = ChatSetup.load(participant.pk)
    cast = setup.cast()

    statements.take()
    submitted = submit_human_turn(
        participant.pk, client_id=uuid4().hex, action_type="speak", content="Hello.", cast=cast,
        browser=participant.browser_token, setup=setup,
    )
    assert len(acted := statements.take()) == ACT, shown(acted)
    assert submitted.created and submitted.owner

    assert [turn.index for turn in submitted.transcript] == [0]

    owner, transcript, answered = submitted.owner, submitted.transcript, 0
    while owner:
        owner, transcript = answer(participant.pk, setup, owner, transcript, statements)
        answered += 1
    assert answered == seats - 1


def test_a_turn_claimed_elsewhere_plans_from_a_fresh_read(statements):
    """A page connecting or a watch taking over claims the lease in a statement of its own: the plan then
    checks the lease and reads the transcript, and is the same plan as one made from the transcript."""
    chat = make_chat(human_position=1)
    participant = chat.participant
    setup = ChatSetup.load(participant.pk)
    owner = agent_turn.new_owner()
    assert agent_turn.claim_lease(participant.pk, owner)

    statements.take()
    plan = agent_turn.plan_turn(participant.pk, owner, setup)
    assert len(planned := statements.take()) == PLAN_ALONE, shown(planned)
    assert plan is not None and plan.index == 0 and plan.transcript == ()
    assert plan == agent_turn.plan_turn(participant.pk, owner, setup, ())
    assert agent_turn.plan_turn(participant.pk, "somebody else", setup) is None


def test_the_opening_turn_a_page_claims_as_it_connects_costs_what_an_answer_does(statements):
    """The page connecting started the episode and read its transcript: the opening turn is planned from that
    transcript and stored without the episode's lock, which a turn takes only to start an episode."""
    from chat import state_machine

    chat = make_chat(human_position=1)
    opened = state_machine.open_episode(read_participant(chat.participant.pk))
    assert opened.owner and opened.transcript == ()
    assert Episode.objects.get(pk=chat.episode.pk).status == Episode.Status.RUNNING

    owner, transcript = answer(chat.participant.pk, opened.setup, opened.owner, opened.transcript, statements)

    assert owner == "" and [turn.index for turn in transcript] == [0]


def test_a_watch_looks_with_one_statement_while_its_cast_knows_every_leave(statements):
    """A page's watch reads the participant, the episode and its counts in one statement, and the leaves only
    when the socket's cast is missing one."""
    from chat import state_machine

    chat = make_group_chat(human_position=0, policy=TurnTaking.ROUND_ROBIN)
    participant = chat.participant
    setup = ChatSetup.load(participant.pk)
    cast = setup.cast()
    submit_human_turn(
        participant.pk, client_id=uuid4().hex, action_type="speak", content="Hello.", cast=cast,
        browser=participant.browser_token, setup=setup,
    )
    statements.take()
    watched = state_machine.check_episode(participant.pk, None, setup, cast)
    assert len(looked := statements.take()) == 1, shown(looked)
    assert not watched.over and not watched.agent_due  # the agent's turn was claimed with the participant's

    seat = next(seat for seat in setup.seats if seat.pk != cast.human_seat)
    Turn.objects.create(episode_id=setup.episode_pk, index=1, seat=seat, action_type=ActionType.LEAVE, content="")
    statements.take()
    state_machine.check_episode(participant.pk, None, setup, cast)
    assert len(looked := statements.take()) == 2, shown(looked)  # the leave it had not heard of is read
