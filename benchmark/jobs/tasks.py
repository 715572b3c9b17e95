"""The benchmark's tasks: what a consumer runs for simulation runs, imports and upkeep.

Each task is a thin wrapper over the function that does the work, which lives with its subject
(``benchmark.runs``, ``benchmark.import_jobs``); ``@db_task`` closes the consumer's database
connections around it. Pages and commands queue them through :func:`benchmark.jobs.queue.enqueue`.
"""

from __future__ import annotations

import logging

from huey import crontab
from huey.contrib.djhuey import db_periodic_task, db_task

upkeep = logging.getLogger("parley.upkeep")  # what the periodic tasks did, in the consumer's log

# Each task imports its work when it runs, so a consumer starts without loading every parser.

# --- imports ------------------------------------------------------------------------------------


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
