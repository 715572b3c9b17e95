"""Intraclass correlation coefficients for numeric ratings.

One-way random effects, ICC(1,1) and ICC(1,k), is the model that fits annotation studies: each
item is rated by its own subset of annotators ("3 of 6"), so annotator effects cannot be separated
from error. Two-way models, ICC(2,.) and ICC(3,.), need every annotator to rate every item and
are reported only for such fully crossed designs.

References: Shrout, P. E. & Fleiss, J. L. (1979), "Intraclass correlations: uses in assessing
rater reliability", Psychological Bulletin 86(2):420-428; McGraw, K. O. & Wong, S. P. (1996),
"Forming inferences about some intraclass correlation coefficients", Psychological Methods
1(1):30-46; for unequal group sizes, Donner, A. (1986), "A review of inference procedures for
the intraclass correlation coefficient in the one-way random effects model", International
Statistical Review 54(1):67-82 (k0), and for its interval Searle, S. R. (1971), Linear Models,
Wiley, and Thomas, J. D. & Hultquist, R. A. (1978), "Interval estimation for the unbalanced case
of the one-way random effects model", Annals of Statistics 6(3):582-587: the interval R's
`ICC::ICCest(CI.type = "THD")` computes (Wolak, Fairbairn & Paulsen 2012, Methods in Ecology and
Evolution 3(1):129-137).

The intervals treat items as independent. When items are clustered (episodes of one scenario),
they do not account for it; the report says so next to them.

Parley's own code, because no kept library covers the design: scipy has no ICC, and pingouin's
`intraclass_corr` (a test-only dependency, the oracle of `tests/stats/test_icc.py`) requires
complete, balanced data, while annotation studies rate each item by its own, unequal subset of
annotators; the unbalanced one-way ICC with its Thomas-Hultquist interval exists in no Python
package we keep. scipy provides the F distribution the intervals use.
"""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from .tables import ANNOTATOR, ITEM, VALUE, exclusion_note, item_codes, usable_ratings

Interval = list[float]

BALANCED_METHOD = (
    "one-way random effects ANOVA, ICC(1,1) and ICC(1,k) (Shrout & Fleiss 1979, case 1); "
    "95% CIs from the F distribution (McGraw & Wong 1996, case 1)"
)
UNBALANCED_METHOD = (
    "one-way random effects ANOVA with unequal ratings per item: k = k0, the adjusted average "
    "number of ratings per item, (N - sum n_i^2 / N) / (n - 1) (Donner 1986); ICC(1,1) = "
    "(MSB - MSW) / (MSB + (k0 - 1) MSW), ICC(1,k) = (MSB - MSW) / MSB; 95% CIs: Searle's (1971) "
    "F-based limits for unequal group sizes (Thomas & Hultquist 1978) with k0 in place of k, as "
    'R\'s ICC::ICCest(CI.type = "THD") computes them; approximate when the n_i differ'
)
TWOWAY_METHOD = (
    "two-way ANOVA on a fully crossed design: ICC(2,.) absolute agreement with random "
    "annotators, ICC(3,.) consistency with fixed annotators (Shrout & Fleiss 1979, cases 2 and "
    "3); 95% CIs per McGraw & Wong (1996), ICC(2,1) with Satterthwaite's degrees of freedom"
)


# A two-way residual within this many units in the last place of the largest centred rating,
# in every cell, is what rounding leaves of an exactly additive table, not variance.
RESIDUAL_ULPS = 64


@dataclass
class OnewayIcc:
    """ICC(1,1) and ICC(1,k) with the one-way F test; undefined values are None with a note."""

    n_items: int
    n_ratings: int
    excluded_items: int
    method: str
    icc1: float | None = None
    icc1_ci95: Interval | None = None
    icc1k: float | None = None
    icc1k_ci95: Interval | None = None
    f_value: float | None = None
    df1: float | None = None
    df2: float | None = None
    p: float | None = None
    k: float | None = None
    ms_between: float | None = None
    ms_within: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "icc1": self.icc1,
            "icc1_ci95": self.icc1_ci95,
            "icc1k": self.icc1k,
            "icc1k_ci95": self.icc1k_ci95,
            "F": self.f_value,
            "df1": self.df1,
            "df2": self.df2,
            "p": self.p,
            "k": self.k,
            "ms_between": self.ms_between,
            "ms_within": self.ms_within,
            "method": self.method,
        }


