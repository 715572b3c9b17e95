"""The agent's turn: the lease that lets exactly one process write it, planning, storing, failing."""

import threading
import time
from datetime import timedelta
from functools import partial

import pytest
from django.db import transaction
from django.utils import timezone

from benchmark.agents import llm
from benchmark.agents.prompt import Action
from benchmark.models import ActionType, Barrier, Episode, Turn
from chat import agent_turn
from chat.lifecycle import end_episode
from chat.models import Participant
from tests.builders import default_team
from tests.concurrency import at_once, errors
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

USAGE = llm.Usage(model=FAKE_MODEL, latency_ms=120, prompt_tokens=300, completion_tokens=12, attempts=1)


def lease_of(chat) -> tuple:
    participant = Participant.objects.get(pk=chat.participant.pk)
    return participant.agent_lease_owner, participant.agent_lease_until


# --- the lease ----------------------------------------------------------------------------------


def test_only_one_of_two_processes_claims_the_lease(build_chat):
    chat = build_chat()

    first = agent_turn.claim_lease(chat.participant.pk, "process-a")
    second = agent_turn.claim_lease(chat.participant.pk, "process-b")

    assert (first, second) == (True, False)
    assert lease_of(chat)[0] == "process-a"


def test_an_expired_lease_can_be_claimed_by_another_process(build_chat):
    chat = build_chat()
    agent_turn.claim_lease(chat.participant.pk, "process-a")

    later = timezone.now() + agent_turn.LEASE + timedelta(seconds=1)

    assert agent_turn.claim_lease(chat.participant.pk, "process-b", now=later)
    assert lease_of(chat)[0] == "process-b"


def test_only_the_holder_renews_the_lease(build_chat):
    chat = build_chat()
    agent_turn.claim_lease(chat.participant.pk, "process-a")
    until = lease_of(chat)[1]
    later = timezone.now() + timedelta(seconds=5)

    assert not agent_turn.renew_lease(chat.participant.pk, "process-b", now=later)
    assert agent_turn.renew_lease(chat.participant.pk, "process-a", now=later)
    assert lease_of(chat)[1] > until


def test_no_lease_is_granted_once_the_chat_is_over(build_chat):
    chat = build_chat(stage=Participant.Stage.QUESTIONNAIRE)

    assert not agent_turn.claim_lease(chat.participant.pk, "process-a")


# --- planning and storing ---------------------------------------------------------------------------


def test_the_plan_is_for_the_agent_seat_with_the_barrier_and_the_history(build_chat):
    barrier = Barrier.objects.create(
        team=default_team(), key="test-veil", name="Veil", definition="d", style_directive="Hint, never say."
    )
    chat = build_chat(human_position=1, barrier=barrier)
    agent_turn.claim_lease(chat.participant.pk, "process-a")

    plan = agent_turn.plan_turn(chat.participant.pk, "process-a")

    assert (plan.index, plan.seat_pk, plan.model) == (0, chat.agent_seat.pk, "scripted")
    assert plan.context.barrier.style_directive == "Hint, never say."
    assert plan.context.history == ()


def test_there_is_no_plan_on_the_participants_turn(build_chat):
    chat = build_chat(human_position=0)
    agent_turn.claim_lease(chat.participant.pk, "process-a")

    assert agent_turn.plan_turn(chat.participant.pk, "process-a") is None


def test_there_is_no_plan_without_the_lease(build_chat):
    chat = build_chat(human_position=1)
    agent_turn.claim_lease(chat.participant.pk, "process-a")

    assert agent_turn.plan_turn(chat.participant.pk, "process-b") is None


def test_storing_keeps_the_model_usage_and_releases_the_lease(build_chat):
    chat = build_chat(human_position=1)
    agent_turn.claim_lease(chat.participant.pk, "process-a")
    plan = agent_turn.plan_turn(chat.participant.pk, "process-a")

    turn = agent_turn.store_agent_turn(plan, "process-a", Action(ActionType.SPEAK, "Hello."), USAGE)

    assert (turn.index, turn.seat_id, turn.content) == (0, chat.agent_seat.pk, "Hello.")
    assert (turn.model, turn.latency_ms, turn.prompt_tokens, turn.completion_tokens) == (FAKE_MODEL, 120, 300, 12)
    assert lease_of(chat) == ("", None)


