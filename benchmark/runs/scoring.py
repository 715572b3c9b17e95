"""The passes over a run's finished episodes, once they are played: the judges', then the interviews."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from asgiref.sync import async_to_sync
from django.utils import timezone

from ..agents import llm
from ..evaluation import judge
from ..evaluation.interviews import running as interviews
from ..models import Episode, SimulationRun
from .options import RunOptions
from .planning import chunks
from .status import heartbeat


def score_episodes(run_id: int, episode_ids: Sequence[int], options: RunOptions) -> str:
    """Have the run's judges score its finished episodes (cached ones are skipped); a one-line outcome.

    The run stays ``running`` meanwhile and its message says so, so the page keeps polling.
    """
    models = judge.judge_models(options.judge_model or llm.model_for("judge"))
    judges = f"judge {models[0]} is" if len(models) == 1 else f"judges {', '.join(models)} are"
    finished = [
        pk for chunk in chunks(episode_ids)
        for pk in Episode.objects.filter(pk__in=chunk, status=Episode.Status.FINISHED).values_list("pk", flat=True)
    ]
    SimulationRun.objects.filter(pk=run_id).update(
        message=f"Episodes played; the {judges} scoring {len(finished)} of them.", heartbeat_at=timezone.now()
    )
    results: list[judge.JudgeResult] = []
    batch = max(1, options.concurrency) * 2  # a heartbeat between batches keeps the run from looking lost
    for start in range(0, len(finished), batch):
        chunk = finished[start : start + batch]
        results += async_to_sync(judge.evaluate_episodes)(chunk, models=models, concurrency=options.concurrency)
        heartbeat(run_id)
    outcomes = Counter(result.outcome for result in results)
    line = (
        f"{'Judge' if len(models) == 1 else 'Judges'} {', '.join(models)}: {outcomes[judge.SCORED]} scored, "
        f"{outcomes[judge.CACHED]} already scored, {outcomes[judge.FAILED]} failed."
    )
    failures = [result for result in results if not result.ok]
    if failures:
        line += f" First judge error (episode {failures[0].episode_id}): {failures[0].error}"
    return line


def interview_run_episodes(run_id: int, episode_ids: Sequence[int], options: RunOptions) -> str:
    """Interview the agents of the run's finished episodes (stored interviews are kept); a one-line outcome."""
    finished = [
        pk for chunk in chunks(episode_ids)
        for pk in Episode.objects.filter(pk__in=chunk, status=Episode.Status.FINISHED).values_list("pk", flat=True)
    ]
    SimulationRun.objects.filter(pk=run_id).update(
        message=f"Episodes played; the agents of {len(finished)} of them are being interviewed.",
        heartbeat_at=timezone.now(),
    )
    results: list[interviews.InterviewResult] = []
    batch = max(1, options.concurrency) * 2
    for start in range(0, len(finished), batch):
        chunk = finished[start : start + batch]
        results += async_to_sync(interviews.interview_episodes)(chunk, concurrency=options.concurrency)
        heartbeat(run_id)
    outcomes = Counter(result.outcome for result in results)
    line = (
        f"Interviews: {outcomes[interviews.INTERVIEWED]} episode(s) interviewed, {outcomes[interviews.CACHED]} "
        f"already interviewed, {outcomes[interviews.FAILED]} failed."
    )
    failures = [result for result in results if result.outcome == interviews.FAILED]
    if failures:
        line += f" First interview error (episode {failures[0].episode_id}): {failures[0].error}"
    return line
