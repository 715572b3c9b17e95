"""How fast the benchmark results are on a SocialVeil-sized experiment (pure statistics path, no database).

Builds in memory what ``benchmark.results.build.results_table`` would read: 180 scenarios x 4 conditions
(none, semantic, sociocultural, emotional) x 1 episode = 720 episodes per partner model, 2 seats
each (barrier and partner), the 9 evaluation dimensions (7 per seat, 2 per episode) and the 8
linguistic features. Then times ``benchmark.stats.results.results_report``: means and standard
errors per model and condition (all and per difficulty), percent changes, barrier deviations with
a 1,000-resample cluster bootstrap, and 144 correlations per scope. The goal is well under a few
seconds on a 2-core machine (we aim for 1 s).

It also times the linguistic features themselves (``benchmark.stats.linguistic.signature``) over
720 transcripts of 20 turns, which each turn's stored features now spare the page.

With ``--page`` it then times the whole results page through Django's view stack (test client, a
researcher of a team of its own) on real data: SocialVeil's GPT-4o-mini run of
../shared/realdata/socialveil/runs/exp_gpt4o-mini_episode_all_neutralized (720 episodes, 28,870
turns), imported with the scenario files first, as README's "Reproducing SocialVeil" does. It prints
the page as it was before features were stored (every feature computed, nothing cached), the first
load after the import (computes and stores every turn's features), cold loads (features stored,
nothing else cached: the cache emptied, the per-process utterance cache too) and the three figures
the page then asks for, warm loads (the same filters again) and ``benchmark_report`` (which builds
without the page's cache).

    .venv/bin/python perf/results_report.py [--scenarios 180] [--models 1] [--resamples 1000] [--repeat 3]
    .venv/bin/python perf/results_report.py --page [--repeat 3]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench .venv/bin/python perf/results_report.py --page

The page's team, with its episodes, scenarios and characters, is removed at the end (default
database: a temporary SQLite file).
"""

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SOCIALVEIL = ROOT.parent / "shared" / "realdata" / "socialveil"
SOCIALVEIL_RUN = SOCIALVEIL / "runs" / "exp_gpt4o-mini_episode_all_neutralized"
SCENARIO_FILES = ("episodes_all_cultural.json", "episodes_all_emotional.json",
                  "episodes_all_composite_emotional_semantic.json")
RUN_MODES = ("baseline", "semantic", "cultural", "emotional")
PAGE_GOALS = {"cold": 2.0, "warm": 0.5}
GOAL_SECONDS = 1.0
CONDITIONS = ("none", "semantic", "sociocultural", "emotional")
# Rough per-condition effects on the 1-5 and 0-10 scales, so the deviations have something to find.
SHIFT = {"none": 0.0, "semantic": -1.2, "sociocultural": -0.8, "emotional": -1.0}
LINES = (
    "Maybe we could sort of talk about the thing, you know?",
    "I'm not sure that works for me, I guess it depends on the stuff.",
    "Thank you, that sounds great. Let's meet on Tuesday at 5 pm.",
    "I am so stressed and upset about all of this, it is awful.",
    "Could you tell me which one you mean, exactly?",
)


def judge_scales() -> dict:
    """The range and scope of the judge presets' nine dimensions, as the statistics take them."""
    from benchmark.instruments.rubrics import JUDGE_DIMENSIONS
    from benchmark.stats.results import Scale

    return {key: Scale(q.low, q.high, q.per_seat) for key, (_, q) in JUDGE_DIMENSIONS.items()}


