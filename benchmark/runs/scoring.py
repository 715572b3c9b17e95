"""The passes over a run's finished episodes, once they are played: the judges', then the interviews
(each agent on the goals and probes, then the run's judges on every goal: AgentSense's three perspectives)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from django.utils import timezone

from ..agents import llm
from ..evaluation import goal_judge, judge
from ..evaluation.interviews import running as interviews
from ..models import Episode, SimulationRun
from .eventloop import run_in_loop
from .options import NO_JUDGE, RunOptions
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
        results += run_in_loop(judge.evaluate_episodes, chunk, models=models, concurrency=options.concurrency)
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


def evaluate_negotiation_episodes(run_id: int, episode_ids: Sequence[int], options: RunOptions) -> str:
    """The ProMediate judges' pass (``benchmark.evaluation.promediate``: attitudes, pair agreement, topic
    tags, mediator intelligence) over the run's finished negotiations, with each judge model; cached per
    judge and prompt version. A one-line outcome."""
    from ..evaluation.promediate import passes

    models = judge.judge_models(options.judge_model or llm.model_for("judge"))
    finished = [
        pk for chunk in chunks(episode_ids)
        for pk in Episode.objects.filter(pk__in=chunk, status=Episode.Status.FINISHED).values_list("pk", flat=True)
    ]
    SimulationRun.objects.filter(pk=run_id).update(
        message=f"Negotiations played; {', '.join(models)} reading the consensus of {len(finished)} of them.",
        heartbeat_at=timezone.now(),
    )
    results = []
    for model in models:
        for pk in finished:  # one at a time, with a heartbeat after each, so the run never looks lost
            results += run_in_loop(
                passes.evaluate_negotiations, [pk], model=model, concurrency=max(1, options.concurrency)
            )
            heartbeat(run_id)
    outcomes = Counter(result.outcome for result in results)
    line = (
        f"ProMediate judges {', '.join(models)}: {outcomes[passes.EVALUATED]} evaluated, "
        f"{outcomes[passes.CACHED]} already evaluated, {outcomes[passes.FAILED]} failed."
    )
    failures = [result for result in results if result.outcome == passes.FAILED]
    if failures:
        line += f" First error (episode {failures[0].episode_id}): {failures[0].error}"
    return line


def interview_run_episodes(run_id: int, episode_ids: Sequence[int], options: RunOptions) -> str:
    """Interview the agents of the run's finished episodes, then have the run's judges answer every goal
    (unless the run has no judge); stored answers are kept. A one-line outcome."""
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
        results += run_in_loop(interviews.interview_episodes, chunk, concurrency=options.concurrency)
        heartbeat(run_id)
    outcomes = Counter(result.outcome for result in results)
    line = (
        f"Interviews: {outcomes[interviews.INTERVIEWED]} episode(s) interviewed, {outcomes[interviews.CACHED]} "
        f"already interviewed, {outcomes[interviews.FAILED]} failed."
    )
    failures = [result for result in results if result.outcome == interviews.FAILED]
    if failures:
        line += f" First interview error (episode {failures[0].episode_id}): {failures[0].error}"
    if options.judge_model != NO_JUDGE:
        line += " " + judge_run_goals(run_id, finished, options)
    return line


def judge_run_goals(run_id: int, finished: Sequence[int], options: RunOptions) -> str:
    """The run's judges answer every goal of its finished episodes that have goals; a one-line outcome."""
    models = judge.judge_models(options.judge_model or llm.model_for("judge"))
    with_goals = [
        pk for chunk in chunks(list(finished))
        for pk in Episode.objects.filter(pk__in=chunk, scenario__roles__goals__isnull=False)
        .distinct().values_list("pk", flat=True)
    ]
    results: list[goal_judge.GoalJudgement] = []
    batch = max(1, options.concurrency) * 2
    for start in range(0, len(with_goals), batch):
        chunk = with_goals[start : start + batch]
        results += run_in_loop(goal_judge.judge_goals, chunk, models, concurrency=options.concurrency)
        heartbeat(run_id)
    outcomes = Counter(result.outcome for result in results)
    line = (
        f"Goal judges {', '.join(models)}: {outcomes[goal_judge.JUDGED]} judged, {outcomes[goal_judge.CACHED]} "
        f"already judged, {outcomes[goal_judge.FAILED]} failed."
    )
    failures = [result for result in results if not result.ok]
    if failures:
        line += f" First goal-judge error (episode {failures[0].episode_id}): {failures[0].error}"
    return line
