"""A negotiation over the real socket: the floor messages, the participant's choice, the server's deadline, and
who may choose (PM-19, PM-20)."""

from __future__ import annotations

import secrets

import pytest
from channels.db import database_sync_to_async

from benchmark.models import MediatorDecision
from chat.models import Participant
from tests.chat.conftest import session_for
from tests.chat.negotiation_builders import chatting, negotiation_study

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@database_sync_to_async
def negotiation_chat(**fields):
    participant = chatting(negotiation_study(**fields))
    browser = secrets.token_urlsafe(24)
    Participant.objects.filter(pk=participant.pk).update(browser_token=browser)
    return f"/ws/chat/{participant.study.slug}/", session_for(
        {str(participant.study_id): participant.pk}, browser=browser
    )


async def test_the_mediator_opens_chooses_and_a_late_choice_is_refused(sockets):
    path, session = await negotiation_chat(mediating=True, intervene_window=1.0)
    socket = sockets(path=path, session_key=session)
    assert await socket.connect()
    history = await socket.receive_until("history")
    assert "floor" in history

    opening = await socket.receive_until("floor", index=0)
    assert opening["next"] == {"index": 0, "side": "you"} and opening["window"] is None
    await socket.act("Welcome, everyone.")
    await socket.receive_until("turn", index=0)
    await socket.receive_until("turn", index=1)  # a party answers (no window after the mediator's own turn)
    window = await socket.receive_until("floor", index=2)
    assert window["window"] == "intervene" and window["next"] is None and 0 < window["seconds_left"] <= 1.0

    await socket.send({"type": "floor", "choice": "intervene", "index": 2})
    given = await socket.receive_until("floor", index=2, window=None)
    assert given["next"] == {"index": 2, "side": "you"}
    await socket.act("Let me step in.")
    await socket.receive_until("turn", index=2)
    await socket.receive_until("turn", index=3)
    await socket.receive_until("floor", index=4, window="intervene")
    closed = await socket.receive_until("floor", index=4, window=None, timeout=5)  # the server's timer closed it
    assert closed["next"]["side"] == "partner"

    await socket.send({"type": "floor", "choice": "intervene", "index": 4})
    refused = await socket.receive_until("error")
    assert refused["code"] == "no_window"
    decisions = await database_sync_to_async(
        lambda: list(MediatorDecision.objects.order_by("after_index").values_list("after_index", "engaged", "reason"))
    )()
    assert decisions[:2] == [(1, True, "The participant chose to intervene."), (3, False, "window closed")]


async def test_a_party_claims_the_floor_and_cannot_make_the_mediators_choice(sockets):
    path, session = await negotiation_chat(mediating=False, claim_window=5)
    socket = sockets(path=path, session_key=session)
    assert await socket.connect()

    await socket.receive_until("turn", index=0)  # the agent mediator's welcome
    window = await socket.receive_until("floor", index=1, window="claim")
    assert window["window_seconds"] == 5
    await socket.send({"type": "floor", "choice": "continue", "index": 1})
    assert (await socket.receive_until("error"))["code"] == "not_your_choice"
    await socket.send({"type": "floor", "choice": "claim", "index": 1})
    given = await socket.receive_until("floor", index=1, window=None)
    assert given["next"] == {"index": 1, "side": "you"}
    await socket.act("Alex here.")
    assert (await socket.receive_until("turn", index=1))["side"] == "you"
