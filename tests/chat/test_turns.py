"""The participant's turns under races: tabs and resends arriving at once store each turn exactly once."""

from collections import Counter
from functools import partial

import pytest

from benchmark.models import Turn
from chat.turns import Submitted, TurnRefused, submit_human_turn
from tests.concurrency import at_once, errors

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CHATS = 4  # raced side by side, so that transactions overlap on SQLite's one write lock too
TABS = 4


def send(chat, client_id: str, content: str = "Hello."):
    """One socket message, as the consumer passes it on: the turn stored, or the refusal's code."""
    try:
        return submit_human_turn(chat.participant.pk, client_id=client_id, action_type="speak", content=content)
    except TurnRefused as refused:
        return refused.code


def test_tabs_sending_the_next_turn_at_once_store_it_once(build_chat):
    chats = [build_chat(human_position=0) for _ in range(CHATS)]
    sends = [partial(send, chat, f"tab-{tab}-client", f"From tab {tab}.") for chat in chats for tab in range(TABS)]

    outcomes = at_once(*sends)

    assert errors(outcomes) == []
    for number, chat in enumerate(chats):
        mine = outcomes[number * TABS : (number + 1) * TABS]
        stored = [outcome for outcome in mine if isinstance(outcome, Submitted)]
        assert len(stored) == 1 and stored[0].created
        assert Counter(outcome for outcome in mine if not isinstance(outcome, Submitted)) == {"not_your_turn": TABS - 1}
        assert list(Turn.objects.filter(episode=chat.episode).values_list("index", "content")) == [
            (0, stored[0].turn.content)
        ]


def test_a_resend_racing_its_original_stores_one_turn(build_chat):
    chats = [build_chat(human_position=0) for _ in range(CHATS)]
    sends = [partial(send, chat, f"message-{number}") for number, chat in enumerate(chats) for _ in range(TABS)]

    outcomes = at_once(*sends)

    assert errors(outcomes) == []
    for number, chat in enumerate(chats):
        mine = outcomes[number * TABS : (number + 1) * TABS]
        assert all(isinstance(outcome, Submitted) for outcome in mine), mine
        assert sum(outcome.created for outcome in mine) == 1
        assert {outcome.turn.pk for outcome in mine} == set(Turn.objects.filter(episode=chat.episode).values_list(
            "pk", flat=True
        ))
