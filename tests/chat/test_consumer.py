"""The chat socket: history, turn order, acknowledgements, leaving, the turn cap, fan-out."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from benchmark.models import Episode, Turn
from chat.lifecycle import SEEN_LATELY
from chat.models import Participant

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


async def test_connecting_sends_the_history_and_whose_turn_it_is(chat_factory, sockets):
    chat = await chat_factory(human_position=0, max_message_chars=300, messages_per_minute=5, turn_cap=8)
    page = sockets(chat)

    assert await page.connect()
    history = await page.receive()

    assert history["type"] == "history"
    assert history["turns"] == []
    assert history["next"] == {"index": 0, "side": "you"}
    assert history["typing"] is None
    assert history["ended"] is None
    assert history["limits"] == {"max_chars": 300, "messages_per_minute": 5, "turn_cap": 8, "min_turns": 3}
    assert history["you"] == chat.human_seat.character.name


async def test_connecting_marks_the_participant_seen_and_the_episode_running(chat_factory, sockets, reload):
    chat = await chat_factory(human_position=0)
    before = timezone.now() - timedelta(minutes=1)
    await database_sync_to_async(Participant.objects.filter(pk=chat.participant.pk).update)(last_seen_at=before)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    participant = await reload(chat.participant)
    episode = await reload(chat.episode)
    assert participant.last_seen_at > before
    assert episode.status == Episode.Status.RUNNING
    assert episode.started_at is not None


async def test_a_page_opened_moments_after_the_participant_was_seen_marks_nothing_again(
    chat_factory, sockets, reload
):
    chat = await chat_factory(human_position=0, inactivity_timeout=600)
    before = timezone.now() - SEEN_LATELY + timedelta(seconds=2)  # their idle deadline moves by under 10 s
    await database_sync_to_async(Participant.objects.filter(pk=chat.participant.pk).update)(last_seen_at=before)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    assert (await reload(chat.participant)).last_seen_at == before


async def test_agent_takes_the_first_turn_when_the_participant_is_seat_one(chat_factory, sockets, stored_turns):
    chat = await chat_factory(human_position=1)
    page = sockets(chat)
    await page.connect()

    history = await page.receive_until("history")
    typing = await page.receive_until("typing")
    turn = await page.receive_until("turn")

    assert history["next"] == {"index": 0, "side": "partner"}
    assert typing["index"] == 0
    assert (turn["index"], turn["side"], turn["next"]) == (0, "partner", "you")
    assert turn["content"]
    assert "client_id" not in turn
    assert await stored_turns(chat.episode.pk) == [(0, 0, turn["action_type"], turn["content"])]


async def test_a_participant_turn_is_stored_acknowledged_broadcast_then_answered(chat_factory, sockets, stored_turns):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    client_id = await page.act("Hi, shall we talk about the party?")
    ack = await page.receive()
    mine = await page.receive_until("turn")
    reply = await page.receive_until("turn")

    assert ack == {"type": "ack", "client_id": client_id, "index": 0}
    assert mine == {
        "type": "turn",
        "index": 0,
        "side": "you",
        "speaker": chat.human_seat.character.name,
        "action_type": "speak",
        "content": "Hi, shall we talk about the party?",
        "client_id": client_id,
        "next": "partner",
    }
    assert (reply["index"], reply["side"], reply["next"]) == (1, "partner", "you")
    turns = await stored_turns(chat.episode.pk)
    assert turns[0] == (0, 0, "speak", "Hi, shall we talk about the party?")
    assert turns[1][:2] == (1, 1)


async def test_non_verbal_and_physical_actions_are_stored_with_their_type(chat_factory, sockets, stored_turns):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await page.act("shrugs", action_type="non-verbal")
    await page.receive_until("turn", index=1)
    await page.act("hands over the keys", action_type="action")
    await page.receive_until("ack")

    turns = await stored_turns(chat.episode.pk)
    assert turns[0] == (0, 0, "non-verbal", "shrugs")
    assert turns[2] == (2, 0, "action", "hands over the keys")


async def test_a_turn_out_of_order_is_refused(chat_factory, sockets, stored_turns, settings):
    settings.PARLEY_CHAT_SCRIPTED_DELAY = 0.2  # the agent is still typing its first line
    chat = await chat_factory(human_position=1)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("typing")

    client_id = await page.act("Me first!")
    error = await page.receive_until("error")

    assert error["code"] == "not_your_turn"
    assert error["client_id"] == client_id
    assert "not your turn" in error["message"]
    await page.receive_until("turn", index=0)
    assert [t[1] for t in await stored_turns(chat.episode.pk)] == [0]


async def test_participant_leaving_ends_the_episode_and_moves_them_on(chat_factory, sockets, reload):
    # No minimum of turns: leaving before it screens out (test_screen_out.py).
    chat = await chat_factory(human_position=0, min_participant_turns=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await page.act("", action_type="leave")
    turn = await page.receive_until("turn")
    ended = await page.receive_until("ended")

    assert (turn["action_type"], turn["content"], turn["next"]) == ("leave", "", None)
    assert ended == {
        "type": "ended", "reason": "leave", "message": "You left the conversation.",
        "outcome": "questions",
    }
    episode = await reload(chat.episode)
    assert (episode.status, episode.end_reason) == (Episode.Status.FINISHED, Episode.EndReason.LEAVE)
    assert (await reload(chat.participant)).stage == Participant.Stage.QUESTIONNAIRE
    assert await database_sync_to_async(Turn.objects.filter(episode=chat.episode).count)() == 1


async def test_agent_leaving_ends_the_episode(chat_factory, sockets, reload, fake_llm):
    fake_llm.reply_when("", '{"action_type": "leave", "argument": "I have to go."}')
    chat = await chat_factory(human_position=0, model="openai/fake-model")
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await page.act("Hello!")
    turn = await page.receive_until("turn", index=1)
    ended = await page.receive_until("ended")

    assert (turn["side"], turn["action_type"], turn["content"], turn["next"]) == (
        "partner",
        "leave",
        "I have to go.",
        None,
    )
    assert ended["reason"] == "leave"
    episode = await reload(chat.episode)
    assert (episode.status, episode.end_reason) == (Episode.Status.FINISHED, Episode.EndReason.LEAVE)


async def test_the_turn_cap_ends_the_episode_after_the_agents_turn(chat_factory, sockets, reload):
    chat = await chat_factory(human_position=0, turn_cap=2)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await page.act("Hello!")
    last = await page.receive_until("turn", index=1)
    ended = await page.receive_until("ended")

    assert last["next"] is None
    assert ended == {
        "type": "ended",
        "reason": "turn_cap",
        "message": "The conversation has reached its length limit.",
        "outcome": "questions",
    }
    episode = await reload(chat.episode)
    assert (episode.status, episode.end_reason) == (Episode.Status.FINISHED, Episode.EndReason.TURN_CAP)


async def test_the_turn_cap_ends_the_episode_after_the_participants_turn(chat_factory, sockets, stored_turns):
    chat = await chat_factory(human_position=1, turn_cap=2)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("turn", index=0)

    await page.act("Goodbye then.")
    ended = await page.receive_until("ended")

    assert ended["reason"] == "turn_cap"
    assert len(await stored_turns(chat.episode.pk)) == 2


async def test_nothing_can_be_sent_after_the_end(chat_factory, sockets):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")
    await page.act("", action_type="leave")
    await page.receive_until("ended")

    await page.act("Wait, one more thing")
    error = await page.receive_until("error")

    assert error["code"] == "ended"


async def test_every_open_page_of_the_episode_receives_the_turns(chat_factory, sockets):
    chat = await chat_factory(human_position=0)
    first, second = sockets(chat), sockets(chat)
    await first.connect()
    await first.receive_until("history")
    await second.connect()
    await second.receive_until("history")

    client_id = await first.act("Both tabs should see this.")
    on_second = await second.receive_until("turn", index=0)
    reply_on_second = await second.receive_until("turn", index=1)
    await first.receive_until("turn", index=1)

    assert on_second["content"] == "Both tabs should see this."
    assert on_second["client_id"] == client_id
    assert reply_on_second["side"] == "partner"
    assert not [m for m in second.seen if m["type"] == "ack"]  # only the sender is acknowledged


async def test_a_finished_chat_opens_with_its_end_and_starts_nothing(chat_factory, sockets, fake_llm):
    chat = await chat_factory(human_position=0, model="openai/fake-model", min_participant_turns=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")
    await page.act("Bye.", action_type="leave")
    await page.receive_until("ended")

    again = sockets(chat)
    assert await again.connect()
    history = await again.receive_until("history")

    assert history["ended"] == {
        "reason": "leave", "message": "You left the conversation.", "outcome": "questions"
    }
    assert history["next"] is None
    assert [t["content"] for t in history["turns"]] == ["Bye."]
    assert await again.nothing_more()
    assert fake_llm.requests == []


async def test_html_in_a_message_is_stored_and_sent_as_plain_text(chat_factory, sockets, stored_turns):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")
    markup = '<img src=x onerror="alert(1)"> <b>bold</b> &amp; 5 < 6'

    await page.act(markup)
    turn = await page.receive_until("turn", index=0)

    assert turn["content"] == markup
    assert (await stored_turns(chat.episode.pk))[0][3] == markup
