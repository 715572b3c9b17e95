"""One item's agreement (``benchmark.stats.item_agreement``), against hand-worked values."""

import pytest

from benchmark.stats.item_agreement import item_agreement
from benchmark.stats.kappa import percent_agreement_from_counts


def test_three_ratings_two_agreeing():
    # Fleiss' P_i for counts (2, 1) among m = 3: (2² + 1² - 3) / (3 · 2) = 1/3.
    result = item_agreement(["semantic", "semantic", "none"])
    assert (result.ratings, result.distinct) == (3, 2)
    assert result.share_agreeing == pytest.approx(2 / 3)
    assert result.pairwise == pytest.approx(1 / 3)
    assert not result.agrees and result.mean is None and result.spread is None


def test_numeric_spread_sd_and_mean():
    result = item_agreement(["1", "3", "5"], numbers=[1, 3, 5])
    assert (result.mean, result.sd, result.spread) == (3.0, 2.0, 4.0)  # sd with n - 1: sqrt((4 + 0 + 4) / 2)
    assert result.pairwise == 0.0 and result.share_agreeing == pytest.approx(1 / 3)


def test_one_rating_agrees_with_itself_and_has_no_pairs():
    result = item_agreement(["4"], numbers=[4])
    assert result.agrees and result.pairwise is None and result.sd is None and result.spread == 0


def test_multi_label_answers_compare_as_sets_given_as_tuples():
    result = item_agreement([("a", "b"), ("a", "b"), ("a",)])
    assert result.distinct == 2 and result.share_agreeing == pytest.approx(2 / 3)


def test_pairwise_is_fleiss_per_item_term():
    values = ["x"] * 4 + ["y"] * 2 + ["z"]
    assert item_agreement(values).pairwise == pytest.approx(percent_agreement_from_counts([[4, 2, 1]]))
    assert item_agreement(values).pairwise == pytest.approx((16 + 4 + 1 - 7) / (7 * 6))


def test_no_ratings():
    result = item_agreement([])
    assert result.ratings == 0 and result.share_agreeing is None and result.agrees
