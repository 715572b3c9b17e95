from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from benchmark.stats.tables import (
    category_counts,
    drop_missing,
    equal_width_bins,
    long_from_wide,
    numeric_values,
    usable_ratings,
)


def test_long_from_wide_drops_missing_cells():
    table = long_from_wide([[1, np.nan], [2, 3]], items=["x", "y"], annotators=["a", "b"])
    assert list(table.columns) == ["item", "annotator", "value"]
    assert len(table) == 3
    assert set(table["item"]) == {"x", "y"}


def test_usable_ratings_counts_excluded_items():
    table = pd.DataFrame({"item": [1, 1, 2, 3, 3], "value": [1, 2, 3, None, ""]})
    kept, excluded = usable_ratings(table)
    assert kept["item"].tolist() == [1, 1]
    assert excluded == 2


def test_blank_strings_are_missing():
    table = pd.DataFrame({"value": ["a", "", None]})
    assert len(drop_missing(table, "value")) == 1


def test_category_counts():
    table = pd.DataFrame({"item": [1, 1, 2, 2], "value": ["b", "a", "b", "b"]})
    counts, labels = category_counts(table)
    assert labels == ["a", "b"]
    assert counts.tolist() == [[1, 1], [0, 2]]
    with pytest.raises(ValueError, match="outside the declared categories"):
        category_counts(table, categories=["a"])


def test_equal_width_bins_close_the_top_edge():
    assert equal_width_bins([0, 1.99, 2, 9.99, 10], 5, low=0, high=10).tolist() == [0, 0, 1, 4, 4]
    with pytest.raises(ValueError):
        equal_width_bins([11], 5, low=0, high=10)


def test_a_value_on_a_lower_edge_is_in_the_bin_above_even_when_the_edge_is_not_exact_in_binary():
    # 1-10 in 5 bins: edges 2.8, 4.6, 6.4, 8.2. (2.8 - 1) / 9 * 5 is 0.9999999999999999 in floating point.
    values = [1, 2.79, 2.8, 4.6, 6.4, 8.2, 8.19, 10]
    assert equal_width_bins(values, 5, low=1, high=10).tolist() == [0, 0, 1, 2, 3, 4, 3, 4]


def test_every_decimal_edge_of_small_scales_opens_its_bin():
    for low_text in ("0", "1", "3", "0.5", "0.1", "-2.5"):
        for width in range(1, 11):
            low = Fraction(low_text)
            for n_bins in range(1, 11):
                for j in range(1, n_bins):
                    edge = low + j * Fraction(width, n_bins)
                    if 10**6 % edge.denominator:
                        continue  # not a terminating decimal: no one types it
                    typed = float(f"{float(edge):.6f}")
                    scale = {"low": float(low_text), "high": float(low + width)}
                    assert equal_width_bins([typed], n_bins, **scale).tolist() == [j], (low_text, width, n_bins, j)


def test_numeric_values():
    assert numeric_values(pd.Series(["1", "2.5"])).tolist() == [1.0, 2.5]
    assert numeric_values(pd.Series(["1", "x"])) is None
