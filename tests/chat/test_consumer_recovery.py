"""Nothing lost, nothing twice: resends, reconnects mid-reply, model failures, idle chats, dead writers."""

import json
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from benchmark.agents import scripted
from benchmark.models import Episode, Turn
from chat import agent_turn, state_machine
from chat.lifecycle import end_episode
from chat.models import Participant
from tests.chat.agent_tasks import wait_for_agent_turns
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

LONG_LINE = "Well, " + " ".join(f"word{n}" for n in range(40)) + "."


@pytest.fixture
def slow_agent(monkeypatch, settings):
    """The scripted agent says LONG_LINE first, a word every 50 ms (two seconds in all)."""
    settings.PARLEY_CHAT_SCRIPTED_DELAY = 0.05

    def fixed_line(context, *, seed=0, beats=None, delay=0.0):
        return scripted.ScriptedStream(context, seed=seed, beats=[LONG_LINE, "Bye."], delay=delay)

    monkeypatch.setattr(agent_turn.scripted, "scripted_stream", fixed_line)


async def _ready(chat_factory, sockets, **options):
    chat = await chat_factory(human_position=0, **options)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")
    return chat, page


async def _count(**filters) -> int:
    return await database_sync_to_async(Turn.objects.filter(**filters).count)()


# --- resends ------------------------------------------------------------------------------------


async def test_resending_a_client_id_returns_the_same_ack_and_stores_one_turn(chat_factory, sockets):
    chat, page = await _ready(chat_factory, sockets)
    client_id = await page.act("Only once, please.")
    first = await page.receive_until("ack")
    await page.receive_until("turn", index=1)

    await page.act("Only once, please.", client_id=client_id)
    second = await page.receive_until("ack")

    assert second == first == {"type": "ack", "client_id": client_id, "index": 0}
    assert await _count(episode=chat.episode, client_id=client_id) == 1
    assert await _count(episode=chat.episode, seat=chat.human_seat) == 1


async def test_a_resend_through_another_connection_is_a_no_op(chat_factory, sockets):
    chat, first = await _ready(chat_factory, sockets)
    second = sockets(chat)
    await second.connect()
    await second.receive_until("history")

    client_id = await first.act("Sent from a tab that then lost its connection.")
    await second.act("Sent from a tab that then lost its connection.", client_id=client_id)
    acks = [await first.receive_until("ack"), await second.receive_until("ack")]

    assert [ack["index"] for ack in acks] == [0, 0]
    assert await _count(episode=chat.episode, client_id=client_id) == 1
    await first.receive_until("turn", index=1)
    assert await _count(episode=chat.episode, seat=chat.human_seat) == 1


async def test_a_message_sent_just_before_a_drop_is_in_the_history_and_its_resend_is_a_no_op(chat_factory, sockets):
    chat, page = await _ready(chat_factory, sockets)
    client_id = await page.act("Did this arrive?")
    await page.communicator.disconnect()  # gone before reading the ack

    again = sockets(chat)
    await again.connect()
    history = await again.receive_until("history")
    mine = [t for t in history["turns"] if t.get("client_id") == client_id]
    await again.act("Did this arrive?", client_id=client_id)
    ack = await again.receive_until("ack")

    assert [t["content"] for t in mine] == ["Did this arrive?"]
    assert ack["index"] == mine[0]["index"] == 0
    assert await _count(episode=chat.episode, seat=chat.human_seat) == 1


# --- reconnecting while the agent writes ----------------------------------------------------------


async def test_a_reload_mid_reply_shows_the_history_and_the_reply_so_far_then_the_turn(
    chat_factory, sockets, slow_agent
):
    chat = await chat_factory(human_position=1)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("delta", index=0)
    await page.receive_until("delta", index=0)
    await page.communicator.disconnect()

    reloaded = sockets(chat)
    await reloaded.connect()
    history = await reloaded.receive_until("history")
    turn = await reloaded.receive_until("turn", index=0)

    typing = history["typing"]
    assert history["turns"] == []
    assert typing["index"] == 0 and typing["action_type"] == "speak"
    assert typing["text"] and LONG_LINE.startswith(typing["text"])
    assert len(typing["text"]) < len(LONG_LINE)
    assert turn["content"] == LONG_LINE
    assert await _count(episode=chat.episode) == 1


async def test_a_page_joining_mid_reply_in_another_process_catches_up_from_partials(
    chat_factory, sockets, slow_agent, monkeypatch
):
    chat = await chat_factory(human_position=1)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("delta", index=0)
    # Another server process does not have the reply in memory: it only knows a live lease.
    monkeypatch.setattr(agent_turn, "reply_in_progress", lambda episode_pk, index: None)

    joined = sockets(chat)
    await joined.connect()
    history = await joined.receive_until("history")
    partial = await joined.receive_until("partial", index=0)
    await joined.receive_until("turn", index=0)

    assert history["typing"]["text"] == ""
    assert partial["text"] and LONG_LINE.startswith(partial["text"])


