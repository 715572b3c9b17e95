"""Chance-corrected agreement on categories: Fleiss, Randolph and Cohen kappas, percent agreement.

All multi-rater statistics start from Fleiss's items x categories count matrix n_ij (how many of
item i's m_i ratings fell in category j). Items may have different numbers of ratings; the
per-item agreement P_i is then computed with that item's own m_i.

Parley's own code, because no kept library covers the design: the runtime dependencies (numpy,
pandas, scipy, krippendorff) have no kappa, and statsmodels' `fleiss_kappa` (a test-only
dependency) requires the same number of ratings on every item (it asserts it) and gives no
interval, while annotation studies give items different numbers of ratings and the report needs
a cluster-bootstrap CI. Cohen's and Randolph's kappas are a line each over the same count matrices.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, Seed, make_rng, percentile_interval, resampled_sums
from .tables import (
    ANNOTATOR,
    ITEM,
    VALUE,
    category_codes,
    count_matrix,
    drop_missing,
    equal_width_bins,
    exclusion_note,
    item_clusters,
    item_codes,
    usable_ratings,
)

FLEISS_METHOD = (
    "Fleiss (1971) kappa: P_i = (sum_j n_ij^2 - m_i) / (m_i (m_i - 1)), P = mean P_i, "
    "p_j = sum_i n_ij / sum_i m_i, P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e); with unequal "
    "m_i each item's P_i uses its own m_i and the category shares p_j are pooled over all ratings, "
    "so an item with more ratings weighs more in P_e (Gwet (2014) instead averages each item's "
    "shares n_ij / m_i over items, which can differ when the m_i differ; the two agree when every "
    "item has the same number of ratings)"
)
FLEISS_ITEMS_CI = "95% CI: percentile bootstrap resampling items with replacement"
FLEISS_CLUSTERS_CI = (
    "95% CI: percentile bootstrap resampling clusters with replacement (all items of a drawn "
    "cluster together; Field & Welsh 2007)"
)
RANDOLPH_METHOD = (
    "Randolph (2005) free-marginal multirater kappa: (P - 1/q) / (1 - 1/q), with P as in Fleiss "
    "and q the number of categories available to annotators"
)
COHEN_METHOD = "Cohen (1960) kappa for two annotators: (p_o - p_e) / (1 - p_e) from their contingency table"
BINNED_METHOD = "Fleiss and Randolph kappas after cutting the scale into equal-width bins (Sotopia, appendix E)"
AGREEMENT_METHOD = "mean over items of the share of agreeing pairs of ratings (Fleiss's P)"

_TINY = 1e-12


@dataclass
class Kappa:
    """A kappa coefficient; `value` and `ci95` are None (with a note) when undefined."""

    value: float | None
    method: str
    n_items: int
    n_ratings: int
    ci95: list[float] | None = None
    resamples: int | None = None
    excluded_items: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci95": self.ci95, "method": self.method}


def _pair_agreement(counts: np.ndarray) -> np.ndarray:
    """P_i: share of agreeing ordered pairs among item i's ratings (items with m_i >= 2)."""
    m = counts.sum(axis=1).astype(float)
    return ((counts.astype(float) ** 2).sum(axis=1) - m) / (m * (m - 1))


def _usable_counts(counts: Any) -> tuple[np.ndarray, int]:
    counts = np.asarray(counts)
    rated = counts.sum(axis=1) >= 2
    return counts[rated], int((~rated).sum())


def percent_agreement_from_counts(counts: Any) -> float | None:
    """Mean share of agreeing rating pairs per item (Fleiss 1971's P); None without usable items."""
    counts, _ = _usable_counts(counts)
    if len(counts) == 0:
        return None
    return float(_pair_agreement(counts).mean())


