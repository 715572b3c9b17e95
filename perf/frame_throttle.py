"""What one ``chat.throttle.allow_frame`` call costs: it runs on every websocket frame and every socket opened.

Each case runs in a fresh process: the cache Redis (``REDIS_URL``, as deployed) or the embedded
default's in-process cache (no ``REDIS_URL``), with the process's one sync thread idle or busy. Busy
means ``--busy`` coroutines keep handing it 1 ms jobs through ``sync_to_async(thread_sensitive=True)``,
as Channels' session and auth middleware and every ``database_sync_to_async`` call do under load: a
counter that goes through that thread waits behind them. Printed per call, after a warm-up: the
wall time of ``--calls`` calls made one after another on one event loop, and with the thread idle
the process's CPU (user + system, every thread; with it busy, the jobs' own hand-offs would count)::

    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python perf/frame_throttle.py [--calls 2000] [--busy 4]
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


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_case(calls: int, busy: int) -> dict[str, float]:
    """In this process (the case's cache is in its environment): time ``calls`` frames."""
    import asyncio

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from asgiref.sync import sync_to_async

    from chat.throttle import allow_frame

    participant = 1_000_000_000 + os.getpid()  # a count of its own, which the window's expiry removes

    async def measure() -> dict[str, float]:
        stop = asyncio.Event()

        async def occupy_sync_thread() -> None:
            while not stop.is_set():
                await sync_to_async(time.sleep, thread_sensitive=True)(0.001)

        occupiers = [asyncio.create_task(occupy_sync_thread()) for _ in range(busy)]
        for _ in range(50):
            await allow_frame(participant)
        cpu, started = process_cpu(), time.perf_counter()
        for _ in range(calls):
            await allow_frame(participant)
        wall, cpu = time.perf_counter() - started, process_cpu() - cpu
        stop.set()
        await asyncio.gather(*occupiers)
        return {"wall_ms": 1000 * wall / calls, "cpu_ms": 1000 * cpu / calls}

    return asyncio.run(measure())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="measured calls per case (default 2000)")
    parser.add_argument("--busy", type=int, default=4, help="jobs queued for the sync thread when busy (default 4)")
    parser.add_argument("--case", action="store_true", help=argparse.SUPPRESS)  # one case, in its own process
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.calls, args.busy)))
        return
    caches = {"locmem": {k: v for k, v in os.environ.items() if k != "REDIS_URL"}}
    if os.environ.get("REDIS_URL"):
        caches = {"redis": dict(os.environ)} | caches
    else:
        print("REDIS_URL is not set: the in-process cache only")
    print(f"{args.calls} calls a case; load average {os.getloadavg()[0]:.2f}")
    print(f"{'cache':<8}{'sync thread':<14}{'wall ms/call':>14}{'CPU ms/call':>14}")
    for cache, env in caches.items():
        for busy in (0, args.busy):
            command = [sys.executable, __file__, "--case", "--calls", str(args.calls), "--busy", str(busy)]
            result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
            if result.returncode:
                sys.exit(f"{cache}: failed\n{result.stderr}")
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            thread = f"{busy} jobs queued" if busy else "idle"
            cpu = "" if busy else f"{figures['cpu_ms']:.3f}"
            print(f"{cache:<8}{thread:<14}{figures['wall_ms']:>14.3f}{cpu:>14}")


if __name__ == "__main__":
    main()
