"""How much time the chat platform adds to each message under load, and whether any turn is lost or doubled.

N participants (default 200) chat at the same time, each sending M messages (default 5) and then
leaving, over real websockets, against the real ASGI application served by two daphne processes
(``--servers``) that share PostgreSQL and a Redis channel layer, as a deployment with several
server processes does. Each socket goes to a server process drawn at random, and so does every
reconnect. The agent is a language model (``openai/fake-model``) behind ``perf/
chat_load_model.py``, a fake OpenAI-compatible server that waits a fixed latency (0.3 s) and then
streams its reply word by word (one word every 0.02 s): the whole LLM path runs (the gateway,
litellm, streaming, JSON parsing), only the model is fake.

A participant connects (arrivals are spread evenly over ``--ramp`` seconds), waits for its turn
(half the participants play the second seat, so the agent opens their chat), thinks for 1 to 3 s
(typing is left out: real people take longer, which would only lighten the load), sends an
``act`` with a fresh ``client_id`` and waits for the ``ack`` and the agent's stored ``turn``.
With probability ``--drop`` (0.1) the connection is cut by a TCP reset right after sending; the
participant reconnects to a random process and resends with the same ``client_id`` unless the
new ``history`` already holds the message, as the page does (``--resend always``: every time).

It prints, over the messages whose connection was not cut:

- **ack latency**: send to ``ack`` (the turn is committed before the ack; pure platform);
- **platform overhead**: send to the agent's final ``turn``, minus the model's own time for the
  request that answered that very message, as the fake server measured it from reading the
  request to writing the last byte of the stream (so any wait inside the model is the model's,
  not the platform's). The nominal model time (latency + words × interval) is printed beside it.

Then the database check, from the Turn table: per episode, the participant's turns stored against
the ``client_id`` s sent (lost: sent, never stored; duplicated: a client id or a message text stored
twice), exactly one agent turn per participant message (plus the opening one when the agent
speaks first), turn indices contiguous from 0 with the seats alternating, and every episode ended
by the participant leaving. It also counts what the pages saw: acks naming another index than
the stored one, and streamed replies that differed from the stored turn.

The server processes start fresh, and each one's first chat message is timed before the run:
send to the agent's stored reply, minus the model's own time (a fresh process's one-off costs,
such as importing litellm, land there; the goal is a second at most). After the run, the figures
include the CPU each part used (daphne, the PostgreSQL backends of the benchmark's database, Redis,
and whatever else the machine did meanwhile: other people's work makes the figures worse, so it is
printed too, with the load average), the SQL statements the servers sent (each daphne serves
``perf/chat_load_asgi.py``, which counts the statements of Django's cursors in that process and
tells the benchmark over a side path), both per answered message, the messages the channel layer
reported dropping, and for every session that did not finish, a ``failures.jsonl`` with what its
page saw next to what was stored.

**Processes and machines.** ``--machines M`` spreads the ``--servers`` over M process groups,
each with its own ``PARLEY_VAR_DIR``, as M machines sharing PostgreSQL and Redis would run them.
``--sweep`` runs, per configuration (default ``1 2 4 2x2``: one, two and four daphne on one
machine, and two on two), fresh servers and a series of runs with more or fewer sessions at the
same think time, for the largest offered load whose p99 overhead stays under ``--goal-ms`` (100):
messages per second at a fixed p99 (how the steps are chosen: ``sweep``). Each step's full report
goes to a file; the table at the end has one row per configuration. About 3–5 minutes each.

**Before and after.** ``--tree PATH`` runs another checkout's server code (its ``.venv`` too, when
it has one; the client re-runs itself under it) with this checkout's client, fake model and
statement counter, so an old and a new tree are measured by the same yardstick, back to back.
Each tree gets a database of its own (``parley_bench_chat_`` + the tree's folder name), as
their migrations may differ.

    .venv/bin/python perf/chat_load.py                             # 200 sessions × 5 messages
    .venv/bin/python perf/chat_load.py --sessions 20 --messages 3  # a quick check
    .venv/bin/python perf/chat_load.py --think 15 30               # people who read and type
    .venv/bin/python perf/chat_load.py --sweep                     # capacity of 1, 2, 4 daphne and 2 machines
    .venv/bin/python perf/chat_load.py --tree /work/wt/before      # the same, on an older checkout
    .venv/bin/python perf/chat_load.py --profile /tmp/chat-load-prof   # py-spy (GIL samples) on every daphne

It needs PostgreSQL and Redis on 127.0.0.1. The database is created when missing and migrated;
the benchmark's studies, participants, episodes, scenarios and sessions are deleted at the start
of each run and left in place after it for inspection. The server processes run with
``DEBUG=false`` and a throwaway ``SECRET_KEY``; every process it starts (the fake model, daphne,
py-spy) is stopped on exit, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SLUG_PREFIX = "bench-chat"
MODEL = "openai/fake-model"
PROFILE_GROUPS = (  # a GIL sample goes to the first group, from the innermost frame out, that one of its frames is in
    ("model call (litellm, openai, aiohttp, pydantic)",
     r"\((litellm|openai|httpx|httpcore|anyio|h11|aiohttp|yarl|multidict|pydantic|pydantic_core)/|litellm_logging|"
     r"streaming_handler"),
    ("event loop (asyncio)", r"\((asyncio|selectors)|^AsyncioSelectorReactor\.run "),
    ("database (Django ORM, psycopg)", r"\((django/db|psycopg)/"),
    ("channel layer (channels_redis, redis)", r"\((channels_redis|redis)/"),
    ("websocket (daphne, twisted, autobahn, channels)", r"\((daphne|twisted|autobahn|txaio|channels)/"),
    ("thread handoffs (asgiref, thread pool)", r"\((asgiref|concurrent|threading|queue)"),
    ("Django, other", r"\(django/"),
    ("Parley's own code", r"\((chat|benchmark)/"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=200, help="Participants chatting at once (default: 200).")
    parser.add_argument("--messages", type=int, default=5, help="Messages each participant sends (default: 5).")
    parser.add_argument("--servers", type=int, default=2, help="daphne processes (default: 2).")
    parser.add_argument("--machines", type=int, default=1,
                        help="Process groups the servers are spread over, each with its own PARLEY_VAR_DIR, as "
                             "separate machines sharing PostgreSQL and Redis would be (default: 1).")
    parser.add_argument("--sweep", nargs="*", metavar="SERVERS[xMACHINES]",
                        help="Instead of one run: for each configuration (default: 1 2 4 2x2), fresh servers and the "
                             "largest number of sessions whose p99 overhead stays under --goal-ms (see above).")
    parser.add_argument("--sweep-start", type=int, default=8, help="Sessions of a sweep's first step (8).")
    parser.add_argument("--sweep-max", type=int, default=256, help="Most sessions a sweep tries (256).")
    parser.add_argument("--sweep-messages", type=int, default=120,
                        help="Messages a sweep step sends at least, over all its sessions (120).")
    parser.add_argument("--goal-ms", type=float, default=100.0, help="The p99 overhead a sweep holds (100 ms).")
    parser.add_argument("--tree", default=str(ROOT),
                        help="The checkout whose server code runs (default: this one); its .venv is used when it "
                             "has one. The client and the statement counter are this checkout's.")
    parser.add_argument("--drop", type=float, default=0.1, help="Chance a message's connection is cut (0.1).")
    parser.add_argument("--resend", choices=("page", "always"), default="page",
                        help="After a cut, resend only when the history lacks the message (page) or always.")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"),
                        help="Seconds a participant waits before each message, drawn uniformly (1 3).")
    parser.add_argument("--ramp", type=float, default=5.0, help="Seconds over which participants arrive (5).")
    parser.add_argument("--latency", type=float, default=0.3, help="Model latency in seconds (0.3).")
    parser.add_argument("--delta-interval", type=float, default=0.02, help="Seconds between streamed words (0.02).")
    parser.add_argument("--database-url",
                        help="PostgreSQL database to use; created when missing (default: parley_bench_chat_ and the "
                             "tree's folder name, so an old and a new checkout never share a schema).")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9", help="Channel layer (default: %(default)s).")
    parser.add_argument("--conn-max-age", type=int,
                        help="DATABASE_CONN_MAX_AGE for the servers. Default: 600 when the tree's settings use no "
                             "connection pool (so the same PostgreSQL backends live through the run and their CPU "
                             "is counted), unset when they do (a pool keeps its backends, and Django refuses a "
                             "pool with persistent connections).")
    parser.add_argument("--timeout", type=float, default=60.0, help="Seconds to wait for any one expected message.")
    parser.add_argument("--seed", type=int, default=1, help="Random seed for think times, drops and servers.")
    parser.add_argument("--profile", metavar="DIR", help="Record every daphne process with py-spy into DIR.")
    parser.add_argument("--callers", action="store_true",
                        help="Group the SQL statements by the function of Parley's that sent them (each statement "
                             "then costs the servers a stack walk of a few microseconds more).")
    parser.add_argument("--agent-model", default=MODEL,
                        help="The study's agent model (default: %(default)s). 'scripted' runs the offline model "
                             "instead, without the gateway, to compare CPU; its overhead figures are then left out.")
    args = parser.parse_args()
    if args.sessions < 1 or args.messages < 1 or args.servers < 1 or args.machines < 1:
        parser.error("--sessions, --messages, --servers and --machines must be at least 1")
    if args.sweep is not None:
        args.sweep = [parse_configuration(parser, text) for text in args.sweep or ("1", "2", "4", "2x2")]
    tree = Path(args.tree).resolve()
    if not (tree / "config" / "asgi.py").exists():
        parser.error(f"--tree {tree} is not a Parley checkout (no config/asgi.py)")
    use_tree_interpreter(tree)
    args.database_url = args.database_url or f"postgres://postgres@127.0.0.1:5432/parley_bench_chat_{tree.name}"

    work = Path(tempfile.mkdtemp(prefix="parley-chat-load-"))
    environment = server_environment(args, work, tree)
    os.environ.update(environment)
    ensure_database(args.database_url)
    processes = Processes()
    install_signal_handlers()
    try:
        run(args, work, tree, environment, processes)
    finally:
        processes.stop_all()


def parse_configuration(parser: argparse.ArgumentParser, text: str) -> tuple[int, int]:
    """``4`` is four daphne processes on one machine, ``4x2`` four spread over two machines."""
    servers, _, machines = text.partition("x")
    try:
        configuration = int(servers), int(machines or 1)
    except ValueError:
        parser.error(f"--sweep: {text!r} is not SERVERS or SERVERSxMACHINES")
    if min(configuration) < 1 or configuration[1] > configuration[0]:
        parser.error(f"--sweep: {text!r} needs at least one server on each machine")
    return configuration


def use_tree_interpreter(tree: Path) -> None:
    """Run again under the tree's own virtual environment when it has one, so the client's Django
    (fixtures, migrations, the database check) and the servers import the packages that tree
    needs (a newer tree may depend on a package an older one lacks)."""
    venv = tree / ".venv"
    if (venv / "bin" / "python").exists() and Path(sys.prefix).resolve() != venv.resolve():
        python = str(venv / "bin" / "python")
        os.execv(python, [python, str(Path(__file__).resolve()), *sys.argv[1:]])


def server_environment(args: argparse.Namespace, work: Path, tree: Path) -> dict[str, str]:
    """What the servers and this process share: database, channel layer, key, production-like settings.

    The tree comes first on the path, so its ``config``, ``chat`` and ``benchmark`` are the ones
    imported; this checkout's ``perf`` follows for the client and the statement counter."""
    environment = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "PARLEY_VAR_DIR": str(work),
        "PARLEY_LLM_API_KEY": "benchmark",
        "PARLEY_ALLOWED_MODELS": args.agent_model,  # the gateway refuses a model the operator did not allow
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LOG_LEVEL": "INFO",  # channels_redis says at INFO level when it drops a message (channel over capacity)
        "PYTHONPATH": os.pathsep.join((str(tree), str(ROOT / "perf"))),
        "CHAT_LOAD_CALLERS": "1" if args.callers else "0",
    }
    if args.conn_max_age is not None:
        environment["DATABASE_CONN_MAX_AGE"] = str(args.conn_max_age)
    return environment


