"""How fast Parley imports and exports episodes.

Loads the demo, exports it as Parley JSON Lines, multiplies it into N episodes with fresh
external ids, then times: importing them into an empty database, exporting them, re-importing
them (everything unchanged), importing every real Sotopia file in ../shared/data/sotopia, and adding
scores to stored episodes (Sotopia's GPT-4 judge file; a scores-only CSV of 10,000 rows, twice).

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
        Scenario.objects.filter(template__isnull=False).delete()  # before the templates they were made from
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
    time_scores(team, workdir, min(args.episodes, 1000))

    empty()


def time_scores(team, workdir: Path, episodes: int) -> None:  # noqa: ANN001 - a Team, after django.setup()
    """Scores onto stored episodes: Sotopia's GPT-4 judge file onto the human-eval episodes, then a
    scores-only CSV of 10 rows per episode (5 dimensions, 2 seats) onto the generated ones, and again."""
    from benchmark.importing import import_file
    from benchmark.models import Response

    # The Sotopia files above already attached the file's scores: time attaching them, not finding them there.
    judge = {"respondent__model": "gpt-4", "respondent__prompt_version": "sotopia"}
    Response.objects.filter(episode__team=team, **judge).delete()
    started = time.perf_counter()
    result = import_file(SOTOPIA / "sotopia_humaneval_gpt4_scores_140.json", team=team)
    elapsed = time.perf_counter() - started
    print(f"gpt-4 scores: {elapsed:6.2f} s  (140 scored, {result.changed['episode'] + result.unchanged['episode']} "
          f"in Parley, {result.created['answer']} answers added)")
    scores = workdir / "scores.csv"
    with scores.open("w") as out:
        out.write("episode_id,respondent,question,seat,value,reasoning\n")
        for number in range(episodes):
            for question in ("goal", "believability", "knowledge", "relationship", "secret"):
                value = -(number % 3) if question == "secret" else number % 6
                for seat in (0, 1):
                    out.write(f"bench-{number:06d},bench-judge,{question},{seat},{value},because\n")
    for label in ("scores csv", "again"):
        started = time.perf_counter()
        result = import_file(scores, team=team)
        elapsed = time.perf_counter() - started
        print(f"{label}: {elapsed:6.2f} s  {episodes * 10 / elapsed:8.0f} rows/s  ({episodes * 10} rows; "
              f"{result.created['answer']} answers added, {result.unchanged['episode']} episodes unchanged)")


if __name__ == "__main__":
    main()
