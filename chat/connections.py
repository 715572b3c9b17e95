"""How many chat sockets one participant may hold open at once, across every server process.

A participant needs one socket per open tab, and two or three tabs are normal (a reload overlaps
the old socket for a moment). A script opening hundreds would cost a server process a database
watch and a group subscription each, so a participant may hold at most
``settings.PARLEY_CHAT_MAX_SOCKETS`` (3 unless configured); one more is refused.

Sockets are counted in the database (``ChatConnection``), not in a process's memory, so the cap
holds across several daphne processes. Each row is a **lease** held by the server process that
opened the socket (its ``server`` name): the row is deleted on disconnect, and while the socket is
open the process renews it. A process that dies never deletes its rows, so they simply stop
counting once their lease runs out (``LEASE``): a crash locks nobody out for more than a minute,
and the next renewal of any process deletes them.

The leases are renewed once per process, not once per socket (``Leases``): every ``RENEW_EVERY``
seconds one UPDATE extends every row of the process, so 200 open sockets cost one statement per 20 s,
not ten a second. The process knows its open sockets (it keeps their keys in memory), so the
renewal puts its rows right when the count is off: a row lost meanwhile (the database was away for
longer than the lease, and the participant's next opening deleted it as lapsed) is recorded again,
and a row whose socket closed while the database was away is deleted, rather than renewed for as
long as the process lives.

Opening is checked and recorded in one transaction that first locks the participant's row
(``select_for_update``; on SQLite every transaction takes the write lock as it begins), so two
sockets opening at the same moment are counted one after the other and never both get the last
place; the count and the new row are one statement.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from .models import ChatConnection, Participant
from .orm import database_call

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=60)
RENEW_EVERY = 20.0  # seconds; a third of the lease, so one late renewal loses nothing


def max_sockets() -> int:
    return settings.PARLEY_CHAT_MAX_SOCKETS


def open_connection(
    participant_pk: int, server: str, now: datetime | None = None, *, locked: bool = False
) -> str | None:
    """Record a new open socket of the participant, held by ``server``, and return its key; None when they
    hold the most. ``locked``: the caller's transaction has locked the participant's row already (the
    socket's finding them did, ``chat.consumers.open_socket``)."""
    now = now or timezone.now()
    key = uuid.uuid4().hex
    with transaction.atomic(savepoint=False):  # in the caller's transaction, if any, without a savepoint
        # Lock first (see the module docstring): this orders concurrent openings. The sockets are counted
        # in the statement that records the new one, after the lock: PostgreSQL would read a count in the
        # locking statement from before the wait, missing the socket whose opening it waited for.
        if not locked:
            list(Participant.objects.select_for_update().filter(pk=participant_pk).values_list("pk", flat=True))
        recorded = _record_if_room(ChatConnection(
            participant_id=participant_pk, key=key, server=server, opened_at=now, expires_at=now + LEASE
        ), now)
    return key if recorded else None


def _record_if_room(row: ChatConnection, now: datetime) -> bool:
    """Insert ``row`` unless its participant holds the most live sockets already, in one statement: an
    ``INSERT … SELECT`` whose ``WHERE`` counts them (the ORM's inserts take values only)."""
    meta, quote = ChatConnection._meta, connection.ops.quote_name
    fields = [meta.get_field(name) for name in ("participant", "key", "server", "opened_at", "expires_at")]
    values = [field.get_db_prep_save(getattr(row, field.attname), connection) for field in fields]
    participant, expires_at = quote(fields[0].column), quote(fields[-1].column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
            f"SELECT {', '.join(['%s'] * len(fields))} WHERE (SELECT COUNT(*) FROM {quote(meta.db_table)} "
            f"WHERE {participant} = %s AND {expires_at} > %s) < %s",
            [*values, values[0], fields[-1].get_db_prep_value(now, connection), max_sockets()],
        )
        return cursor.rowcount == 1


def renew_connections(server: str, held: dict[str, int], unclosed: frozenset[str]) -> set[str]:
    """Extend the lease of every row of ``server`` in one statement, and put its rows right if the count is off.

    ``held`` maps the keys of the sockets the server holds open to their participants; ``unclosed`` are
    sockets it closed whose row it could not delete then. Returns the keys recorded again (lost rows).
    """
    now = timezone.now()
    # The rows of sockets closed while the database was away, and those of any process that died: their leases
    # ran out, so they stopped counting then (``_record_if_room``), and go now. This process's own rows that ran
    # out (the database was away) are renewed instead.
    ChatConnection.objects.filter(Q(key__in=unclosed) | Q(expires_at__lte=now) & ~Q(server=server)).delete()
    renewed = ChatConnection.objects.filter(server=server).update(expires_at=now + LEASE)
    if renewed >= len(held):
        return set()
    lost = held.keys() - set(ChatConnection.objects.filter(server=server).values_list("key", flat=True))
    # A participant deleted meanwhile took their rows with them: there is nothing to record for them.
    present = set(Participant.objects.filter(pk__in={held[key] for key in lost}).values_list("pk", flat=True))
    recorded = {key for key in lost if held[key] in present}
    ChatConnection.objects.bulk_create(
        [
            ChatConnection(participant_id=held[key], key=key, server=server, opened_at=now, expires_at=now + LEASE)
            for key in recorded
        ],
        ignore_conflicts=True,
    )
    return recorded


def close_connection(key: str) -> None:
    """Forget a socket that closed."""
    ChatConnection.objects.filter(key=key).delete()


def server_name() -> str:
    """A name for one server process, unique across processes and machines."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


class Leases:
    """The open chat sockets of one server process and the task that renews their leases.

    It lives on the process's event loop (``leases()``): the renewal runs as a task of that loop while
    a socket is open, and ends by itself once none is.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.server = server_name()
        self.held: dict[str, int] = {}  # the key of each open socket, and its participant
        self.unclosed: set[str] = set()  # sockets closed whose row could not be deleted (database away)
        self.renewer: asyncio.Task | None = None

    def hold(self, key: str, participant_pk: int) -> None:
        """Keep renewing the lease of a socket recorded under this process's name (``open_connection``)."""
        self.held[key] = participant_pk
        self._start_renewing()

    async def close(self, key: str) -> None:
        """Forget a socket that closed; its row is deleted now, or by the next renewal if the database is away."""
        self.held.pop(key, None)
        try:
            await database_call(close_connection)(key)
        except Exception:
            logger.exception("could not delete the row of chat socket %s; the next renewal will", key)
            self.unclosed.add(key)
            self._start_renewing()

    async def renew(self) -> None:
        """Renew every lease of this process (``renew_connections``)."""
        unclosed = frozenset(self.unclosed)
        recorded = await database_call(renew_connections)(self.server, dict(self.held), unclosed)
        self.unclosed -= unclosed
        # A socket that closed while its lost row was recorded again: that row goes at the next renewal.
        self.unclosed |= recorded - self.held.keys()

    def _start_renewing(self) -> None:
        if self.renewer is None:
            self.renewer = self.loop.create_task(self._keep_renewing())

    async def _keep_renewing(self) -> None:
        try:
            while True:
                await asyncio.sleep(RENEW_EVERY)
                if not (self.held or self.unclosed):
                    return
                try:
                    await self.renew()
                except Exception:  # e.g. the database restarting: the next renewal tries again
                    logger.exception("could not renew the chat sockets of %s", self.server)
        finally:
            self.renewer = None


_leases: Leases | None = None


def leases() -> Leases:
    """This process's open sockets, on the running event loop.

    A server process runs one loop for its life; tests run each on a loop of its own, so a new loop
    starts a new set (and a new server name) rather than reuse a task of a closed loop.
    """
    global _leases
    loop = asyncio.get_running_loop()
    if _leases is None or _leases.loop is not loop:
        _leases = Leases(loop)
    return _leases
