"""How fast a ProMediate negotiation plays and is evaluated: model calls, wall time and CPU per call, for one case.

Imports one ProMediate case (default ``../shared/data/promediate/hmo.json``: three parties, five topics,
60 turns after the opening) into a scratch database, then plays ``simulate --preset promediate`` on it
under one conflict mode and the chosen mediator conditions, twice:

1. offline, every role ``scripted`` (no model call at all: the loop's own cost, database included);
2. with every role a language model served by a fake OpenAI-compatible server with a fixed latency
   (default 0.05 s), started in a subprocess by this script (``--serve``), which answers each of the
   negotiators' prompts with the JSON it asks for (thoughts, ratings, articulations, the next speaker,
   the mediators' decisions, strategies and messages, the tracker's state).

Then it runs ProMediate's evaluation pass (``evaluate --promediate``) over every negotiation played,
twice as well: with the scripted judges (the offline heuristics), and with a model judge served by the
same fake server, which answers the five judges' prompts (J1 attitudes, J2 pair agreement, J3 mediator
intelligence, J4 topics mentioned, J5 topics addressed) with the JSON each asks for.

The run's tasks play inline here (``PARLEY_TASKS_IMMEDIATE``), so the time is one consumer's. For each
it prints the negotiations, turns, model calls (the fake server's count), wall time, and the CPU this
process spent per call (the fake server's CPU is not counted: it is another process). A party turn
costs one call for who the floor is handed to, three per thinking party (its thoughts, then a rating
for each of its two) and one articulation; a mediator's decision one more, and an intervention one
(generic) or five (social: its strategies, a rating each, the articulation) besides. Round trips per
party turn: the mediator's decision, the thoughts (with the allocation alongside), the ratings, the
articulation. The evaluation asks, per episode, J1 on every party turn (and on a brief that words a
stance without ranking it), J4 on every spoken turn, J5 and J3 on every intervention, and J2 on every
pair and topic a party turn changed (pairs alike asked once), ``--judge-concurrency`` calls at a time.

    .venv/bin/python perf/promediate.py [--case PATH] [--mediators none,generic,social] [--latency 0.05]
        [--judge-concurrency 4]
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
import re
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
PAIR_SCORES = (  # what J2 rates (PairAgreement.DIMENSIONS and the overall score), named here without Django
    "shared_goals",
    "common_understanding",
    "agreement_on_terms",
    "tone_and_willingness",
    "shared_decision_making",
    "overall_consensus_score",
)


def _prompt(messages: list[dict[str, Any]]) -> tuple[str, int]:
    """The prompt's text and a number drawn from it, so that a reply is stable per prompt and varies across."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    return text, int(hashlib.blake2b(text.encode(), digest_size=4).hexdigest(), 16)


def reply(messages: list[dict[str, Any]]) -> str:
    """The fake server's answer: a judge's when a ProMediate judge asks, else a negotiator's."""
    return judge_reply(messages) or negotiation_reply(messages)


def judge_reply(messages: list[dict[str, Any]]) -> str | None:
    """The JSON each ProMediate judge prompt asks for (``benchmark.evaluation.promediate.prompts``, J1–J5),
    read back from the reply shape the prompt shows; None when the prompt is not a judge's."""
    text, digest = _prompt(messages)
    topics = re.findall(r'"(T\d+)": (?:"\.\.\."|false)', text)
    if '{"attitudes"' in text:  # J1: a stance per topic, or none; a few per turn so the pairs get rescored
        stances = ("No mention", "No mention", "wants (a), the first option", "would accept (b) at most")
        return json.dumps({"attitudes": {key: stances[(digest >> i) % 4] for i, key in enumerate(topics)}})
    if '"overall_consensus_score"' in text:  # J2: five dimensions and the overall score, 0 to 1
        return json.dumps({"reasoning": "compared", **dict.fromkeys(PAIR_SCORES, (digest % 11) / 10)})
    if '{"mentions"' in text:  # J4: true or false per topic
        return json.dumps({"mentions": {key: bool((digest >> i) & 1) for i, key in enumerate(topics)}})
    if '{"addressed"' in text:  # J5: the topic keys the intervention addresses
        keys = re.findall(r"^(T\d+): ", text, re.MULTILINE)
        return json.dumps({"addressed": [key for i, key in enumerate(keys) if (digest >> i) & 1]})
    questions = re.findall(r'"(\w+)": \{"reasoning": "\.\.\.", "score": 1-5 or "na"\}', text)
    if questions:  # J3: a score from 1 to 5, or "na", per question
        scores = (1, 2, 3, 4, 5, "na")
        return json.dumps(
            {key: {"reasoning": "weighed", "score": scores[(digest >> i) % 6]} for i, key in enumerate(questions)}
        )
    return None


