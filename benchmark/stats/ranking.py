"""Agreement among respondents who each order the same options: Kendall's W.

A ranking question asks a respondent to put n options in order (first = best). For one item
answered by m respondents, each respondent's order becomes ranks 1..n, and Kendall's
coefficient of concordance is

    W = 12 S / (m^2 (n^3 - n) - m T),

where R_j is the sum of the ranks option j received, S = sum_j (R_j - m (n + 1) / 2)^2 the
spread of those sums around their mean, and T = sum over respondents of sum over groups of tied
options of (t^3 - t) the correction for ties (zero for strict orders; tied options get the mean
of the ranks they span). W runs from 0 (no agreement beyond chance) to 1 (every respondent gives
the same order). The test of W = 0 is Friedman's: chi2 = m (n - 1) W on n - 1 degrees of
freedom, which is how the tests check W against scipy's `friedmanchisquare`.

References: Kendall, M. G. & Babington Smith, B. (1939), "The problem of m rankings", Annals of
Mathematical Statistics 10(3):275-287; Kendall, M. G. & Gibbons, J. D. (1990), Rank Correlation
Methods, 5th ed., Edward Arnold, ch. 6 (the tie correction, eq. 6.19); Friedman, M. (1937),
"The use of ranks to avoid the assumption of normality implicit in the analysis of variance",
JASA 32(200):675-701.

In a study each item (episode) has its own respondents, so W is computed per item and the
report gives the mean over items with at least two rankings, with the per-item values beside
it. The majority of several respondents' orders is the order of the options by mean rank, ties
between mean ranks broken by the options' order in the question (`mean_rank_order`).

No kept library computes W from Parley's tables (scipy has Friedman's chi-square but needs at
least three options and returns no W), so it is computed here.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from .tables import ITEM, VALUE, drop_missing, exclusion_note

METHOD = (
    "Kendall's W, coefficient of concordance, per item: W = 12 S / (m^2 (n^3 - n) - m T) with "
    "the tie correction T (Kendall & Babington Smith 1939; Kendall & Gibbons 1990, ch. 6); "
    "p from Friedman's chi2 = m (n - 1) W on n - 1 df; mean over items with two or more rankings"
)


@dataclass
class KendallW:
    """W for one m x n table of ranks, with Friedman's chi-square test; None when undefined."""

    m: int
    n: int
    w: float | None
    chi2: float | None
    df: int
    p: float | None
    ties: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "m": self.m,
            "n": self.n,
            "w": self.w,
            "chi2": self.chi2,
            "df": self.df,
            "p": self.p,
            "ties": self.ties,
            "notes": list(self.notes),
        }


@dataclass
class RankingAgreement:
    """Kendall's W over the items of a study: the mean, and each item's W."""

    n_items: int
    n_rankings: int
    excluded_items: int
    method: str = METHOD
    mean_w: float | None = None
    per_item: dict[Hashable, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kendall_w": self.mean_w,
            "n_items": self.n_items,
            "n_rankings": self.n_rankings,
            "excluded_items": self.excluded_items,
            "method": self.method,
            "per_item": {str(item): value for item, value in self.per_item.items()},
            "notes": list(self.notes),
        }


def ranks_from_order(order: Sequence[Hashable], options: Sequence[Hashable]) -> list[float]:
    """The rank (1 = first) each option gets in `order`, listed in the options' order.

    `order` must hold every option exactly once; a ValueError names what is wrong otherwise.
    """
    if len(set(order)) != len(order):
        raise ValueError("an option appears more than once in the order")
    if set(order) != set(options) or len(order) != len(options):
        missing = [o for o in options if o not in set(order)]
        extra = [o for o in order if o not in set(options)]
        parts = []
        if missing:
            parts.append(f"missing {', '.join(map(str, missing))}")
        if extra:
            parts.append(f"unknown {', '.join(map(str, extra))}")
        raise ValueError("the order must list every option once: " + "; ".join(parts))
    position = {option: index + 1 for index, option in enumerate(order)}
    return [float(position[option]) for option in options]


def kendall_w(ranks: Any) -> KendallW:
    """Kendall's W for an m x n array: one row per respondent, one column per option.

    Rows are ranks 1..n, smaller = earlier; tied options carry the mean of the ranks they span
    (e.g. 1.5, 1.5). Each row is re-ranked ascending first, so any "smaller is better" scores
    give the same W as their ranks.
    """
    table = np.asarray(ranks, dtype=float)
    if table.ndim != 2:
        raise ValueError("ranks must be a two-dimensional array (respondents x options)")
    m, n = table.shape
    df = n - 1
    if m < 2 or n < 2:
        note = "fewer than two rankings" if m < 2 else "fewer than two options"
        return KendallW(m=m, n=n, w=None, chi2=None, df=max(df, 0), p=None, notes=[note])
    ranked = np.vstack([scipy_stats.rankdata(row) for row in table])
    ties = 0.0
    for row in ranked:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts.astype(float) ** 3 - counts))
    sums = ranked.sum(axis=0)
    s = float(np.sum((sums - m * (n + 1) / 2.0) ** 2))
    denominator = m**2 * (n**3 - n) - m * ties
    if denominator <= 0:
        return KendallW(
            m=m, n=n, w=None, chi2=None, df=df, p=None, ties=ties, notes=["every respondent tied every option"]
        )
    w = 12.0 * s / denominator
    chi2 = m * df * w
    p = float(scipy_stats.chi2.sf(chi2, df))
    return KendallW(m=m, n=n, w=w, chi2=chi2, df=df, p=p, ties=ties)


def kendall_w_by_item(
    table: pd.DataFrame, options: Sequence[Hashable], *, item: str = ITEM, value: str = VALUE
) -> RankingAgreement:
    """Kendall's W per item from a long table whose values are orders (lists of options).

    Items with fewer than two rankings are excluded and counted; the mean is over the rest.
    """
    present = drop_missing(table, item, value)
    items_before = int(table[item].nunique(dropna=True)) if len(table) else 0
    per_item: dict[Hashable, float | None] = {}
    n_rankings = 0
    notes: list[str] = []
    for key, group in present.groupby(item, sort=True, observed=True):
        if len(group) < 2:
            continue
        ranks = [ranks_from_order(list(order), options) for order in group[value]]
        result = kendall_w(ranks)
        per_item[key] = result.w
        n_rankings += len(group)
    excluded = items_before - len(per_item)
    notes.extend(exclusion_note(excluded))
    defined = [w for w in per_item.values() if w is not None]
    if len(defined) < len(per_item):
        notes.append(f"{len(per_item) - len(defined)} items with W undefined (all options tied)")
    mean_w = float(np.mean(defined)) if defined else None
    return RankingAgreement(
        n_items=len(per_item),
        n_rankings=n_rankings,
        excluded_items=excluded,
        mean_w=mean_w,
        per_item=per_item,
        notes=notes,
    )


def mean_rank_order(orders: Sequence[Sequence[Hashable]], options: Sequence[Hashable]) -> list[Hashable]:
    """The majority of several orders: options sorted by mean rank, ties kept in the options' order.

    With one order this returns it unchanged; with none, an empty list.
    """
    if not orders:
        return []
    ranks = np.array([ranks_from_order(list(order), options) for order in orders], dtype=float)
    means = ranks.mean(axis=0)
    # A stable sort on the mean rank keeps the question's order between equal means.
    return [options[index] for index in np.argsort(means, kind="stable")]