@dataclass
class TwowayIcc:
    """ICC(2,1), ICC(2,k), ICC(3,1), ICC(3,k) for a fully crossed items x annotators design."""

    n_items: int
    n_annotators: int
    method: str = TWOWAY_METHOD
    icc2: float | None = None
    icc2_ci95: Interval | None = None
    icc2k: float | None = None
    icc2k_ci95: Interval | None = None
    icc3: float | None = None
    icc3_ci95: Interval | None = None
    icc3k: float | None = None
    icc3k_ci95: Interval | None = None
    f_value: float | None = None
    df1: float | None = None
    df2: float | None = None
    p: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "icc2": self.icc2,
            "icc2_ci95": self.icc2_ci95,
            "icc2k": self.icc2k,
            "icc2k_ci95": self.icc2k_ci95,
            "icc3": self.icc3,
            "icc3_ci95": self.icc3_ci95,
            "icc3k": self.icc3k,
            "icc3k_ci95": self.icc3k_ci95,
            "F": self.f_value,
            "df1": self.df1,
            "df2": self.df2,
            "p": self.p,
            "method": self.method,
        }


def _finite(value: float) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def _interval(low: float, high: float) -> Interval | None:
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return None
    return [low, high]


def _f_quantile(df1: float, df2: float) -> float:
    return float(scipy_stats.f.ppf(0.975, df1, df2))


def _centre(values: np.ndarray) -> float:
    """A rating from the middle of the data (the lower median), to subtract before any sum.

    Every sum of squares is taken on ratings minus this value, so ratings shifted by 1e9 lose
    nothing to the squares. It is one of the ratings rather than their mean because the
    difference of two nearby floats is exact: whole-number ratings stay whole numbers and items
    with equal means keep exactly equal means, whatever order the ratings come in. (Centring on
    a mean such as 1/3, which no float holds, would make the sums depend on that order.)
    """
    flat = np.ravel(values)
    middle = (len(flat) - 1) // 2
    return float(np.partition(flat, middle)[middle])


def icc_oneway_from_f(f_value: float, df1: float, df2: float, k: float) -> dict[str, Any]:
    """ICC(1,1), ICC(1,k) and their 95% CIs from the one-way F ratio MSB / MSW.

    ICC(1,1) = (F - 1) / (F + k - 1) and ICC(1,k) = 1 - 1/F (Shrout & Fleiss 1979, eqs. 2 and 7
    rewritten in F); the bounds replace F by F_L = F / F(.975; df1, df2) and
    F_U = F * F(.975; df2, df1) (McGraw & Wong 1996, Table 7, case 1). Used on its own, it checks
    a published report: SocialVeil's F(119, 240) = 4.26 with k = 3 gives ICC(1,k) = 0.77 with
    95% CI [0.68, 0.83].
    """
    if np.isinf(f_value):
        return {"icc1": 1.0, "icc1_ci95": [1.0, 1.0], "icc1k": 1.0, "icc1k_ci95": [1.0, 1.0]}
    f_low = f_value / _f_quantile(df1, df2)
    f_high = f_value * _f_quantile(df2, df1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "icc1": _finite((f_value - 1) / (f_value + k - 1)),
            "icc1_ci95": _interval((f_low - 1) / (f_low + k - 1), (f_high - 1) / (f_high + k - 1)),
            "icc1k": _finite(1 - 1 / np.float64(f_value)),
            "icc1k_ci95": _interval(1 - 1 / np.float64(f_low), 1 - 1 / np.float64(f_high)),
        }


