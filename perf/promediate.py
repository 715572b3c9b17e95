"""How fast a ProMediate negotiation plays: model calls, wall time and CPU per call, for one case.

Imports one ProMediate case (default ``../shared/data/promediate/hmo.json``: three parties, five topics,
60 turns after the opening) into a scratch database, then plays ``simulate --preset promediate`` on it
under one conflict mode and the chosen mediator conditions, twice:

1. offline, every role ``scripted`` (no model call at all: the loop's own cost, database included);
2. with every role a language model served by a fake OpenAI-compatible server with a fixed latency
   (default 0.05 s), started in a subprocess by this script (``--serve``), which answers each of the
   negotiators' prompts with the JSON it asks for (thoughts, ratings, articulations, the next speaker,
   the mediators' decisions, strategies and messages, the tracker's state).

The run's tasks play inline here (``PARLEY_TASKS_IMMEDIATE``), so the time is one consumer's. For each
it prints the negotiations, turns, model calls (the fake server's count), wall time, and the CPU this
process spent per call (the fake server's CPU is not counted: it is another process). A party turn
costs one call for who the floor is handed to, three per thinking party (its thoughts, then a rating
for each of its two) and one articulation; a mediator's decision one more, and an intervention one
(generic) or five (social: its strategies, a rating each, the articulation) besides. Round trips per
party turn: the mediator's decision, the thoughts (with the allocation alongside), the ratings, the
articulation.

    .venv/bin/python perf/promediate.py [--case PATH] [--mediators none,generic,social] [--latency 0.05]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench_pm .venv/bin/python perf/promediate.py

It uses a scratch database: a temporary SQLite file by default, or the one DATABASE_URL names, in which
the team's runs, episodes, scenarios and characters are deleted first and last.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT.parent / "shared" / "data" / "promediate" / "hmo.json"
MODEL = "openai/gpt-4o-mini"


def negotiation_reply(messages: list[dict[str, Any]]) -> str:
    """The JSON each negotiator prompt asks for (``benchmark.agents.negotiation.prompts``), stable per prompt."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    digest = int(hashlib.blake2b(text.encode(), digest_size=4).hexdigest(), 16)
    rating = 1.0 + (digest % 40) / 10
    if '{"thoughts"' in text:
        return json.dumps(
            {
                "thoughts": [
                    {"content": "On Contract Term, hold out for option (b).", "stimuli": "x"},
                    {"content": "On Formulary Status, ask for option (a).", "stimuli": "y"},
                ]
            }
        )
    if '"articulation"' in text:
        return json.dumps({"articulation": "On Contract Term, option (b) is what we need."})
    if '"next_speaker"' in text:
        return json.dumps({"next_speaker": "anyone"})
    if '"strategies"' in text:
        return json.dumps(
            {
                "strategies": [
                    {"family": f, "content": f"A {f} step on the open issue."}
                    for f in ("facilitative", "evaluative", "problem-solving")
                ]
            }
        )
    if '"should_engage"' in text:
        return json.dumps({"should_engage": digest % 5 == 0, "rating": rating, "reason": "checked"})
    if '"message"' in text:
        return json.dumps({"message": "Let us look at where each of you stands on the open issue."})
    if '"rating"' in text:
        return json.dumps({"reasoning": "weighed", "rating": rating})
    if "Update the state" in text:
        return json.dumps({"Contract Term": {"label": "unresolved", "mind_state": {}, "conclusion": "open"}})
    return "Fake reply: the model heard you."


def serve(latency: float) -> None:
    """The fake server for this benchmark, in this process until killed; prints its address first."""
    sys.path.insert(0, str(ROOT / "perf"))
    from fake_openai import FakeOpenAI

    server = FakeOpenAI(latency=latency, reply=negotiation_reply).start_in_thread()
    print(f"fake OpenAI server on {server.api_base}", flush=True)
    while True:
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", default=str(CASE), help="The ProMediate case file (default: hmo.json).")
    parser.add_argument("--mode", default="competing", help="Conflict mode (default: competing).")
    parser.add_argument("--mediators", default="none,generic,social", help="Mediator conditions.")
    parser.add_argument("--latency", type=float, default=0.05, help="Fake model latency in seconds.")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return

    scratch = Path(tempfile.mkdtemp(prefix="parley-bench-pm-"))
    os.environ.setdefault("PARLEY_VAR_DIR", str(scratch))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "DATABASE_URL" not in os.environ:
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'parley.sqlite3'}"
    os.environ["PARLEY_TASKS_IMMEDIATE"] = "true"
    os.environ["PARLEY_ALLOWED_MODELS"] = MODEL
    os.environ["PARLEY_LLM_API_KEY"] = "benchmark"
    os.environ["PARLEY_LLM_MAX_RETRIES"] = "0"
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(args.latency)], stdout=subprocess.PIPE, text=True
    )
    api_base = server.stdout.readline().strip().rsplit(" ", 1)[-1]
    os.environ["PARLEY_LLM_API_BASE"] = api_base
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmark.importing import import_file
    from benchmark.models import DEFAULT_TEAM_SLUG, Character, Episode, MediatorDecision, Scenario, SimulationRun, Team

    def empty() -> None:
        SimulationRun.objects.all().delete()
        Episode.objects.all().delete()
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    def requests() -> int:
        from urllib.request import urlopen

        with urlopen(api_base.removesuffix("/v1") + "/stats") as reply:
            return json.loads(reply.read())["requests"]

    try:
        call_command("migrate", verbosity=0)
        empty()
        team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
        import_file(args.case, team=team)
        scenario = Scenario.objects.get(team=team, source="promediate")
        print(
            f"database: {connection.vendor}; case {scenario} ({scenario.roles.count()} roles, "
            f"{scenario.topics.count()} topics, turn cap {scenario.turn_cap}); fake latency {args.latency} s"
        )
        for label, model in (("scripted", "scripted"), ("fake server", MODEL)):
            tag = f"bench-pm-{label.replace(' ', '-')}"
            calls_before = requests()
            cpu_before = resource.getrusage(resource.RUSAGE_SELF)
            started = time.perf_counter()
            call_command(
                "simulate",
                "--preset",
                "promediate",
                "--scenarios",
                str(scenario.pk),
                "--conditions",
                f"promediate-{args.mode}",
                "--mediator",
                args.mediators,
                "--runs",
                "1",
                "--model",
                model,
                "--judge-model",
                "none",
                "--run-name",
                tag,
                stdout=io.StringIO(),
                stderr=io.StringIO(),
            )
            wall = time.perf_counter() - started
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu = usage.ru_utime - cpu_before.ru_utime + usage.ru_stime - cpu_before.ru_stime
            calls = requests() - calls_before
            episodes = Episode.objects.filter(tag=tag)
            turns = sum(e.turns.count() for e in episodes)
            decisions = MediatorDecision.objects.filter(episode__in=episodes).count()
            per_call = f"{1000 * cpu / calls:.1f} ms CPU per call" if calls else "no model call"
            print(
                f"{label:12} {episodes.count()} negotiations, {turns} turns, {decisions} mediator decisions, "
                f"{calls} model calls; wall {wall:.1f} s ({wall / max(turns, 1) * 1000:.0f} ms per turn), "
                f"CPU {cpu:.1f} s, {per_call}"
            )
    finally:
        empty()
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