def ensure_database(url: str) -> None:
    """Create the benchmark's PostgreSQL database when it does not exist yet."""
    import psycopg

    parts = urllib.parse.urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        if connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            connection.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


class Processes:
    """The child processes this run started; all are stopped, by their own id, on the way out.

    Each starts a session of its own, unless ``group`` is given: 0 starts a new process group in
    this session, a process id joins that process's group (a group in another session cannot be
    joined). The daphne processes of one simulated machine share one group."""

    def __init__(self) -> None:
        self.children: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, command: list[str], group: int | None = None, **options) -> subprocess.Popen:
        if group is None:
            options["start_new_session"] = True
        else:
            options["process_group"] = group
        process = subprocess.Popen(command, **options)
        self.children.append((name, process))
        return process

    def stop(self, process: subprocess.Popen, sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(wait)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)

    def stop_all(self) -> None:
        for _name, process in reversed(self.children):
            self.stop(process)


def install_signal_handlers() -> None:
    """Ctrl-C already raises KeyboardInterrupt; make SIGTERM and SIGHUP unwind the same way."""

    def unwind(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, unwind)
    signal.signal(signal.SIGHUP, unwind)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


# --- the servers ----------------------------------------------------------------------------------


@dataclass
class Server:
    """One daphne process: its port, the simulated machine it belongs to, and when it began listening."""

    port: int
    machine: int
    process: subprocess.Popen
    started_at: float
    listening_at: float | None = None