def fleiss_kappa_from_counts(
    counts: Any,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = None,
    clusters: Any = None,
) -> Kappa:
    """Fleiss' kappa of an items x categories count matrix, with a bootstrap 95% CI.

    kappa = (P - P_e) / (1 - P_e), P = mean_i P_i, P_i = (sum_j n_ij^2 - m_i) / (m_i (m_i - 1)),
    P_e = sum_j p_j^2, p_j = sum_i n_ij / sum_i m_i (Fleiss 1971, "Measuring nominal scale
    agreement among many raters", Psychological Bulletin 76(5):378-382, eqs. 1-9). With unequal
    m_i the shares p_j are pooled over all ratings, as Fleiss's p_j generalises; Gwet, K. L.
    (2014), Handbook of Inter-Rater Reliability, 4th ed., averages per-item shares instead, which
    gives a different P_e when the m_i differ.

    The CI is the percentile interval of kappa over `resamples` bootstrap resamples (the
    large-sample variance of Fleiss, Nee & Landis 1979 holds only under kappa = 0, so it is not
    used for an interval). Resamples draw items with replacement, or, given `clusters` (one code
    per row of `counts`, e.g. the scenario of each episode), whole clusters, since items of one
    cluster are not independent. `resamples=0` skips the interval.
    """
    counts = np.asarray(counts)
    rated = counts.sum(axis=1) >= 2
    counts, excluded = counts[rated], int((~rated).sum())
    cluster_codes = None if clusters is None else pd.factorize(np.asarray(clusters)[rated])[0]
    n_items = len(counts)
    n_ratings = int(counts.sum())
    notes = exclusion_note(excluded)
    method = f"{FLEISS_METHOD}. {FLEISS_ITEMS_CI if cluster_codes is None else FLEISS_CLUSTERS_CI}"
    result = Kappa(None, method, n_items, n_ratings, excluded_items=excluded, notes=notes)
    if n_items == 0:
        notes.append("Fleiss' kappa needs at least one item with two or more ratings")
        return result
    agreement = _pair_agreement(counts)
    per_category = counts.sum(axis=0) / n_ratings
    expected = float((per_category**2).sum())
    if expected >= 1 - _TINY:
        notes.append("Fleiss' kappa is undefined: every rating is in one category (chance agreement is 1)")
        return result
    result.value = float((agreement.mean() - expected) / (1 - expected))
    units = n_items if cluster_codes is None else int(cluster_codes.max()) + 1
    if resamples and units >= 2:
        # Per item: P_i, its ratings and its ratings per category; summed per cluster, with the
        # number of items in a last column (a resample of clusters draws a varying number).
        totals = np.column_stack([agreement, counts.sum(axis=1), counts])
        if cluster_codes is not None:
            totals = np.column_stack([totals, np.ones(n_items)])
            totals = np.column_stack([np.bincount(cluster_codes, weights=c, minlength=units) for c in totals.T])
        sums = resampled_sums(totals, resamples, make_rng(seed))
        drawn_items = n_items if cluster_codes is None else sums[:, -1]
        per_category = sums[:, 2 : 2 + counts.shape[1]]
        chance = ((per_category / sums[:, 1:2]) ** 2).sum(axis=1)
        defined = chance < 1 - _TINY
        with np.errstate(divide="ignore", invalid="ignore"):
            replicates = np.where(defined, (sums[:, 0] / drawn_items - chance) / (1 - chance), np.nan)
        if not defined.all():
            notes.append(f"{int((~defined).sum())} bootstrap resamples with a single category left out of the CI")
        result.ci95 = percentile_interval(replicates)
        result.resamples = resamples
    elif resamples:
        unit = "item" if cluster_codes is None else "cluster"
        notes.append(f"no CI for Fleiss' kappa from a single {unit}")
    else:
        notes.append("no CI: bootstrap skipped (0 resamples)")
    return result


def randolph_kappa_from_counts(counts: Any, n_categories: int | None = None) -> Kappa:
    """Randolph's free-marginal kappa: (P - 1/q) / (1 - 1/q), P as in Fleiss 1971.

    q is the number of categories annotators could choose from (default: the columns of
    `counts`). Randolph, J. J. (2005), "Free-marginal multirater kappa (multirater kappa_free): an
    alternative to Fleiss' fixed-marginal multirater kappa", Joensuu Learning and Instruction
    Symposium. Sotopia (appendix E) reports it on binned ratings.
    """
    counts, excluded = _usable_counts(counts)
    q = counts.shape[1] if n_categories is None else n_categories
    notes = exclusion_note(excluded)
    result = Kappa(None, RANDOLPH_METHOD, len(counts), int(counts.sum()), excluded_items=excluded, notes=notes)
    if len(counts) == 0:
        notes.append("Randolph's kappa needs at least one item with two or more ratings")
    elif q < 2:
        notes.append("Randolph's kappa is undefined with fewer than two categories")
    else:
        result.value = float((_pair_agreement(counts).mean() - 1 / q) / (1 - 1 / q))
    return result