def synthetic_table(scenarios: int, models: int, seed: int = 7) -> pd.DataFrame:
    """One row per (episode, seat), columns as benchmark.results.build.table_columns() makes them."""
    from benchmark.stats.linguistic import FEATURES

    rng = np.random.default_rng(seed)
    frames = []
    episode = 0
    for model in range(models):
        scenario = np.repeat(np.arange(scenarios), len(CONDITIONS))
        condition = np.tile(np.array(CONDITIONS), scenarios)
        n = len(scenario)
        ids = np.arange(episode, episode + n)
        episode += n
        shift = np.array([SHIFT[c] for c in condition])
        scores = {}
        for key, dimension in judge_scales().items():
            span = dimension.high - dimension.low
            latent = dimension.low + span * 0.6 + shift * span / 8 + rng.normal(0, span / 10, (2, n))
            values = np.clip(np.rint(latent), dimension.low, dimension.high)
            if not dimension.per_seat:
                values[1] = values[0]
            scores[key] = values
        features = {
            f"{source}.{feature}": np.repeat(rng.normal(0.05 - 0.01 * shift, 0.02), 1)
            for source in ("barrier_speech", "transcript") for feature in FEATURES
        }
        for seat, role in ((0, "barrier"), (1, "partner")):
            frames.append(pd.DataFrame({
                "episode": ids, "seat": seat, "seat_role": role, "model": f"model-{model}" if seat else "barrier",
                "partner_model": f"model-{model}", "barrier_model": "barrier", "condition": condition,
                "scenario": scenario.astype(str), "difficulty": np.where(scenario % 3 == 0, "hard", "standard"),
                "strategy": "default", "evaluator": "judge", "prompt_version": "v1",
                **{key: values[seat] for key, values in scores.items()},
                **features,
            }))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=180, help="Scenarios (x 4 conditions = episodes per model).")
    parser.add_argument("--models", type=int, default=1, help="Partner models.")
    parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples.")
    parser.add_argument("--repeat", type=int, default=3, help="Timed runs; the best is reported.")
    parser.add_argument("--page", action="store_true", help="Also time the results page on SocialVeil's real run.")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from benchmark.stats.linguistic import signature
    from benchmark.stats.results import results_report

    table = synthetic_table(args.scenarios, args.models)
    scales = judge_scales()
    results_report(table.head(64), scales=scales, resamples=10)  # warm imports

    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        report = results_report(table, scales=scales, conditions=CONDITIONS, resamples=args.resamples, seed=0)
        times.append(time.perf_counter() - start)
    best = min(times)
    json.dumps(report, allow_nan=False)  # strict JSON at this size too

    episodes = table["episode"].nunique()
    model = report["models"][0]
    semantic = report["means"][model]["semantic"]["mutual_understanding"]
    deviation = next(e for e in report["deviations"]
                     if e["barrier"] == "semantic" and e["dimension"] == "mutual_understanding")
    print(f"{episodes:,} episodes x 2 seats x {len(report['dimensions'])} dimensions "
          f"({len(table):,} rows, {args.models} model(s)), {args.resamples} bootstrap resamples")
    print(f"  semantic mutual understanding: {semantic['mean']:.2f} ± {semantic['se']:.2f} "
          f"({semantic['percent_change']:+.1f}% vs none); deviation {deviation['percent']:+.1f}% "
          f"{[round(x, 1) for x in deviation['percent_ci95']]}")
    runs = ", ".join(f"{t:.3f}" for t in times)
    verdict = "meets" if best < GOAL_SECONDS else "MISSES"
    print(f"results report: best {best:.3f} s over {args.repeat} runs ({runs}); {verdict} the {GOAL_SECONDS:g} s goal")

    # Every line unique (a number in it), so the per-utterance cache helps only as it does on real
    # transcripts: the barrier seat's lines are read again after the whole transcript.
    transcripts = [[f"{LINES[(episode + turn) % len(LINES)]} ({episode}.{turn})" for turn in range(20)]
                   for episode in range(episodes)]
    signature(["Load the sentiment lexicon."])
    start = time.perf_counter()
    for lines in transcripts:
        signature(lines)
        signature(lines[::2])  # the barrier seat's half
    elapsed = time.perf_counter() - start
    print(f"linguistic features of {episodes:,} transcripts x 20 turns (whole and barrier seat): {elapsed:.3f} s")
    if args.page:
        time_page(args.repeat)


CPU_SPENT: list[float] = []  # this process's CPU time of each timed load: the wall time a quiet machine would see


def _seconds(get: object) -> float:
    start, cpu = time.perf_counter(), time.process_time()
    response = get()  # type: ignore[operator]
    elapsed = time.perf_counter() - start
    CPU_SPENT.append(time.process_time() - cpu)
    assert response.status_code == 200, response.status_code
    return elapsed