def start_servers(count: int, machines: int, tree: Path, work: Path, environment: dict[str, str],
                  processes: Processes, timeout: float = 90.0) -> list[Server]:
    """``count`` fresh daphne processes spread evenly over ``machines`` process groups, each group
    with its own PARLEY_VAR_DIR, serving this checkout's statement counter around the tree's
    application; returns once all of them listen."""
    servers: list[Server] = []
    leaders: dict[int, int] = {}
    for number in range(count):
        machine = number % machines
        var_dir = work / f"machine-{machine}"
        var_dir.mkdir(exist_ok=True)
        port = free_port()
        log = open(work / f"daphne-{port}.log", "w")  # noqa: SIM115  (closed with the process)
        process = processes.start(
            f"daphne:{port}",
            [sys.executable, "-m", "config.serve", "-b", "127.0.0.1", "-p", str(port), "-v", "0",
             "chat_load_asgi:application"],
            group=leaders.get(machine, 0), cwd=tree, env={**os.environ, **environment, "PARLEY_VAR_DIR": str(var_dir)},
            stdout=log, stderr=subprocess.STDOUT,
        )
        leaders.setdefault(machine, process.pid)
        servers.append(Server(port, machine, process, time.perf_counter()))
    deadline = time.monotonic() + timeout
    while any(server.listening_at is None for server in servers):
        for server in servers:
            if server.listening_at is None and listening(server.port):
                server.listening_at = time.perf_counter()
            elif server.process.poll() is not None:
                raise SystemExit(f"daphne on port {server.port} exited with code {server.process.returncode} "
                                 f"({work}/daphne-{server.port}.log)")
        if time.monotonic() > deadline:
            raise SystemExit(f"daphne did not listen within {timeout:.0f} s")
        time.sleep(0.05)
    return servers


def stop_servers(servers: list[Server], processes: Processes) -> None:
    for server in servers:
        processes.stop(server.process)


def statement_counts(servers: list[Server]) -> dict[str, Any]:
    """SQL statements sent and database connections opened so far, summed over the servers
    (``perf/chat_load_asgi.py``)."""
    from chat_load_asgi import STATEMENTS_PATH

    total: dict = {"statements": 0, "connections": 0, "kinds": Counter()}
    for server in servers:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{STATEMENTS_PATH}", timeout=10) as response:
            counts = json.load(response)
        total["statements"] += counts.get("statements", 0)
        total["connections"] += counts.get("connections", 0)
        total["kinds"].update(counts.get("kinds", {}))  # an older counter has none
    return total


def model_timings(api_base: str) -> dict:
    """The fake model's own time per message tag since the last call (and forget them: tags repeat)."""
    with urllib.request.urlopen(api_base.removesuffix("/v1") + "/timings?clear=1", timeout=10) as response:
        return json.load(response)


# --- the run ---------------------------------------------------------------------------------------


@dataclass
class Bench:
    """What every step of a run shares: the options, the tree, the fake model, the processes."""

    args: argparse.Namespace
    tree: Path
    work: Path
    environment: dict[str, str]
    processes: Processes
    model: subprocess.Popen
    api_base: str
    database: str


def run(args: argparse.Namespace, work: Path, tree: Path, environment: dict[str, str], processes: Processes) -> None:
    model = processes.start(
        "model",
        [sys.executable, str(ROOT / "perf" / "chat_load_model.py"), "--latency", str(args.latency),
         "--delta-interval", str(args.delta_interval)],
        stdout=subprocess.PIPE, text=True,
    )
    api_base = model.stdout.readline().strip().rsplit(" ", 1)[-1]
    if not api_base.startswith("http"):
        raise SystemExit("the fake model server did not start")
    environment["PARLEY_LLM_API_BASE"] = os.environ["PARLEY_LLM_API_BASE"] = api_base

    sys.path[:0] = [str(tree), str(ROOT / "perf")]
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    pool = bool(connection.settings_dict.get("OPTIONS", {}).get("pool"))
    if args.conn_max_age is None and not pool:
        environment["DATABASE_CONN_MAX_AGE"] = "600"
    connections = "a psycopg pool" if pool else f"DATABASE_CONN_MAX_AGE={environment.get('DATABASE_CONN_MAX_AGE', 0)}"
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    commit = subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h %s"], capture_output=True,
                            text=True).stdout.strip()
    print(f"server tree: {tree} ({commit[:90] or 'not a git checkout'}), run by {sys.executable}")
    print(f"database: {connection.settings_dict['NAME']} on PostgreSQL {connection.pg_version // 10000} "
          f"({connections}), {layer} on {args.redis_url}; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")
    bench = Bench(args, tree, work, environment, processes, model, api_base, connection.settings_dict["NAME"])
    connection.close()
    if args.sweep is not None:
        sweep(bench)
    else:
        single_run(bench)


