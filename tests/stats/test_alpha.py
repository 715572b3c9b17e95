import krippendorff
import numpy as np
import pandas as pd
import pytest

from benchmark.stats.alpha import krippendorff_alpha, krippendorff_alpha_from_counts
from benchmark.stats.tables import long_from_wide
from tests.stats.references import KRIPPENDORFF_2011


@pytest.fixture
def worked_example():
    return long_from_wide(KRIPPENDORFF_2011.T)


def test_krippendorff_2011_worked_example(worked_example):
    result = krippendorff_alpha(worked_example, levels=("nominal", "ordinal", "interval"))
    assert round(result.values["nominal"], 3) == 0.743
    assert round(result.values["ordinal"], 3) == 0.815
    assert round(result.values["interval"], 3) == 0.849
    assert result.n_pairable == 40  # unit 12 has a single value and is not pairable


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_matches_the_krippendorff_package(worked_example, level):
    ours = krippendorff_alpha(worked_example, levels=(level,)).values[level]
    theirs = krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level)
    assert ours == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_matches_the_package_on_random_data_with_gaps(level):
    rng = np.random.default_rng(5)
    data = rng.integers(1, 6, size=(5, 60)).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    ours = krippendorff_alpha(long_from_wide(data.T), levels=(level,)).values[level]
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_ordinal_labels_follow_the_given_domain():
    rows = np.where(np.isnan(KRIPPENDORFF_2011), None, KRIPPENDORFF_2011)
    names = {1.0: "very low", 2.0: "low", 3.0: "mid", 4.0: "high", 5.0: "very high"}
    labelled = [[names[v] if v is not None else None for v in row] for row in rows]
    table = long_from_wide(np.array(labelled, dtype=object).T)
    result = krippendorff_alpha(
        table, levels=("ordinal", "interval"), domain=["very low", "low", "mid", "high", "very high"]
    )
    assert round(result.values["ordinal"], 3) == 0.815
    assert result.values["interval"] is None
    assert "interval alpha needs numeric values" in result.notes


def test_one_value_only_is_undefined():
    table = pd.DataFrame({"item": [1, 1, 2, 2], "value": [3, 3, 3, 3]})
    result = krippendorff_alpha(table, levels=("nominal", "interval"))
    assert result.values == {"nominal": None, "interval": None}
    assert result.notes


def test_no_pairable_unit_is_undefined():
    value, reason = krippendorff_alpha_from_counts(np.array([[1, 0], [0, 1]]))
    assert value is None and "two or more ratings" in reason
