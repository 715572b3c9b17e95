"""How fast Parley checks and imports ratings made outside Parley (``annotator.external_ratings``).

Loads the demo, multiplies its episodes into ``--episodes`` with fresh ids, makes a Sotopia-EVAL study
of them, then times, for two files: checking the file (the page's first step, a dry run), importing
it, and importing it again (every rating unchanged). The files:

- **few raters**: a long CSV, 15 raters x 48 episodes x 2 seats x 7 questions (10,080 rows);
- **many raters**: a wide CSV, ``--raters`` raters (default 1,500) each rating one episode's two seats,
  one row per seat (a crowd-sourced study's shape).

    .venv/bin/python perf/ratings_import.py [--raters 1500]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench .venv/bin/python perf/ratings_import.py

Episodes, scenarios and characters in the database named by DATABASE_URL are deleted first and
last (default: a temporary SQLite file).
"""

import argparse
import csv
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raters", type=int, default=1500, help="Raters of the many-raters file.")
    parser.add_argument("--episodes", type=int, default=100, help="Episodes in the study.")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("PARLEY_VAR_DIR", str(workdir))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotator.models import Study, StudyItem
    from benchmark.exporting import export_episodes, select_episodes, stable_id
    from benchmark.importing import import_file
    from benchmark.instruments.presets import install_preset
    from benchmark.models import DEFAULT_TEAM_SLUG, Character, Episode, Scenario, Team

    def empty() -> None:
        Study.objects.filter(slug__startswith="bench-ratings").delete()
        Episode.objects.all().delete()
        Scenario.objects.exclude(template=None).delete()
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    call_command("migrate", verbosity=0)
    empty()
    call_command("load_demo", "--skip-accounts", stdout=io.StringIO())
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
    demo = io.StringIO()
    export_episodes(select_episodes(team), demo)
    lines = [line for line in map(json.loads, demo.getvalue().splitlines()) if len(line.get("seats", [])) == 2]
    empty()
    big = workdir / "episodes.jsonl"
    with big.open("w") as out:
        for number in range(args.episodes):
            out.write(json.dumps({**lines[number % len(lines)], "external_id": f"bench-{number:06d}"}) + "\n")
    import_file(big, team=team)
    episodes = list(Episode.objects.filter(team=team).order_by("external_id"))
    print(f"database: {connection.vendor}; a study of {len(episodes)} two-party episodes on Sotopia-EVAL")

    instrument = install_preset("sotopia-eval")
    questions = list(instrument.questions.order_by("position"))

    def value(question, number: int) -> int:  # noqa: ANN001
        return int(question.low + (question.high - question.low) * (number % 5) / 4)

    few = workdir / "few.csv"
    with few.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["episode_id", "annotator_id", "question", "seat", "value", "rationale"])
        for rater in range(15):
            for episode in episodes[:48]:
                for seat in (0, 1):
                    for question in questions:
                        out.writerow([stable_id(episode), f"prolific-{rater:04d}", question.key, seat,
                                      value(question, rater + seat), "Rated for the benchmark."])
    many = workdir / "many.csv"
    with many.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["episode_id", "annotator_id", "seat", *(column for question in questions for column in
                                                               (question.key, f"{question.key}_rationale"))])
        for rater in range(args.raters):
            for seat in (0, 1):
                out.writerow([stable_id(episodes[rater % len(episodes)]), f"crowd-{rater:05d}", seat,
                              *(cell for question in questions for cell in
                                (value(question, rater + seat), "Rated for the benchmark."))])

    for label, path, rows, ratings in (
        ("few raters", few, 15 * 48 * 2 * len(questions), 15 * 48),
        ("many raters", many, args.raters * 2, args.raters),
    ):
        time_file(label, path, rows, ratings, team, Study, StudyItem, instrument, episodes)
    empty()


def time_file(label, path, rows, ratings, team, Study, StudyItem, instrument, episodes) -> None:  # noqa: ANN001
    from django.contrib.auth import get_user_model

    from annotator.external_ratings import import_ratings
    from annotator.models import ExternalAnnotator
    from benchmark.models import Respondent

    study = Study.objects.create(team=team, title=label, slug=f"bench-ratings-{label.replace(' ', '-')}",
                                 overlap=3, instrument=instrument, instructions="Rate.")
    StudyItem.objects.bulk_create(StudyItem(study=study, episode=ep, position=n) for n, ep in enumerate(episodes))
    size = path.stat().st_size / 1e6
    print(f"{label}: {rows} rows, {ratings} ratings, {size:.1f} MB")
    for step, dry_run in (("check", True), ("import", False), ("again", False)):
        started = time.perf_counter()
        result = import_ratings(path, study=study, dry_run=dry_run)
        elapsed = time.perf_counter() - started
        done = result.created["rating"] + result.unchanged["rating"]
        assert done == ratings, (done, ratings)
        print(f"  {step + ':':8}{elapsed:6.2f} s  {rows / elapsed:7.0f} rows/s")
    users = list(ExternalAnnotator.objects.filter(study=study).values_list("user_id", flat=True))
    study.delete()
    Respondent.objects.filter(user_id__in=users).delete()
    get_user_model().objects.filter(pk__in=users).delete()


if __name__ == "__main__":
    main()