def single_run(bench: Bench) -> None:
    """The servers started fresh, each process's first message timed, then one run of all sessions."""
    args = bench.args
    started = time.perf_counter()
    fixtures = build_fixtures(args.sessions, args.servers, args.messages, args.agent_model)
    print(f"{args.sessions} participants + {args.servers} for the first messages ready in "
          f"{time.perf_counter() - started:.1f} s")
    servers = start_servers(args.servers, args.machines, bench.tree, bench.work, bench.environment, bench.processes)
    first = first_replies(bench, fixtures.warm_up, servers)
    step = measure(bench, fixtures, servers, args.sessions, args.messages)
    model_share = report_profiles(Path(args.profile), tuple(s.port for s in servers)) if args.profile else None
    print(f"goal: {args.sessions} concurrent sessions ({step.finished} finished), p99 overhead under 100 ms "
          f"({step.p99 * 1000:.0f} ms: {'met' if step.p99 < 0.1 else 'missed'}), no lost or duplicated turns "
          f"({step.lost}); database check: {'passed' if not step.problems else f'{step.problems} problems'}")
    server_cpu = step.daphne_ms + step.postgres_ms
    print(f"goal: ≤ 25 ms of server CPU and ≤ 10 SQL statements per answered message: {server_cpu:.0f} ms "
          f"({'met' if server_cpu <= 25 else 'missed'}), {step.statements:.1f} statements "
          f"({'met' if step.statements <= 10 else 'missed'}); first reply in a fresh process within 1 s of the "
          f"model's time: {max(first):.2f} s ({'met' if max(first) <= 1 else 'missed'})")
    if model_share is not None:  # the goal leaves the model client out: its share of daphne's samples
        platform_cpu = step.daphne_ms * (1 - model_share) + step.postgres_ms
        print(f"      without the model client ({model_share * 100:.0f} % of daphne's GIL samples): "
              f"{platform_cpu:.0f} ms of server CPU per answered message ({'met' if platform_cpu <= 25 else 'missed'})")


def sweep(bench: Bench) -> None:
    """Per configuration, fresh servers, and the largest offered load whose p99 overhead holds.

    The offered load is stepped by the number of sessions at the fixed think time: doubling from
    ``--sweep-start`` while the p99 holds (halving while it does not), then at most two steps
    between the last that held and the first that did not (their geometric mean), so each
    configuration takes five to seven steps. Each step sends at least ``--sweep-messages``
    messages (more per session when there are few), so its p99 rests on a hundred or more; every
    step's full report is kept in a file beside the logs.
    """
    args = bench.args
    goal = args.goal_ms / 1000
    rows = []
    for servers_count, machines in args.sweep:
        name = f"{servers_count} daphne" + (f" on {machines} machines" if machines > 1 else "")
        print(f"\n{name}: load average {os.getloadavg()[0]:.2f}")
        fixtures = build_fixtures(0, servers_count, 1, args.agent_model)
        servers = start_servers(servers_count, machines, bench.tree, bench.work, bench.environment, bench.processes)
        first = first_replies(bench, fixtures.warm_up, servers)
        results: dict[int, Step] = {}

        def held(sessions: int, servers=servers, results=results, name=name) -> bool:
            messages = min(30, max(args.messages, math.ceil(args.sweep_messages / sessions)))
            fixtures = build_fixtures(sessions, 0, messages, args.agent_model)
            label = f"-{name.replace(' ', '-')}-{sessions}"
            log = bench.work / f"step{label}.txt"
            with log.open("w") as out, contextlib.redirect_stdout(out):
                step = measure(bench, fixtures, servers, sessions, messages, label)
            results[sessions] = step
            print(f"  {sessions:4d} sessions × {messages:2d} messages: {step.rate:5.1f} messages/s, overhead "
                  f"p50 {step.p50 * 1000:5.0f} / p99 {step.p99 * 1000:6.0f} ms, {step.daphne_ms:4.0f} ms daphne + "
                  f"{step.postgres_ms:3.0f} ms PostgreSQL CPU, {step.statements:4.1f} SQL a message, load "
                  f"{step.load:.1f}" + (f"; {step.problems} problems in the database check" if step.problems else "")
                  + (f"; {step.sessions - step.finished} sessions did not finish" if step.finished < step.sessions
                     else "") + f"  ({log})")
            return step.p99 < goal and step.finished == step.sessions and not step.problems

        best = search_capacity(held, args.sweep_start, args.sweep_max)
        stop_servers(servers, bench.processes)
        rows.append((name, best, results.get(best) or results[min(results)], max(first)))
    print(f"\ncapacity at p99 overhead under {args.goal_ms:.0f} ms ({args.think[0]:g}–{args.think[1]:g} s think, "
          f"model {args.latency:g} s + streaming; figures of the largest load that held, or of the smallest tried "
          f"when none did):")
    print("| servers | sessions | messages/s | overhead p50 / p99 | CPU a message: daphne + PostgreSQL | "
          "SQL a message | first reply − model |")
    print("|---|---|---|---|---|---|---|")
    for name, best, step, first in rows:
        held = str(best) if best else f"none held (at {step.sessions}:)"
        print(f"| {name} | {held} | {step.rate:.1f} | {step.p50 * 1000:.0f} / {step.p99 * 1000:.0f} ms | "
              f"{step.daphne_ms:.0f} + {step.postgres_ms:.0f} ms | {step.statements:.1f} | {first:.2f} s |")


def search_capacity(held: Callable[[int], bool], start: int, most: int) -> int:
    """The largest number of sessions for which ``held`` is true, found by doubling (or halving),
    then up to two steps between the last that held and the first that did not; 0 when none held."""
    good, bad = 0, None
    sessions = max(1, min(start, most))
    while True:
        if held(sessions):
            good = sessions
            if bad is not None or sessions * 2 > most:
                break
            sessions *= 2
        else:
            bad = sessions
            if good or sessions == 1:
                break
            sessions //= 2
    for _ in range(2):
        if not good or bad is None or bad / good <= 1.3:
            break
        middle = round(math.sqrt(good * bad))
        if middle in (good, bad):
            break
        if held(middle):
            good = middle
        else:
            bad = middle
    return good


