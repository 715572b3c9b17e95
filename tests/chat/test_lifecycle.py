"""Ending a chat under races: whoever notices first ends it once, and a chat in use is never ended as idle."""

import threading
import time
from datetime import timedelta
from functools import partial

import pytest
from django.db import transaction
from django.utils import timezone

from benchmark.models import Episode
from chat.lifecycle import end_episode, end_if_idle, end_message
from chat.models import Participant
from tests.concurrency import at_once, errors

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_ending_at_once_from_several_places_ends_once_with_the_first_reason(build_chat):
    chats = [build_chat(min_participant_turns=0) for _ in range(4)]  # ending early is not a screen-out here
    reasons = [Episode.EndReason.LEAVE, Episode.EndReason.TIMEOUT, Episode.EndReason.TURN_CAP]
    racing = [partial(end_episode, chat.participant, reason) for chat in chats for reason in reasons]

    outcomes = at_once(*racing)

    assert errors(outcomes) == []
    for number, chat in enumerate(chats):
        mine = outcomes[number * len(reasons) : (number + 1) * len(reasons)]
        assert mine.count(True) == 1
        episode = Episode.objects.get(pk=chat.episode.pk)
        assert (episode.status, episode.end_reason) == (Episode.Status.FINISHED, reasons[mine.index(True)])
        assert Participant.objects.get(pk=chat.participant.pk).stage == Participant.Stage.QUESTIONNAIRE


def test_a_chat_is_not_ended_as_idle_by_a_page_that_read_it_before_a_turn_arrived(build_chat):
    """A page finds the participant quiet past the timeout just as their turn is being stored (which
    holds the episode and marks them seen): the chat goes on."""
    chat = build_chat()
    long_ago = timezone.now() - timedelta(seconds=chat.study.inactivity_timeout + 60)
    Participant.objects.filter(pk=chat.participant.pk).update(last_seen_at=long_ago)
    seen_by_the_page = Participant.objects.select_related("study").get(pk=chat.participant.pk)
    holding = threading.Event()

    def store_a_turn():
        with transaction.atomic():
            Episode.objects.select_for_update().get(pk=chat.episode.pk)
            holding.set()
            time.sleep(0.5)  # the page checks for idleness meanwhile
            Participant.objects.filter(pk=chat.participant.pk).update(last_seen_at=timezone.now())

    def check_idle():
        holding.wait()
        return end_if_idle(seen_by_the_page)

    stored, ended = at_once(store_a_turn, check_idle)

    assert (stored, ended) == (None, False)
    assert Episode.objects.get(pk=chat.episode.pk).status != Episode.Status.FINISHED
    assert Participant.objects.get(pk=chat.participant.pk).stage == Participant.Stage.CHAT


def test_the_end_message_says_who_left():
    assert end_message(Episode.EndReason.LEAVE, participant_left=True) == "You left the conversation."
    assert end_message(Episode.EndReason.LEAVE) == "Someone else left the conversation."
