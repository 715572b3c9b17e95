"""The chat's upkeep on the task queue: closing the chats that went quiet, every minute.

It runs on the one consumer that runs periodic tasks (the others start with ``--no-periodic``) and
logs what it did; ``manage.py end_idle_chats`` stays for operators, and does the same.

The chat's leases need no upkeep. An agent's reply lease (``Participant.agent_lease_until``) that ran
out is simply taken by the next process that claims it (``chat.agent_turn.claim_lease`` accepts an
expired one), and a chat socket's row (``ChatConnection``) whose lease ran out stops counting at
once and is deleted by the next renewal of any server process (``chat.connections.renew_connections``).
"""

from __future__ import annotations

import logging
from collections import Counter

from huey import crontab
from huey.contrib.djhuey import db_periodic_task

upkeep = logging.getLogger("parley.upkeep")  # what the periodic tasks did, in the consumer's log


@db_periodic_task(crontab(minute="*"))
def end_idle_chats() -> int:
    """Every minute: end every chat quiet past its study's inactivity timeout (``chat.lifecycle.end_idle_chats``)."""
    from .lifecycle import end_idle_chats as end_them

    ended = end_them()
    per_study = Counter(participant.study.slug for participant in ended)
    upkeep.info(
        "Upkeep: ended %d idle chat(s)%s", len(ended),
        "".join(f"; {slug}: {count}" for slug, count in sorted(per_study.items())),
    )
    return len(ended)
