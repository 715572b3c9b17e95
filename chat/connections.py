"""How many chat sockets one participant may hold open at once, across every server process.

A participant needs one socket per open tab, and two or three tabs are normal (a reload overlaps
the old socket for a moment). A script opening hundreds would cost a server process a database
watch and a group subscription each, so a participant may hold at most
``settings.PARLEY_CHAT_MAX_SOCKETS`` (3 unless configured); one more is refused.

Sockets are counted in the database (``ChatConnection``), not in a process's memory, so the cap
holds across several daphne processes. Each row is a **lease**: the consumer renews it every
``RENEW_EVERY`` seconds while the socket is open and deletes it on disconnect. A process that dies
never deletes its rows, so they simply stop counting once their lease runs out (``LEASE``): a
crash locks nobody out for more than a minute.

Opening is checked and recorded in one transaction that first locks the participant's row
(``select_for_update``; on SQLite every transaction takes the write lock as it begins), so two
sockets opening at the same moment are counted one after the other and never both get the last
place.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from .models import ChatConnection, Participant

LEASE = timedelta(seconds=60)
RENEW_EVERY = 20.0  # seconds; a third of the lease, so one late renewal loses nothing


def max_sockets() -> int:
    return settings.PARLEY_CHAT_MAX_SOCKETS


def open_connection(participant_pk: int, now: datetime | None = None) -> str | None:
    """Record a new open socket of the participant and return its key; None when they hold the most."""
    now = now or timezone.now()
    with transaction.atomic():
        # Lock first (see the module docstring): this orders concurrent openings. The sockets are counted
        # by a statement of their own, after the lock: PostgreSQL would read a count in the locking statement
        # from before the wait, missing the socket whose opening it waited for.
        list(Participant.objects.select_for_update().filter(pk=participant_pk).values_list("pk", flat=True))
        held = ChatConnection.objects.filter(participant_id=participant_pk).aggregate(
            live=Count("pk", filter=Q(expires_at__gt=now)), lapsed=Count("pk", filter=Q(expires_at__lte=now))
        )
        if held["lapsed"]:  # left by a process that died: they no longer count, and go
            ChatConnection.objects.filter(participant_id=participant_pk, expires_at__lte=now).delete()
        if held["live"] >= max_sockets():
            return None
        key = uuid.uuid4().hex
        ChatConnection.objects.create(participant_id=participant_pk, key=key, opened_at=now, expires_at=now + LEASE)
    return key


def renew_connection(participant_pk: int, key: str, now: datetime | None = None) -> None:
    """Extend an open socket's lease; a row lost meanwhile (the lease ran out) is recorded again."""
    now = now or timezone.now()
    renewed = ChatConnection.objects.filter(key=key).update(expires_at=now + LEASE)
    if not renewed:
        ChatConnection.objects.get_or_create(
            key=key, defaults={"participant_id": participant_pk, "opened_at": now, "expires_at": now + LEASE}
        )


def close_connection(key: str) -> None:
    """Forget a socket that closed."""
    ChatConnection.objects.filter(key=key).delete()
