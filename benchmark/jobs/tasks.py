"""The benchmark's tasks: what a consumer runs for simulation runs, imports and upkeep.

Each task is a thin wrapper over the function that does the work, which lives with its subject
(``benchmark.runs``, ``benchmark.import_jobs``); ``@db_task`` closes the consumer's database
connections around it. Pages and commands queue them through :func:`benchmark.jobs.queue.enqueue`.
"""

from __future__ import annotations
