"""The annotator's tasks: a large study's report bundle, and the upkeep of files kept for a while.

Each is a thin wrapper over the work, which lives with its subject and is imported when the task
runs, so a consumer starts without loading the report's statistics. The periodic ones run on the one
consumer that runs periodic tasks (the others start with ``--no-periodic``) and log what they did.

Lapsed annotation leases need no upkeep: a claim whose lease ran out frees its slot the moment it
runs out, since every reader counts only live claims (``annotator.assignment.live``), and its
annotator's next autosave takes it back or releases it (``annotator.assignment.renew``). Nothing is
stored that waits to be released.
"""

from __future__ import annotations

import logging

from huey import crontab
from huey.contrib.djhuey import db_periodic_task, db_task

upkeep = logging.getLogger("parley.upkeep")  # what the periodic tasks did, in the consumer's log


@db_task()
def build_report_bundle(bundle_id: int) -> None:
    """Build the ZIP of report bundle ``bundle_id`` (``annotator.reports.bundles.build_bundle``)."""
    from .reports.bundles import build_bundle

    build_bundle(bundle_id)


@db_periodic_task(crontab(minute="17"))
def remove_old_report_files() -> int:
    """Hourly: delete the report files that no ready bundle names any more."""
    from .reports.bundles import remove_orphan_files

    removed = remove_orphan_files()
    upkeep.info("Upkeep: deleted %d old report bundle file(s)", removed)
    return removed


@db_periodic_task(crontab(minute="27"))
def remove_expired_rating_uploads() -> int:
    """Hourly: delete the ratings files kept for an import nobody confirmed within a day."""
    from .external_ratings.uploads import remove_expired

    removed = remove_expired()
    upkeep.info("Upkeep: deleted %d expired ratings upload(s)", removed)
    return removed