def cohen_kappa_from_table(table: Any) -> Kappa:
    """Cohen's kappa from a square contingency table (rows: annotator A, columns: annotator B).

    kappa = (p_o - p_e) / (1 - p_e), p_o = sum_j p_jj, p_e = sum_j p_j. p_.j (Cohen 1960, "A
    coefficient of agreement for nominal scales", Educational and Psychological Measurement
    20(1):37-46).
    """
    table = np.asarray(table, dtype=float)
    total = table.sum()
    result = Kappa(None, COHEN_METHOD, int(total), int(2 * total))
    if total == 0:
        result.notes.append("Cohen's kappa needs at least one item rated by both annotators")
        return result
    p = table / total
    observed = float(np.trace(p))
    expected = float((p.sum(axis=1) * p.sum(axis=0)).sum())
    if expected >= 1 - _TINY:
        result.notes.append("Cohen's kappa is undefined: both annotators used one category (chance agreement is 1)")
        return result
    result.value = (observed - expected) / (1 - expected)
    return result


def cohen_kappa_from_pairs(pairs: Sequence[tuple[Any, Any]], categories: Sequence[Any] | None = None) -> Kappa:
    """Cohen's kappa from (annotator A's label, annotator B's label) per item, e.g. a person and a judge.

    Categories are `categories` in that order, else the labels seen, sorted; pairs with a missing
    label are left out and counted. ProMediate's snippet comparison (PM-17) passes ("increased" |
    "decreased") pairs of the person's answer and the direction of the judge's consensus scores.
    """
    kept = [(a, b) for a, b in pairs if a is not None and b is not None]
    labels = list(categories) if categories is not None else sorted({label for pair in kept for label in pair}, key=str)
    index = {label: i for i, label in enumerate(labels)}
    unknown = sorted({label for pair in kept for label in pair if label not in index}, key=str)
    if unknown:
        raise ValueError(f"labels outside the categories {labels}: {', '.join(map(str, unknown))}")
    table = np.zeros((len(labels), len(labels)))
    for a, b in kept:
        table[index[a], index[b]] += 1
    result = cohen_kappa_from_table(table)
    result.excluded_items = len(pairs) - len(kept)
    result.notes = [*exclusion_note(result.excluded_items), *result.notes]
    return result


def _counts_of(
    table: pd.DataFrame, item: str, value: str, categories: Sequence[Any] | None
) -> tuple[np.ndarray, list[Any], int]:
    kept, excluded = usable_ratings(table, item=item, value=value)
    items, n_items = item_codes(kept[item])
    codes, labels = category_codes(kept[value], categories)
    return count_matrix(items, codes, n_items, len(labels)), labels, excluded


def fleiss_kappa(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    value: str = VALUE,
    categories: Sequence[Any] | None = None,
    cluster: str | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = None,
) -> Kappa:
    """Fleiss' kappa with a bootstrap 95% CI, from a long table of categorical ratings.

    The bootstrap resamples items, or the clusters named in column `cluster` (see `item_clusters`).
    """
    counts, _, excluded = _counts_of(table, item, value, categories)
    clusters = None
    if cluster is not None:
        kept, _ = usable_ratings(table, item=item, value=value)
        clusters = item_clusters(kept, item=item, cluster=cluster)
    result = fleiss_kappa_from_counts(counts, resamples=resamples, seed=seed, clusters=clusters)
    result.excluded_items = excluded
    result.notes = [*exclusion_note(excluded), *result.notes]
    return result


def randolph_kappa(
    table: pd.DataFrame, *, item: str = ITEM, value: str = VALUE, categories: Sequence[Any] | None = None
) -> Kappa:
    """Randolph's free-marginal kappa of a long table; q is len(categories), else the number observed."""
    counts, labels, excluded = _counts_of(table, item, value, categories)
    result = randolph_kappa_from_counts(counts, len(labels))
    result.excluded_items = excluded
    result.notes = [*exclusion_note(excluded), *result.notes]
    if categories is None and result.value is not None:
        result.notes.append(f"q = {len(labels)}, the number of categories observed; pass the options to fix it")
    return result


def percent_agreement(table: pd.DataFrame, *, item: str = ITEM, value: str = VALUE) -> float | None:
    """Mean share of agreeing rating pairs per item, from a long table (items with one rating dropped)."""
    counts, _, _ = _counts_of(table, item, value, None)
    return percent_agreement_from_counts(counts)