def test_a_reply_is_dropped_when_another_process_took_the_lease_over(build_chat):
    chat = build_chat(human_position=1)
    agent_turn.claim_lease(chat.participant.pk, "process-a")
    plan = agent_turn.plan_turn(chat.participant.pk, "process-a")
    later = timezone.now() + agent_turn.LEASE + timedelta(seconds=1)
    agent_turn.claim_lease(chat.participant.pk, "process-b", now=later)

    assert agent_turn.store_agent_turn(plan, "process-a", Action(ActionType.SPEAK, "Late."), USAGE) is None
    assert not Turn.objects.filter(episode=chat.episode).exists()


def test_a_reply_is_dropped_when_its_index_was_stored_meanwhile(build_chat):
    chat = build_chat(human_position=1)
    agent_turn.claim_lease(chat.participant.pk, "process-a")
    plan = agent_turn.plan_turn(chat.participant.pk, "process-a")
    Turn.objects.create(episode=chat.episode, index=0, seat=chat.agent_seat, content="Written elsewhere.")

    assert agent_turn.store_agent_turn(plan, "process-a", Action(ActionType.SPEAK, "Mine."), USAGE) is None
    assert list(Turn.objects.filter(episode=chat.episode).values_list("content", flat=True)) == ["Written elsewhere."]


def agents_turn(build_chat, opening: bool):
    """A chat whose agent's turn is claimed by process A and planned: the opening turn (which takes the
    episode's lock to store), or the answer to the participant's first (which stores without it)."""
    chat = build_chat(human_position=1 if opening else 0)
    if not opening:
        Turn.objects.create(episode=chat.episode, index=0, seat=chat.human_seat, content="Hello.")
    agent_turn.claim_lease(chat.participant.pk, "process-a")
    return chat, agent_turn.plan_turn(chat.participant.pk, "process-a")


@pytest.mark.parametrize("opening", [True, False], ids=["opening", "answer"])
def test_a_reply_is_dropped_when_the_chat_ended_meanwhile(build_chat, opening):
    chat, plan = agents_turn(build_chat, opening)
    ended = Episode.objects.filter(pk=chat.episode.pk).update(status=Episode.Status.FINISHED, end_reason="timeout")
    assert ended  # by hand: the participant was not moved on, and the lease stands

    assert agent_turn.store_agent_turn(plan, "process-a", Action(ActionType.SPEAK, "Too late."), USAGE) is None
    assert not Turn.objects.filter(episode=chat.episode, content="Too late.").exists()


@pytest.mark.parametrize("opening", [True, False], ids=["opening", "answer"])
def test_a_reply_whose_lease_went_is_rolled_back_with_its_turn(build_chat, opening):
    """The lease is given up after the turn is inserted: when it is no longer ours, the turn goes too."""
    chat, plan = agents_turn(build_chat, opening)
    agent_turn.release_lease(chat.participant.pk, "process-a")
    agent_turn.claim_lease(chat.participant.pk, "process-b")

    assert agent_turn.store_agent_turn(plan, "process-a", Action(ActionType.SPEAK, "Not mine."), USAGE) is None
    assert not Turn.objects.filter(episode=chat.episode, content="Not mine.").exists()
    assert lease_of(chat)[0] == "process-b"


# --- failing ----------------------------------------------------------------------------------------


