"""Interviewing episodes: every agent seat on the goals and on its probes, the answers stored as rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.db import transaction

from ...agents import llm
from ...agents.batches import map_bounded
from ...models import Answer, Episode, Question, Respondent, Response
from . import scripted
from .asking import (
    BLIND_PROMPT_VERSION,
    LETTERS,
    PROMPT_VERSION,
    SeatInterview,
    ask,
    goal_messages,
    load_interviews,
    probe_messages,
)
from .instruments import NO, YES

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
    rows: Iterable[tuple[int, int | None, str, str]],
    usage: llm.Usage | None,
    *,
    blind: bool = False,
) -> Response:
    """Replace this seat's interview on ``instrument_id`` with ``rows`` of (question, goal, value, reasoning)."""
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
            Answer(response=response, question_id=question, goal_id=goal, value=value, reasoning=reasoning)
            for question, goal, value, reasoning in rows
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
            try:
                answers, usage = await _answers(interview, kind)
            except llm.LLMError as error:
                result.error = f"seat {interview.seat_position + 1} ({interview.model}): {error}"
                return result
            if kind == "goals":
                rows = [(goal_question, item.goal_id, *answers[item.key]) for item in interview.goals]
            else:
                rows = [
                    (item.question_id, None, str(LETTERS.index(answers[item.key][0])), answers[item.key][1])
                    for item in interview.probes
                ]
            await sync_to_async(store)(interview, instrument_id, rows, usage)
            result.responses += 1
    result.outcome = INTERVIEWED if result.responses or not result.cached else CACHED
    return result


async def _answers(interview: SeatInterview, kind: str) -> tuple[dict[str, tuple[str, str]], llm.Usage | None]:
    if llm.is_scripted(interview.model):
        if kind == "goals":
            return scripted.goal_answers(interview), None
        return scripted.probe_answers(interview), None
    if kind == "goals":
        return await ask(goal_messages(interview), interview.model, {item.key: (YES, NO) for item in interview.goals})
    allowed = {item.key: tuple(LETTERS[: len(item.options)]) for item in interview.probes}
    return await ask(probe_messages(interview), interview.model, allowed)


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