def _load_note() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def time_page(repeat: int) -> None:
    """The results page and benchmark_report over SocialVeil's real run (see the module docstring)."""
    os.environ.setdefault("PARLEY_VAR_DIR", tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")  # development settings, as the published figures were measured
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from benchmark.importing import import_file
    from benchmark.models import Barrier, Character, Episode, Scenario, Team, TeamMember, Turn, TurnFeatures
    from benchmark.results import turn_features
    from benchmark.stats import linguistic

    call_command("migrate", verbosity=0)
    team = Team.objects.create(slug=f"bench-results-{os.getpid()}", name="Results benchmark")
    user = get_user_model().objects.create_user(username=f"bench-results-{os.getpid()}", is_staff=True)
    TeamMember.objects.create(team=team, user=user, role=TeamMember.Role.RESEARCHER)
    try:
        start = time.perf_counter()
        for name in SCENARIO_FILES:
            import_file(SOCIALVEIL / name, team=team)
        for mode in RUN_MODES:
            import_file(SOCIALVEIL_RUN / f"mode_{mode}", team=team)
        episodes = Episode.objects.filter(team=team)
        turns = Turn.objects.filter(episode__team=team)
        print(f"\nresults page, {connection.vendor}: {episodes.count():,} episodes, {turns.count():,} turns "
              f"imported in {time.perf_counter() - start:.1f} s")
        client = Client(HTTP_HOST="localhost")
        client.force_login(user)

        def page() -> object:
            return client.get("/benchmark/results/")

        def forget_features() -> None:
            TurnFeatures.objects.filter(turn__episode__team=team).delete()

        def cold() -> None:
            cache.clear()
            linguistic.utterance.cache_clear()

        cold()
        _seconds(page)  # imports matplotlib and scipy, as a server's first page does; not reported
        turn_features._store, store = (lambda features: None), turn_features._store
        forget_features()
        cold()
        before = _seconds(page)  # as before features were stored: each computed, none kept
        before_cpu = CPU_SPENT[-1]
        turn_features._store = store
        forget_features()
        cold()
        first, first_cpu = _seconds(page), CPU_SPENT[-1]
        stored = TurnFeatures.objects.filter(turn__episode__team=team).count()
        def figures() -> object:
            for name in ("means", "deviations", "correlations"):
                response = client.get(f"/benchmark/results/figures/{name}/")
                assert response.status_code == 200, response.status_code
            return response

        colds, warms, cpu = [], [], {"cold": [], "warm": []}
        drawn, drawn_cpu = [], []
        for _ in range(repeat):
            cold()
            colds.append(_seconds(page))
            cpu["cold"].append(CPU_SPENT[-1])
            drawn.append(_seconds(figures))
            drawn_cpu.append(CPU_SPENT[-1])
            for _ in range(3):
                warms.append(_seconds(page))
                cpu["warm"].append(CPU_SPENT[-1])
        cold()
        start = time.perf_counter()
        call_command("benchmark_report", team=team.slug, stdout=io.StringIO())
        report_command = time.perf_counter() - start

        print(f"  ({_load_note()}; in brackets the page's CPU time in this process)")
        print(f"  before (every turn's features computed on each load): {before:.2f} s ({before_cpu:.2f} s CPU)")
        print(f"  first load after the import (computes and stores {stored:,} turns' features): {first:.2f} s "
              f"({first_cpu:.2f} s CPU)")
        for name, times in (("cold", colds), ("warm", warms)):
            verdict = "meets" if min(times) < PAGE_GOALS[name] else "MISSES"
            print(f"  {name}: median {statistics.median(times):.3f} s, best {min(times):.3f} s over {len(times)} loads "
                  f"(CPU median {statistics.median(cpu[name]):.3f} s); {verdict} the {PAGE_GOALS[name]:g} s goal")
        print(f"  the page's three figures, asked for once it is shown (after a cold page): median "
              f"{statistics.median(drawn):.2f} s (CPU median {statistics.median(drawn_cpu):.2f} s)")
        print(f"  benchmark_report (features stored): {report_command:.2f} s")
    finally:
        Episode.objects.filter(team=team).delete()
        Scenario.objects.filter(team=team).exclude(template=None).delete()
        Scenario.objects.filter(team=team).delete()
        Character.objects.filter(team=team).delete()
        Barrier.objects.filter(team=team).delete()
        TeamMember.objects.filter(team=team).delete()
        team.delete()
        user.delete()


if __name__ == "__main__":
    main()
