"""How fast Parley imports and exports episodes.

Loads the demo, exports it as Parley JSON Lines, multiplies it into N episodes with fresh
external ids, then times: importing them into an empty database, exporting them, re-importing
them (everything unchanged), and importing every real Sotopia file in ../shared/data/sotopia.

    .venv/bin/python benchmarks/import_export.py [--episodes 2000]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench .venv/bin/python benchmarks/import_export.py

Episodes, scenarios and characters in the database named by DATABASE_URL are deleted first and
last (default: a temporary SQLite file).
"""

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOTOPIA = ROOT.parent / "shared" / "data" / "sotopia"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2000, help="How many episodes to import and export.")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("PARLEY_VAR_DIR", str(workdir))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")  # development settings, as the published figures were measured
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmark.exporting import export_episodes, select_episodes
    from benchmark.importing import ImportProblem, import_file
    from benchmark.models import DEFAULT_TEAM_SLUG, Character, Episode, Scenario, Team, Turn

    def empty() -> None:
        """Remove episodes, scenarios and characters; the seeded barriers stay."""
        Episode.objects.all().delete()
        Scenario.objects.exclude(template=None).delete()  # instances first: they protect their templates
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    call_command("migrate", verbosity=0)
    empty()
    call_command("load_demo", "--skip-accounts", stdout=io.StringIO())
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
    demo = io.StringIO()
    export_episodes(select_episodes(team), demo)
    lines = [json.loads(line) for line in demo.getvalue().splitlines()]

    big = workdir / "episodes.jsonl"
    with big.open("w") as out:
        for number in range(args.episodes):
            record = dict(lines[number % len(lines)])
            record["external_id"] = f"bench-{number:06d}"
            out.write(json.dumps(record, sort_keys=True) + "\n")
    turns = sum(len(lines[n % len(lines)]["turns"]) for n in range(args.episodes))
    empty()

    print(f"database: {connection.vendor}; {args.episodes} episodes, {turns} turns, "
          f"{big.stat().st_size / 1e6:.1f} MB of JSON Lines")

    started = time.perf_counter()
    result = import_file(big, team=team)
    elapsed = time.perf_counter() - started
    assert result.created["episode"] == args.episodes
    print(f"import:    {elapsed:6.2f} s  {args.episodes / elapsed:7.0f} episodes/s  {turns / elapsed:8.0f} turns/s")

    started = time.perf_counter()
    exported = io.StringIO()
    export_episodes(select_episodes(team), exported)
    elapsed = time.perf_counter() - started
    print(f"export:    {elapsed:6.2f} s  {args.episodes / elapsed:7.0f} episodes/s  {turns / elapsed:8.0f} turns/s")

    started = time.perf_counter()
    again = import_file(big, team=team)
    elapsed = time.perf_counter() - started
    assert again.unchanged["episode"] == args.episodes and Turn.objects.count() == turns
    print(f"re-import: {elapsed:6.2f} s  (all {args.episodes} unchanged)")

    files = sorted(SOTOPIA.glob("*profiles.json")) + sorted(SOTOPIA.glob("serialized_*.jsonl"))
    files += [p for p in sorted(SOTOPIA.glob("*.json*")) if p not in files]
    started = time.perf_counter()
    imported, refused = [], []
    for path in files:  # shapes the importer does not read yet are named, not timed
        try:
            imported.append(import_file(path, team=team))
        except ImportProblem as problem:
            refused.append(f"{path.name} ({problem})")
    elapsed = time.perf_counter() - started
    episodes = sum(r.created["episode"] for r in imported)
    print(f"sotopia:   {elapsed:6.2f} s  for {len(imported)} real files ({episodes} episodes and their profiles)")
    for line in refused:
        print(f"  refused: {line}")

    empty()
    time_sotopia_logs(team)
    empty()


def time_sotopia_logs(team) -> None:  # noqa: ANN001 - a Team, imported after django.setup()
    """The early v1 transcripts and the human-evaluation exports, each read from text alone, into an
    empty team: the scenario and people are rebuilt from the log, the turns parsed out of prose."""
    from benchmark.importing import import_file

    for label, paths in (
        ("v1 text", [SOTOPIA / "sotopia_v1_transcript_only_30.jsonl"]),
        ("human eval", sorted(SOTOPIA.glob("*human_eval*.json")) + sorted(SOTOPIA.glob("*humaneval_[!g]*.json"))),
    ):
        started = time.perf_counter()
        results = [import_file(path, team=team) for path in paths]
        elapsed = time.perf_counter() - started
        episodes = sum(result.created["episode"] for result in results)
        turns = sum(result.created["turn"] for result in results)
        print(f"{label + ':':11}{elapsed:6.2f} s  for {len(paths)} files, {episodes} episodes, {turns} turns "
              f"({episodes / elapsed:.0f} episodes/s)")


if __name__ == "__main__":
    main()
