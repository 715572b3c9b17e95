"""Krippendorff's alpha for nominal, ordinal and interval data, with missing ratings.

Computed in the coincidence-matrix form of Krippendorff (2011), "Computing Krippendorff's
alpha-reliability", Annenberg School for Communication, University of Pennsylvania
(https://repository.upenn.edu/asc_papers/43), sections B-E:

    o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)      over units with m_u >= 2 values
    n_c = sum_k o_ck,  n = sum_c n_c
    alpha = 1 - (n - 1) sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck

with d2 = [c != k] (nominal), (c - k)^2 (interval) and
(sum_{g between c and k} n_g - (n_c + n_k) / 2)^2 (ordinal). The coincidence matrix is one matrix
product over the units x values count matrix, so ten thousand items cost milliseconds. Results
match the `krippendorff` package (Castro 2017), which the tests use as an oracle.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .tables import ITEM, VALUE, category_codes, count_matrix, drop_missing, item_codes

LEVELS = ("nominal", "ordinal", "interval")
METHOD = "Krippendorff (2011) alpha from the coincidence matrix; units with fewer than two values are not pairable"


@dataclass
class Alpha:
    """Alpha per level of measurement; a level is None when undefined (see notes)."""

    values: dict[str, float | None]
    n_items: int
    n_pairable: int
    method: str = METHOD
    notes: list[str] = field(default_factory=list)


def _distances(level: str, domain: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    if level == "interval":
        values = domain.astype(float)
        return (values[:, None] - values[None, :]) ** 2
    if level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(marginals)])
        low = np.minimum.outer(np.arange(len(domain)), np.arange(len(domain)))
        high = np.maximum.outer(np.arange(len(domain)), np.arange(len(domain)))
        between = cumulative[high + 1] - cumulative[low]
        return (between - (marginals[:, None] + marginals[None, :]) / 2) ** 2
    raise ValueError(f"unknown level of measurement {level!r}; use one of {', '.join(LEVELS)}")


def krippendorff_alpha_from_counts(
    counts: Any, *, level: str = "nominal", domain: Sequence[Any] | None = None
) -> tuple[float | None, str | None]:
    """Alpha of a units x values count matrix (columns ordered as `domain`), and why it is None if so.

    `domain` gives the value of each column: numbers for the interval level, any ordered labels
    for ordinal (default 0..V-1).
    """
    counts = np.asarray(counts, dtype=float)
    domain_values = np.arange(counts.shape[1]) if domain is None else np.asarray(domain)
    per_unit = counts.sum(axis=1)
    pairable = counts[per_unit >= 2]
    m = per_unit[per_unit >= 2]
    if pairable.shape[0] == 0:
        return None, "alpha needs at least one item with two or more ratings"
    coincidences = (pairable / (m - 1)[:, None]).T @ pairable
    coincidences -= np.diag((pairable / (m - 1)[:, None]).sum(axis=0))
    marginals = coincidences.sum(axis=1)
    n = marginals.sum()
    if (marginals > 0).sum() < 2:
        return None, "alpha is undefined: only one value was used, so no disagreement is possible"
    distances = _distances(level, domain_values, marginals)
    expected = (np.outer(marginals, marginals) * distances).sum()
    if expected <= 0:
        return None, "alpha is undefined: expected disagreement is zero"
    return float(1 - (n - 1) * (coincidences * distances).sum() / expected), None


def krippendorff_alpha(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    value: str = VALUE,
    levels: Sequence[str] = ("nominal",),
    domain: Sequence[Any] | None = None,
) -> Alpha:
    """Krippendorff's alpha at each level for a long table (missing ratings simply absent).

    Values are ordered by `domain` when given, else sorted; the interval level needs numbers.
    """
    present = drop_missing(table, item, value)
    items, n_items = item_codes(present[item])
    codes, labels = category_codes(present[value], domain)
    counts = count_matrix(items, codes, n_items, len(labels))
    result = Alpha(values={}, n_items=n_items, n_pairable=int(counts[counts.sum(axis=1) >= 2].sum()))
    for level in levels:
        if level == "interval" and not all(isinstance(v, int | float | np.number) for v in labels):
            result.values[level] = None
            result.notes.append("interval alpha needs numeric values")
            continue
        alpha, reason = krippendorff_alpha_from_counts(counts, level=level, domain=labels)
        result.values[level] = alpha
        if reason and reason not in result.notes:
            result.notes.append(reason)
    return result
