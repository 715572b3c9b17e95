"""The blind test: each agent answers the probes from the scenario alone, before any interaction.

AgentSense sets the agents' accuracy on the probes after a conversation against a baseline in which
the same questions are answered before it, from the scenario information only: what inference in
the conversation adds is the difference. Here every agent seat of an episode is asked the probes it
may be asked (as in its interview) by its own model, told what it knew before the talk (the
scenario, its profile, goals, reason and private knowledge, the others as the relationship shows
them) and no transcript. The answers are ``Response`` rows of the probes instrument by an agent
respondent whose prompt version starts with ``blind-`` (``blind-1``; the scripted model's
``scripted-blind-1``, whose answers are word-overlap heuristics, labelled), ``seat_position`` the
seat asked. Stored answers are kept unless ``force``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from asgiref.sync import sync_to_async

from ...agents import llm
from ...agents.batches import map_bounded
from ...agents.respondent import ask_instrument
from ...models import Episode
from . import scripted
from .asking import SeatInterview, answered, load_interviews, probe_messages, probes_asked
from .running import CACHED, INTERVIEWED, InterviewResult, is_stored, store


def before_the_talk(interview: SeatInterview) -> SeatInterview:
    """The seat as it was before anyone spoke: no history, nothing heard from the others."""
    return dataclasses.replace(interview, context=dataclasses.replace(interview.context, history=()), about_lines={})


async def blind_test_episode(episode_id: int, *, force: bool = False) -> InterviewResult:
    """Every agent seat of the episode answers its probes without the transcript."""
    result = InterviewResult(episode_id)
    try:
        plan = await sync_to_async(load_interviews)(episode_id)
    except Episode.DoesNotExist:
        result.error = f"episode {episode_id} does not exist"
        return result
    if plan.probes_instrument_id is None:
        result.error = f"episode {episode_id}: its scenario has no probes to ask"
        return result
    for interview in map(before_the_talk, plan.seats):
        if not interview.probes:
            continue
        if not force and await sync_to_async(is_stored)(
            episode_id, plan.probes_instrument_id, interview.seat_position, interview.model, blind=True
        ):
            result.cached += 1
            continue
        asked = probes_asked(interview, plan.probes_instrument_id)
        if llm.is_scripted(interview.model):
            answers, usage = answered(asked, scripted.blind_probe_answers(interview)), None
        else:
            try:
                reply = await ask_instrument(probe_messages(interview, blind=True), asked, model=interview.model)
            except llm.LLMError as error:
                result.error = f"seat {interview.seat_position + 1} ({interview.model}): {error}"
                return result
            answers, usage = reply.answers, reply.usage
        await sync_to_async(store)(interview, plan.probes_instrument_id, answers, usage, blind=True)
        result.responses += 1
    result.outcome = INTERVIEWED if result.responses or not result.cached else CACHED
    return result


async def blind_test_episodes(
    episode_ids: Iterable[int],
    *,
    concurrency: int = 4,
    force: bool = False,
    on_result: Callable[[InterviewResult], None] | None = None,
) -> list[InterviewResult]:
    """The blind test for many episodes, at most ``concurrency`` at a time; one failure never stops the others."""
    return await map_bounded(
        episode_ids, lambda pk: blind_test_episode(pk, force=force), concurrency=concurrency, on_result=on_result
    )
