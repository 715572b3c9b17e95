"""How fast a study's agreement report is built from the database (issue 28's second goal: under 1 s).

Makes a SocialVeil study of ``--items`` items (default 5,000), each answered by 3 of 12 annotators
on its three questions (the barrier type, scored against the episode's barrier and resampled by
scenario; two 1-5 ratings): 15,000 submitted annotations and 45,000 answers, stored in bulk. Then
times ``annotator.reports.build_report`` (the reading of the answer rows and every statistic,
1,000 bootstrap resamples), best of ``--repeat``.

    .venv/bin/python perf/study_report.py [--items 5000] [--repeat 3]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench .venv/bin/python perf/study_report.py

It uses a scratch database: a temporary SQLite file by default; with DATABASE_URL, the benchmark's
study and episodes in that database are deleted first and last.
"""

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 1.0
SLUG = "bench-study-report"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=5000, help="Items in the study (3 annotations each).")
    parser.add_argument("--repeat", type=int, default=3, help="Timed runs; the best is reported.")
    parser.add_argument("--keep", metavar="SQLITE", help="Keep the study in this SQLite file and reuse it next time.")
    parser.add_argument("--profile", action="store_true", help="Also run once under cProfile and print the top.")
    args = parser.parse_args()
    os.environ.setdefault("PARLEY_VAR_DIR", tempfile.mkdtemp(prefix="parley-bench-"))
    if args.keep:
        os.environ["DATABASE_URL"] = f"sqlite:///{Path(args.keep).resolve()}"
    if "DATABASE_URL" not in os.environ:
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='parley-bench-')}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotator.models import Study

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    study = Study.objects.filter(slug=SLUG, items__isnull=False).distinct().first() if args.keep else None
    if study is None or study.items.count() != args.items:
        study = build_study(args.items)
    if connection.vendor == "postgresql":
        # The planner's statistics, as autovacuum would have them by the time anyone reads a report: right after
        # the bulk inserts it thinks the study has one answer, and the answers' query nests loops (20 s, not 0.1 s).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"{connection.vendor}: study of {args.items:,} items x 3 annotations x 3 questions ready in "
          f"{time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    try:
        time_report(study, args.repeat)
        if args.profile:
            profile_report(study)
    finally:
        if not args.keep:
            remove()


def build_study(n_items: int):  # noqa: ANN201
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from annotator.models import Annotation, Assignment, Membership, Study, StudyItem
    from benchmark.instruments.presets import install_preset
    from benchmark.instruments.respondents import respondent_for
    from benchmark.models import DEFAULT_TEAM_SLUG, Answer, Episode, Respondent, Response, Scenario, Team

    if not Episode.objects.exclude(barrier=None).exists():
        call_command("load_demo", "--skip-accounts", stdout=io.StringIO())
    remove()  # what a run that failed left
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
    instrument = install_preset("socialveil")
    questions = {question.key: question for question in instrument.questions.all()}
    template = Episode.objects.filter(team=team).order_by("pk").first()
    scenarios = list(Scenario.objects.filter(team=team).values_list("pk", flat=True)[:50])
    barriers = list(Episode.objects.exclude(barrier=None).values_list("barrier_id", flat=True).distinct())
    rng = np.random.default_rng(7)
    episodes = Episode.objects.bulk_create(
        Episode(team=team, scenario_id=int(rng.choice(scenarios)), barrier_id=int(rng.choice(barriers)),
                source=template.source, status=template.status, tag=SLUG)
        for _ in range(n_items)
    )
    study = Study.objects.create(
        team=team, title="Report benchmark", slug=SLUG, instrument=instrument, instructions="Rate.", overlap=3,
    )
    items = StudyItem.objects.bulk_create(
        StudyItem(study=study, episode=episode, position=number) for number, episode in enumerate(episodes)
    )
    users = [get_user_model().objects.get_or_create(username=f"bench-report-{n}")[0] for n in range(12)]
    Membership.objects.bulk_create(Membership(study=study, annotator=user) for user in users)
    respondents = [respondent_for(user, Respondent.Kind.ANNOTATOR) for user in users]
    now = timezone.now()
    chosen = [rng.choice(12, 3, replace=False) for _ in items]
    assignments = Assignment.objects.bulk_create(
        Assignment(item=item, annotator=users[k], status=Assignment.Status.SUBMITTED, claimed_at=now,
                   lease_expires_at=now, submitted_at=now)
        for item, ks in zip(items, chosen, strict=True) for k in ks
    )
    responses = Response.objects.bulk_create(
        Response(instrument=instrument, episode_id=assignment.item.episode_id, respondent=respondents[k],
                 status=Response.Status.SUBMITTED)
        for assignment, k in zip(assignments, [k for ks in chosen for k in ks], strict=True)
    )
    Annotation.objects.bulk_create(
        Annotation(assignment=assignment, version=1, status=Annotation.Status.SUBMITTED, response=response,
                   submitted_at=now)
        for assignment, response in zip(assignments, responses, strict=True)
    )
    choices = [str(choice["value"]) for choice in questions["barrier_type"].options["choices"]]
    answers = []
    for response in responses:
        answers.append(Answer(response=response, question=questions["barrier_type"], value=str(rng.choice(choices))))
        for key in ("unresolved_confusion", "mutual_understanding"):
            rating = int(rng.integers(1, 6))
            answers.append(Answer(response=response, question=questions[key], value=str(rating), number=rating))
    # The answer trigger locks each response until the transaction ends, and bulk_create is one transaction: in
    # chunks, PostgreSQL's lock table holds them (45,000 answers at once ran it out of shared memory).
    for start in range(0, len(answers), 600):
        Answer.objects.bulk_create(answers[start:start + 600], batch_size=20)
    return study


