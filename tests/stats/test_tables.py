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


def test_numeric_values():
    assert numeric_values(pd.Series(["1", "2.5"])).tolist() == [1.0, 2.5]
    assert numeric_values(pd.Series(["1", "x"])) is None
