"""The benchmark's tasks: what a consumer runs for simulation runs, imports and upkeep.

Each task is a thin wrapper over the function that does the work, which lives with its subject
(``benchmark.runs``, ``benchmark.import_jobs``); ``@db_task`` closes the consumer's database
connections around it. Pages and commands queue them through :func:`benchmark.jobs.queue.enqueue`.
"""

from __future__ import annotations

import logging

from huey import crontab
from huey.contrib.djhuey import db_periodic_task, db_task

from .queue import register

logger = logging.getLogger(__name__)

# Simulation runs (benchmark.runs.chunks, which finds them by name through ``register``). Their outcome
# goes to the consumer's log and the run's row, not to Huey's result store, which nothing reads. A chunk is not
# retried by Huey: a chunk whose consumer died is queued again as a new attempt by the stale-chunk check,
# and one that failed says why on its run (retried from the jobs page, a chunk's task does nothing: resume
# the run from its page instead).


@register
@db_task()
def prepare_run(run_id: int) -> None:
    """Plan a run, create its episodes and queue its chunks."""
    from ..runs import chunks

    logger.info("%s", chunks.prepare_run(run_id))


@register
@db_task()
def play_run_chunk(chunk_id: int, attempt: int) -> None:
    """Play one attempt at one chunk of a run's episodes."""
    from ..runs import chunks

    logger.info("%s", chunks.play_chunk(chunk_id, attempt))


@register
@db_task()
def finish_run(run_id: int) -> None:
    """The judges', interviews' and goal judges' passes over a played run, then the run closed."""
    from ..runs import finishing

    logger.info("%s", finishing.finish_run(run_id))


@register
@db_task()
def watch_run(run_id: int, token: str) -> None:
    """Every few seconds while a run's chunks are at work: queue its stale chunks again."""
    from ..runs import stale

    stale.watch_run(run_id, token)


@db_periodic_task(crontab())
def requeue_stale_chunks() -> None:
    """Every minute (Huey's finest period): stale chunks of every run, and lost run tasks, queued again."""
    from ..runs import stale

    logger.info("Stale chunks queued again: %s", stale.requeue_stale_chunks())