@dataclass
class Step:
    """One run of the load's figures, for a sweep's table and the goals."""

    sessions: int
    finished: int
    answered: int
    rate: float
    p50: float
    p99: float
    daphne_ms: float
    postgres_ms: float
    statements: float
    problems: int
    lost: int
    load: float


def measure(bench: Bench, fixtures: Fixtures, servers: list[Server], sessions: int, messages: int,
            label: str = "") -> Step:
    """Run the participants against the running servers, print everything, and return the figures."""
    args = bench.args
    from chat_load_client import LoadConfig, run_load
    from chat_load_model import nominal_model_seconds

    ports = tuple(server.port for server in servers)
    config = LoadConfig(ports=ports, messages=messages, think=tuple(args.think), drop=args.drop,
                        resend=args.resend, timeout=args.timeout)
    processes = [server.process for server in servers]
    profilers = start_profilers(args.profile, processes, ports, bench.processes)
    cpu_before = cpu_snapshot(processes, bench.model, bench.database)
    sql_before = statement_counts(servers)
    records, live, began, ended = asyncio.run(run_load(fixtures.specs, config, ramp=args.ramp, seed=args.seed))
    sql_after = statement_counts(servers)
    cpu_after = cpu_snapshot(processes, bench.model, bench.database)
    for profiler in profilers:
        bench.processes.stop(profiler, signal.SIGINT, wait=60)
    figures = report_client(args, records, live, ended - began, model_timings(bench.api_base),
                            nominal_model_seconds(args.latency, args.delta_interval))
    cpu = report_cpu(cpu_before, cpu_after, ended - began, figures["answered"])
    statements = report_statements(sql_before, sql_after, figures["answered"])
    problems, lost = check_database(fixtures, records)
    write_failures(bench.work / f"failures{label}.jsonl", fixtures, records, began)
    report_logs(bench.work, ports)
    return Step(sessions, sum(1 for record in records if not record.failure), figures["answered"],
                figures["rate"], figures["p50"], figures["p99"], cpu["daphne"], cpu["postgres"], statements,
                problems, lost, cpu_before["load"])


def report_statements(before: dict[str, Any], after: dict[str, Any], answered: int) -> float:
    """Print the SQL the servers sent over the run; return the statements per answered message."""
    statements = after.get("statements", 0) - before.get("statements", 0)
    connections = after.get("connections", 0) - before.get("connections", 0)
    per_message = statements / answered if answered else math.nan
    print(f"SQL sent by the servers: {statements} statements over {connections} database connections opened "
          f"(or taken from a pool); per message answered: {per_message:.1f} statements, "
          f"{connections / max(1, answered):.1f} connections (connects, opening turns and leaves included)")
    kinds = Counter(after.get("kinds", {}))
    kinds.subtract(before.get("kinds", {}))
    if answered and kinds:
        print("  by kind, per message answered:")
        for kind, count in kinds.most_common():
            if count > 0:
                print(f"    {count / answered:5.2f}  {kind}")
    return per_message


@dataclass
class Fixtures:
    studies: list
    specs: list
    warm_up: list
    participant_numbers: dict  # participant pk -> the number in its message tags


def build_fixtures(sessions: int, servers: int, messages: int, agent_model: str) -> Fixtures:
    """Two studies (the participant plays the second seat in one, the first in the other), three
    scenarios × four conditions, and every participant taken through the consent path into the chat
    with a browser session that remembers them. Old benchmark data goes first."""
    from importlib import import_module

    from chat_load_client import ParticipantSpec
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    from benchmark.models import DEFAULT_TEAM_SLUG, Barrier, Character, Episode, Goal, Role, Scenario, Team
    from chat.access import claim
    from chat.assignment import assign
    from chat.flow import ArrivalIds, arrive, start_conversation
    from chat.models import ChatCondition, ChatStudy, Participant
    from chat.questionnaire import default_instrument

    Participant.objects.filter(study__slug__startswith=SLUG_PREFIX).delete()
    Episode.objects.filter(tag__startswith=f"chat:{SLUG_PREFIX}").delete()
    ChatStudy.objects.filter(slug__startswith=SLUG_PREFIX).delete()
    Scenario.objects.filter(external_id__startswith=SLUG_PREFIX).delete()
    Character.objects.filter(external_id__startswith=SLUG_PREFIX).delete()
    Session.objects.all().delete()  # the benchmark's own database: only its sessions are here

    researcher, _ = get_user_model().objects.get_or_create(username=f"{SLUG_PREFIX}-researcher")
    people = [("Ana", "nurse"), ("Omar", "baker"), ("Lena", "engineer"), ("Kofi", "teacher"),
              ("Mei", "driver"), ("Ravi", "gardener")]
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
    characters = [
        Character.objects.create(team=team, first_name=name, last_name="Bench", occupation=job, gender="person",
                                 pronouns="they/them", public_info=f"{name} works as a {job}.",
                                 external_id=f"{SLUG_PREFIX}-character-{n}")
        for n, (name, job) in enumerate(people)
    ]
    matters = ["who pays for a broken kettle", "a noisy weekend party", "the schedule for a shared car"]
    scenarios = []
    for n, matter in enumerate(matters):
        scenario = Scenario.objects.create(
            team=team, external_id=f"{SLUG_PREFIX}-scenario-{n}", codename=f"{SLUG_PREFIX}-{n}", source="benchmark",
            context=f"Two neighbours meet in the stairwell to talk about {matter}.", relationship=n % 3,
        )
        for position in (0, 1):
            role = Role.objects.create(scenario=scenario, position=position, character=characters[2 * n + position],
                                       reason="It has gone on too long.",
                                       private_knowledge="You could give in a little if asked kindly.")
            Goal.objects.create(role=role, position=0, text=f"Settle {matter} on terms that suit you.")
        scenarios.append(scenario)
    barriers = list(Barrier.objects.filter(key__in=["none", "semantic", "sociocultural", "emotional"]))
    target = math.ceil((sessions + servers) / (len(scenarios) * len(barriers))) + 1
    studies = []
    for human_position in (1, 0):
        study = ChatStudy.objects.create(
            team=team, slug=f"{SLUG_PREFIX}-seat{human_position}", title=f"Chat load benchmark (seat {human_position})",
            created_by=researcher, human_position=human_position, agent_model=agent_model,
            turn_cap=max(20, 2 * messages + 4), messages_per_minute=60, completion_code="BENCH",
            min_participant_turns=min(3, messages),  # a short run's participants leave with their chat counted
            instrument=default_instrument(),
        )
        study.scenarios.set(scenarios)
        ChatCondition.objects.bulk_create(ChatCondition(study=study, barrier=b, target=target) for b in barriers)
        studies.append(study)

    store = import_module(settings.SESSION_ENGINE).SessionStore

    def join(study: ChatStudy, participant_id: str) -> str:
        participant = arrive(study, ArrivalIds(participant_id=participant_id))
        participant = assign(participant)
        start_conversation(participant)
        session = store()
        claim(session, participant)  # bind the participant to this browser session, as the study link does
        session.save()
        numbers[participant.pk] = int(participant_id.rsplit("-", 1)[1])
        return session.session_key

    numbers: dict[int, int] = {}
    specs = []
    for number in range(sessions):
        study = studies[number % 2]  # even numbers: the agent opens
        specs.append(ParticipantSpec(number, study.slug, join(study, f"{SLUG_PREFIX}-{number:04d}")))
    warm = []
    for k in range(servers):
        number = 9000 + k
        warm.append(ParticipantSpec(number, studies[1].slug, join(studies[1], f"{SLUG_PREFIX}-{number:04d}")))
    return Fixtures(studies, specs, warm, numbers)


