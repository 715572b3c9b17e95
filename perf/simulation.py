"""How close a SocialVeil-sized simulation run comes to the ideal wall time.

Generates N scenarios (default 180, a third tagged hard, two cast roles each), starts
``perf/fake_openai.py`` in a subprocess with a fixed latency (default 0.2 s), and runs
``manage.py simulate`` over them under the four conditions (720 episodes of up to 20 turns) with
concurrency 64. The fake server always answers with a ``speak`` action, so every episode runs to
the turn cap: 14,400 model calls. It prints the wall time, the model calls the server answered,
the ideal time (model calls × latency ÷ concurrency) and the ratio of the two; the goal is 1.3 at
most.

    .venv/bin/python perf/simulation.py [--scenarios 180] [--workers 2] [--concurrency 64]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench_sim .venv/bin/python perf/simulation.py
    .venv/bin/python perf/simulation.py --scenarios 12      # a quick check
    .venv/bin/python perf/simulation.py --multi-party --episodes-per-cell 32

``--multi-party`` plays the demo's scenarios of three and four parties instead (the heating bill,
24 turns, and the six instances of the two demo templates, 15 turns each, in random order after a
greeting) under the same conditions, ``--episodes-per-cell`` episodes of each: 32 make 14,592
calls, about the two-party run's. Both print the overhead per model call: the wall time each of
the ``concurrency`` slots spent on a call beyond the model's own latency, and the CPU time a call
cost (supervisor, workers and fake server), so the two runs compare call for call.

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
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=180, help="Scenarios to generate (default: 180).")
    parser.add_argument("--conditions", default="none,semantic,sociocultural,emotional", help="Barrier keys.")
    parser.add_argument("--concurrency", type=int, default=64, help="Model calls in flight (default: 64).")
    parser.add_argument("--workers", type=int, default=2, help="Simulation processes (default: 2).")
    parser.add_argument("--latency", type=float, default=0.2, help="Fake model latency in seconds (default: 0.2).")
    parser.add_argument("--turn-cap", type=int, default=20, help="Turns per episode (default: 20).")
    parser.add_argument("--model", default="openai/gpt-4o-mini", help="Model name sent to the fake server.")
    parser.add_argument("--multi-party", action="store_true",
                        help="Play the demo's three- and four-party scenarios instead of generated two-party ones.")
    parser.add_argument("--episodes-per-cell", type=int, default=1,
                        help="Episodes per scenario × condition (default: 1).")
    args = parser.parse_args()

    os.environ.setdefault("PARLEY_VAR_DIR", tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")  # development settings, as the published figures were measured
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from benchmark.models import DEFAULT_TEAM_SLUG, Character, Episode, Scenario, SimulationRun, Team

    def empty() -> None:
        SimulationRun.objects.all().delete()
        Episode.objects.all().delete()
        Scenario.objects.filter(template__isnull=False).delete()  # a template's instances before the template
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    call_command("migrate", verbosity=0)
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

    server = subprocess.Popen(
        [sys.executable, str(ROOT / "perf" / "fake_openai.py"), "--port", "0", "--latency", str(args.latency)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        api_base = server.stdout.readline().strip().rsplit(" ", 1)[-1]
        settings.PARLEY_LLM_API_BASE = api_base
        settings.PARLEY_LLM_API_KEY = "benchmark"
        settings.PARLEY_LLM_MAX_RETRIES = 0
        stats_url = api_base.removesuffix("/v1") + "/stats"
        calls_before = json.load(urllib.request.urlopen(stats_url))["requests"]
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        call_command(
            "simulate", conditions=args.conditions, agent_model=args.model, partner_model=args.model,
            concurrency=args.concurrency, workers=args.workers, turn_cap=args.turn_cap, run_name="bench-sim",
            episodes_per_cell=args.episodes_per_cell, **({"scenarios": ",".join(codenames)} if codenames else {}),
            judge_model="none",  # the simulation alone; scoring is measured apart
        )
        wall = time.perf_counter() - started
        stats = json.load(urllib.request.urlopen(stats_url))
    finally:
        server.terminate()
        server.wait(5)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    itself = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu = children.ru_utime + children.ru_stime - children_before.ru_utime - children_before.ru_stime
    own_cpu = itself.ru_utime + itself.ru_stime - self_before.ru_utime - self_before.ru_stime
    calls = stats["requests"] - calls_before
    run = SimulationRun.objects.get(tag="bench-sim")
    ideal = calls * args.latency / args.concurrency
    print(f"episodes: {run.finished} finished, {run.failed} failed of {run.total}; "
          f"most model calls in flight: {stats['max_in_flight']}")
    print(f"model calls: {calls}  wall: {wall:.1f} s  ideal: {ideal:.1f} s  ratio: {wall / ideal:.2f} (goal: 1.3)")
    print(f"CPU: {own_cpu:.1f} s in the supervisor, {server_cpu:.1f} s in worker processes and the fake server "
          f"({(own_cpu + server_cpu) / calls * 1000:.1f} ms a call)")
    overhead = wall * args.concurrency / calls - args.latency
    print(f"{'multi-party' if args.multi_party else 'two-party'}: {calls / wall:.0f} calls/s; overhead per call "
          f"{overhead * 1000:.1f} ms of wall time beyond the model's {args.latency * 1000:.0f} ms, "
          f"{(own_cpu + server_cpu) / calls * 1000:.1f} ms of CPU")
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
