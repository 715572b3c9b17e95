import krippendorff
import numpy as np
import pandas as pd
import pytest

from benchmark.stats import alpha as alpha_module
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


def test_ratio_level_of_the_worked_example(worked_example):
    # Krippendorff (2011), section E: the ratio metric on the same data gives 0.797.
    result = krippendorff_alpha(worked_example, levels=("ratio",))
    assert round(result.values["ratio"], 3) == 0.797


def test_ratio_needs_numbers():
    table = pd.DataFrame({"item": [1, 1, 2, 2], "value": ["a", "b", "a", "a"]})
    result = krippendorff_alpha(table, levels=("ratio",))
    assert result.values == {"ratio": None}
    assert "ratio alpha needs numeric values" in result.notes


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_large_designs_give_the_packages_number_without_its_memory(monkeypatch, level):
    """Above PACKAGE_CELLS the coincidences are one matrix product; the number must not change."""
    rng = np.random.default_rng(11)
    counts = np.zeros((300, 21))
    np.add.at(counts, (np.repeat(np.arange(300), 3), rng.integers(0, 21, size=900)), 1)
    domain = np.arange(0, 105, 5)
    by_package, _ = krippendorff_alpha_from_counts(counts, level=level, domain=domain)
    assert by_package == pytest.approx(
        krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level), abs=1e-12
    )
    monkeypatch.setattr(alpha_module, "PACKAGE_CELLS", 0)
    by_product, _ = krippendorff_alpha_from_counts(counts, level=level, domain=domain)
    assert by_product == pytest.approx(by_package, abs=1e-12)


def test_zero_expected_disagreement_is_undefined():
    # Ratio distances vanish between v and -v: two values used, yet no disagreement is possible.
    value, reason = krippendorff_alpha_from_counts(np.array([[1, 1], [2, 0]]), level="ratio", domain=[-1, 1])
    assert value is None and "expected disagreement is zero" in reason


def test_unknown_level_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown level of measurement 'cardinal'"):
        krippendorff_alpha_from_counts(np.array([[1, 1]]), level="cardinal")