async def test_deltas_carry_contiguous_offsets_that_rebuild_the_reply(chat_factory, sockets, slow_agent):
    chat = await chat_factory(human_position=1)
    page = sockets(chat)
    await page.connect()

    turn = await page.receive_until("turn", index=0)

    text = ""
    for delta in (m for m in page.seen if m["type"] == "delta"):
        assert delta["offset"] == len(text)
        text += delta["text"]
    assert text == turn["content"] == LONG_LINE


async def test_closing_the_page_does_not_lose_the_agents_reply(chat_factory, sockets, slow_agent, reload):
    chat = await chat_factory(human_position=1)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("typing")
    await page.communicator.disconnect()

    await wait_for_agent_turns()

    turns = await database_sync_to_async(list)(Turn.objects.filter(episode=chat.episode).values_list("content"))
    assert turns == [(LONG_LINE,)]
    participant = await reload(chat.participant)
    assert participant.agent_lease_until is None and participant.agent_lease_owner == ""


async def test_an_agent_turn_whose_writer_stopped_is_taken_over_after_its_lease(chat_factory, sockets, monkeypatch):
    monkeypatch.setattr(agent_turn, "LEASE", timedelta(seconds=1))
    chat = await chat_factory(human_position=1)
    await database_sync_to_async(Participant.objects.filter(pk=chat.participant.pk).update)(
        agent_lease_until=timezone.now() + timedelta(seconds=1), agent_lease_owner="a-process-that-died"
    )
    page = sockets(chat)
    await page.connect()

    history = await page.receive_until("history")
    turn = await page.receive_until("turn", index=0)

    assert history["typing"] == {"index": 0, "speaker": turn["speaker"], "action_type": None, "text": ""}
    assert await _count(episode=chat.episode) == 1


async def test_a_page_that_heard_the_agents_turn_stored_looks_again_only_at_the_idle_deadline(
    chat_factory, sockets, monkeypatch
):
    monkeypatch.setattr(agent_turn, "LEASE", timedelta(seconds=1))  # a stalled turn would be looked for at 0.5 s
    looks = []
    look = state_machine.check_episode
    monkeypatch.setattr(state_machine, "check_episode", lambda *args: looks.append(args) or look(*args))
    chat = await chat_factory(human_position=1, inactivity_timeout=3)
    page = sockets(chat)
    await page.connect()

    await page.receive_until("turn", index=0)
    ended = await page.receive_until("ended", timeout=10)

    assert ended["reason"] == "timeout"
    assert len(looks) == 1  # the look that found the chat idle; none for the agent's turn, which the page heard


# --- the model fails ----------------------------------------------------------------------------


async def test_a_model_that_keeps_failing_ends_the_chat_plainly_and_records_it(
    chat_factory, sockets, reload, fake_llm, settings
):
    settings.PARLEY_LLM_MAX_RETRIES = 1
    for _ in range(2):  # the first attempt and its one retry
        fake_llm.enqueue(status=500)
    chat, page = await _ready(chat_factory, sockets, model=FAKE_MODEL)

    await page.act("Hello?")
    ended = await page.receive_until("ended")

    assert ended["reason"] == "model_error"
    assert "technical problem" in ended["message"] and "not your fault" in ended["message"]
    assert len(fake_llm.requests) == 2
    episode = await reload(chat.episode)
    assert (episode.status, episode.end_reason) == (Episode.Status.FAILED, Episode.EndReason.MODEL_ERROR)
    assert "unavailable after 2 attempts" in episode.settings["failure"]
    participant = await reload(chat.participant)
    assert participant.stage == Participant.Stage.TECHNICAL_PROBLEM  # one message, short of the minimum of 3
    assert ended["outcome"] == "technical_problem"
    assert "fake-model" not in json.dumps(page.seen)


async def test_a_stream_that_breaks_off_mid_reply_ends_the_chat_as_a_model_error(
    chat_factory, sockets, reload, fake_llm
):
    fake_llm.enqueue(text='{"action_type": "speak", "argument": "one two three four five"}', disconnect_after=3)
    chat, page = await _ready(chat_factory, sockets, model=FAKE_MODEL)

    await page.act("Hello?")
    ended = await page.receive_until("ended")

    assert ended["reason"] == "model_error"
    assert (await reload(chat.episode)).status == Episode.Status.FAILED
    assert await _count(episode=chat.episode) == 1  # only the participant's turn


