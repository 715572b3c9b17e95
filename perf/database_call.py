"""CPU per chat database call on PostgreSQL: a connection per call, one kept per thread, or psycopg's pool.

Every chat message and agent turn runs its database work through ``chat.orm.database_call``, in the
event loop's thread pool. How that work gets its connection is the difference measured here: a new
connection for each call and closed after it (``DATABASE_POOL=false``, Django's default), one kept by
each thread (``DATABASE_POOL=false DATABASE_CONN_MAX_AGE=600``, persistent connections, which
Django's documentation advises against under ASGI), or one borrowed from psycopg's pool and given
back after the call (the default).

Each case runs in a fresh process against ``DATABASE_URL`` (migrated): a warm-up, then ``--calls``
calls with ``--concurrency`` in flight on one event loop. A call is one short transaction of the
chat's shape: a row locked with ``select_for_update``, a count, the commit. Printed per call: the
process's CPU (user + system, every thread), the wall time, and PostgreSQL's CPU when the server
runs on this machine (every ``postgres`` process's CPU from /proc, ended backends included through
the postmaster's children's time; anything else the server did meanwhile counts too, so compare
runs on a quiet server)::

    DATABASE_URL=postgres://... .venv/bin/python perf/database_call.py [--calls 3000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = {
    "connection per call": {"DATABASE_POOL": "false", "DATABASE_CONN_MAX_AGE": "0"},
    "connection per thread": {"DATABASE_POOL": "false", "DATABASE_CONN_MAX_AGE": "600"},
    "pool": {"DATABASE_POOL": "true", "DATABASE_CONN_MAX_AGE": ""},
}
USERNAME = "perf-database-call"


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def postgres_cpu() -> float | None:
    """CPU seconds of every ``postgres`` process on this machine, with the ended backends the postmaster
    has reaped (its children's time), or None when no PostgreSQL runs here."""
    ticks, found = 0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended while we looked
            continue
        name, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if name != "postgres":
            continue
        found = True
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
        if _name(fields[1]) != "postgres":  # the postmaster: add the backends it has reaped (cutime, cstime)
            ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK") if found else None


def _name(pid: str) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.index("(") + 1:stat.rindex(")")]


def run_case(calls: int, concurrency: int) -> dict[str, float | None]:
    """In this process (the case's settings are in its environment): time ``calls`` database calls."""
    import asyncio

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connections, transaction

    from chat.orm import database_call

    user, _ = get_user_model().objects.get_or_create(username=USERNAME)
    connections.close_all()

    def chat_shaped_call() -> int:
        with transaction.atomic():
            locked = get_user_model().objects.select_for_update().get(pk=user.pk)
            return get_user_model().objects.filter(username=locked.username).count()

    async def measure() -> dict[str, float | None]:
        for _ in range(50):
            await database_call(chat_shaped_call)()
        remaining = calls

        async def caller() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await database_call(chat_shaped_call)()

        cpu, server, started = process_cpu(), postgres_cpu(), time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(concurrency)))
        wall = time.perf_counter() - started
        cpu = process_cpu() - cpu
        server_after = postgres_cpu()
        return {
            "cpu_ms": 1000 * cpu / calls,
            "wall_ms": 1000 * wall / calls,
            "postgres_ms": None if server is None or server_after is None else 1000 * (server_after - server) / calls,
        }

    return asyncio.run(measure())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000, help="measured calls per case (default 3000)")
    parser.add_argument("--concurrency", type=int, default=8, help="calls in flight at once (default 8)")
    parser.add_argument("--case", choices=sorted(CASES), help=argparse.SUPPRESS)  # one case, in its own process
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.calls, args.concurrency)))
        return
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        parser.error("set DATABASE_URL to a migrated PostgreSQL database: the pool is PostgreSQL's")
    print(f"{args.calls} calls, {args.concurrency} in flight; load average {os.getloadavg()[0]:.2f}")
    print(f"{'case':<24}{'CPU ms/call':>14}{'wall ms/call':>14}{'PostgreSQL ms/call':>20}")
    for case, env in CASES.items():
        command = [sys.executable, __file__, "--case", case, "--calls", str(args.calls),
                   "--concurrency", str(args.concurrency)]
        result = subprocess.run(command, cwd=ROOT, env=os.environ | env, capture_output=True, text=True, check=False)
        if result.returncode:
            sys.exit(f"{case}: failed\n{result.stderr}")
        figures = json.loads(result.stdout.strip().splitlines()[-1])
        server = "n/a" if figures["postgres_ms"] is None else f"{figures['postgres_ms']:.3f}"
        print(f"{case:<24}{figures['cpu_ms']:>14.3f}{figures['wall_ms']:>14.3f}{server:>20}")


if __name__ == "__main__":
    main()
