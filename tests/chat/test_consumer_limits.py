"""Limits and safety on the chat socket: who may connect, message length, rates, floods, bad frames."""

import pytest

from chat.models import Participant
from chat.protocol import CLOSE_FLOOD, CLOSE_NO_PARTICIPANT, CLOSE_NOT_IN_CHAT, CLOSE_UNKNOWN_STUDY
from chat.turns import FrameGuard

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


# --- who may connect ----------------------------------------------------------------------------


async def test_a_page_from_another_site_is_refused(chat_factory, sockets):
    chat = await chat_factory()
    page = sockets(chat, origin="https://evil.example")

    assert not await page.connect()


async def test_a_socket_without_an_origin_is_refused(chat_factory, sockets):
    chat = await chat_factory()
    page = sockets(chat, origin=None)

    assert not await page.connect()


async def test_a_socket_without_a_session_is_closed_as_no_participant(chat_factory, sockets):
    chat = await chat_factory()
    page = sockets(path=chat.path)

    await page.connect()

    assert await page.closed_with() == CLOSE_NO_PARTICIPANT
    assert page.seen == []


async def test_another_participants_study_is_refused(chat_factory, sockets):
    mine = await chat_factory()
    theirs = await chat_factory()
    page = sockets(path=theirs.path, session_key=mine.session_key)

    await page.connect()

    assert await page.closed_with() == CLOSE_NO_PARTICIPANT
    assert page.seen == []


async def test_a_session_naming_a_participant_of_another_study_is_refused(chat_factory, sockets, saved_session):
    mine = await chat_factory()
    theirs = await chat_factory()

    forged = await saved_session({str(theirs.study.pk): mine.participant.pk})
    page = sockets(path=theirs.path, session_key=forged)

    await page.connect()

    assert await page.closed_with() == CLOSE_NO_PARTICIPANT


async def test_an_unknown_study_is_refused(chat_factory, sockets):
    chat = await chat_factory()
    page = sockets(path="/ws/chat/no-such-study/", session_key=chat.session_key)

    await page.connect()

    assert await page.closed_with() == CLOSE_UNKNOWN_STUDY


async def test_a_participant_still_on_the_briefing_is_refused(chat_factory, sockets):
    chat = await chat_factory(stage=Participant.Stage.BRIEFING)
    page = sockets(chat)

    await page.connect()

    assert await page.closed_with() == CLOSE_NOT_IN_CHAT


# --- what may be sent ---------------------------------------------------------------------------


async def _ready(chat_factory, sockets, **options):
    chat = await chat_factory(human_position=0, **options)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")
    return chat, page


async def test_a_message_over_the_length_cap_is_refused_naming_the_limit(chat_factory, sockets, stored_turns):
    chat, page = await _ready(chat_factory, sockets, max_message_chars=10)

    client_id = await page.act("This is far too long.")
    error = await page.receive_until("error")

    assert error["code"] == "too_long"
    assert error["client_id"] == client_id
    assert "21 characters" in error["message"] and "limit is 10 characters" in error["message"]
    assert await stored_turns(chat.episode.pk) == []


async def test_a_message_at_the_length_cap_after_trimming_is_accepted(chat_factory, sockets, stored_turns):
    chat, page = await _ready(chat_factory, sockets, max_message_chars=10)

    await page.act("  0123456789\n")

    assert (await page.receive_until("ack"))["index"] == 0
    assert (await stored_turns(chat.episode.pk))[0][3] == "0123456789"


async def test_an_empty_message_is_refused(chat_factory, sockets):
    _, page = await _ready(chat_factory, sockets)

    await page.act("   ")

    assert (await page.receive_until("error"))["code"] == "empty"


async def test_an_unknown_action_is_refused(chat_factory, sockets):
    _, page = await _ready(chat_factory, sockets)

    await page.act("thinks hard", action_type="none")
    error = await page.receive_until("error")

    assert error["code"] == "unknown_action"
    assert "speak, non-verbal, action, leave" in error["message"]


async def test_a_malformed_client_id_is_refused(chat_factory, sockets):
    _, page = await _ready(chat_factory, sockets)

    await page.act("Hi", client_id="short")

    assert (await page.receive_until("error"))["code"] == "bad_client_id"


async def test_a_frame_that_is_not_json_gets_an_error_and_the_socket_stays_open(chat_factory, sockets):
    _, page = await _ready(chat_factory, sockets)

    await page.communicator.send_to(text_data="{not json")
    error = await page.receive_until("error")
    await page.act("Still here.")

    assert error["code"] == "bad_message"
    assert (await page.receive_until("ack"))["index"] == 0


async def test_more_messages_than_the_study_allows_a_minute_are_refused_with_the_wait(
    chat_factory, sockets, stored_turns
):
    chat, page = await _ready(chat_factory, sockets, messages_per_minute=1)
    await page.act("First.")
    await page.receive_until("turn", index=1)

    client_id = await page.act("Second, too soon.")
    error = await page.receive_until("error")

    assert error["code"] == "rate_limited"
    assert error["client_id"] == client_id
    assert 1 <= error["retry_after"] <= 60
    assert f"wait {error['retry_after']} second" in error["message"]
    assert len(await stored_turns(chat.episode.pk)) == 2


async def test_leaving_is_never_rate_limited(chat_factory, sockets):
    _, page = await _ready(chat_factory, sockets, messages_per_minute=1)
    await page.act("First.")
    await page.receive_until("turn", index=1)

    await page.act("", action_type="leave")

    assert (await page.receive_until("ended"))["reason"] == "leave"


async def test_a_flood_of_frames_closes_the_socket(chat_factory, sockets):
    _, page = await _ready(chat_factory, sockets)

    for _ in range(FrameGuard().limit + 1):
        await page.send({"type": "sync"})

    assert await page.closed_with() == CLOSE_FLOOD


def test_frame_guard_allows_the_limit_per_window_then_recovers():
    now = [0.0]
    guard = FrameGuard(limit=3, window=10.0, clock=lambda: now[0])

    assert [guard.allow() for _ in range(4)] == [True, True, True, False]
    now[0] = 10.5
    assert guard.allow()