def time_report(study, repeat: int) -> None:  # noqa: ANN001
    from annotator.reports import build_report

    times = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        report = build_report(study, resamples=1000, seed=0)
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    best = min(times)
    barrier = report["questions"]["barrier_type"]
    kappa, accuracy = barrier["fleiss_kappa"], barrier["accuracy"]
    print(f"  answers {report['counts']['answers']:,}; barrier_type Fleiss kappa "
          f"{kappa['value'] if kappa else None}, accuracy {accuracy['overall']['value'] if accuracy else None}")
    runs = ", ".join(f"{wall:.2f} s (CPU {cpu:.2f} s)" for wall, cpu in times)
    verdict = "meets" if best[0] < GOAL_SECONDS else "MISSES"
    print(f"study report from the database: best {best[0]:.2f} s over {repeat} runs ({runs}); "
          f"{verdict} the {GOAL_SECONDS:g} s goal; load average now {os.getloadavg()[0]:.1f}")


# What each phase of a report is, by the function whose cumulative time measures it.
PHASES = (
    ("queries: items, annotations and answers (build._read)", "_read"),
    ("coding: each question's answer rows to integer codes (coding.coded_rows)", "coded_rows"),
    ("statistics of the questions (stats.question_report, accuracy)", ("question_report", "accuracy",
                                                                       "cluster_bootstrap_accuracy")),
    ("annotators section: its queries and statistics (annotators.report_section)", "report_section"),
    ("  of which MACE (stats.mace)", "mace"),
    ("span review, agentsense", ("review_outcome", "agentsense_report")),
)


def profile_report(study) -> None:  # noqa: ANN001
    """One run under cProfile: the phases by cumulative time, then the top functions."""
    import cProfile
    import pstats

    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from annotator.reports import build_report

    profiler = cProfile.Profile()
    reset_queries()
    with CaptureQueriesContext(connection) as queries:
        profiler.runcall(build_report, study, resamples=1000, seed=0)
    stats = pstats.Stats(profiler)
    total = max(entry[3] for entry in stats.stats.values())
    print(f"cProfile run: {total:.2f} s in all (profiling slows Python calls), {len(queries.captured_queries)} queries")
    for label, names in PHASES:
        names = (names,) if isinstance(names, str) else names
        seconds = sum(entry[3] for (_, _, function), entry in stats.stats.items() if function in names)
        print(f"  {label}: {seconds:.2f} s")
    stats.sort_stats("cumulative").print_stats(25)
    stats.sort_stats("tottime").print_stats(15)


def remove() -> None:
    """The benchmark's study, its responses and episodes."""
    from annotator.models import Annotation, Study
    from benchmark.models import Episode, Response

    annotations = Annotation.objects.filter(assignment__item__study__slug=SLUG)
    responses = list(annotations.values_list("response_id", flat=True))
    Study.objects.filter(slug=SLUG).delete()
    Response.objects.filter(pk__in=responses).delete()
    Response.objects.filter(episode__tag=SLUG).delete()
    Episode.objects.filter(tag=SLUG).delete()


if __name__ == "__main__":
    main()