def first_replies(bench: Bench, specs: list, servers: list[Server]) -> list[float]:
    """Each fresh server process's first chat message, sent as soon as all of them listen: the time
    from sending it to the agent's stored reply, minus the model's own time for that reply (the
    one-off costs of a new process, such as importing litellm, land here). Printed; returns the
    platform's part per server, in seconds (infinite for a server whose message got no reply)."""
    import aiohttp
    from chat_load_client import LiveCount, LoadConfig, run_participant

    async def all_first() -> list:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            return await asyncio.gather(*(
                run_participant(http, spec, LoadConfig(ports=(server.port,), messages=1, think=(0.0, 0.0),
                                                       drop=0.0, timeout=120.0),
                                LiveCount(), random.Random(spec.number))
                for spec, server in zip(specs, servers, strict=True)
            ))

    records = asyncio.run(all_first())
    model_seconds = {tag: sum(times) for tag, times in model_timings(bench.api_base)["tags"].items()}
    platform, parts = [], []
    for record, server in zip(records, servers, strict=True):
        message = record.messages[0] if record.messages else None
        if message is None or message.reply_seconds is None:
            platform.append(math.inf)
            parts.append(f"port {server.port}: no reply ({record.failure})")
            continue
        model = model_seconds.get(message.tag, math.nan)
        platform.append(message.reply_seconds - model)
        parts.append(f"{message.reply_seconds - model:.2f} s (listening "
                     f"{server.listening_at - server.started_at:.1f} s after start; send → reply "
                     f"{message.reply_seconds:.2f} s, model {model:.2f} s)")
    print("first message in each fresh server process, send → agent's stored reply − model time: " + "; ".join(parts))
    return platform


# --- figures --------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread(values: list[float], scale: float = 1000.0, unit: str = "ms") -> str:
    if not values:
        return "no values"
    figures = [percentile(values, q) * scale for q in (50, 95, 99)] + [max(values) * scale]
    return "p50 {:.0f} / p95 {:.0f} / p99 {:.0f} / max {:.0f} {}".format(*figures, unit)


def report_client(args, records, live, span: float, timings: dict, nominal: float) -> dict[str, float]:
    """Print what the pages saw; return the messages answered, per second, and the p50 and p99
    platform overhead (s)."""
    tagged = timings["tags"]
    messages = [message for record in records for message in record.messages]
    answered = [m for m in messages if m.reply_at is not None]
    clean = [m for m in answered if not m.dropped]
    cut = [m for m in messages if m.dropped]
    model_seconds = {tag: sum(times) for tag, times in tagged.items()}
    repeated = sum(1 for times in tagged.values() if len(times) > 1)
    unmeasured = sum(1 for m in answered if m.tag not in model_seconds)

    def overhead(message) -> float:
        return message.reply_seconds - model_seconds.get(message.tag, nominal)

    failed = [record for record in records if record.failure]
    print(f"sessions: {len(records)} ({sum(r.agent_opened for r in records)} opened by the agent), "
          f"at most {live.peak} sockets open at once, {len(failed)} did not finish")
    for reason, count in Counter(record.failure for record in failed).most_common(5):
        print(f"  {count} × {reason}")
    print(f"messages: {len(messages)} sent, {len(answered)} answered, {sum(r.left for r in records)} leaves; "
          f"{len(cut)} connections cut after sending ({sum(m.resent for m in cut)} resent, "
          f"{sum(m.in_history for m in cut)} found in the new history); "
          f"{sum(r.connects for r in records)} connects")
    print(f"model time per reply: nominal {nominal * 1000:.0f} ms; measured by the fake server "
          f"{spread([model_seconds[m.tag] for m in answered if m.tag in model_seconds])}"
          + (f"; {repeated} messages needed more than one model call" if repeated else "")
          + (f"; {unmeasured} replies without a server timing (nominal used)" if unmeasured else ""))
    print(f"ack latency (send → ack, {len(clean)} uncut messages): "
          f"{spread([m.ack_seconds for m in clean if m.ack_seconds is not None])}")
    if args.agent_model != MODEL:
        print(f"send → agent's turn with the {args.agent_model} model (no model timing: no overhead figures): "
              f"{spread([m.reply_seconds for m in clean])}")
        clean = []
    print(f"platform overhead (send → agent's turn − model time): {spread([overhead(m) for m in clean])}")
    print(f"  against the nominal model time instead: {spread([m.reply_seconds - nominal for m in clean])}")
    staged = [m for m in clean if m.typing_at is not None and m.acked_at is not None]
    print(f"  of which: ack → typing (deciding and planning the agent's turn) "
          f"{spread([m.typing_at - m.acked_at for m in staged])}")
    print(f"            typing → agent's turn − model time (gateway, streaming, storing) "
          f"{spread([m.reply_at - m.typing_at - model_seconds.get(m.tag, nominal) for m in staged])}")
    recovered = [m.reply_seconds for m in answered if m.dropped]
    print(f"cut messages, send → agent's turn on the new connection: {spread(recovered)}")
    connects = [seconds for record in records for seconds in record.connect_seconds]
    print(f"connect (handshake → history): {spread(connects)}")
    errors = sum((record.errors for record in records), Counter())
    streamed = sum(r.streamed_ok for r in records), sum(r.streamed_wrong for r in records)
    print(f"server errors sent to pages: {dict(errors) or 'none'}; syncs after a gap: {sum(r.syncs for r in records)}; "
          f"streamed replies equal to the stored turn: {streamed[0]} of {sum(streamed)}")
    print(f"throughput: {len(answered)} messages answered in {span:.1f} s = {len(answered) / span:.1f} messages/s "
          f"({2 * len(answered) / span:.1f} turns stored/s)")
    overheads = [overhead(m) for m in clean]
    return {"answered": len(answered), "rate": len(answered) / span, "p50": percentile(overheads, 50),
            "p99": percentile(overheads, 99)}


