"""Vectorised nonparametric bootstrap over units (items or clusters).

A resample draws n units with replacement; all a statistic needs from it is how many times each
unit was drawn. Those counts form a resamples x units matrix W, so any sum over the resampled
units is one matrix product W @ per-unit totals, with no Python loop over resamples. W is built
in blocks to bound memory (Efron & Tibshirani 1993, An Introduction to the Bootstrap, ch. 13,
percentile intervals).

When many units share the same totals (10,000 items rated 3 times on 4 categories have at most
20 distinct count patterns), a resample is described just as well by how many units of each
pattern it drew, which is Multinomial(n, share of each pattern): the same bootstrap distribution
from P draws per resample instead of n.

Parley's own code, because no kept library covers the design: `scipy.stats.bootstrap` resamples
observations, not clusters (items of one scenario must be drawn together), and calls the
statistic on every resample; here a resample is a row of counts, so thousands of resamples of
ten thousand items are one matrix product.
"""

from collections.abc import Iterator
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 1000
# Cells of the resample-count matrix built at once (8 bytes each).
_BLOCK_CELLS = 2_000_000
# A multinomial draw costs about as much as this many uniform integer draws.
_PATTERN_ADVANTAGE = 16

Seed = int | np.random.Generator | None


def make_rng(seed: Seed) -> np.random.Generator:
    """A numpy Generator from a seed, or the Generator itself."""
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def draw_counts(n_units: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Blocks of rows; row b counts how often each unit was drawn in resample b (each row sums to n_units)."""
    rows_per_block = max(1, _BLOCK_CELLS // max(n_units, 1))
    for start in range(0, resamples, rows_per_block):
        rows = min(rows_per_block, resamples - start)
        # int32 halves the memory traffic; a block has far fewer than 2**31 cells.
        draws = rng.integers(0, n_units, size=(rows, n_units), dtype=np.int32)
        draws += (np.arange(rows, dtype=np.int32) * n_units)[:, None]
        yield np.bincount(draws.ravel(), minlength=rows * n_units).reshape(rows, n_units)


def _patterns(unit_totals: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct rows of `unit_totals` and how many units share each; None when few units repeat."""
    n_units = unit_totals.shape[0]
    # One number per row to group on; a fixed random projection, verified below.
    key = unit_totals @ np.random.default_rng(0).random(unit_totals.shape[1])
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    if len(first) * _PATTERN_ADVANTAGE > n_units:
        return None
    patterns = unit_totals[first]
    if not np.array_equal(patterns[inverse.ravel()], unit_totals):
        return None
    return patterns, counts


def resampled_sums(unit_totals: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Resamples x columns matrix: column sums of `unit_totals` (units x columns) over each resample."""
    unit_totals = np.asarray(unit_totals, dtype=float)
    if unit_totals.ndim == 1:
        unit_totals = unit_totals[:, None]
    n_units = unit_totals.shape[0]
    grouped = _patterns(unit_totals) if n_units else None
    if grouped is not None:
        patterns, counts = grouped
        drawn = rng.multinomial(n_units, counts / n_units, size=resamples)
        return drawn.astype(float) @ patterns
    out = np.empty((resamples, unit_totals.shape[1]))
    row = 0
    for block in draw_counts(unit_totals.shape[0], resamples, rng):
        out[row : row + len(block)] = block.astype(float) @ unit_totals
        row += len(block)
    return out


def percentile_interval(replicates: np.ndarray) -> list[float] | None:
    """The 2.5th and 97.5th percentiles of the finite replicates (None when there are none)."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return None
    low, high = np.percentile(finite, [2.5, 97.5])
    return [float(low), float(high)]


def clustered_mean(
    values: Any, clusters: Any, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, Any]:
    """Mean of the finite ``values`` with a percentile 95% CI from a bootstrap that resamples clusters.

    Units of one cluster (the characters of one scenario's episodes) are not independent, so each
    resample draws as many clusters as there are, with replacement, and takes every unit of a
    drawn cluster; its replicate is the ratio of the drawn units' sum to their number (Field &
    Welsh 2007, "Bootstrapping clustered data", JRSS B 69(3):369-390). Returns ``mean``, ``ci95``
    (None with fewer than two clusters, or with 0 resamples), ``n`` (units) and ``clusters``.
    """
    x = np.asarray(values, dtype=float)
    codes = np.asarray(clusters)
    keep = np.isfinite(x)
    x, codes = x[keep], codes[keep]
    n = int(x.size)
    if n == 0:
        return {"mean": None, "ci95": None, "n": 0, "clusters": 0}
    labels, inverse = np.unique(codes.astype(str), return_inverse=True)
    totals = np.column_stack([
        np.bincount(inverse, weights=x, minlength=len(labels)), np.bincount(inverse, minlength=len(labels)),
    ])
    cell: dict[str, Any] = {"mean": float(x.mean()), "ci95": None, "n": n, "clusters": len(labels)}
    if resamples and len(labels) >= 2:
        sums = resampled_sums(totals, resamples, make_rng(seed))
        cell["ci95"] = percentile_interval(sums[:, 0] / sums[:, 1])
    return cell