def cohen_kappa(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    annotator: str = ANNOTATOR,
    value: str = VALUE,
    categories: Sequence[Any] | None = None,
) -> Kappa:
    """Cohen's kappa when exactly two annotators rated the items; otherwise None with a note.

    Items rated by only one of the two are excluded and counted.
    """
    if annotator not in table.columns:
        return Kappa(None, COHEN_METHOD, 0, 0, notes=["Cohen's kappa needs to know which annotator gave each rating"])
    present = drop_missing(table, item, annotator, value)
    annotators = present[annotator].unique()
    if len(annotators) != 2:
        return Kappa(
            None,
            COHEN_METHOD,
            present[item].nunique(),
            len(present),
            notes=[f"Cohen's kappa needs exactly two annotators; these ratings come from {len(annotators)}"],
        )
    if present.duplicated([item, annotator]).any():
        return Kappa(
            None,
            COHEN_METHOD,
            present[item].nunique(),
            len(present),
            notes=["Cohen's kappa needs one rating per annotator and item; an annotator rated an item twice"],
        )
    codes, labels = category_codes(present[value], categories)
    coded = present.assign(_code=codes)
    wide = coded.pivot(index=item, columns=annotator, values="_code")
    both = wide.dropna()
    excluded = len(wide) - len(both)
    first, second = both[annotators[0]].to_numpy(int), both[annotators[1]].to_numpy(int)
    q = len(labels)
    contingency = np.bincount(first * q + second, minlength=q * q).reshape(q, q)
    result = cohen_kappa_from_table(contingency)
    result.excluded_items = excluded
    result.notes = [*exclusion_note(excluded), *result.notes]
    return result


def binned_kappas_from_codes(
    values: np.ndarray,
    items: np.ndarray,
    n_items: int,
    *,
    bins: Sequence[int] = (3, 4, 5),
    low: float,
    high: float,
) -> tuple[dict[str, dict[str, float | None]], list[str]]:
    """Fleiss and Randolph kappas and percent agreement after cutting [low, high] into equal-width bins.

    Sotopia (Zhou et al. 2024, appendix E, Table E.1) reports kappa on 11-point ratings grouped
    into 3, 4 and 5 equal-width bins; q for Randolph's kappa is the number of bins. Returns the
    values per number of bins and a note `"<bins>.<statistic>: reason"` for each that is None.
    """
    out: dict[str, dict[str, float | None]] = {}
    notes: list[str] = []
    for n_bins in bins:
        counts = count_matrix(items, equal_width_bins(values, n_bins, low=low, high=high), n_items, n_bins)
        fleiss = fleiss_kappa_from_counts(counts, resamples=0)
        randolph = randolph_kappa_from_counts(counts, n_bins)
        agreement = percent_agreement_from_counts(counts)
        out[str(n_bins)] = {"fleiss": fleiss.value, "randolph": randolph.value, "percent_agreement": agreement}
        if agreement is None:
            notes.extend(f"{n_bins}.{name}: no item has two or more ratings" for name in out[str(n_bins)])
            continue
        if fleiss.value is None:
            one_bin = "Fleiss' kappa is undefined: every rating falls in one bin (chance agreement is 1)"
            notes.append(f"{n_bins}.fleiss: {one_bin}")
        if randolph.value is None:
            notes.append(f"{n_bins}.randolph: Randolph's kappa needs two or more bins")
    return out, notes


def binned_kappas(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    value: str = VALUE,
    bins: Sequence[int] = (3, 4, 5),
    low: float | None = None,
    high: float | None = None,
) -> dict[str, dict[str, float | None]]:
    """Binned kappas of a long table of numeric ratings; the scale defaults to the observed range."""
    kept, _ = usable_ratings(table, item=item, value=value)
    values = kept[value].to_numpy(dtype=float)
    items, n_items = item_codes(kept[item])
    if len(values) == 0:
        return {str(n): {"fleiss": None, "randolph": None, "percent_agreement": None} for n in bins}
    low = float(values.min()) if low is None else low
    high = float(values.max()) if high is None else high
    if not high > low:
        return {str(n): {"fleiss": None, "randolph": None, "percent_agreement": 1.0} for n in bins}
    return binned_kappas_from_codes(values, items, n_items, bins=bins, low=low, high=high)[0]
