"""How fast Parley imports and exports episodes.

Loads the demo, exports it as Parley JSON Lines, multiplies it into N episodes with fresh
external ids, then times: importing them into an empty database, exporting them, re-importing
them (everything unchanged), importing every real Sotopia file in ../shared/data/sotopia, and importing
SocialVeil's two real files in ../shared/data/socialveil (the hard scenarios, then the semantic barrier file).

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
SOCIALVEIL = ROOT.parent / "shared" / "data" / "socialveil"


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
        Scenario.objects.filter(template__isnull=False).delete()  # instances before the templates they protect
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
    time_socialveil(team, import_file)
    empty()


def time_socialveil(team, import_file) -> None:  # noqa: ANN001 - Django is set up inside main
    """Import SocialVeil's hard file and its semantic barrier file into an empty database, then again."""
    files = [SOCIALVEIL / "episode_hard.jsonl", SOCIALVEIL / "episodes_all_semantic.json"]
    started = time.perf_counter()
    results = [import_file(path, team=team) for path in files]
    elapsed = time.perf_counter() - started
    scenarios = sum(r.created["scenario"] for r in results)
    prompts = sum(r.created["barrier prompt"] for r in results)
    print(f"socialveil:{elapsed:6.2f} s  for 2 real files ({scenarios} scenarios, {prompts} barrier prompts)")
    started = time.perf_counter()
    again = [import_file(path, team=team) for path in files]
    elapsed = time.perf_counter() - started
    assert not any(r.created for r in again)
    print(f"  again:   {elapsed:6.2f} s  (all unchanged)")


if __name__ == "__main__":
    main()
