"""How well human ratings line up with an automated judge, and means per condition.

SocialVeil (§5.2, Table 4) correlates the human mean per scenario with the judge's score
(Pearson r with a 95% CI, n = 120) and lists mean ratings per barrier type with 95% CIs for both.
Correlations here use every item with at least one human rating and a judge score.

Per-item means are exact: the mean of an item's values is computed in rational arithmetic and
rounded once, so two items whose values have the same mean get the same float whatever their
number of ratings. Summing in floating point would not: three copies of 1.9 average to
1.8999999999999997 and four to 1.9, and that stray ulp breaks a tie that Spearman's rho must
keep (1.000 instead of 0.975 in `tests/stats/test_alignment.py`). The judge's score is meant to
be one value per item, repeated on each of its rows; an item whose rows disagree gets the mean
of them, and a note says how many items did.

Pearson's r is computed here from centred sums rather than by `scipy.stats.pearsonr`, which
normalises first and returns 0.9999999999999998 (and a p above 0) for perfectly correlated short
inputs such as [1, 2, 3] against itself; centred sums give exactly 1 there, so perfect alignment
reads as 1.000. scipy provides the Spearman rho and the t and normal distributions.
"""

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from .tables import CONDITION, ITEM, JUDGE, VALUE, drop_missing

METHOD = (
    "Pearson r between the human mean per item and the judge's score; 95% CI by Fisher's z "
    "(atanh r +/- 1.96 / sqrt(n - 3)); two-sided p from t = r sqrt((n - 2) / (1 - r^2)); "
    "Spearman's rho on the same pairs (average ranks for ties; per-item means are exact, so equal means "
    "stay tied)"
)
MEANS_METHOD = "mean of per-item scores with a 95% t interval (mean +/- t(.975, n - 1) sd / sqrt(n))"


@dataclass
class Alignment:
    """Pearson r (Fisher-z CI, p) and Spearman rho between humans and a judge."""

    pearson_r: float | None
    ci95: list[float] | None
    p: float | None
    spearman_rho: float | None
    n: int
    method: str = METHOD
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pearson_r": self.pearson_r,
            "ci95": self.ci95,
            "p": self.p,
            "spearman_rho": self.spearman_rho,
            "n": self.n,
            "method": self.method,
        }


def fisher_z_interval(r: float, n: int) -> list[float] | None:
    """95% CI of a Pearson r: tanh(atanh r +/- 1.959964 / sqrt(n - 3)) (Fisher 1921).

    SocialVeil's Table 4: r = 0.80 with n = 120 gives [0.72, 0.86].
    """
    if n <= 3:
        return None
    if abs(r) >= 1:
        return [float(r), float(r)]
    z = np.arctanh(r)
    half = scipy_stats.norm.ppf(0.975) / np.sqrt(n - 3)
    return [float(np.tanh(z - half)), float(np.tanh(z + half))]


def alignment_from_scores(human: Any, judge: Any) -> Alignment:
    """Alignment of paired per-item scores (human means, judge scores)."""
    x = np.asarray(human, dtype=float)
    y = np.asarray(judge, dtype=float)
    n = len(x)
    result = Alignment(None, None, None, None, n)
    if n < 3:
        result.notes.append("a correlation needs at least three items with both human ratings and a judge score")
        return result
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        constant = "human means" if np.ptp(x) == 0 else "judge scores"
        result.notes.append(f"correlation is undefined: the {constant} do not vary")
        return result
    dx, dy = x - x.mean(), y - y.mean()
    r = float(np.clip((dx @ dy) / np.sqrt((dx @ dx) * (dy @ dy)), -1.0, 1.0))
    result.pearson_r = r
    result.ci95 = fisher_z_interval(r, n)
    if result.ci95 is None:
        result.notes.append("the Fisher-z interval needs more than three items")
    if abs(r) >= 1:
        result.p = 0.0
    else:
        t = r * np.sqrt((n - 2) / (1 - r * r))
        result.p = float(2 * scipy_stats.t.sf(abs(t), n - 2))
    result.spearman_rho = float(scipy_stats.spearmanr(x, y).statistic)
    return result


