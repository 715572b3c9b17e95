"""How fast `manage.py agreement_report --from-csv` turns a million ratings into a JSON report.

Writes a long-format CSV of ``--items`` items (default 100,000), each rated by 3 or 4 of 20
annotators on three questions (about 10 ratings an item, 1,000,000 rows): the barrier type
(categorical, with a truth and the scenario as cluster) and two 1-5 ratings with a judge score and
the barrier as condition. Then times, best of ``--repeat``:

- the phases: read (``read_long_csv``: parse and check), encode (integer codes, once), statistics
  (every question's report), write (the JSON text and the file);
- the command end to end (``call_command``, after Django's start-up, which is not counted);
- a bare numpy computation of the same statistics on the same integer arrays (percent agreement,
  Fleiss' and Randolph's kappa with the 1,000-resample bootstrap, nominal/ordinal/interval alpha,
  the one-way ICC, the binned kappas, accuracy with its cluster bootstrap, the judge correlation),
  the floor the "within 3x" goal is measured against.

    .venv/bin/python perf/ratings_csv.py [--items 100000] [--repeat 3] [--profile]

``--profile`` runs the command once under cProfile and prints the 40 costliest calls.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 4.0
BARRIERS = np.array(["none", "semantic", "sociocultural", "emotional"])
ANNOTATORS = 20


def write_ratings_csv(path: Path, items: int, *, seed: int = 7) -> int:
    """A long-format CSV of about 10 ratings per item on three questions; returns the number of rows."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    per_item = rng.integers(3, 5, items)  # 3 or 4 annotators an item
    item = np.repeat(np.arange(items), per_item)
    # Distinct annotators within an item: a random start and consecutive pool members.
    start = rng.integers(0, ANNOTATORS, items)
    offset = np.arange(len(item)) - np.repeat(np.cumsum(per_item) - per_item, per_item)
    annotator = (start[item] + offset) % ANNOTATORS
    scenario = rng.integers(0, max(items // 10, 1), items)
    barrier = BARRIERS[rng.integers(0, len(BARRIERS), items)]
    n = len(item)
    names = np.char.add("ep", item.astype(str))
    raters = np.char.add("a", annotator.astype(str))
    clusters = np.char.add("s", scenario[item].astype(str))
    guess = BARRIERS[rng.integers(0, len(BARRIERS), n)]
    frames = [pd.DataFrame({
        "item": names, "annotator": raters, "question": "barrier_type",
        "value": np.where(rng.random(n) < 0.65, barrier[item], guess),
        "cluster": clusters, "truth": barrier[item], "condition": barrier[item], "judge": "",
    })]
    for question, shift in (("unresolved_confusion", 0.8), ("mutual_understanding", -0.8)):
        latent = rng.normal(3, 1, items) + shift * (barrier != "none")
        rating = np.clip(np.rint(latent[item] + rng.normal(0, 0.6, n)), 1, 5).astype(int)
        judge = np.clip(np.rint(latent + rng.normal(0, 0.5, items)), 1, 5).astype(int)
        frames.append(pd.DataFrame({
            "item": names, "annotator": raters, "question": question, "value": rating,
            "cluster": clusters, "truth": "", "condition": barrier[item], "judge": judge[item],
        }))
    table = pd.concat(frames, ignore_index=True)
    table.to_csv(path, index=False)
    return len(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000, help="Items in the CSV (about 10 ratings each).")
    parser.add_argument("--repeat", type=int, default=3, help="Timed runs; the best is reported.")
    parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples.")
    parser.add_argument("--profile", action="store_true", help="Profile one run of the command with cProfile.")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("PARLEY_VAR_DIR", tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    workdir = Path(tempfile.mkdtemp(prefix="parley-ratings-"))
    path = workdir / "ratings.csv"
    started = time.perf_counter()
    rows = write_ratings_csv(path, args.items)
    print(f"{rows:,} ratings of {args.items:,} items ({path.stat().st_size / 1e6:.1f} MB) written in "
          f"{time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    phases = time_phases(path, args)
    end_to_end = time_command(path, workdir, args)
    floor = time_bare_numpy(path, args)
    best = min(end_to_end)
    listed = ", ".join(f"{name} {wall:.2f} s (CPU {cpu:.2f} s)" for name, (wall, cpu) in phases.items())
    print(f"phases (best of {args.repeat}): {listed}")
    runs = ", ".join(f"{wall:.2f}" for wall, _ in end_to_end)
    print(f"command end to end (without Django's start-up): best {best[0]:.2f} s (CPU {best[1]:.2f} s; runs {runs}); "
          f"{'meets' if best[0] < GOAL_SECONDS else 'MISSES'} the {GOAL_SECONDS:g} s goal")
    print(f"bare numpy, the same statistics on the same integer arrays: {floor[0]:.2f} s (CPU {floor[1]:.2f} s); the "
          f"command takes {best[0] / floor[0]:.1f}x that ({best[1] / floor[1]:.1f}x in CPU time; goal: within 3x)")
    print(f"load average now {os.getloadavg()[0]:.1f}")
    if args.profile:
        profile_command(path, workdir, args)


def time_phases(path: Path, args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """Best wall-clock and CPU seconds of each phase: read (parse into codes), check (the reader's checks and
    typing, which finish the coding), statistics, write."""
    from benchmark.stats.csv_columns import read_columns
    from benchmark.stats.csv_input import read_coded_csv
    from benchmark.stats.report import agreement_report

    best: dict[str, tuple[float, float]] = {}

    def timed(name: str, work: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        out = work()
        spent = (time.perf_counter() - wall, time.process_time() - cpu)
        best[name] = min(best.get(name, spent), spent)
        return out

    for _ in range(args.repeat):
        timed("read", lambda: read_columns(path, None))
        coded, settled = timed("read + check and code", lambda: read_coded_csv(path))
        arguments = {**settled.as_arguments(), "resamples": args.resamples, "seed": 0}
        report = timed("statistics", partial(agreement_report, coded, **arguments))

        def write(report: dict[str, Any] = report) -> None:
            text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
            (path.parent / "phases.json").write_text(text, encoding="utf-8")

        timed("write", write)
    read, both = best["read"], best.pop("read + check and code")
    best["check and code"] = (max(both[0] - read[0], 0.0), max(both[1] - read[1], 0.0))
    return {name: best[name] for name in ("read", "check and code", "statistics", "write")}


def _command(path: Path, out: Path, resamples: int) -> None:
    from django.core.management import call_command

    call_command(
        "agreement_report", from_csv=str(path), output=str(out), resamples=resamples, stdout=io.StringIO(),
    )


def time_command(path: Path, workdir: Path, args: argparse.Namespace) -> list[tuple[float, float]]:
    """Wall-clock and CPU seconds of each run of the command."""
    import django

    django.setup()
    times = []
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        _command(path, workdir / "report.json", args.resamples)
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    return times


def profile_command(path: Path, workdir: Path, args: argparse.Namespace) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(_command, path, workdir / "profiled.json", args.resamples)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


def time_bare_numpy(path: Path, args: argparse.Namespace) -> tuple[float, float]:
    """The same statistics as plain numpy on the coded arrays (their making not counted): percent
    agreement, Fleiss' kappa with its bootstrap, Randolph's kappa and alpha per question; for the
    ratings the one-way ICC, alpha at three levels, binned kappas, per-item means against the judge
    and means per condition; for the categorical question accuracy with its cluster bootstrap. The
    bootstraps use the same numpy routine (`bootstrap.resampled_sums`), so both sides draw alike."""
    from benchmark.stats.csv_input import read_coded_csv

    coded, settled = read_coded_csv(path)
    arrays = []
    for code, question in enumerate(coded.labels["question"]):
        rows = coded.take(coded.question == code)
        items = np.unique(rows.item, return_inverse=True)[1]
        categorical = question in settled.categorical
        values = rows.value if categorical else rows.number
        labels, codes = np.unique(values, return_inverse=True)
        clusters = np.unique(rows.cluster, return_inverse=True)[1]
        truth = rows.truth if categorical else None
        condition = rows.condition
        arrays.append((items, codes, len(labels), None if categorical else rows.number, clusters, rows.judge, truth,
                       rows.value, condition))
    best = (np.inf, np.inf)
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        for arguments in arrays:
            _bare_statistics(*arguments, resamples=args.resamples)
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
    return best


def _fleiss(counts: np.ndarray) -> tuple[float, np.ndarray]:
    m = counts.sum(axis=1)
    agreement = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    shares = counts.sum(axis=0) / m.sum()
    chance = (shares**2).sum()
    return (agreement.mean() - chance) / (1 - chance), agreement


def _alpha(counts: np.ndarray, distances: np.ndarray) -> float:
    m = counts.sum(axis=1)
    weighted = counts / (m - 1)[:, None]
    coincidences = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    marginals = coincidences.sum(axis=1)
    expected = (np.outer(marginals, marginals) * distances).sum()
    return 1 - (marginals.sum() - 1) * (coincidences * distances).sum() / expected


def _bare_statistics(items, codes, q, numbers, clusters, judge, truth, answers, condition, *, resamples):  # noqa: ANN001
    from benchmark.stats.bootstrap import resampled_sums

    rng = np.random.default_rng(0)
    n_items = int(items.max()) + 1
    counts = np.bincount(items * q + codes, minlength=n_items * q).reshape(n_items, q).astype(float)
    kappa, agreement = _fleiss(counts)
    totals = np.column_stack([agreement, counts.sum(axis=1), counts])
    item_clusters = np.zeros(n_items, dtype=np.intp)
    item_clusters[items] = clusters
    n_clusters = int(clusters.max()) + 1
    by_cluster = np.column_stack([np.bincount(item_clusters, weights=c, minlength=n_clusters) for c in totals.T])
    resampled_sums(np.column_stack([by_cluster, np.bincount(item_clusters, minlength=n_clusters)]), resamples, rng)
    _alpha(counts, 1 - np.eye(q))
    if numbers is not None:
        grid = np.arange(q, dtype=float)
        _alpha(counts, (grid[:, None] - grid[None, :]) ** 2)
        _alpha(counts, np.abs(grid[:, None] - grid[None, :]))
        sizes = np.bincount(items, minlength=n_items)
        means = np.bincount(items, weights=numbers, minlength=n_items) / sizes
        _ = (sizes * (means - numbers.mean()) ** 2).sum(), ((numbers - means[items]) ** 2).sum()
        for n_bins in (3, 4, 5):
            bins = np.minimum(np.floor((numbers - 1) / 4 * n_bins + 1e-9).astype(int), n_bins - 1)
            _fleiss(np.bincount(items * n_bins + bins, minlength=n_items * n_bins).reshape(n_items, n_bins))
        first = np.unique(items, return_index=True)[1]
        scores = judge[first]
        _ = np.corrcoef(means, scores), np.corrcoef(np.argsort(np.argsort(means)), np.argsort(np.argsort(scores)))
        conditions = condition[first]
        for side in (means, scores):
            np.bincount(conditions, weights=side), np.bincount(conditions, weights=side**2), np.bincount(conditions)
    else:
        correct = (truth == answers).astype(float)
        per_cluster = np.column_stack([np.bincount(clusters, weights=correct, minlength=n_clusters),
                                       np.bincount(clusters, minlength=n_clusters)])
        resampled_sums(per_cluster, resamples, rng)


if __name__ == "__main__":
    main()