def icc_oneway_from_codes(values: np.ndarray, items: np.ndarray, n_items: int, excluded_items: int = 0) -> OnewayIcc:
    """One-way ICCs from ratings and their item codes (every item already has two ratings or more).

    MSB = sum_i n_i (mean_i - mean)^2 / (n - 1) and MSW = sum_i sum_j (x_ij - mean_i)^2 / (N - n)
    for n items and N ratings; F = MSB / MSW on (n - 1, N - n) degrees of freedom. With k ratings
    on every item this is Shrout & Fleiss's case 1; otherwise k0 = (N - sum n_i^2 / N) / (n - 1)
    replaces k (Donner 1986), and the method string says so.

    ICC is undefined when every rating is the same, and 1 when every item's ratings are the same;
    both are decided by exact equality of the ratings, so shifting every rating by 1e9 or
    changing its units gives the same answer. The sums of squares are taken on centred ratings
    (see `_centre`), so a large shift does not swamp them either.
    """
    values = np.asarray(values, dtype=float)
    notes = exclusion_note(excluded_items)
    n_ratings = len(values)
    sizes = np.bincount(items, minlength=n_items).astype(float)
    balanced = bool(n_items) and sizes.min() == sizes.max()
    method = BALANCED_METHOD if balanced else UNBALANCED_METHOD

    counts = {"n_items": n_items, "n_ratings": n_ratings, "excluded_items": excluded_items, "method": method}

    def undefined(reason: str, **known: Any) -> OnewayIcc:
        return OnewayIcc(**counts, **known, notes=[*notes, reason])

    if n_items < 2:
        return undefined("ICC needs at least two items with two or more ratings each")
    df1 = float(n_items - 1)
    df2 = float(n_ratings - n_items)
    k = float((n_ratings - (sizes**2).sum() / n_ratings) / (n_items - 1))
    centred = values - _centre(values)
    means = np.bincount(items, weights=centred, minlength=n_items) / sizes
    ms_between = float((sizes * (means - centred.mean()) ** 2).sum() / df1)
    ms_within = float(((centred - means[items]) ** 2).sum() / df2)
    known = dict(df1=df1, df2=df2, k=k, ms_between=ms_between, ms_within=ms_within)
    # "No variance" and "perfect agreement" are decided on the ratings themselves, exactly: a
    # threshold on the mean squares would depend on where the ratings sit and on their units.
    if values.min() == values.max():
        return undefined("ICC is undefined: all ratings are equal (no variance)", **known)
    lowest = np.full(n_items, np.inf)
    highest = np.full(n_items, -np.inf)
    np.minimum.at(lowest, items, values)
    np.maximum.at(highest, items, values)
    if (lowest == highest).all() or ms_within == 0:
        intervals = icc_oneway_from_f(np.inf, df1, df2, k)
        perfect = "ratings agree perfectly within every item: F is infinite and ICC = 1"
        known["ms_within"] = 0.0  # exactly: the residues left are rounding
        return OnewayIcc(**counts, **intervals, **known, p=0.0, notes=[*notes, perfect])
    f_value = ms_between / ms_within
    intervals = icc_oneway_from_f(f_value, df1, df2, k)
    for name in ("icc1", "icc1_ci95", "icc1k", "icc1k_ci95"):
        if intervals[name] is None:
            notes.append(f"{name} is unbounded because the between-item mean square is zero")
    p = float(scipy_stats.f.sf(f_value, df1, df2))
    return OnewayIcc(**counts, **intervals, **known, f_value=f_value, p=p, notes=notes)


def icc_oneway(table: pd.DataFrame, *, item: str = ITEM, value: str = VALUE) -> OnewayIcc:
    """ICC(1,1) and ICC(1,k) of a long table of numeric ratings (see `icc_oneway_from_codes`)."""
    kept, excluded = usable_ratings(table, item=item, value=value)
    codes, n_items = item_codes(kept[item])
    return icc_oneway_from_codes(kept[value].to_numpy(dtype=float), codes, n_items, excluded)


def crossed_matrix(
    table: pd.DataFrame, *, item: str = ITEM, annotator: str = ANNOTATOR, value: str = VALUE
) -> np.ndarray | None:
    """Items x annotators matrix when every annotator rated every item exactly once, else None."""
    kept, _ = usable_ratings(table, item=item, value=value)
    if kept.empty or kept.duplicated([item, annotator]).any():
        return None
    n_items, n_annotators = kept[item].nunique(), kept[annotator].nunique()
    if len(kept) != n_items * n_annotators:
        return None
    wide = kept.pivot(index=item, columns=annotator, values=value)
    return wide.to_numpy(dtype=float)


