"""Limits and safety on the chat socket: who may connect, message length, rates, floods, bad frames."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.contrib.sessions.backends.db import SessionStore
from django.utils import timezone

from chat import connections, throttle
from chat.access import release, take_over
from chat.connections import LEASE, open_connection
from chat.models import ChatConnection, Participant
from chat.protocol import (
    CLOSE_FLOOD,
    CLOSE_NO_PARTICIPANT,
    CLOSE_NOT_IN_CHAT,
    CLOSE_TOO_MANY_PAGES,
    CLOSE_UNKNOWN_STUDY,
)
from chat.throttle import FRAME_LIMIT, FRAME_WINDOW
from tests.concurrency import at_once, errors

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


@pytest.mark.parametrize("wrong", ["http://127.0.0.1:9999", "https://127.0.0.1", "https://127.0.0.1:8000",
                                   "ws://127.0.0.1:8000", "http://127.0.0.1"])
async def test_only_the_sites_exact_origin_may_open_the_socket(chat_factory, sockets, wrong):
    chat = await chat_factory()
    own = sockets(chat, origin="http://127.0.0.1:8000")  # the site is served at http://127.0.0.1:8000

    assert await own.connect()
    assert (await own.receive_until("history"))["type"] == "history"
    assert not await sockets(chat, origin=wrong).connect()


async def test_the_origin_must_be_the_host_the_socket_was_sent_to_and_that_host_allowed(chat_factory, sockets):
    chat = await chat_factory()

    # Another allowed host's page is another origin all the same.
    assert not await sockets(chat, origin="http://localhost:8000", host="127.0.0.1:8000").connect()
    # Its own origin, but a host the site does not serve (DNS rebinding): refused.
    assert not await sockets(chat, origin="http://rebound.example:8000", host="rebound.example:8000").connect()


async def test_a_trusted_origin_is_accepted_with_its_exact_scheme_and_port(chat_factory, sockets, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://study.example.org", "https://*.lab.example.org"]
    chat = await chat_factory()

    assert await sockets(chat, origin="https://study.example.org").connect()
    assert await sockets(chat, origin="https://room-2.lab.example.org").connect()
    assert not await sockets(chat, origin="http://study.example.org").connect()
    assert not await sockets(chat, origin="https://study.example.org:8443").connect()
    assert not await sockets(chat, origin="https://study.example.org.evil.example").connect()


async def test_behind_a_tls_proxy_the_https_origin_is_the_sites_own(chat_factory, sockets, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    chat = await chat_factory()

    proxied = sockets(chat, origin="https://127.0.0.1:8000", extra_headers=[(b"x-forwarded-proto", b"https")])
    assert await proxied.connect()
    assert not await sockets(chat, origin="https://127.0.0.1:8000").connect()


async def test_a_participant_still_on_the_briefing_is_refused(chat_factory, sockets):
    chat = await chat_factory(stage=Participant.Stage.BRIEFING)
    page = sockets(chat)

    await page.connect()

    assert await page.closed_with() == CLOSE_NOT_IN_CHAT


# --- one browser per participant ----------------------------------------------------------------


async def test_a_browser_that_is_not_the_participants_cannot_open_their_socket(chat_factory, sockets, saved_session):
    chat = await chat_factory()
    # Another browser whose session names the participant (as the old browser's still does after
    # the participant moved with their resume code), but whose token is not theirs.
    other = await saved_session({str(chat.study.pk): chat.participant.pk})
    page = sockets(chat, session_key=other)

    await page.connect()

    assert await page.closed_with() == CLOSE_NO_PARTICIPANT
    assert page.seen == []


def _move_to_new_browser(participant_pk: int) -> None:
    session = SessionStore()
    take_over(session, Participant.objects.select_related("study").get(pk=participant_pk))
    session.save()


async def test_an_open_socket_closes_when_the_participant_moves_to_another_browser(chat_factory, sockets):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await database_sync_to_async(_move_to_new_browser)(chat.participant.pk)

    assert await page.closed_with() == CLOSE_NO_PARTICIPANT


async def test_an_open_socket_closes_when_a_researcher_releases_the_id(chat_factory, sockets, stored_turns):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await database_sync_to_async(lambda: release(Participant.objects.get(pk=chat.participant.pk)))()

    assert await page.closed_with() == CLOSE_NO_PARTICIPANT
    again = sockets(chat)
    await again.connect()
    assert await again.closed_with() == CLOSE_NO_PARTICIPANT


async def test_a_socket_that_missed_the_news_still_cannot_speak_for_the_participant(
    chat_factory, sockets, stored_turns
):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")
    # Moved without telling the open sockets (as if the message to this process were lost).
    await database_sync_to_async(Participant.objects.filter(pk=chat.participant.pk).update)(browser_token="elsewhere")

    client_id = await page.act("I am not them.")
    error = await page.receive_until("error")

    assert (error["code"], error["client_id"]) == ("not_your_browser", client_id)
    assert await page.closed_with() == CLOSE_NO_PARTICIPANT
    assert await stored_turns(chat.episode.pk) == []


# --- how many sockets one participant may hold ---------------------------------------------------


async def test_a_fourth_socket_of_one_participant_is_refused_with_a_message(chat_factory, sockets, settings):
    settings.PARLEY_CHAT_MAX_SOCKETS = 3
    chat = await chat_factory(human_position=0)
    pages = [sockets(chat) for _ in range(3)]
    for page in pages:
        assert await page.connect()
        await page.receive_until("history")

    fourth = sockets(chat)
    await fourth.connect()

    assert await fourth.closed_with() == CLOSE_TOO_MANY_PAGES
    (error,) = fourth.seen
    assert error["type"] == "error" and error["code"] == "too_many_pages"
    assert "already open in 3 tabs or windows" in error["message"]


async def test_closing_a_socket_makes_room_for_another(chat_factory, sockets, settings):
    settings.PARLEY_CHAT_MAX_SOCKETS = 2
    chat = await chat_factory(human_position=0)
    first, second = sockets(chat), sockets(chat)
    for page in (first, second):
        await page.connect()
        await page.receive_until("history")

    await first.communicator.disconnect()
    third = sockets(chat)
    await third.connect()

    assert (await third.receive_until("history"))["type"] == "history"


async def test_sockets_left_behind_by_a_crashed_process_stop_counting_when_their_lease_runs_out(
    chat_factory, sockets, settings
):
    settings.PARLEY_CHAT_MAX_SOCKETS = 3
    chat = await chat_factory(human_position=0)
    lapsed = timezone.now() - timedelta(seconds=1)
    await database_sync_to_async(ChatConnection.objects.bulk_create)([
        ChatConnection(participant=chat.participant, key=f"crashed-{n}", opened_at=lapsed - LEASE, expires_at=lapsed)
        for n in range(3)
    ])

    page = sockets(chat)
    await page.connect()

    assert (await page.receive_until("history"))["type"] == "history"
    await connections.leases().renew()  # any live process's renewal deletes them
    assert await database_sync_to_async(ChatConnection.objects.filter(key__startswith="crashed").count)() == 0


@pytest.mark.concurrency
def test_sockets_opening_at_the_same_moment_never_exceed_the_cap(build_chat, settings):
    settings.PARLEY_CHAT_MAX_SOCKETS = 3
    participant = build_chat().participant

    keys = at_once(*[lambda: open_connection(participant.pk, "a-server")] * 8)

    assert not errors(keys)
    assert sum(key is not None for key in keys) == 3
    assert ChatConnection.objects.filter(participant=participant).count() == 3


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


async def test_a_lone_surrogate_gets_an_error_and_the_socket_stays_open(chat_factory, sockets, stored_turns):
    chat, page = await _ready(chat_factory, sockets)

    await page.communicator.send_to(
        text_data='{"type": "act", "client_id": "surrogate-1", "action_type": "speak", "content": "hi \\ud800"}'
    )
    error = await page.receive_until("error")
    await page.act("Still here.")

    assert (error["code"], error["client_id"]) == ("bad_message", "surrogate-1")
    assert "not valid text" in error["message"]
    assert (await page.receive_until("ack"))["index"] == 0
    assert [turn[3] for turn in await stored_turns(chat.episode.pk)][:1] == ["Still here."]


async def test_a_deeply_nested_frame_gets_an_error_and_the_socket_stays_open(chat_factory, sockets):
    _, page = await _ready(chat_factory, sockets)

    await page.communicator.send_to(text_data="[" * 100_000)
    error = await page.receive_until("error")
    await page.communicator.send_to(text_data='{"type": "act", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    second = await page.receive_until("error")
    await page.act("Still here.")

    assert error["code"] == second["code"] == "bad_message"
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

    for _ in range(FRAME_LIMIT + 1):
        await page.send({"type": "sync"})

    assert await page.closed_with() == CLOSE_FLOOD


async def test_the_frame_count_is_the_participants_across_reconnects(chat_factory, sockets, monkeypatch):
    """Each new socket reads the whole transcript: closing and reopening must not start the count again."""
    monkeypatch.setattr(throttle, "clock", lambda: 1000.0 * FRAME_WINDOW)  # every frame in one window
    chat = await chat_factory()
    for _ in range(FRAME_LIMIT // 2):  # a socket opened and one resync: two frames each
        page = sockets(chat)
        await page.connect()
        await page.receive_until("history")
        await page.send({"type": "sync"})
        await page.receive_until("history")
        await page.communicator.disconnect()

    again = sockets(chat)
    await again.connect()

    assert await again.closed_with() == CLOSE_FLOOD
    assert again.seen == []
