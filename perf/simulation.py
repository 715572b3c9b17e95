"""How close a SocialVeil-sized simulation run comes to the ideal wall time, on one consumer and on two.

Generates N scenarios (default 180, a third tagged hard, two cast roles each), starts
``perf/fake_openai.py`` in a subprocess with a fixed latency (default 0.2 s), starts the task queue's
consumers (``manage.py run_huey``, each in its own process group with its own ``PARLEY_VAR_DIR``, as
on its own machine), and runs ``manage.py simulate`` over the scenarios under the four conditions
(720 episodes of up to 20 turns) with concurrency 64: the command queues the run's chunks and follows
it while the consumers play them. The fake server always answers with a ``speak`` action, so every
episode runs to the turn cap: 14,400 model calls.

``--consumers 1,2`` (the default) plays the run once on one consumer, then again on two. Each
consumer has ``--workers`` process workers (default 1), and each worker plays one chunk at a time
with the run's concurrency, so the ideal time is model calls × latency ÷ (concurrency × workers in
all); the goal is 1.3× the ideal on one consumer and about half the one-consumer time on two.
``--pin`` puts each consumer on its own CPU core (``taskset``): on a two-core machine that plays
"one machine of one core" against "two machines of one core each" (the fake server and the database
run on any core). For each run it prints the wall time, the ideal and their ratio, calls per
second, and the CPU per call spent by the consumers (every process of their groups, start-up not
counted), the fake server, and this process.

    .venv/bin/python perf/simulation.py [--scenarios 180] [--consumers 1,2] [--workers 1] [--pin]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench_sim .venv/bin/python perf/simulation.py
    .venv/bin/python perf/simulation.py --scenarios 12      # a quick check
    .venv/bin/python perf/simulation.py --multi-party --episodes-per-cell 32

The queue is PostgreSQL's when ``DATABASE_URL`` is a PostgreSQL database (consumers on several
machines share it), else one SQLite queue file that every consumer of this machine is given
(``PARLEY_TASKS_FILE``).

``--multi-party`` plays the demo's scenarios of three and four parties instead (the heating bill,
24 turns, and the six instances of the two demo templates, 15 turns each, in random order after a
greeting) under the same conditions, ``--episodes-per-cell`` episodes of each: 32 make 14,592
calls, about the two-party run's.

It uses a scratch database: a temporary SQLite file by default, or the one DATABASE_URL names
(e.g. a ``parley_bench_sim`` PostgreSQL database made with ``createdb``), in which every episode,
scenario, character and simulation run is deleted first and last. The model name (default
``openai/gpt-4o-mini``) only decides which of litellm's code paths a call takes: every request
goes to the fake server, and no key or network is needed.
"""

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READY_LINE = "The following commands are available"

SETTINGS = ["a shared kitchen", "a small bakery", "a hospital corridor", "a school parent evening",
            "a neighbourhood garden", "a train platform", "a rented flat", "a startup office",
            "a community hall", "a car repair shop", "a wedding reception", "a university lab"]
MATTERS = ["who pays for a broken appliance", "splitting the costs of a trip", "a borrowed item returned damaged",
           "a noisy weekend party", "the schedule for a shared car", "credit for a joint project",
           "a late rent payment", "a change of holiday plans", "a promise that was not kept",
           "the price of a second-hand bike", "a job reference", "a family visit"]
NAMES = ["Ana", "Omar", "Lena", "Kofi", "Mei", "Ravi", "Sara", "Tomas", "Yusuf", "Ines", "Jonas", "Priya",
         "Hugo", "Amara", "Felix", "Noor", "Diego", "Hana", "Ivan", "Zoe"]
OCCUPATIONS = ["nurse", "teacher", "baker", "engineer", "student", "driver", "lawyer", "gardener"]
TICKS = os.sysconf("SC_CLK_TCK")


