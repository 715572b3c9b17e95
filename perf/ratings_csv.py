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
from pathlib import Path

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
    print(f"phases (best of {args.repeat}): " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in phases.items()))
    print(f"command end to end (without Django's start-up): best {best:.2f} s "
          f"({', '.join(f'{t:.2f}' for t in end_to_end)}); "
          f"{'meets' if best < GOAL_SECONDS else 'MISSES'} the {GOAL_SECONDS:g} s goal")
    print(f"bare numpy, the same statistics on the same integer arrays: {floor:.2f} s; the command takes "
          f"{best / floor:.1f}x that ({'within' if best <= 3 * floor else 'NOT within'} 3x)")
    print(f"load average now {os.getloadavg()[0]:.1f}")
    if args.profile:
        profile_command(path, workdir, args)


def time_phases(path: Path, args: argparse.Namespace) -> dict[str, float]:
    from benchmark.stats import report as report_module
    from benchmark.stats.csv_input import read_long_csv

    best: dict[str, float] = {}
    for _ in range(args.repeat):
        times: dict[str, float] = {}
        start = time.perf_counter()
        table, settled = read_long_csv(path)
        times["read"] = time.perf_counter() - start
        encode = getattr(report_module, "encode_ratings", None)
        start = time.perf_counter()
        if encode is not None:
            table = encode(table, **settled.as_arguments())
        times["encode"] = time.perf_counter() - start
        start = time.perf_counter()
        report = report_module.agreement_report(table, **settled.as_arguments(), resamples=args.resamples, seed=0)
        times["statistics"] = time.perf_counter() - start
        start = time.perf_counter()
        text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        (path.parent / "phases.json").write_text(text, encoding="utf-8")
        times["write"] = time.perf_counter() - start
        for name, seconds in times.items():
            best[name] = min(best.get(name, seconds), seconds)
    return best


def _command(path: Path, out: Path, resamples: int) -> None:
    from django.core.management import call_command

    call_command(
        "agreement_report", from_csv=str(path), output=str(out), resamples=resamples, stdout=io.StringIO(),
    )


def time_command(path: Path, workdir: Path, args: argparse.Namespace) -> list[float]:
    import django

    django.setup()
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        _command(path, workdir / "report.json", args.resamples)
        times.append(time.perf_counter() - start)
    return times


def profile_command(path: Path, workdir: Path, args: argparse.Namespace) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(_command, path, workdir / "profiled.json", args.resamples)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


def time_bare_numpy(path: Path, args: argparse.Namespace) -> float:
    """The same statistics as plain numpy on integer arrays (the arrays' making not counted)."""
    from benchmark.stats.csv_input import read_long_csv

    table, _ = read_long_csv(path)
    arrays = []
    for question, rows in table.groupby("question", sort=True):
        items = np.unique(rows["item"].to_numpy(dtype=object).astype(str), return_inverse=True)[1]
        values = rows["value"].to_numpy(dtype=object).astype(str)
        labels, codes = np.unique(values, return_inverse=True)
        numbers = labels.astype(float)[codes] if question != "barrier_type" else None
        clusters = np.unique(rows["cluster"].to_numpy(dtype=object).astype(str), return_inverse=True)[1]
        judge = rows["judge"].to_numpy(dtype=float)
        truth = rows["truth"].to_numpy(dtype=object).astype(str)
        arrays.append((items, codes, len(labels), numbers, clusters, judge, codes if numbers is not None else
                       np.unique(np.concatenate([labels, truth]), return_inverse=True)[1][len(labels):]))
    best = np.inf
    for _ in range(args.repeat):
        start = time.perf_counter()
        for items, codes, n_labels, numbers, clusters, judge, truth in arrays:
            _bare_statistics(items, codes, n_labels, numbers, clusters, judge, truth, args.resamples)
        best = min(best, time.perf_counter() - start)
    return best


def _bare_statistics(items, codes, q, numbers, clusters, judge, truth, resamples):  # noqa: ANN001
    rng = np.random.default_rng(0)
    n_items = int(items.max()) + 1
    counts = np.bincount(items * q + codes, minlength=n_items * q).reshape(n_items, q).astype(float)
    m = counts.sum(axis=1)
    agreement = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    shares = counts.sum(axis=0) / m.sum()
    chance = (shares**2).sum()
    _ = (agreement.mean() - chance) / (1 - chance), (agreement.mean() - 1 / q) / (1 - 1 / q)
    # Bootstrap of Fleiss' kappa over items: resample counts as one matrix product per block.
    totals = np.column_stack([agreement, m, counts])
    for start in range(0, resamples, 20):
        draws = rng.integers(0, n_items, size=(20, n_items)) + (np.arange(20) * n_items)[:, None]
        np.bincount(draws.ravel(), minlength=20 * n_items).reshape(20, n_items).astype(float) @ totals
    # Alpha (coincidences as one matrix product), three distance metrics.
    weighted = counts / (m - 1)[:, None]
    coincidences = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    marginals = coincidences.sum(axis=1)
    for distances in (1 - np.eye(q), (np.arange(q)[:, None] - np.arange(q)[None, :]) ** 2.0):
        expected = (np.outer(marginals, marginals) * distances).sum()
        _ = 1 - (marginals.sum() - 1) * (coincidences * distances).sum() / expected
    if numbers is not None:
        sizes = np.bincount(items, minlength=n_items)
        means = np.bincount(items, weights=numbers, minlength=n_items) / sizes
        _ = (sizes * (means - numbers.mean()) ** 2).sum(), ((numbers - means[items]) ** 2).sum()
        for n_bins in (3, 4, 5):
            bins = np.minimum(np.floor((numbers - 1) / 4 * n_bins + 1e-9).astype(int), n_bins - 1)
            np.bincount(items * n_bins + bins, minlength=n_items * n_bins)
        first = np.unique(items, return_index=True)[1]
        _ = np.corrcoef(means, judge[first])
    else:
        correct = (truth == codes).astype(float)
        n_clusters = int(clusters.max()) + 1
        per_cluster = np.column_stack([np.bincount(clusters, weights=correct, minlength=n_clusters),
                                       np.bincount(clusters, minlength=n_clusters)])
        for start in range(0, resamples, 100):
            draws = rng.integers(0, n_clusters, size=(100, n_clusters)) + (np.arange(100) * n_clusters)[:, None]
            np.bincount(draws.ravel(), minlength=100 * n_clusters).reshape(100, n_clusters) @ per_cluster


if __name__ == "__main__":
    main()
