"""Krippendorff's alpha for nominal, ordinal, interval and ratio data, with missing ratings.

Computed by the `krippendorff` package (Castro 2017, https://github.com/pln-fing-udelar/fast-krippendorff),
a runtime dependency, from Parley's units x values count matrix (its `value_counts` input). The
package follows the coincidence-matrix form of Krippendorff (2011), "Computing Krippendorff's
alpha-reliability", Annenberg School for Communication, University of Pennsylvania
(https://repository.upenn.edu/asc_papers/43), sections B-E:

    o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)      over units with m_u >= 2 values
    n_c = sum_k o_ck,  n = sum_c n_c
    alpha = 1 - (n - 1) sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck

with d2 = [c != k] (nominal), (c - k)^2 (interval), ((c - k) / (c + k))^2 (ratio) and
(sum_{g between c and k} n_g - (n_c + n_k) / 2)^2 (ordinal).

What stays Parley's own here, and why: the package raises or returns NaN where alpha is undefined
(no pairable unit, a single value used, zero expected disagreement), so those cases are found first
and explained in a note. Units with fewer than two values and values nobody used add nothing to
the coincidences (nor to the ordinal distances), so they are dropped before the call. The package
builds a units x values x values array, so a fine-grained scale on many items (a 0-100 slider on
thousands of items: gigabytes) would not fit in memory; above `PACKAGE_CELLS` cells the same
formula is computed here as one matrix product over the count matrix (`_alpha_by_matrix_product`),
and the tests check both ways give the same number.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from .tables import ITEM, VALUE, category_codes, count_matrix, drop_missing, item_codes

LEVELS = ("nominal", "ordinal", "interval", "ratio")
NUMERIC_LEVELS = ("interval", "ratio")
METHOD = (
    "Krippendorff (2011) alpha from the coincidence matrix, computed by the krippendorff package "
    "(Castro 2017); units with fewer than two values are not pairable"
)
# Largest units x values x values array handed to the package (8 bytes a cell, about three such
# arrays at once): 10,000 items on a 10-point scale fit (about 25 MB and 0.1 s a level); 4,000,000
# cells took 100 MB and 0.5 s a level, so larger designs go through the matrix product (3 MB, 30 ms).
PACKAGE_CELLS = 1_000_000


@dataclass
class Alpha:
    """Alpha per level of measurement; a level is None when undefined (see notes)."""

    values: dict[str, float | None]
    n_items: int
    n_pairable: int
    method: str = METHOD
    notes: list[str] = field(default_factory=list)


def _distances(level: str, domain: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """d2 between every two values (the package's metrics, for the matrix-product path)."""
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    if level == "interval":
        values = domain.astype(float)
        return (values[:, None] - values[None, :]) ** 2
    if level == "ratio":
        values = domain.astype(float)
        total = values[:, None] + values[None, :]
        difference = values[:, None] - values[None, :]
        return np.divide(difference, total, out=np.zeros_like(difference), where=total != 0) ** 2
    cumulative = np.concatenate([[0.0], np.cumsum(marginals)])
    low = np.minimum.outer(np.arange(len(domain)), np.arange(len(domain)))
    high = np.maximum.outer(np.arange(len(domain)), np.arange(len(domain)))
    between = cumulative[high + 1] - cumulative[low]
    return (between - (marginals[:, None] + marginals[None, :]) / 2) ** 2


def _alpha_by_matrix_product(pairable: np.ndarray, level: str, domain: np.ndarray) -> float:
    """Alpha of pairable units, the coincidences as one matrix product (memory: values x values)."""
    weighted = pairable / (pairable.sum(axis=1) - 1)[:, None]
    coincidences = weighted.T @ pairable - np.diag(weighted.sum(axis=0))
    marginals = coincidences.sum(axis=1)
    distances = _distances(level, domain, marginals)
    expected = (np.outer(marginals, marginals) * distances).sum()
    if expected <= 0:
        return float("nan")
    return float(1 - (marginals.sum() - 1) * (coincidences * distances).sum() / expected)


def krippendorff_alpha_from_counts(
    counts: Any, *, level: str = "nominal", domain: Sequence[Any] | None = None
) -> tuple[float | None, str | None]:
    """Alpha of a units x values count matrix (columns ordered as `domain`), and why it is None if so.

    `domain` gives the value of each column: numbers for the interval and ratio levels, any ordered
    labels for ordinal (default 0..V-1).
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}; use one of {', '.join(LEVELS)}")
    counts = np.asarray(counts, dtype=float)
    domain_values = np.arange(counts.shape[1]) if domain is None else np.asarray(domain)
    pairable = counts[counts.sum(axis=1) >= 2]
    if pairable.shape[0] == 0:
        return None, "alpha needs at least one item with two or more ratings"
    used = pairable.sum(axis=0) > 0
    if used.sum() < 2:
        return None, "alpha is undefined: only one value was used, so no disagreement is possible"
    pairable, domain_values = pairable[:, used], domain_values[used]
    # Nominal and ordinal distances depend only on the column order; interval and ratio on the values.
    values = domain_values.astype(float) if level in NUMERIC_LEVELS else np.arange(len(domain_values))
    with np.errstate(divide="ignore", invalid="ignore"):
        if pairable.shape[0] * pairable.shape[1] ** 2 <= PACKAGE_CELLS:
            alpha = float(krippendorff.alpha(value_counts=pairable, value_domain=values, level_of_measurement=level))
        else:
            alpha = _alpha_by_matrix_product(pairable, level, values)
    if not np.isfinite(alpha):
        return None, "alpha is undefined: expected disagreement is zero"
    return alpha, None


def krippendorff_alpha(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    value: str = VALUE,
    levels: Sequence[str] = ("nominal",),
    domain: Sequence[Any] | None = None,
) -> Alpha:
    """Krippendorff's alpha at each level for a long table (missing ratings simply absent).

    Values are ordered by `domain` when given, else sorted; the interval and ratio levels need numbers.
    """
    present = drop_missing(table, item, value)
    items, n_items = item_codes(present[item])
    codes, labels = category_codes(present[value], domain)
    counts = count_matrix(items, codes, n_items, len(labels))
    result = Alpha(values={}, n_items=n_items, n_pairable=int(counts[counts.sum(axis=1) >= 2].sum()))
    for level in levels:
        if level in NUMERIC_LEVELS and not all(isinstance(v, int | float | np.number) for v in labels):
            result.values[level] = None
            result.notes.append(f"{level} alpha needs numeric values")
            continue
        alpha, reason = krippendorff_alpha_from_counts(counts, level=level, domain=labels)
        result.values[level] = alpha
        if reason and reason not in result.notes:
            result.notes.append(reason)
    return result
