"""A model failure before the study's minimum of turns: a technical-problem code to review, not the completion code."""

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from benchmark.agents import llm
from benchmark.models import Episode, Turn
from chat import agent_turn
from chat.assignment import design_cells
from chat.lifecycle import end_message
from chat.models import ChatCondition, Participant

pytestmark = pytest.mark.django_db


def fail(chat, error: Exception | None = None) -> Participant:
    agent_turn.claim_lease(chat.participant.pk, "process-a")
    agent_turn.fail_episode(chat.participant.pk, "process-a", error or llm.LLMError("content filter"))
    return Participant.objects.get(pk=chat.participant.pk)


def add_participant_turns(chat, count: int) -> None:
    """``count`` exchanges, the agent first (the participant plays position 1)."""
    for number in range(count):
        Turn.objects.create(episode=chat.episode, index=2 * number, seat=chat.agent_seat, content="Hello.")
        Turn.objects.create(episode=chat.episode, index=2 * number + 1, seat=chat.human_seat, content="Hi.")


def test_a_model_failure_before_the_minimum_gives_the_technical_problem_outcome(build_chat):
    chat = build_chat(human_position=1, min_participant_turns=3)
    add_participant_turns(chat, 1)

    participant = fail(chat)

    assert participant.stage == Participant.Stage.TECHNICAL_PROBLEM
    assert participant.outcome == "technical_problem" and participant.finished_at is not None
    episode = Episode.objects.get(pk=chat.episode.pk)
    assert (episode.status, episode.end_reason) == (Episode.Status.FAILED, Episode.EndReason.MODEL_ERROR)


def test_a_model_failure_after_the_minimum_goes_on_to_the_questions(build_chat):
    chat = build_chat(human_position=1, min_participant_turns=3)
    add_participant_turns(chat, 3)

    assert fail(chat).stage == Participant.Stage.QUESTIONNAIRE


def test_without_a_minimum_a_model_failure_goes_on_to_the_questions(build_chat):
    chat = build_chat(human_position=1, min_participant_turns=0)

    assert fail(chat).stage == Participant.Stage.QUESTIONNAIRE


def test_the_participant_sees_the_technical_problem_code_and_never_the_completion_code(build_chat, client):
    chat = build_chat(human_position=1, min_participant_turns=3, return_url="https://example.org/back?cc={code}")
    fail(chat)
    client.cookies[django_settings.SESSION_COOKIE_NAME] = chat.session_key

    page = client.get(reverse("chat:technical-problem", args=[chat.study.slug]))
    done = client.get(reverse("chat:done", args=[chat.study.slug]))
    questions = client.get(reverse("chat:questionnaire", args=[chat.study.slug]))

    assert page.status_code == 200
    text = page.content.decode()
    assert chat.study.technical_problem_code in text and chat.study.completion_code not in text
    assert f"cc={chat.study.technical_problem_code}" in text
    for other in (done, questions):  # the pages of the completion code send them back to theirs
        assert other.status_code == 302 and other.url.endswith("/technical-problem/")


def test_the_technical_problem_code_is_distinct_and_the_place_is_offered_again(build_chat):
    chat = build_chat(human_position=1, min_participant_turns=3)
    ChatCondition.objects.create(study=chat.study, barrier=chat.participant.barrier, target=1)
    assert [cell.counted for cell in design_cells(chat.study)] == [1]
    fail(chat)

    study = chat.study
    assert study.technical_problem_code.startswith("TECH-")
    assert len({study.technical_problem_code, study.completion_code, study.screen_out_code}) == 3
    assert [cell.counted for cell in design_cells(study)] == [0]


def test_the_end_message_says_it_is_not_their_fault_and_what_comes_next():
    message = end_message(Episode.EndReason.MODEL_ERROR, outcome=Participant.Stage.TECHNICAL_PROBLEM)

    assert "technical problem" in message and "not your fault" in message and "code" in message