def test_a_model_failure_ends_the_chat_as_failed_and_keeps_the_error_for_researchers(build_chat):
    chat = build_chat(human_position=1)
    agent_turn.claim_lease(chat.participant.pk, "process-a")

    ended = agent_turn.fail_episode(chat.participant.pk, "process-a", llm.LLMUnavailable("gateway gave up"))

    episode = Episode.objects.get(pk=chat.episode.pk)
    assert ended
    assert (episode.status, episode.end_reason) == (Episode.Status.FAILED, Episode.EndReason.MODEL_ERROR)
    assert episode.settings["failure"] == "LLMUnavailable: gateway gave up"
    assert episode.settings["chat_study"] == chat.study.slug  # the rest of the settings stay
    # no turn of the participant's yet, short of the study's minimum: the technical-problem code, not the questions
    assert Participant.objects.get(pk=chat.participant.pk).stage == Participant.Stage.TECHNICAL_PROBLEM


def test_a_failure_reported_without_the_lease_changes_nothing(build_chat):
    chat = build_chat(human_position=1)
    agent_turn.claim_lease(chat.participant.pk, "process-b")

    assert not agent_turn.fail_episode(chat.participant.pk, "process-a", llm.LLMUnavailable("old news"))
    assert Episode.objects.get(pk=chat.episode.pk).status != Episode.Status.FAILED


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
async def test_take_turn_with_the_scripted_model_stores_a_scripted_turn(chat_factory):
    from channels.db import database_sync_to_async

    chat = await chat_factory(human_position=1)
    claim = database_sync_to_async(agent_turn.claim_lease)
    assert await claim(chat.participant.pk, "process-a")

    assert await agent_turn.take_turn(chat.participant.pk, "process-a")

    turn = await database_sync_to_async(Turn.objects.get)(episode=chat.episode)
    assert (turn.index, turn.seat_id, turn.model) == (0, chat.agent_seat.pk, "scripted")
    assert turn.content


# --- races ------------------------------------------------------------------------------------------


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("opening", [True, False], ids=["opening", "answer"])
def test_an_agent_turn_stored_while_the_chat_ends_is_kept_whole_or_dropped(build_chat, opening):
    chats, plans = [], []
    for _ in range(4):
        chat, plan = agents_turn(build_chat, opening)
        chats.append(chat)
        plans.append(plan)
    store = agent_turn.store_agent_turn
    racing = [partial(store, plan, "process-a", Action(ActionType.SPEAK, "Just in time."), USAGE) for plan in plans]
    racing += [partial(end_episode, chat.participant, Episode.EndReason.TIMEOUT) for chat in chats]

    outcomes = at_once(*racing)

    assert errors(outcomes) == []
    for chat, stored, ended in zip(chats, outcomes[:4], outcomes[4:], strict=True):
        assert ended and Episode.objects.get(pk=chat.episode.pk).end_reason == Episode.EndReason.TIMEOUT
        kept = list(Turn.objects.filter(episode=chat.episode, seat=chat.agent_seat).values_list("pk", flat=True))
        assert kept == ([stored.pk] if stored else [])


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_failure_reported_as_the_lease_changes_hands_leaves_the_new_holders_chat_alone(build_chat):
    """Process A's model gives up just as process B takes the lease over (while a turn being stored
    holds the episode): A's report must not end the chat B is now answering in."""
    chat = build_chat(human_position=1)
    agent_turn.claim_lease(chat.participant.pk, "process-a")
    holding = threading.Event()

    def take_over():
        with transaction.atomic():
            Episode.objects.select_for_update().get(pk=chat.episode.pk)
            holding.set()
            time.sleep(0.5)  # process A reports its failure meanwhile
            later = timezone.now() + agent_turn.LEASE + timedelta(seconds=1)
            return agent_turn.claim_lease(chat.participant.pk, "process-b", now=later)

    def report_failure():
        holding.wait()
        return agent_turn.fail_episode(chat.participant.pk, "process-a", llm.LLMUnavailable("gave up"))

    took_over, failed = at_once(take_over, report_failure)

    assert (took_over, failed) == (True, "")  # "": this call ended nothing
    assert Episode.objects.get(pk=chat.episode.pk).status == Episode.Status.PENDING
    assert lease_of(chat)[0] == "process-b"
