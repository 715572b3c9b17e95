"""How fast SHREC's pipeline runs on a set the size of the released data: import, task building, answering, scoring.

Writes 400 synthetic recordings in SHREC's released format (``benchmark/demo/shrec.py``: a greeting and
sixteen exchanges each, ten of them marked, two or three annotators, some marks without a start or an
end and some errors without a correction, as in the real files; about as many annotations as the
released 10,353), imports them into a scratch database and times each step through its command:

1. ``import_episodes --format shrec FILE`` (episodes, turns with word times, the imported study's spans),
   and the same file again (everything unchanged);
2. ``shrec_tasks --tasks all --seed 0 --subsets 3 --subset-size N`` over the imported study (pairing,
   agreed segments, None stretches, distractors, subsets): items per second;
3. ``evaluate --shrec all --models scripted`` (the offline scripted answerer, through the runner that
   stores every answer): items per second;
4. ``benchmark_report --analysis shrec --format json`` (scores per subset, the bootstrap by video, the
   tables): items per second, and whether two runs give the same bytes.

    .venv/bin/python perf/shrec.py [--videos 400] [--subset-size 200]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench_shrec .venv/bin/python perf/shrec.py

It uses a scratch database: a temporary SQLite file by default, or the one DATABASE_URL names, in which
the team's task sets, annotation studies, episodes, scenarios and characters are deleted first and last.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--videos", type=int, default=400, help="How many recordings (default 400).")
    parser.add_argument("--exchanges", type=int, default=16, help="Exchanges per recording (default 16).")
    parser.add_argument("--subset-size", type=int, default=200, help="Items per subset and task (default 200).")
    parser.add_argument("--seed", type=int, default=1, help="Seed of the synthetic recordings (default 1).")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="parley-bench-shrec-"))
    os.environ.setdefault("PARLEY_VAR_DIR", str(scratch))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "DATABASE_URL" not in os.environ:
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'parley.sqlite3'}"
    os.environ["PARLEY_TASKS_IMMEDIATE"] = "true"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import CommandError, call_command
    from django.db import connection

    from annotator.external_spans import shrec_study
    from annotator.models import Span, Study
    from benchmark.demo.shrec import synthetic_videos, write_shrec_csv
    from benchmark.models import (
        DEFAULT_TEAM_SLUG,
        Character,
        Episode,
        Scenario,
        TaskAnswer,
        TaskItem,
        TaskSet,
        Team,
        Turn,
    )

    def empty() -> None:
        TaskSet.objects.all().delete()
        Study.objects.all().delete()
        Episode.objects.all().delete()
        Scenario.objects.all().delete()
        Character.objects.all().delete()

    def measure(command: str, *arguments: str) -> tuple[str, float, float]:
        """Run one command; what it printed, its wall time and this process's CPU time."""
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        out, errors = io.StringIO(), io.StringIO()
        try:
            call_command(command, *arguments, stdout=out, stderr=errors)
        except CommandError:
            print(errors.getvalue(), file=sys.stderr)
            raise
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return out.getvalue(), wall, usage.ru_utime - cpu_before.ru_utime + usage.ru_stime - cpu_before.ru_stime

    def rate(count: int, what: str, wall: float, cpu: float) -> str:
        return f"{count} {what} in {wall:.2f} s ({count / wall:,.0f} {what}/s; CPU {cpu:.2f} s)"

    started = time.perf_counter()
    videos = synthetic_videos(
        args.videos, seed=args.seed, exchanges=args.exchanges, labelled=args.exchanges * 5 // 8, imperfect=True,
        empty_first_every=7,
    )
    path = write_shrec_csv(scratch / "shrec-synthetic.csv", videos)
    marks = sum(len(marks) for video in videos for marks in video.annotations.values())
    print(
        f"generated {len(videos)} recordings, {marks} annotations, {path.stat().st_size / 1e6:.1f} MB in "
        f"{time.perf_counter() - started:.2f} s"
    )

    try:
        call_command("migrate", verbosity=0)
        empty()
        print(f"database: {connection.vendor}")
        _, wall, cpu = measure("import_episodes", "--format", "shrec", str(path), "--tag", "bench-shrec")
        episodes = Episode.objects.filter(tag="bench-shrec")
        turns = Turn.objects.filter(episode__in=episodes).count()
        spans = Span.objects.filter(annotation__assignment__item__episode__in=episodes).count()
        print(f"  import: {rate(episodes.count(), 'recordings', wall, cpu)}; {turns} turns, {spans} spans")
        _, wall, cpu = measure("import_episodes", "--format", "shrec", str(path), "--tag", "bench-shrec")
        print(f"  import again, unchanged: {wall:.2f} s (CPU {cpu:.2f} s)")

        study = shrec_study(Team.objects.get(slug=DEFAULT_TEAM_SLUG), "bench-shrec")
        printed, wall, cpu = measure(
            "shrec_tasks", "--study", str(study.pk), "--tasks", "all", "--seed", "0", "--subsets", "3",
            "--subset-size", str(args.subset_size), "--name", "bench-shrec",
        )
        task_set = TaskSet.objects.get(name="bench-shrec")
        items = TaskItem.objects.filter(task_set=task_set)
        print(f"  shrec_tasks: {rate(items.count(), 'items', wall, cpu)}")
        for line in printed.strip().splitlines():
            print(f"    {line}")

        _, wall, cpu = measure("evaluate", "--shrec", "all", "--models", "scripted", "--task-set", "bench-shrec")
        answered = TaskAnswer.objects.filter(item__task_set=task_set).count()
        print(f"  evaluate --shrec all --models scripted: {rate(answered, 'items', wall, cpu)}")

        reports = []
        for _ in range(2):
            printed, wall, cpu = measure(
                "benchmark_report", "--analysis", "shrec", "--task-set", "bench-shrec", "--format", "json"
            )
            reports.append(printed)
            print(f"  benchmark_report --analysis shrec --format json: {rate(answered, 'items', wall, cpu)}")
        print(f"  the two reports are {'byte-identical' if reports[0] == reports[1] else 'DIFFERENT'}")
    finally:
        empty()


if __name__ == "__main__":
    main()
