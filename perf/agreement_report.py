"""How fast the agreement report is on a large study.

Builds a synthetic study: 10,000 items (episodes) in 1,000 scenarios, each item rated by 3 of 12
annotators on 3 questions: the barrier type (categorical, with a known truth and scenario
clusters) and two 1-5 Likert ratings (confusion, mutual understanding) with a judge score.
Then times `benchmark.stats.agreement_report` on the whole long table (90,000 ratings): every
statistic of every question, including 1,000 bootstrap resamples for Fleiss' kappa and for the
cluster-bootstrap accuracy. The goal is under 2 seconds on a 2-core machine.

With ``--demo`` it then times each demo study's report page through Django's view stack (test
client, the demo researcher): ``load_demo`` and ``load_demo_studies`` on an empty temporary SQLite
database (or the scratch database DATABASE_URL names, which it fills), then per study the first load
(nothing kept: the report is built and its figures drawn), warm loads (kept), and a load after a
new annotation answer (built again, figures drawn again).

    .venv/bin/python perf/agreement_report.py [--items 10000] [--repeat 3]
    .venv/bin/python perf/agreement_report.py --items 0 --demo
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
GOAL_SECONDS = 2.0
BARRIERS = np.array(["none", "semantic", "sociocultural", "emotional"])


def synthetic_study(n_items: int, *, ratings: int = 3, annotators: int = 12, seed: int = 7) -> pd.DataFrame:
    """Long table with columns item, annotator, question, value, cluster, truth, condition, judge."""
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), ratings)
    # Each item gets `ratings` distinct annotators out of the pool.
    annotator = np.argsort(rng.random((n_items, annotators)), axis=1)[:, :ratings].ravel()
    scenario = rng.integers(0, max(n_items // 10, 1), n_items)
    barrier = BARRIERS[rng.integers(0, len(BARRIERS), n_items)]
    common = {
        "item": item,
        "annotator": annotator,
        "cluster": scenario[item],
        "condition": barrier[item],
    }
    n = len(item)
    guess = BARRIERS[rng.integers(0, len(BARRIERS), n)]
    answer = np.where(rng.random(n) < 0.65, barrier[item], guess)
    frames = [pd.DataFrame({**common, "question": "barrier_type", "value": answer, "truth": barrier[item]})]
    for question, shift in (("unresolved_confusion", 0.8), ("mutual_understanding", -0.8)):
        latent = rng.normal(3, 1, n_items) + shift * (barrier != "none")
        rating = np.clip(np.rint(latent[item] + rng.normal(0, 0.6, n)), 1, 5)
        judge = np.clip(np.rint(latent + rng.normal(0, 0.5, n_items)), 1, 5)
        frames.append(pd.DataFrame({**common, "question": question, "value": rating, "judge": judge[item]}))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000, help="Items in the synthetic study.")
    parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples.")
    parser.add_argument("--repeat", type=int, default=3, help="Timed runs; the best is reported.")
    parser.add_argument("--demo", action="store_true", help="Also time the demo studies' report pages.")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    if args.items:
        time_statistics(args)
    if args.demo:
        time_demo_pages(args.repeat)


def time_statistics(args: argparse.Namespace) -> None:
    from benchmark.stats import agreement_report

    table = synthetic_study(args.items)
    # The CSV path reads values as text: mirror it, so numeric detection is part of the timing.
    table["value"] = table["value"].astype(str)
    agreement_report(table.head(300), resamples=10)  # warm imports and caches

    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        report = agreement_report(table, categorical=["barrier_type"], resamples=args.resamples, seed=0)
        times.append(time.perf_counter() - start)
    best = min(times)
    json.dumps(report, allow_nan=False)  # the report must be strict JSON at this size too

    barrier = report["questions"]["barrier_type"]
    confusion = report["questions"]["unresolved_confusion"]
    print(
        f"{len(table):,} ratings ({args.items:,} items x 3 ratings x 3 questions), {args.resamples} bootstrap resamples"
    )
    print(
        f"  barrier_type: Fleiss kappa {barrier['fleiss_kappa']['value']:.3f} "
        f"{[round(x, 3) for x in barrier['fleiss_kappa']['ci95']]}, "
        f"accuracy {barrier['accuracy']['overall']['value']:.3f} "
        f"{[round(x, 3) for x in barrier['accuracy']['overall']['ci95']]}"
    )
    print(
        f"  unresolved_confusion: ICC(1,k) {confusion['icc']['icc1k']:.3f}, "
        f"alpha (interval) {confusion['krippendorff_alpha']['interval']:.3f}, "
        f"judge r {confusion['alignment']['pearson_r']:.3f}"
    )
    runs = ", ".join(f"{t:.3f}" for t in times)
    verdict = "meets" if best < GOAL_SECONDS else "MISSES"
    print(f"full report: best {best:.3f} s over {args.repeat} runs ({runs}); {verdict} the {GOAL_SECONDS:g} s goal")


def time_demo_pages(repeat: int) -> None:
    """Each demo study's report page: first load, warm loads, and a load after one more annotation."""
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
    from django.utils import timezone

    from annotator.models import Annotation, Study
    from benchmark.management.commands.load_demo import RESEARCHER

    call_command("migrate", verbosity=0)
    call_command("load_demo", stdout=io.StringIO())
    call_command("load_demo_studies", stdout=io.StringIO())
    client = Client(HTTP_HOST="localhost")
    client.force_login(get_user_model().objects.get(username=RESEARCHER))
    cache.clear()
    client.get("/annotate/studies/demo-shrec-spans/report/")  # imports matplotlib and scipy once; not reported

    cpu: list[float] = []

    def seconds(slug: str) -> float:
        start, spent = time.perf_counter(), time.process_time()
        response = client.get(f"/annotate/studies/{slug}/report/")
        assert response.status_code == 200, response.status_code
        cpu.append(time.process_time() - spent)
        return time.perf_counter() - start

    print(f"\ndemo agreement reports, {connection.vendor} (report page through the view stack; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; in brackets this process's CPU time):")
    for study in Study.objects.order_by("slug"):
        cache.clear()
        first = seconds(study.slug)
        first_cpu = cpu[-1]
        warm = [seconds(study.slug) for _ in range(3 * repeat)]
        latest = Annotation.objects.filter(assignment__item__study=study, status=Annotation.Status.SUBMITTED).last()
        changed = "-"
        if latest is not None:  # a change every autosave and submit makes: the report is built again
            Annotation.objects.filter(pk=latest.pk).update(updated_at=timezone.now())
            changed = f"{seconds(study.slug):.2f} s ({cpu[-1]:.2f} s)"
        print(f"  {study.slug}: first load {first:.2f} s ({first_cpu:.2f} s); "
              f"warm median {statistics.median(warm):.3f} s (best {min(warm):.3f} s, {len(warm)} loads); "
              f"after an answer changed {changed}")


if __name__ == "__main__":
    main()