def negotiation_reply(messages: list[dict[str, Any]]) -> str:
    """The JSON each negotiator prompt asks for (``benchmark.agents.negotiation.prompts``), stable per prompt."""
    text, digest = _prompt(messages)
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

    server = FakeOpenAI(latency=latency, reply=reply).start_in_thread()
    print(f"fake OpenAI server on {server.api_base}", flush=True)
    while True:
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", default=str(CASE), help="The ProMediate case file (default: hmo.json).")
    parser.add_argument("--mode", default="competing", help="Conflict mode (default: competing).")
    parser.add_argument("--mediators", default="none,generic,social", help="Mediator conditions.")
    parser.add_argument("--latency", type=float, default=0.05, help="Fake model latency in seconds.")
    parser.add_argument("--judge-concurrency", type=int, default=4, help="Judge calls at once (default 4).")
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
    from django.core.management import CommandError, call_command
    from django.db import connection

    from benchmark.evaluation.promediate.passes import judge_name
    from benchmark.importing import import_file
    from benchmark.models import (
        DEFAULT_TEAM_SLUG,
        Attitude,
        Character,
        Episode,
        MediatorDecision,
        PairAgreement,
        Scenario,
        SimulationRun,
        Team,
        Turn,
    )

    def empty() -> None:
        SimulationRun.objects.all().delete()
        Episode.objects.all().delete()
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    def requests() -> int:
        from urllib.request import urlopen

        with urlopen(api_base.removesuffix("/v1") + "/stats") as reply:
            return json.loads(reply.read())["requests"]

    def measure(command: str, *arguments: str) -> tuple[int, float, float]:
        """Run one command; its model calls (the fake server's count), wall time and this process's CPU."""
        calls_before = requests()
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        errors = io.StringIO()
        try:
            call_command(command, *arguments, stdout=io.StringIO(), stderr=errors)
        except CommandError:
            print(errors.getvalue(), file=sys.stderr)
            raise
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime - cpu_before.ru_utime + usage.ru_stime - cpu_before.ru_stime
        return requests() - calls_before, wall, cpu

    def costs(calls: int, wall: float, cpu: float, unit: str, units: int) -> str:
        per_call = f"{1000 * cpu / calls:.1f} ms CPU per call" if calls else "no model call"
        return (
            f"{calls} model calls; wall {wall:.1f} s ({wall / max(units, 1) * 1000:.0f} ms per {unit}), "
            f"CPU {cpu:.1f} s, {per_call}"
        )

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
        print("simulation (simulate --preset promediate):")
        for label, model in (("scripted", "scripted"), ("fake server", MODEL)):
            tag = f"bench-pm-{label.replace(' ', '-')}"
            measured = measure(
                "simulate",
                *("--preset", "promediate", "--scenarios", str(scenario.pk), "--runs", "1", "--model", model),
                *("--conditions", f"promediate-{args.mode}", "--mediator", args.mediators),
                *("--judge-model", "none", "--run-name", tag),
            )
            episodes = Episode.objects.filter(tag=tag)
            turns = sum(e.turns.count() for e in episodes)
            decisions = MediatorDecision.objects.filter(episode__in=episodes).count()
            print(
                f"  {label:12} {episodes.count()} negotiations, {turns} turns, {decisions} mediator decisions, "
                + costs(*measured, "turn", turns)
            )

        # The pass reads what the negotiations said: every episode played above, whichever model played it.
        played = Episode.objects.filter(tag__startswith="bench-pm-")
        ids = ",".join(str(pk) for pk in played.values_list("pk", flat=True))
        turns = Turn.objects.filter(episode__in=played).count()
        print(f"evaluation (evaluate --promediate, judge concurrency {args.judge_concurrency}):")
        for label, model in (("scripted", "scripted"), ("fake server", MODEL)):
            measured = measure(
                "evaluate",
                *("--promediate", "--ids", ids, "--judge-model", model),
                *("--concurrency", str(args.judge_concurrency), "--retries", "0"),
            )
            judge, version = judge_name(model)
            episodes = Attitude.objects.filter(judge=judge, prompt_version=version).values("episode").distinct()
            pairs = PairAgreement.objects.filter(judge=judge, prompt_version=version).count()
            print(
                f"  {label:12} {episodes.count()} episodes, {turns} turns, {pairs} pair scores, "
                + costs(*measured, "turn", turns)
            )
    finally:
        empty()
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
