"""The benchmark's tasks: what a consumer runs for simulation runs, imports and upkeep.

Each task is a thin wrapper over the function that does the work, which lives with its subject
(``benchmark.runs``, ``benchmark.import_jobs``); ``@db_task`` closes the consumer's database
connections around it. Pages and commands queue them through :func:`benchmark.jobs.queue.enqueue`.
"""

from __future__ import annotations

import logging

from huey import crontab
from huey.contrib.djhuey import db_periodic_task, db_task

from .queue import named, retryable

logger = logging.getLogger(__name__)
upkeep = logging.getLogger("parley.upkeep")  # what the periodic tasks did, in the consumer's log

# Each task imports its work when it runs, so a consumer starts without loading every parser.

# Simulation runs (benchmark.runs.chunks, which finds them by name through ``named``). Their outcome
# goes to the consumer's log and the run's row, not to Huey's result store, which nothing reads. A chunk is not
# retried by Huey: a chunk whose consumer died is queued again as a new attempt by the stale-chunk check,
# and one that failed says why on its run; the jobs page offers no retry for it (resume the run from its page).


@retryable
@db_task()
def prepare_run(run_id: int) -> None:
    """Plan a run, create its episodes and queue its chunks."""
    from ..runs import chunks

    logger.info("%s", chunks.prepare_run(run_id))


@named
@db_task()
def play_run_chunk(chunk_id: int, attempt: int) -> None:
    """Play one attempt at one chunk of a run's episodes."""
    from ..runs import chunks

    logger.info("%s", chunks.play_chunk(chunk_id, attempt))


@retryable
@db_task()
def finish_run(run_id: int) -> None:
    """The judges', interviews' and goal judges' passes over a played run, then the run closed."""
    from ..runs import finishing

    logger.info("%s", finishing.finish_run(run_id))


@named
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


# --- imports ------------------------------------------------------------------------------------


@named
@db_task()
def import_upload(import_id: int) -> None:
    """The dry run or the import of upload ``import_id``, whichever step it is at (``import_jobs.jobs.run_job``).

    Not retried: a file that failed has failed, and a step whose consumer was lost is uploaded again.
    """
    from ..import_jobs.jobs import run_job

    run_job(import_id)


@db_periodic_task(crontab(minute="7"))
def remove_expired_imports() -> int:
    """Hourly: delete the uploads nobody will import, and end the imports whose task was lost a day ago
    (``import_jobs.jobs.remove_expired``)."""
    from ..import_jobs.jobs import remove_expired

    ended = remove_expired()
    upkeep.info("Upkeep: expired or ended %d import(s) and deleted their uploads", ended)
    return ended


# --- models answering SHREC's task items ------------------------------------------------------------


@named
@db_task()
def answer_shrec_items(item_ids: list[int], run: dict) -> None:
    """One model answering one chunk of SHREC task items (``shrec.running.answer_chunk``).

    Not retryable from the jobs page: ``evaluate --shrec`` run again answers only what is missing.
    """
    from ..shrec import running

    logger.info("%s", running.answer_chunk(item_ids, run))
