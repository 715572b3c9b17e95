"""Interviewing episodes: every agent seat on the goals and on its probes, the answers stored as rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.db import transaction

from ...agents import llm
from ...agents.batches import map_bounded
from ...agents.respondent import Answered, Asked, ask_instrument
from ...models import Answer, Episode, Question, Respondent, Response
from . import scripted
from .asking import (
    BLIND_PROMPT_VERSION,
    PROMPT_VERSION,
    SeatInterview,
    answered,
    goal_messages,
    goals_asked,
    load_interviews,
    probe_messages,
    probes_asked,
)

INTERVIEWED, CACHED, FAILED = "interviewed", "cached", "failed"


def respondent_for(model: str, *, blind: bool = False) -> Respondent:
    """The agent respondent of ``model``: interviewed after the episode, or (``blind``) asked before it."""
    if blind:
        version = scripted.BLIND_VERSION if llm.is_scripted(model) else BLIND_PROMPT_VERSION
    else:
        version = scripted.VERSION if llm.is_scripted(model) else PROMPT_VERSION
    respondent, _ = Respondent.objects.get_or_create(
        kind=Respondent.Kind.AGENT, user=None, model=model, label="", prompt_version=version
    )
    return respondent


def is_stored(episode_id: int, instrument_id: int, seat_position: int, model: str, *, blind: bool = False) -> bool:
    respondent = respondent_for(model, blind=blind)
    return Response.objects.filter(
        episode_id=episode_id, instrument_id=instrument_id, respondent=respondent, seat_position=seat_position
    ).exists()


def store(
    interview: SeatInterview,
    instrument_id: int,
    answers: Iterable[Answered],
    usage: llm.Usage | None,
    *,
    blind: bool = False,
) -> Response:
    """Replace this seat's interview on ``instrument_id`` with ``answers``."""
    respondent = respondent_for(interview.model, blind=blind)
    with transaction.atomic():
        Response.objects.filter(
            episode_id=interview.episode_id, instrument_id=instrument_id, respondent=respondent,
            seat_position=interview.seat_position,
        ).delete()
        response = Response.objects.create(
            episode_id=interview.episode_id, instrument_id=instrument_id, respondent=respondent,
            seat_position=interview.seat_position,
            latency_ms=usage.latency_ms if usage else None,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )
        Answer.objects.bulk_create(
            Answer(response=response, question_id=answer.asked.question_id, **answer.target_columns,
                   value=answer.value, reasoning=answer.reasoning)
            for answer in answers
        )
    return response


@dataclass
class InterviewResult:
    """One episode's interviews: how many seats answered how many instruments, or why not."""

    episode_id: int
    outcome: str = FAILED
    responses: int = 0
    cached: int = 0
    error: str = ""


async def interview_episode(episode_id: int, *, force: bool = False) -> InterviewResult:
    """Interview every agent seat of an episode on the goals and on the probes it may be asked."""
    result = InterviewResult(episode_id)
    try:
        plan = await sync_to_async(load_interviews)(episode_id)
    except Episode.DoesNotExist:
        result.error = f"episode {episode_id} does not exist"
        return result
    if not plan.has_turns:
        result.error = f"episode {episode_id} has no turns to ask about"
        return result
    goal_question = await sync_to_async(
        lambda: Question.objects.get(instrument_id=plan.goals_instrument_id, position=0).pk
    )()
    for interview in plan.seats:
        asks = [("goals", plan.goals_instrument_id, interview.goals)]
        if plan.probes_instrument_id is not None and interview.probes:
            asks.append(("probes", plan.probes_instrument_id, interview.probes))
        for kind, instrument_id, items in asks:
            if not items:
                continue
            if not force and await sync_to_async(is_stored)(
                episode_id, instrument_id, interview.seat_position, interview.model
            ):
                result.cached += 1
                continue
            if kind == "goals":
                asked = goals_asked(interview, goal_question, instrument_id)
            else:
                asked = probes_asked(interview, instrument_id)
            try:
                answers, usage = await _answers(interview, kind, asked)
            except llm.LLMError as error:
                result.error = f"seat {interview.seat_position + 1} ({interview.model}): {error}"
                return result
            await sync_to_async(store)(interview, instrument_id, answers, usage)
            result.responses += 1
    result.outcome = INTERVIEWED if result.responses or not result.cached else CACHED
    return result


async def _answers(
    interview: SeatInterview, kind: str, asked: list[Asked]
) -> tuple[list[Answered], llm.Usage | None]:
    if llm.is_scripted(interview.model):
        replies = scripted.goal_answers(interview) if kind == "goals" else scripted.probe_answers(interview)
        return answered(asked, replies), None
    messages = goal_messages(interview) if kind == "goals" else probe_messages(interview)
    reply = await ask_instrument(messages, asked, model=interview.model)
    return reply.answers, reply.usage


async def interview_episodes(
    episode_ids: Iterable[int],
    *,
    concurrency: int = 4,
    force: bool = False,
    on_result: Callable[[InterviewResult], None] | None = None,
) -> list[InterviewResult]:
    """Interview many episodes, at most ``concurrency`` at a time; one failure never stops the others."""
    return await map_bounded(
        episode_ids, lambda pk: interview_episode(pk, force=force), concurrency=concurrency, on_result=on_result
    )