def group_cpu(session: int) -> float:
    """CPU seconds (user + system) of every live process in the session ``session`` (a consumer and its
    workers), read from /proc."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:  # fields after the name: state, ppid, pgrp, session, ...
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Consumer:
    """One ``manage.py run_huey`` in its own session, with its own var directory (as on its own machine)."""

    def __init__(self, number: int, env: dict[str, str], workers: int, periodic: bool, core: int | None) -> None:
        self.var_dir = Path(tempfile.mkdtemp(prefix=f"parley-consumer-{number}-"))
        self.log = self.var_dir / "consumer.log"
        command = [sys.executable, "manage.py", "run_huey", "--workers", str(workers), "--worker-type", "process"]
        if not periodic:
            command.append("--no-periodic")
        if core is not None:
            command = ["taskset", "-c", str(core), *command]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, env={**env, "PARLEY_VAR_DIR": str(self.var_dir)},
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 180
        while READY_LINE not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"a consumer did not start:\n{self.log.read_text()}")
            time.sleep(0.1)
        time.sleep(1)  # its workers start after the line

    def cpu(self) -> float:
        return group_cpu(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.var_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=180, help="Scenarios to generate (default: 180).")
    parser.add_argument("--conditions", default="none,semantic,sociocultural,emotional", help="Barrier keys.")
    parser.add_argument("--concurrency", type=int, default=64, help="The run's concurrency (default: 64).")
    parser.add_argument("--consumers", default="1,2", help="Consumer counts to play the run on (default: 1,2).")
    parser.add_argument("--workers", type=int, default=1, help="Process workers per consumer (default: 1).")
    parser.add_argument("--pin", action="store_true", help="Pin consumer n to CPU core n (taskset).")
    parser.add_argument("--latency", type=float, default=0.2, help="Fake model latency in seconds (default: 0.2).")
    parser.add_argument("--turn-cap", type=int, default=20, help="Turns per episode (default: 20).")
    parser.add_argument("--model", default="openai/gpt-4o-mini", help="Model name sent to the fake server.")
    parser.add_argument("--multi-party", action="store_true",
                        help="Play the demo's three- and four-party scenarios instead of generated two-party ones.")
    parser.add_argument("--episodes-per-cell", type=int, default=1,
                        help="Episodes per scenario × condition (default: 1).")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("PARLEY_VAR_DIR", str(scratch))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")  # development settings, as the published figures were measured
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "DATABASE_URL" not in os.environ:  # the embedded default, in a scratch file every consumer reaches
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'parley.sqlite3'}"
    postgres = os.environ["DATABASE_URL"].startswith(("postgres://", "postgresql://"))
    os.environ["PARLEY_TASKS"] = "postgres" if postgres else "sqlite"
    os.environ["PARLEY_TASKS_NAME"] = "parley-bench-sim"
    os.environ["PARLEY_TASKS_IMMEDIATE"] = "false"
    if not postgres:
        os.environ["PARLEY_TASKS_FILE"] = str(scratch / "tasks.sqlite3")
    os.environ["PARLEY_ALLOWED_MODELS"] = args.model
    os.environ["PARLEY_LLM_API_KEY"] = "benchmark"
    os.environ["PARLEY_LLM_MAX_RETRIES"] = "0"
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "perf" / "fake_openai.py"), "--port", "0", "--latency", str(args.latency)],
        stdout=subprocess.PIPE, text=True,
    )
    api_base = server.stdout.readline().strip().rsplit(" ", 1)[-1]
    os.environ["PARLEY_LLM_API_BASE"] = api_base
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmark.jobs.queue import HUEY
    from benchmark.models import DEFAULT_TEAM_SLUG, Character, Episode, Scenario, SimulationRun, Team

    def empty() -> None:
        SimulationRun.objects.all().delete()
        Episode.objects.all().delete()
        Scenario.objects.filter(template__isnull=False).delete()  # a template's instances before the template
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    results = []
    try:
        call_command("migrate", verbosity=0)
        HUEY.flush()
        empty()
        started = time.perf_counter()
        team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
        if args.multi_party:
            codenames = multi_party_scenarios(team)
            print(f"database: {connection.vendor}; installed {len(codenames)} demo scenarios of three or four "
                  f"parties in {time.perf_counter() - started:.1f} s")
        else:
            codenames = None
            two_party_scenarios(team, args.scenarios)
            print(f"database: {connection.vendor}; generated {args.scenarios} scenarios "
                  f"in {time.perf_counter() - started:.1f} s")
        print(f"queue: {os.environ['PARLEY_TASKS']}; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        stats_url = api_base.removesuffix("/v1") + "/stats"
        for count in (int(n) for n in args.consumers.split(",")):
            consumers = [Consumer(n, dict(os.environ), args.workers, periodic=n == 0,
                                  core=n % os.cpu_count() if args.pin else None) for n in range(count)]
            try:
                for consumer in consumers:
                    consumer.wait_ready()
                tag = f"bench-sim-{count}"
                calls_before = json.load(urllib.request.urlopen(stats_url))["requests"]
                cpu_before = [consumer.cpu() for consumer in consumers]
                server_before = process_cpu(server.pid)
                self_before = resource.getrusage(resource.RUSAGE_SELF)
                started = time.perf_counter()
                call_command(
                    "simulate", conditions=args.conditions, agent_model=args.model, partner_model=args.model,
                    concurrency=args.concurrency, turn_cap=args.turn_cap, run_name=tag,
                    episodes_per_cell=args.episodes_per_cell,
                    **({"scenarios": ",".join(codenames)} if codenames else {}),
                    judge_model="none",  # the simulation alone; scoring is measured apart
                )
                wall = time.perf_counter() - started
                stats = json.load(urllib.request.urlopen(stats_url))
                consumer_cpu = sum(c.cpu() - before for c, before in zip(consumers, cpu_before, strict=True))
                server_cpu = process_cpu(server.pid) - server_before
                itself = resource.getrusage(resource.RUSAGE_SELF)
                own_cpu = itself.ru_utime + itself.ru_stime - self_before.ru_utime - self_before.ru_stime
            finally:
                for consumer in consumers:
                    consumer.stop()
            calls = stats["requests"] - calls_before
            run = SimulationRun.objects.get(tag=tag)
            slots = args.concurrency * args.workers * count
            ideal = calls * args.latency / slots
            print(f"{count} consumer(s) × {args.workers} worker(s){' pinned' if args.pin else ''}: "
                  f"episodes {run.finished} finished, {run.failed} failed of {run.total}; "
                  f"most calls in flight {stats['max_in_flight']}")
            print(f"  model calls: {calls}  wall: {wall:.1f} s  ideal: {ideal:.1f} s  ratio: {wall / ideal:.2f} "
                  f"(goal: 1.3)  {calls / wall:.0f} calls/s")
            print(f"  CPU a call: {consumer_cpu / calls * 1000:.1f} ms in the consumers, "
                  f"{server_cpu / calls * 1000:.1f} ms in the fake server, {own_cpu / calls * 1000:.2f} ms here")
            results.append((count, wall))
            Episode.objects.filter(tag=tag).delete()
            SimulationRun.objects.filter(tag=tag).delete()
        if len(results) > 1:
            (first, first_wall), *others = results
            for count, wall in others:
                print(f"{count} consumers against {first}: {first_wall / wall:.2f}× as fast")
    finally:
        server.terminate()
        server.wait(5)
        empty()


def two_party_scenarios(team, count: int) -> None:
    """``count`` generated two-party scenarios, each role with one goal."""
    from benchmark.models import Character, Goal, Role, Scenario

    characters = Character.objects.bulk_create(
        Character(team=team, first_name=name, last_name="Bench", occupation=OCCUPATIONS[n % len(OCCUPATIONS)],
                  gender="woman" if n % 2 else "man", pronouns="she/her" if n % 2 else "he/him",
                  public_info=f"{name} is a {OCCUPATIONS[n % len(OCCUPATIONS)]}.", external_id=f"bench-character-{n}")
        for n, name in enumerate(NAMES)
    )
    scenarios = Scenario.objects.bulk_create(
        Scenario(
            team=team, external_id=f"bench-scenario-{n}", codename=f"bench-{n:03d}", source="benchmark",
            context=f"Two people meet in {SETTINGS[n % len(SETTINGS)]} to talk about "
                    f"{MATTERS[(n // len(SETTINGS)) % len(MATTERS)]}.",
            difficulty="hard" if n % 3 == 0 else "standard", relationship=n % 5,
        )
        for n in range(count)
    )
    roles = Role.objects.bulk_create(
        Role(scenario=scenario, position=position, character=characters[(2 * n + position) % len(characters)],
             reason="It has been weighing on you for weeks.",
             private_knowledge=f"You can give in on {20 + n % 30} euros at most.")
        for n, scenario in enumerate(scenarios)
        for position in (0, 1)
    )
    Goal.objects.bulk_create(
        Goal(role=role, position=0,
             text=f"Settle {MATTERS[(index // 2) % len(MATTERS)]} on terms that suit you (role {role.position + 1}).")
        for index, role in enumerate(roles)
    )


def multi_party_scenarios(team) -> list[str]:
    """The demo's scenarios of more than two parties, installed as ``load_demo`` does; their codenames."""
    from benchmark.demo.content import GROUP_SCENARIOS
    from benchmark.demo.group_templates import TEMPLATES
    from benchmark.demo.install import install_scenario, install_template_instances

    scenarios = [install_scenario(spec, team) for spec in GROUP_SCENARIOS]
    scenarios += [instance.scenario for spec in TEMPLATES for instance in install_template_instances(spec, team)]
    return [scenario.codename for scenario in scenarios]


if __name__ == "__main__":
    main()