def exact_means(values: pd.Series, groups: pd.Series) -> pd.Series:
    """The mean of `values` per group, exact: the true mean rounded to a float once.

    Equal means give equal floats (the floating-point mean of 1.9, 1.9, 1.9 is 1.8999999999999997,
    that of four 1.9s is 1.9), so ranks and ties computed on the means are the true ones. A group
    of equal values or of whole numbers (summed exactly below 2**53) needs one division; any
    other group is summed as fractions.
    """
    codes, names = pd.factorize(groups, sort=False)
    x = values.to_numpy(dtype=float)
    sizes = np.bincount(codes, minlength=len(names)).astype(float)
    sums = np.bincount(codes, weights=x, minlength=len(names))
    low = np.full(len(names), np.inf)
    high = np.full(len(names), -np.inf)
    np.minimum.at(low, codes, x)
    np.maximum.at(high, codes, x)
    fractional = np.bincount(codes, weights=x != np.round(x), minlength=len(names))
    # Whole numbers whose absolute values sum below 2**53: every partial sum is exact.
    whole = (fractional == 0) & (np.bincount(codes, weights=np.abs(x), minlength=len(names)) < 2.0**53)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(low == high, low, sums / sizes)
    inexact = ~((low == high) | whole)
    if inexact.any():
        order = np.argsort(codes, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes.astype(np.intp))])
        for group in np.flatnonzero(inexact):
            members = x[order[starts[group] : starts[group + 1]]]
            means[group] = float(sum(map(Fraction, members.tolist()), Fraction(0)) / len(members))
    return pd.Series(means, index=pd.Index(names, name=groups.name), name=values.name)


def item_scores(
    table: pd.DataFrame, *, item: str = ITEM, value: str = VALUE, judge: str | None = JUDGE
) -> tuple[pd.DataFrame, list[str]]:
    """One row per item: the human mean (`human`), the number of ratings (`n`) and the judge score (`judge`)."""
    notes: list[str] = []
    rated = drop_missing(table, item, value)
    frame = pd.DataFrame(
        {"human": exact_means(rated[value], rated[item]), "n": rated.groupby(item, sort=False)[value].size()}
    )
    if judge is not None and judge in table.columns:
        judged = drop_missing(table, item, judge)
        by_item = judged.groupby(item, sort=False)[judge]
        varying = int((by_item.max() != by_item.min()).sum())
        if varying:
            plural = "item" if varying == 1 else "items"
            notes.append(f"the judge score varies within {varying} {plural}; their mean is used")
        # Exact, so a constant score comes back as itself and equal scores stay tied.
        frame["judge"] = exact_means(judged[judge], judged[item])
    return frame, notes


def judge_alignment(table: pd.DataFrame, *, item: str = ITEM, value: str = VALUE, judge: str = JUDGE) -> Alignment:
    """Alignment between the human mean per item and the judge's score, from a long table.

    `judge` is a column holding the judge's score for the row's item (repeated on each rating).
    """
    if judge not in table.columns:
        return Alignment(None, None, None, None, 0, notes=["no judge scores"])
    scores, notes = item_scores(table, item=item, value=value, judge=judge)
    paired = scores.dropna(subset=["human", "judge"])
    result = alignment_from_scores(paired["human"].to_numpy(), paired["judge"].to_numpy())
    result.notes = [*notes, *result.notes]
    return result


def mean_interval(values: Any) -> dict[str, Any]:
    """Mean, 95% t interval and n of a sample; the interval is None for fewer than two values."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return {"mean": None, "ci95": None, "n": 0}
    mean = float(x.mean())
    if n < 2:
        return {"mean": mean, "ci95": None, "n": 1}
    half = float(scipy_stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / np.sqrt(n))
    return {"mean": mean, "ci95": [mean - half, mean + half], "n": n}


def means_by_condition(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    value: str = VALUE,
    condition: str = CONDITION,
    judge: str | None = JUDGE,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per condition, the mean human score per item and the mean judge score, each with a 95% t CI.

    Returns {"human": {condition: {"mean", "ci95", "n"}}, "judge": {...}} with n counted in items
    (ratings of one item are not independent, so the item mean is the unit).
    """
    out: dict[str, dict[str, dict[str, Any]]] = {"human": {}, "judge": {}}
    if condition not in table.columns:
        return out
    conditions = drop_missing(table, item, condition).groupby(item, sort=False)[condition].first()
    scores, _ = item_scores(table, item=item, value=value, judge=judge)
    scores = scores.join(conditions.rename("_condition"), how="inner")
    for name, group in scores.groupby("_condition", sort=True):
        out["human"][str(name)] = mean_interval(group["human"].dropna())
        if "judge" in group.columns:
            out["judge"][str(name)] = mean_interval(group["judge"].dropna())
    return out
