"""A run on the task queue: its episodes prepared and split into chunks, each chunk played by one task.

The tasks (``benchmark.jobs.tasks``) are thin wrappers over the functions here:

- :func:`prepare_run` plans the run, creates its missing episodes, writes its :class:`RunChunk` rows
  and queues one :func:`play_chunk` task per chunk; consumers on any machine take them.
- :func:`play_chunk` plays a chunk's episodes with the run's concurrency in one event loop
  (:func:`benchmark.runs.eventloop.run_in_loop`: the ORM calls on a thread of the chunk's own). It
  beats once a second on its chunk row, for its ``attempt`` only: a beat that touches no row means
  the chunk was queued again for another consumer, and this one stops. At each beat it reads the
  run's ``cancel_requested``: a cancel stops every consumer's chunks within two seconds, their
  episodes in flight go back to ``pending`` and nothing stored is lost.
- The last chunk to end (decided with the run's row locked) queues the finishing task
  (:mod:`.finishing`: the judges', interviews' and goal judges' passes, then the run closed).
- Stale chunks (no heartbeat for ``PARLEY_RUN_STALE_SECONDS``) are queued again as a new attempt
  (:mod:`.stale`), which resumes each episode from its next turn.
- A model that cannot be reached (the provider refuses the key, or calls fail to reach it, after the
  gateway's retries, before any model has answered the chunk) stops the run with the provider's
  message instead of failing every episode.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from ..agents import llm, loading
from ..models import Episode, RunChunk, SimulationRun, Turn
from .eventloop import run_in_loop
from .options import RunOptions, RunOptionsError
from .planning import Preparation, plan_run, prepare_episodes
from .simulation import run_episode
from .status import close, heartbeat, snapshot, unexpected
from .writer import TurnWriter

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 1.0
MAX_ERRORS_KEPT = 5
AT_WORK = (RunChunk.Status.QUEUED, RunChunk.Status.RUNNING)


class RunStopped(RuntimeError):
    """A chunk stopped its whole run (the model cannot be reached); raised so the job shows the reason."""


def chunk_size(concurrency: int) -> int:
    """Episodes per chunk: two rounds of the run's concurrency.

    With twice as many episodes as slots, each slot takes a second episode when its first ends, so the
    tail where some slots idle while the longest episodes finish is at most half the chunk's time;
    and chunks stay small enough that a run spreads over every consumer and that a chunk queued
    again after its consumer died replays little (its stored turns are never replayed).
    """
    return max(1, 2 * concurrency)


def stale_after() -> timedelta:
    return timedelta(seconds=settings.PARLEY_RUN_STALE_SECONDS)


def watch_seconds() -> float:
    """How often a run's watch looks for stale chunks: a few times per stale period, at most every 5 s."""
    return float(min(5, max(1, settings.PARLEY_RUN_STALE_SECONDS // 3)))


def task(name: str) -> Any:
    """The run's task ``name`` from ``benchmark.jobs.tasks``, found through the queue's registry (the tasks
    module imports this one, so this one names them rather than importing them)."""
    from ..jobs.queue import task_named

    found = task_named(name)
    if found is None:
        raise LookupError(f"The task {name} is not registered: benchmark.jobs.tasks was not imported.")
    return found


def locked_run(run_id: int) -> SimulationRun:
    """The run's row, locked until the transaction ends (with its team and launcher, which stay unlocked)."""
    return SimulationRun.objects.select_for_update(of=("self",)).select_related("team", "created_by").get(pk=run_id)


def run_link(run_id: int) -> str:
    return reverse("benchmark:run", args=[run_id])


# Preparing


def queue_run(run: SimulationRun) -> None:
    """Queue the task that prepares ``run`` and queues its chunks (on commit of the caller's transaction).

    If the queue cannot take it, the run is marked failed with the reason (it can be resumed later).
    """
    from ..jobs.queue import enqueue

    enqueue(
        task("prepare_run"), run.pk, team=run.team, user=run.created_by, label=f"Run {run.tag}: preparing",
        link=run_link(run.pk), on_failure=lambda job, message: close(run.pk, SimulationRun.Status.FAILED, message),
    )


def prepare_run(run_id: int) -> str:
    """Plan the run, create its missing episodes and queue its chunks; a one-line outcome for the job.

    Only one task prepares a run at a time: it takes a queued run (or one whose preparation was lost,
    its heartbeat stale and no chunk at work). Bad options fail the run with the option named.
    """
    now = timezone.now()
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update(of=("self",)).select_related("team").filter(pk=run_id).first()
        if run is None or run.done:
            return "Nothing to do: the run is gone or has ended."
        if run.cancel_requested:
            close(run.pk, SimulationRun.Status.CANCELLED, run.message or "Cancelled before a consumer took it.")
            return "The run was cancelled before it started."
        lost = (run.heartbeat_at or run.created_at) < now - stale_after()
        if run.status == SimulationRun.Status.RUNNING and not lost:
            return "Another task is preparing or playing this run."
        beating = Q(status=RunChunk.Status.RUNNING, heartbeat_at__gte=now - stale_after())
        if run.chunks.filter(beating | Q(status=RunChunk.Status.QUEUED)).exists():
            return "The run's chunks are at work already."
        SimulationRun.objects.filter(pk=run.pk).update(
            status=SimulationRun.Status.RUNNING, heartbeat_at=now, started_at=run.started_at or now,
            finished_at=None, executed_at=None, message="Preparing its episodes.",
        )
    try:
        plan = plan_run(RunOptions.from_dict(run.options), run.team, run.tag)
    except RunOptionsError as error:
        close(run.pk, SimulationRun.Status.FAILED, f"Bad options: {error}")
        raise
    try:
        preparation = prepare_episodes(plan, beat=lambda: heartbeat(run.pk))
        before = snapshot(preparation.episode_ids)
        count = queue_chunks(run, plan.total, preparation, plan.options.concurrency, before.turns, before.model_turns)
    except BaseException as error:  # re-raised: the traceback goes to the consumer's log
        close(run.pk, SimulationRun.Status.FAILED, f"The run stopped while preparing: {unexpected(error)}")
        raise
    return f"{len(preparation.to_play)} episode(s) to play in {count} chunk(s)."


def queue_chunks(
    run: SimulationRun, total: int, preparation: Preparation, concurrency: int, turns: int, model_turns: int
) -> int:
    """Replace the run's chunks with new ones for the episodes to play and queue one task each.

    The rows are written before any task is queued (the tasks are queued when this transaction
    commits), so the first chunk to end sees all the others. A run with nothing left to play is
    finished at once.
    """
    from ..jobs.queue import enqueue

    size = chunk_size(concurrency)
    groups = [preparation.to_play[start : start + size] for start in range(0, len(preparation.to_play), size)]
    now = timezone.now()
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update(of=("self",)).select_related("team", "created_by").get(pk=run.pk)
        if run.done or run.cancel_requested:
            if not run.done:
                close(run.pk, SimulationRun.Status.CANCELLED, "Cancelled before its episodes were played.")
            return 0
        run.chunks.all().delete()  # a resumed run's earlier chunks have all ended
        token = uuid.uuid4().hex
        SimulationRun.objects.filter(pk=run.pk).update(
            total=total, finished=preparation.already_finished, failed=0, heartbeat_at=now, message="",
            watch_token=token, skipped=preparation.already_finished, turns_before=turns,
            model_turns_before=model_turns, executed_at=now,
        )
        made = RunChunk.objects.bulk_create(
            RunChunk(run=run, number=number, episodes=[list(item) for item in group])
            for number, group in enumerate(groups, start=1)
        )
        for chunk in made:
            enqueue(
                task("play_run_chunk"), chunk.pk, 0, team=run.team, user=run.created_by,
                label=f"Run {run.tag}: chunk {chunk.number} of {len(made)}", link=run_link(run.pk),
            )
        if made:
            transaction.on_commit(lambda: schedule_watch(run.pk, token))
        else:
            queue_finish(run)
    return len(made)


def queue_finish(run: SimulationRun) -> None:
    from ..jobs.queue import enqueue

    enqueue(
        task("finish_run"), run.pk, team=run.team, user=run.created_by, label=f"Run {run.tag}: finishing",
        link=run_link(run.pk),
    )


# Playing a chunk


@dataclass
class ChunkState:
    """One attempt at a chunk as its event loop sees it: why it stops, and what its episodes did."""

    chunk_id: int
    run_id: int
    attempt: int
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    superseded: bool = False
    cancelled: bool = False
    stopped_run: str = ""  # the model cannot be reached: the run stops with this message
    finished: int = 0
    model_turns: int = 0  # turns a model answered in this attempt
    errors: list[str] = field(default_factory=list)

    def add_error(self, message: str) -> None:
        logger.warning("%s", message)
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(message[:500])


def play_chunk(chunk_id: int, attempt: int) -> str:
    """Play one attempt at a chunk to its end, or until it is cancelled or superseded; a one-line outcome.

    Raises :class:`RunStopped` when the model cannot be reached, after failing the run with the reason.
    """
    from ..jobs.queue import worker_name

    now = timezone.now()
    chunk = RunChunk.objects.select_related("run").filter(pk=chunk_id).first()
    if chunk is None:
        return "Nothing to do: the chunk is gone (its run was started again)."
    run = chunk.run
    if run.done or run.cancel_requested:
        if RunChunk.objects.filter(pk=chunk_id, attempt=attempt, status=RunChunk.Status.QUEUED).update(
            status=RunChunk.Status.CANCELLED, finished_at=now
        ):
            end_chunk(chunk, attempt, None)
        return "The run was cancelled before this chunk started."
    taken = RunChunk.objects.filter(pk=chunk_id, attempt=attempt, status=RunChunk.Status.QUEUED).update(
        status=RunChunk.Status.RUNNING, worker=worker_name(), started_at=now, heartbeat_at=now, finished_at=None
    )
    if not taken:
        return "Nothing to do: this attempt at the chunk was superseded or is taken."
    options = RunOptions.from_dict(run.options)
    load_gateway(options)
    state = ChunkState(chunk_id, run.pk, attempt)
    try:
        run_in_loop(_play, state, chunk.episodes, options.concurrency)
    except BaseException as error:
        if not state.superseded:
            back_to_pending(chunk.episodes)
            state.add_error(f"chunk {chunk.number}: {unexpected(error)}")
            end_chunk(chunk, attempt, RunChunk.Status.FAILED, state)
        raise
    if state.superseded:
        return "Superseded: another consumer plays this chunk now."
    back_to_pending(chunk.episodes)
    if state.stopped_run:
        stop_run(run.pk, state.stopped_run)
        end_chunk(chunk, attempt, RunChunk.Status.FAILED, state)
        raise RunStopped(state.stopped_run)
    end_chunk(chunk, attempt, RunChunk.Status.CANCELLED if state.cancelled else RunChunk.Status.DONE, state)
    return f"{state.finished} episode(s) finished" + (" before the cancel." if state.cancelled else ".")


async def _play(state: ChunkState, items: Sequence[Sequence[int]], concurrency: int) -> None:
    ids = [int(pk) for pk, _ in items]
    playable = set(
        await sync_to_async(list)(
            Episode.objects.filter(pk__in=ids, status__in=[Episode.Status.PENDING, Episode.Status.RUNNING])
            .values_list("pk", flat=True)
        )
    )
    queue = [(int(pk), int(seed)) for pk, seed in items if int(pk) in playable]
    writer = TurnWriter()

    async def player() -> None:
        while queue and not state.stop.is_set():
            episode_id, seed = queue.pop(0)
            await _play_one(state, episode_id, seed, writer)

    players = {asyncio.create_task(player()) for _ in range(max(1, min(concurrency, len(queue))))}
    beat = sync_to_async(_beat)
    pending = players
    while pending:
        _, pending = await asyncio.wait(pending, timeout=HEARTBEAT_SECONDS)
        if not state.stop.is_set():
            await beat(state)
        if state.stop.is_set():
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            break
    await writer.close()
    for task in players:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()


def _beat(state: ChunkState) -> None:
    """The chunk's heartbeat, for its attempt only; and the run's cancel, read."""
    beaten = RunChunk.objects.filter(
        pk=state.chunk_id, attempt=state.attempt, status=RunChunk.Status.RUNNING
    ).update(heartbeat_at=timezone.now())
    if not beaten:
        state.superseded = True
        state.stop.set()
        return
    run = SimulationRun.objects.filter(pk=state.run_id).values("cancel_requested", "status").first()
    if run is None or run["cancel_requested"] or run["status"] in (
        SimulationRun.Status.FINISHED, SimulationRun.Status.FAILED, SimulationRun.Status.CANCELLED
    ):
        state.cancelled = True
        state.stop.set()


async def _play_one(state: ChunkState, episode_id: int, seed: int, writer: TurnWriter) -> None:
    """Play one episode and count it; a model that cannot be reached stops the run, since every other
    episode would fail alike."""
    try:
        await run_episode(Episode(pk=episode_id), seed=seed, save_turn=partial(_save, state, writer))
    except llm.LLMRefused as error:
        state.add_error(f"episode {episode_id}: {error}")
        state.stopped_run = f"The run stopped at the first authentication error, in episode {episode_id}: {error}"
        state.stop.set()
        await sync_to_async(_count)(state, "failed")
    except llm.LLMUnavailable as error:
        state.add_error(f"episode {episode_id}: {error}")
        if state.model_turns == 0:  # no model has answered this chunk yet: it is down, not flaky
            state.stopped_run = f"The run stopped: the model cannot be reached (episode {episode_id}): {error}"
            state.stop.set()
        await sync_to_async(_count)(state, "failed")
    except llm.LLMError as error:
        state.add_error(f"episode {episode_id}: {error}")
        await sync_to_async(_count)(state, "failed")
    except asyncio.CancelledError:
        raise
    except Exception as error:  # one broken episode must not stop the run; logged with its traceback
        logger.exception("Episode %s failed", episode_id)
        state.add_error(f"episode {episode_id}: {unexpected(error)}")
        await sync_to_async(_fail_episode)(state, episode_id)
    else:
        state.finished += 1
        await sync_to_async(_count)(state, "finished")


async def _save(state: ChunkState, writer: TurnWriter, turn: Turn) -> Turn:
    stored = await writer.save(turn)
    if turn.model != llm.SCRIPTED:
        state.model_turns += 1
    return stored


def _count(state: ChunkState, outcome: str) -> None:
    """One more finished or failed episode on the chunk (this attempt only) and on the run."""
    if RunChunk.objects.filter(pk=state.chunk_id, attempt=state.attempt).update(**{outcome: F(outcome) + 1}):
        SimulationRun.objects.filter(pk=state.run_id).update(**{outcome: F(outcome) + 1})


def _fail_episode(state: ChunkState, episode_id: int) -> None:
    if RunChunk.objects.filter(pk=state.chunk_id, attempt=state.attempt).exists():
        Episode.objects.filter(pk=episode_id).update(status=Episode.Status.FAILED, finished_at=timezone.now())
        _count(state, "failed")


def back_to_pending(items: Sequence[Sequence[int]]) -> None:
    """What was in flight when the chunk stopped goes back to pending, to be resumed."""
    ids = [int(pk) for pk, _ in items]
    Episode.objects.filter(pk__in=ids, status=Episode.Status.RUNNING).update(status=Episode.Status.PENDING)


def end_chunk(chunk: RunChunk, attempt: int, status: str | None, state: ChunkState | None = None) -> None:
    """Record how this attempt at the chunk ended (``None``: already recorded) and, if it was the run's
    last chunk at work, queue the run's finishing task. Decided with the run's row locked, so exactly
    one chunk does."""
    with transaction.atomic():
        run = locked_run(chunk.run_id)
        if status is not None:
            values: dict[str, Any] = {"status": status, "finished_at": timezone.now()}
            if state is not None and state.errors:
                values["error"] = "\n".join(state.errors)
            if not RunChunk.objects.filter(pk=chunk.pk, attempt=attempt, status=RunChunk.Status.RUNNING).update(
                **values
            ):
                return
        if run.done or run.chunks.filter(status__in=AT_WORK).exists():
            return
        SimulationRun.objects.filter(pk=run.pk).update(
            message="Episodes played; finishing.", heartbeat_at=timezone.now(), watch_token=""
        )
        queue_finish(run)


def stop_run(run_id: int, message: str) -> None:
    """Fail the run with ``message``: its queued chunks are cancelled, its running ones stop at their next beat."""
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run_id)
        if run.done:
            return
        now = timezone.now()
        run.chunks.filter(status=RunChunk.Status.QUEUED).update(status=RunChunk.Status.CANCELLED, finished_at=now)
        SimulationRun.objects.filter(pk=run_id).update(
            status=SimulationRun.Status.FAILED, message=message, finished_at=now, watch_token=""
        )


def load_gateway(options: RunOptions) -> None:
    """Import litellm before the event loop starts, so no episode's loop stalls on its seconds-long import
    (a consumer normally has it loaded from its start)."""
    models = [
        options.agent_model, options.partner_model, *options.seat_model_map().values(),
        options.party_model, options.mediator_model, options.articulation_model,
    ]
    if not all(llm.is_scripted(model) for model in models if model):
        loading.preload()


def schedule_watch(run_id: int, token: str, delay: float | None = None) -> None:
    """Schedule the run's next watch (not a job on the jobs page: it is bookkeeping, every few seconds)."""
    task("watch_run").schedule(args=(run_id, token), delay=watch_seconds() if delay is None else delay)