async def test_a_malformed_reply_is_repaired_once_and_the_repair_is_stored(chat_factory, sockets, fake_llm):
    fake_llm.enqueue(text="Hello! I would say: nice to meet you.")
    fake_llm.enqueue(text='{"action_type": "speak", "argument": "Nice to meet you."}')
    chat, page = await _ready(chat_factory, sockets, model=FAKE_MODEL)

    await page.act("Hi there.")
    turn = await page.receive_until("turn", index=1)

    assert (turn["action_type"], turn["content"]) == ("speak", "Nice to meet you.")
    streamed, repair = fake_llm.requests
    assert streamed["stream"] is True and not repair.get("stream")
    assert "Problem:" in repair["messages"][-1]["content"]
    stored = await database_sync_to_async(Turn.objects.get)(episode=chat.episode, index=1)
    assert stored.completion_tokens == 8 + 7  # the streamed reply and the repair, as the fake counts words


async def test_a_reply_still_malformed_after_repair_ends_the_chat_as_a_model_error(
    chat_factory, sockets, reload, fake_llm
):
    fake_llm.enqueue(text="no JSON here")
    fake_llm.enqueue(text="still no JSON")
    chat, page = await _ready(chat_factory, sockets, model=FAKE_MODEL)

    await page.act("Hi there.")
    ended = await page.receive_until("ended")

    assert ended["reason"] == "model_error"
    assert "did not return usable JSON" in (await reload(chat.episode)).settings["failure"]


# --- a real model streaming --------------------------------------------------------------------------


async def test_a_model_reply_streams_only_its_argument_and_is_stored_with_its_usage(chat_factory, sockets, fake_llm):
    fake_llm.reply_when(
        "turn 2 of",
        'Sure.\n```json\n{"action_type": "speak", "argument": "Fine, \\"neighbour\\" \\u2014 let\'s talk."}\n```',
    )
    chat, page = await _ready(chat_factory, sockets, model=FAKE_MODEL)

    await page.act("Can we talk about the noise?")
    turn = await page.receive_until("turn", index=1)

    deltas = [m for m in page.seen if m["type"] == "delta" and m["index"] == 1]
    assert "".join(d["text"] for d in deltas) == 'Fine, "neighbour" \u2014 let\'s talk.'
    assert deltas[-1]["action_type"] == "speak"
    assert turn["content"] == 'Fine, "neighbour" \u2014 let\'s talk.'
    stored = await database_sync_to_async(Turn.objects.get)(episode=chat.episode, index=1)
    assert stored.model == FAKE_MODEL
    assert stored.latency_ms is not None
    assert stored.prompt_tokens > 0 and stored.completion_tokens == 11  # the fake counts words


async def test_the_page_never_learns_the_model_or_the_condition(chat_factory, sockets, fake_llm):
    fake_llm.reply_when("", '{"action_type": "speak", "argument": "Alright."}')
    chat = await chat_factory(human_position=1, model=FAKE_MODEL, barrier="semantic")
    await database_sync_to_async(type(chat.episode.barrier).objects.filter(pk=chat.episode.barrier_id).update)(
        style_directive="Speak in riddles about the plan.", name="Semantic structure"
    )
    page = sockets(chat)
    await page.connect()
    await page.receive_until("turn", index=0)
    await page.act("Sorry, what?")
    await page.receive_until("turn", index=2)

    wire = json.dumps(page.seen).lower()
    assert "fake-model" not in wire and "semantic" not in wire and "riddles" not in wire
    assert "Speak in riddles about the plan." in fake_llm.prompts[0]  # the agent seat carries the barrier


# --- inactivity ----------------------------------------------------------------------------------


async def test_an_idle_chat_ends_while_the_page_is_open(chat_factory, sockets, reload):
    # No minimum of turns: going quiet before it screens out (test_screen_out.py).
    chat, page = await _ready(chat_factory, sockets, inactivity_timeout=1, min_participant_turns=0)

    ended = await page.receive_until("ended")

    assert ended["reason"] == "timeout"
    episode = await reload(chat.episode)
    assert episode.end_reason == Episode.EndReason.TIMEOUT
    assert (await reload(chat.participant)).stage == Participant.Stage.QUESTIONNAIRE


async def test_an_end_nobody_broadcast_still_reaches_the_open_page(chat_factory, sockets):
    chat, page = await _ready(chat_factory, sockets, inactivity_timeout=1)
    # As the researcher's monitor does when it ends an idle chat: no page is told.
    participant = await database_sync_to_async(Participant.objects.select_related("study").get)(pk=chat.participant.pk)
    await database_sync_to_async(end_episode)(participant, Episode.EndReason.TIMEOUT)

    ended = await page.receive_until("ended")

    assert ended["reason"] == "timeout"


async def test_a_chat_left_idle_past_its_timeout_ends_when_the_page_reconnects(chat_factory, sockets, reload):
    chat = await chat_factory(human_position=0, inactivity_timeout=60)
    await database_sync_to_async(Participant.objects.filter(pk=chat.participant.pk).update)(
        last_seen_at=timezone.now() - timedelta(minutes=5)
    )
    page = sockets(chat)
    await page.connect()

    history = await page.receive_until("history")

    assert history["ended"]["reason"] == "timeout"
    assert (await reload(chat.episode)).end_reason == Episode.EndReason.TIMEOUT