def icc_twoway_from_matrix(matrix: np.ndarray) -> TwowayIcc:
    """Two-way ICCs of a complete items x annotators matrix.

    With BMS (items), JMS (annotators) and EMS (residual) mean squares of the two-way ANOVA:
    ICC(2,1) = (BMS - EMS) / (BMS + (k-1) EMS + k (JMS - EMS) / n),
    ICC(2,k) = (BMS - EMS) / (BMS + (JMS - EMS) / n),
    ICC(3,1) = (BMS - EMS) / (BMS + (k-1) EMS), ICC(3,k) = (BMS - EMS) / BMS
    (Shrout & Fleiss 1979, Table 1). F = BMS / EMS on (n-1, (n-1)(k-1)) degrees of freedom.
    """
    y = np.asarray(matrix, dtype=float)
    n, k = y.shape
    notes: list[str] = []

    def undefined(reason: str) -> TwowayIcc:
        return TwowayIcc(n_items=n, n_annotators=k, notes=[reason])

    if n < 2 or k < 2:
        return undefined("two-way ICC needs at least two items and two annotators")
    if y.min() == y.max():
        return undefined("two-way ICC is undefined: all ratings are equal (no variance)")
    # Centred, and the residual summed directly rather than as total - rows - columns, which
    # cancels catastrophically when the residual is small next to the item effect.
    centred = y - _centre(y)
    row_means, column_means = centred.mean(axis=1), centred.mean(axis=0)
    grand = centred.mean()
    ss_rows = k * ((row_means - grand) ** 2).sum()
    ss_cols = n * ((column_means - grand) ** 2).sum()
    residual = centred - row_means[:, None] - column_means[None, :] + grand
    ss_error = float((residual**2).sum())
    df1, df_cols, df2 = n - 1, k - 1, (n - 1) * (k - 1)
    bms, jms, ems = ss_rows / df1, ss_cols / df_cols, ss_error / df2
    # An exactly additive table (rating = item effect + annotator effect) leaves only rounding.
    rounding = RESIDUAL_ULPS * np.finfo(float).eps * float(np.abs(centred).max())
    if ss_error <= n * k * rounding**2:
        return undefined("two-way ICC is undefined: the residual mean square is zero")
    bms, jms, ems = np.float64(bms), np.float64(jms), np.float64(ems)
    with np.errstate(divide="ignore", invalid="ignore"):
        icc2 = (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
        icc2k = (bms - ems) / (bms + (jms - ems) / n)
        icc3 = (bms - ems) / (bms + (k - 1) * ems)
        f_value = bms / ems
        icc3k = 1 - 1 / f_value
        # ICC(3,.): the F-based bounds of case 3 (McGraw & Wong 1996, Table 7, case 3).
        f_low = f_value / _f_quantile(df1, df2)
        f_high = f_value * _f_quantile(df2, df1)
        icc3_ci = _interval((f_low - 1) / (f_low + k - 1), (f_high - 1) / (f_high + k - 1))
        icc3k_ci = _interval(1 - 1 / np.float64(f_low), 1 - 1 / np.float64(f_high))
        # ICC(2,1): Satterthwaite's approximation (McGraw & Wong 1996, Table 7, case 2A).
        fj = jms / ems
        v_num = df2 * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        v_den = df1 * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        v = v_num / v_den
        f_upper = float(scipy_stats.f.ppf(0.975, n - 1, v))
        f_lower = float(scipy_stats.f.ppf(0.975, v, n - 1))
        low2 = n * (bms - f_upper * ems) / (f_upper * (k * jms + (k * n - k - n) * ems) + n * bms)
        high2 = n * (f_lower * bms - ems) / (k * jms + (k * n - k - n) * ems + n * f_lower * bms)
        icc2_ci = _interval(low2, high2)
        icc2k_ci = _interval(low2 * k / (1 + low2 * (k - 1)), high2 * k / (1 + high2 * (k - 1)))
    for name, estimate in (("icc2", icc2), ("icc2k", icc2k), ("icc3", icc3), ("icc3k", icc3k)):
        if _finite(estimate) is None:
            notes.append(f"{name} is undefined for these mean squares")
    intervals = (("icc2_ci95", icc2_ci), ("icc2k_ci95", icc2k_ci), ("icc3_ci95", icc3_ci), ("icc3k_ci95", icc3k_ci))
    for name, interval in intervals:
        if interval is None:
            notes.append(f"{name} could not be computed from these mean squares")
    return TwowayIcc(
        icc2=_finite(icc2),
        icc2_ci95=icc2_ci,
        icc2k=_finite(icc2k),
        icc2k_ci95=icc2k_ci,
        icc3=_finite(icc3),
        icc3_ci95=icc3_ci,
        icc3k=_finite(icc3k),
        icc3k_ci95=icc3k_ci,
        f_value=_finite(f_value),
        df1=float(df1),
        df2=float(df2),
        p=float(scipy_stats.f.sf(f_value, df1, df2)),
        n_items=n,
        n_annotators=k,
        notes=notes,
    )


def icc_twoway(
    table: pd.DataFrame, *, item: str = ITEM, annotator: str = ANNOTATOR, value: str = VALUE
) -> TwowayIcc | None:
    """Two-way ICCs when the long table is fully crossed; None when it is not (then only the
    one-way model applies)."""
    matrix = crossed_matrix(table, item=item, annotator=annotator, value=value)
    return None if matrix is None else icc_twoway_from_matrix(matrix)
