"""Long-format rating tables: one row per (item, annotator, question) answer.

Every statistic in this package starts from the same shape, so a study export, a CSV from
elsewhere and a test fixture all go through the same door. Helpers here turn that shape into the
arrays the formulas need (item codes, items x categories count matrices) and apply the one rule
shared by every statistic: an item with fewer than two ratings says nothing about agreement, so
it is excluded and counted.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

ITEM = "item"
ANNOTATOR = "annotator"
VALUE = "value"
QUESTION = "question"
CLUSTER = "cluster"
TRUTH = "truth"
CONDITION = "condition"
JUDGE = "judge"


def long_from_wide(
    matrix: Any,
    *,
    items: Sequence[Any] | None = None,
    annotators: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """Turn an items x annotators matrix (missing ratings as NaN or None) into a long table.

    Published reference data come as such matrices; the statistics take long tables.
    """
    frame = pd.DataFrame(matrix)
    if items is not None:
        frame.index = list(items)
    if annotators is not None:
        frame.columns = list(annotators)
    frame.index.name = ITEM
    long = frame.reset_index().melt(id_vars=ITEM, var_name=ANNOTATOR, value_name=VALUE)
    return long.dropna(subset=[VALUE]).reset_index(drop=True)


def drop_missing(table: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """Rows whose named columns are present; an empty string counts as missing (a blank CSV cell)."""
    keep = np.ones(len(table), dtype=bool)
    for column in columns:
        values = table[column]
        keep &= values.notna().to_numpy()
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            keep &= values.ne("").to_numpy(dtype=bool, na_value=False)
    return table if keep.all() else table[keep]


def usable_ratings(
    table: pd.DataFrame, *, item: str = ITEM, value: str = VALUE, min_ratings: int = 2
) -> tuple[pd.DataFrame, int]:
    """Drop missing values, then items with fewer than `min_ratings` ratings.

    Returns the remaining rows and the number of items excluded.
    """
    present = drop_missing(table, item, value)
    items_before = table[item].nunique(dropna=True)
    sizes = present.groupby(item, sort=False, observed=True)[value].transform("size")
    kept = present[(sizes >= min_ratings).to_numpy()]
    return kept, int(items_before - kept[item].nunique())


def exclusion_note(excluded_items: int) -> list[str]:
    """The note every statistic adds when items were set aside."""
    if not excluded_items:
        return []
    plural = "item" if excluded_items == 1 else "items"
    return [f"{excluded_items} {plural} with fewer than two ratings excluded"]


def item_codes(items: pd.Series) -> tuple[np.ndarray, int]:
    """Integer code 0..n-1 per row for its item, and n."""
    codes, uniques = pd.factorize(items, sort=False)
    return codes.astype(np.intp), len(uniques)


def item_clusters(table: pd.DataFrame, *, item: str = ITEM, cluster: str = CLUSTER) -> np.ndarray:
    """The cluster of each item, in the order `item_codes` numbers the items.

    An item's cluster is the first non-blank `cluster` among its rows; an item with none is a
    cluster of its own (named "item:<item>", as accuracy's bootstrap names it).
    """
    items = table[item]
    present = drop_missing(table, cluster)
    first = present.groupby(item, sort=False)[cluster].first()
    order = pd.unique(items)
    named = pd.Series(order, index=order).map(first)
    own = pd.Series(["item:" + str(name) for name in order], index=order)
    return named.where(named.notna(), own).astype(str).to_numpy()


def has_clusters(table: pd.DataFrame, *, item: str = ITEM, cluster: str = CLUSTER) -> bool:
    """Whether some cluster holds two or more items (else the clusters change nothing)."""
    if cluster not in table.columns:
        return False
    present = drop_missing(table, item, cluster)
    return bool((present.groupby(cluster, sort=False)[item].nunique() >= 2).any())


def category_codes(values: pd.Series, categories: Sequence[Any] | None = None) -> tuple[np.ndarray, list[Any]]:
    """Integer code per row for its category, and the category list (sorted when it sorts).

    Given `categories`, their order is kept and a value outside them is an error.
    """
    if categories is not None:
        categories = list(categories)
        codes = pd.Index(categories).get_indexer(values).astype(np.intp)
        if (codes < 0).any():
            unknown = sorted({str(v) for v in values[codes < 0]})
            raise ValueError(f"values outside the declared categories: {', '.join(unknown)}")
        return codes, categories
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # mixed types that do not sort
        codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.intp), list(uniques)


def count_matrix(item_code: np.ndarray, category_code: np.ndarray, n_items: int, n_categories: int) -> np.ndarray:
    """Items x categories matrix: how many ratings of item i fell in category j (Fleiss's n_ij)."""
    flat = np.bincount(item_code * n_categories + category_code, minlength=n_items * n_categories)
    return flat.reshape(n_items, n_categories)


def category_counts(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    value: str = VALUE,
    categories: Sequence[Any] | None = None,
) -> tuple[np.ndarray, list[Any]]:
    """Items x categories count matrix of a long table (rows with a missing value dropped)."""
    present = drop_missing(table, item, value)
    items, n_items = item_codes(present[item])
    codes, labels = category_codes(present[value], categories)
    return count_matrix(items, codes, n_items, len(labels)), labels


# How far below a bin's lower edge, in bin widths, a value still counts as on the edge.
EDGE_TOLERANCE = 1e-9


def equal_width_bins(values: Any, n_bins: int, *, low: float, high: float) -> np.ndarray:
    """Bin index 0..n_bins-1 of each value on [low, high] cut into equal-width bins.

    Each bin includes its lower edge, and the top edge belongs to the last bin, so a 0-10 scale
    in 5 bins gives [0,2), [2,4), [4,6), [6,8), [8,10] (the grouping Sotopia's appendix E uses
    before computing kappa). Edges are rarely exact in binary: on 1-10 in 5 bins, 2.8 lies
    (2.8 - 1) / 9 * 5 = 0.9999999999999999 bin widths above 1 in floating point, and would fall
    one bin low. A value within `EDGE_TOLERANCE` (1e-9) bin widths below an edge is therefore
    on it; rounding errors are a few 1e-16 widths, and ratings are never meant that close to an
    edge without being on it.
    """
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    if not high > low:
        raise ValueError("the scale needs high > low")
    x = np.asarray(values, dtype=float)
    if ((x < low) | (x > high)).any():
        raise ValueError(f"values outside the scale [{low}, {high}]")
    position = (x - low) / (high - low) * n_bins
    index = np.floor(position + EDGE_TOLERANCE).astype(np.intp)
    return np.minimum(index, n_bins - 1)


def numeric_values(values: pd.Series) -> pd.Series | None:
    """The values as floats when every present value is a number, else None."""
    converted = pd.to_numeric(values, errors="coerce")
    if converted.notna().sum() != values.notna().sum():
        return None
    return converted.astype(float)