def cpu_ticks(pid: int) -> tuple[float, float]:
    """CPU seconds a process used so far: in its own code, and in the kernel on its behalf."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[float, float]:
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / os.sysconf("SC_CLK_TCK"), sum(values) / os.sysconf("SC_CLK_TCK")


def cpu_snapshot(servers, model, database: str) -> dict:
    """CPU seconds so far of each process that serves the benchmark, and of the whole machine.

    PostgreSQL backends are counted when their command line names the benchmark's database (the
    servers keep their connections, so the same backends live through the run); Redis is counted
    whole. Whatever else the machine did meanwhile is other people's work.
    """
    mine = {"daphne": [server.pid for server in servers], "model": [model.pid], "client": [os.getpid()]}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if command.startswith("postgres:") and f" {database} " in command:
            mine.setdefault("postgres", []).append(int(entry.name))
        elif command.startswith("redis-server"):
            mine.setdefault("redis", []).append(int(entry.name))
    ticks = {}
    for label, pids in mine.items():
        for pid in pids:
            try:
                ticks[(label, pid)] = cpu_ticks(pid)
            except OSError:
                pass
    return {"ticks": ticks, "machine": machine_ticks(), "load": os.getloadavg()[0]}


def report_cpu(before: dict, after: dict, span: float, answered: int) -> dict[str, float]:
    """Print the CPU each part used; return daphne's and PostgreSQL's per answered message (ms)."""
    used, kernel = Counter(), Counter()
    for key, (user, system) in after["ticks"].items():
        user_before, system_before = before["ticks"].get(key, (0.0, 0.0))
        used[key[0]] += user - user_before + system - system_before
        kernel[key[0]] += system - system_before
    busy = after["machine"][0] - before["machine"][0]
    total = after["machine"][1] - before["machine"][1]
    cores = os.cpu_count() or 1
    others = busy - sum(used.values())
    parts = ", ".join(f"{label} {used[label]:.1f} s" for label in ("daphne", "postgres", "redis", "model", "client"))
    print(f"CPU over the run ({span:.1f} s, {cores} cores): {parts}; other work on the machine {max(0, others):.1f} s "
          f"(load average {before['load']:.1f} before the run); machine busy {busy / total * 100:.0f}%")
    if answered:
        print(f"  per message answered: daphne {used['daphne'] / answered * 1000:.0f} ms "
              f"({kernel['daphne'] / answered * 1000:.0f} ms of it in the kernel), "
              f"PostgreSQL {used['postgres'] / answered * 1000:.0f} ms, Redis {used['redis'] / answered * 1000:.0f} ms "
              f"of CPU (connects, opening turns and leaves included)")
    return {part: used[part] / answered * 1000 if answered else math.nan for part in ("daphne", "postgres")}


def check_database(fixtures: Fixtures, records: list) -> tuple[int, int]:
    """Compare what the pages sent with the Turn table; print the counts; return how many problems,
    and how many of them were turns lost or stored twice."""
    from benchmark.models import Episode, Seat, Turn
    from chat.models import Participant

    sent = {record.spec.number: record for record in records}
    participants = list(Participant.objects.filter(study__in=fixtures.studies, participant_id__regex=r"-\d{4}$")
                        .exclude(participant_id__regex=r"-9\d{3}$"))
    episode_ids = [p.episode_id for p in participants]
    turns = defaultdict(list)
    for turn in Turn.objects.filter(episode_id__in=episode_ids).order_by("episode_id", "index"):
        turns[turn.episode_id].append(turn)
    seats = defaultdict(dict)
    for seat in Seat.objects.filter(episode_id__in=episode_ids):
        seats[seat.episode_id][seat.position] = seat
    episodes = {e.pk: e for e in Episode.objects.filter(pk__in=episode_ids)}

    counts = Counter()
    for participant in participants:
        record = sent.get(fixtures.participant_numbers[participant.pk])
        stored = turns[participant.episode_id]
        order = [seats[participant.episode_id][p].pk for p in sorted(seats[participant.episode_id])]
        human = next(s.pk for s in seats[participant.episode_id].values() if s.player == Seat.Player.HUMAN)
        counts["episodes"] += 1
        counts["turns"] += len(stored)
        if [t.index for t in stored] != list(range(len(stored))):
            counts["episodes with gaps in the indices"] += 1
        counts["turns in the wrong seat"] += sum(1 for t in stored if t.seat_id != order[t.index % len(order)])
        human_turns = [t for t in stored if t.seat_id == human]
        agent_turns = [t for t in stored if t.seat_id != human]
        stored_ids = Counter(t.client_id for t in human_turns)
        sent_ids = set(record.sent_client_ids) if record else set()
        counts["human turns stored"] += len(human_turns)
        counts["human turns sent"] += len(sent_ids)
        counts["lost (sent, not stored)"] += len(sent_ids - set(stored_ids))
        counts["stored but never sent"] += len(set(stored_ids) - sent_ids)
        counts["duplicated client_id"] += sum(n - 1 for n in stored_ids.values() if n > 1)
        texts = Counter(t.content for t in human_turns if t.action_type != "leave")
        counts["duplicated message text"] += sum(n - 1 for n in texts.values() if n > 1)
        opens = 1 if order and order[0] != human else 0
        expected = sum(1 for t in human_turns if t.action_type != "leave") + opens
        counts["agent turns"] += len(agent_turns)
        counts["agent turns missing"] += max(0, expected - len(agent_turns))
        counts["agent turns extra"] += max(0, len(agent_turns) - expected)
        episode = episodes[participant.episode_id]
        if (episode.status, episode.end_reason) != (Episode.Status.FINISHED, Episode.EndReason.LEAVE):
            counts[f"episodes not ended by leaving ({episode.status}/{episode.end_reason or '-'})"] += 1
        if record:
            index_of = {t.client_id: t.index for t in human_turns}
            counts["acks naming another index"] += sum(
                1 for m in record.messages if m.index is not None and index_of.get(m.client_id) != m.index
            )
    serious = ["episodes with gaps in the indices", "turns in the wrong seat", "lost (sent, not stored)",
               "duplicated client_id", "duplicated message text", "stored but never sent", "agent turns missing",
               "agent turns extra", "acks naming another index"]
    serious += sorted(key for key in counts if key.startswith("episodes not ended"))
    problems = sum(counts[key] for key in serious)
    print(f"database check over {counts['episodes']} episodes, {counts['turns']} turns: "
          f"human turns {counts['human turns stored']} stored of {counts['human turns sent']} sent, "
          f"{counts['agent turns']} agent turns")
    print("  " + ", ".join(f"{key}: {counts[key]}" for key in serious))
    lost = sum(counts[key] for key in ("lost (sent, not stored)", "duplicated client_id", "duplicated message text"))
    return problems, lost


def write_failures(path: Path, fixtures: Fixtures, records: list, began: float) -> None:
    """Each session that did not finish: why, the last messages its page saw, and its stored turns,
    all in seconds since the start of the run, so a lost message shows as a turn stored, never seen.
    Beside it, each streamed reply that ended unlike the stored turn, with both texts."""
    from benchmark.models import Seat, Turn
    from chat.models import Participant

    mismatched = [record for record in records if record.mismatches]
    if mismatched:
        streamed = path.with_name(path.stem.replace("failures", "streamed") + ".jsonl")
        with streamed.open("w") as out:
            for record in mismatched:
                for index, seen, stored in record.mismatches:
                    out.write(json.dumps({"participant": record.spec.number, "index": index, "streamed": seen,
                                          "stored": stored}) + "\n")
        print(f"streamed replies that differed from the stored turn, both texts: {streamed}")
    failed = [record for record in records if record.failure]
    if not failed:
        return
    offset = time.time() - time.perf_counter()  # perf_counter + offset = wall clock
    by_number = {number: pk for pk, number in fixtures.participant_numbers.items()}
    with path.open("w") as out:
        for record in failed:
            participant = Participant.objects.get(pk=by_number[record.spec.number])
            human = Seat.objects.get(episode_id=participant.episode_id, player=Seat.Player.HUMAN).pk
            turns = [
                (round(turn.created_at.timestamp() - offset - began, 3), turn.index,
                 "you" if turn.seat_id == human else "partner")
                for turn in Turn.objects.filter(episode_id=participant.episode_id).order_by("index")
            ]
            out.write(json.dumps({
                "participant": record.spec.number, "failure": record.failure,
                "seen": [(round(at - began, 3), what) for at, what in record.trail],
                "stored": turns,
                "sent": [(round(m.sent_at - began, 3), m.tag, m.dropped) for m in record.messages],
            }) + "\n")
    print(f"sessions that did not finish, with what their pages saw and what was stored: {path}")


def report_logs(work: Path, ports: tuple[int, ...]) -> None:
    for port in ports:
        text = (work / f"daphne-{port}.log").read_text(errors="replace")
        tracebacks = text.count("Traceback")
        dropped = len(re.findall(r"channels over capacity in group", text))
        if tracebacks or dropped:
            print(f"daphne {port} log: {tracebacks} tracebacks, {dropped} group messages dropped by the channel "
                  f"layer (over capacity) ({work}/daphne-{port}.log)")


# --- profiling ------------------------------------------------------------------------------------


def start_profilers(directory: str | None, servers, ports, processes: Processes) -> list:
    if not directory:
        return []
    Path(directory).mkdir(parents=True, exist_ok=True)
    return [
        processes.start(f"py-spy:{port}", [str(BIN / "py-spy"), "record", "--pid", str(server.pid), "--rate", "100",
                                           "--format", "raw", "--nonblocking", "--gil",
                                           "--output", str(Path(directory) / f"daphne-{port}.txt")],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for server, port in zip(servers, ports, strict=True)
    ]


def report_profiles(directory: Path, ports: tuple[int, ...]) -> float | None:
    """Where each daphne's Python time went: GIL samples by the library they were in (see PROFILE_GROUPS).

    Anything under the model call's frames counts as the model call, asyncio included, so the
    gateway's cost is not hidden in the event loop's bookkeeping. Returns the model call's share of
    all the samples (None when no profile was written).
    """
    model_call = PROFILE_GROUPS[0]
    all_samples = model_samples = 0
    for port in ports:
        path = directory / f"daphne-{port}.txt"
        if not path.exists():
            print(f"profile of daphne {port}: none written")
            continue
        total = 0
        groups = Counter()
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not count.isdigit():
                continue
            samples = int(count)
            total += samples
            label = "other"
            if re.search(model_call[1], stack):
                label = model_call[0]
            else:
                for frame in reversed(stack.split(";")):
                    label = next((name for name, pattern in PROFILE_GROUPS if re.search(pattern, frame)), "")
                    if label:
                        break
                label = label or "other"
            groups[label] += samples
        shares = ", ".join(f"{label} {count / total * 100:.0f}%" for label, count in groups.most_common())
        print(f"profile of daphne {port} ({total} GIL samples at 100 Hz, {path}): {shares}")
        all_samples += total
        model_samples += groups[model_call[0]]
    return model_samples / all_samples if all_samples else None


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted; the processes this run started are stopped", file=sys.stderr)
        sys.exit(130)
