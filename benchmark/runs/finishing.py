"""A played run's finishing task: the judges', interviews' and goal judges' passes, then the run closed.

The last chunk of a run to end queues it (:func:`benchmark.runs.chunks.end_chunk`). It closes the
run as cancelled if it was, finished if every episode was, failed otherwise, with the summary line
on the run's row.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ..models import Episode, RunChunk, SimulationRun
from .chunks import AT_WORK, MAX_ERRORS_KEPT
from .options import NO_JUDGE, PROMEDIATE, RunOptions, RunOptionsError
from .planning import chunks, plan_run
from .scoring import evaluate_negotiation_episodes, interview_run_episodes, score_episodes
from .status import RunSummary, close, snapshot


def finish_run(run_id: int) -> str:
    """The passes over the run's finished episodes (judges, interviews, goal judges), then the run closed:
    cancelled if it was, finished if every episode was, failed otherwise. The summary line."""
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update(of=("self",)).select_related("team").filter(pk=run_id).first()
        if run is None or run.done:
            return "Nothing to do: the run has ended."
        if run.chunks.filter(status__in=AT_WORK).exists():
            return "Nothing to do yet: chunks of the run are still at work."
        SimulationRun.objects.filter(pk=run_id).update(heartbeat_at=timezone.now())
    options = RunOptions.from_dict(run.options)
    episode_ids = run_episode_ids(run, options)
    counts = snapshot(episode_ids)
    ended = list(run.chunks.order_by("number"))
    cancelled = run.cancel_requested or any(chunk.status == RunChunk.Status.CANCELLED for chunk in ended)
    if cancelled:
        status = SimulationRun.Status.CANCELLED
    elif counts.finished == run.total:
        status = SimulationRun.Status.FINISHED
    else:
        status = SimulationRun.Status.FAILED
    seconds = (timezone.now() - run.executed_at).total_seconds() if run.executed_at else 0.0
    summary = RunSummary(
        tag=run.tag,
        total=run.total,
        skipped=run.skipped,
        finished=counts.finished,
        failed=counts.failed,
        turns=counts.turns - run.turns_before,
        model_turns=counts.model_turns - run.model_turns_before,
        seconds=seconds,
        status=status,
        errors=[line for chunk in ended for line in chunk.error.splitlines() if line][:MAX_ERRORS_KEPT],
    )
    # a negotiation's judges read the consensus trace and the mediator's intelligence, not the dialogue dimensions
    if status != SimulationRun.Status.CANCELLED and options.judge_model != NO_JUDGE and options.preset == PROMEDIATE:
        summary.judged = evaluate_negotiation_episodes(run_id, episode_ids, options)
    elif status != SimulationRun.Status.CANCELLED and options.judge_model != NO_JUDGE:
        summary.judged = score_episodes(run_id, episode_ids, options)
    if status != SimulationRun.Status.CANCELLED and options.interview:
        summary.interviewed = interview_run_episodes(run_id, episode_ids, options)
    with transaction.atomic():
        locked = SimulationRun.objects.select_for_update().get(pk=run_id)
        if locked.done:
            return locked.message
        close(run_id, status, summary.line(), counts)
    return summary.line()


def run_episode_ids(run: SimulationRun, options: RunOptions) -> list[int]:
    """The run's own episodes, in plan order (a tag may also carry episodes an earlier plan made); if the
    plan no longer holds (a scenario deleted meanwhile), the episodes its chunks played."""
    try:
        planned = [item.external_id for item in plan_run(options, run.team, run.tag).episodes()]
    except RunOptionsError:
        return [int(pk) for chunk in run.chunks.all() for pk, _ in chunk.episodes]
    found: dict[str, int] = {}
    for part in chunks(planned):
        found.update(
            Episode.objects.of_team(run.team).filter(external_id__in=part).values_list("external_id", "pk")
        )
    return [found[external_id] for external_id in planned if external_id in found]
