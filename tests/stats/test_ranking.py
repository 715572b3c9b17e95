import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats as scipy_stats

from benchmark.stats.ranking import (
    METHOD,
    kendall_w,
    kendall_w_by_item,
    mean_rank_order,
    ranks_from_order,
)

# Three respondents rank four options (rows: respondents, columns: options a, b, c, d).
STRICT = [[1, 2, 3, 4], [2, 1, 3, 4], [1, 3, 2, 4]]
# The same with ties: b ties a for respondent 2, c ties d for respondent 3 (mid-ranks).
TIED = [[1, 2, 3, 4], [1.5, 1.5, 3, 4], [1, 2, 3.5, 3.5]]


def test_strict_ranks_match_the_hand_computation():
    # Rank sums R = 4, 6, 8, 12 around their mean m (n + 1) / 2 = 7.5: S = 12.25 + 2.25 + .25 + 20.25 = 35;
    # W = 12 S / (m^2 (n^3 - n)) = 420 / (9 * 60) = 7/9; chi2 = m (n - 1) W = 7 on 3 df.
    result = kendall_w(STRICT)
    assert result.w == pytest.approx(7 / 9)
    assert result.chi2 == pytest.approx(7.0)
    assert (result.m, result.n, result.df, result.ties) == (3, 4, 3, 0.0)
    assert result.p == pytest.approx(scipy_stats.chi2.sf(7.0, 3))


def test_ties_use_kendalls_correction_by_hand():
    # R = 3.5, 5.5, 9.5, 11.5: S = 16 + 4 + 4 + 16 = 40; T = (2^3 - 2) + (2^3 - 2) = 12;
    # W = 12 * 40 / (9 * 60 - 3 * 12) = 480 / 504 = 20/21.
    result = kendall_w(TIED)
    assert result.ties == 12.0
    assert result.w == pytest.approx(20 / 21)


@pytest.mark.parametrize("ranks", [STRICT, TIED], ids=["strict", "tied"])
def test_w_is_friedmans_chi_square_over_m_n_minus_1_as_scipy_computes_it(ranks):
    m, n = np.shape(ranks)
    chi2, p = scipy_stats.friedmanchisquare(*np.asarray(ranks).T)
    result = kendall_w(ranks)
    assert result.w == pytest.approx(chi2 / (m * (n - 1)), abs=1e-12)
    assert result.chi2 == pytest.approx(chi2, abs=1e-12)
    assert result.p == pytest.approx(p, abs=1e-12)


def test_w_matches_pingouin_on_random_rankings():
    generator = np.random.default_rng(22)
    for _ in range(20):
        m, n = generator.integers(3, 9), generator.integers(2, 7)
        ranks = np.vstack([generator.permutation(n) + 1 for _ in range(m)])
        wide = pd.DataFrame(ranks, columns=[f"o{j}" for j in range(n)])
        expected = pingouin.friedman(wide).loc["Friedman", "W"]
        assert kendall_w(ranks).w == pytest.approx(expected, abs=1e-12)


def test_full_agreement_is_one_and_reversed_pairs_are_zero():
    assert kendall_w([[1, 2, 3], [1, 2, 3], [1, 2, 3]]).w == pytest.approx(1.0)
    assert kendall_w([[1, 2, 3], [3, 2, 1]]).w == pytest.approx(0.0)


def test_undefined_cases_say_why():
    one = kendall_w([[1, 2, 3]])
    assert one.w is None and one.notes == ["fewer than two rankings"]
    all_tied = kendall_w([[1.5, 1.5], [1.5, 1.5]])
    assert all_tied.w is None and all_tied.notes == ["every respondent tied every option"]


def test_ranks_from_order_lists_ranks_in_the_options_order():
    assert ranks_from_order(["c", "a", "b"], ["a", "b", "c"]) == [2.0, 3.0, 1.0]


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (["a", "a", "b"], "more than once"),
        (["a", "b"], "missing c"),
        (["a", "b", "c", "z"], "unknown z"),
    ],
)
def test_ranks_from_order_names_what_is_wrong(order, message):
    with pytest.raises(ValueError, match=message):
        ranks_from_order(order, ["a", "b", "c"])


def test_by_item_averages_w_over_items_with_two_rankings():
    options = ["a", "b", "c", "d"]
    rows = [
        # item 1: the STRICT example (W = 7/9)
        ("e1", "r1", ["a", "b", "c", "d"]),
        ("e1", "r2", ["b", "a", "c", "d"]),
        ("e1", "r3", ["a", "c", "b", "d"]),
        # item 2: two respondents in full agreement (W = 1)
        ("e2", "r1", ["d", "c", "b", "a"]),
        ("e2", "r2", ["d", "c", "b", "a"]),
        # item 3: one ranking only, excluded
        ("e3", "r1", ["a", "b", "c", "d"]),
    ]
    table = pd.DataFrame(rows, columns=["item", "annotator", "value"])
    result = kendall_w_by_item(table, options)
    assert result.per_item == {"e1": pytest.approx(7 / 9), "e2": pytest.approx(1.0)}
    assert result.mean_w == pytest.approx((7 / 9 + 1.0) / 2)
    assert (result.n_items, result.n_rankings, result.excluded_items) == (2, 5, 1)
    assert result.notes == ["1 item with fewer than two ratings excluded"]
    assert result.to_dict()["kendall_w"] == result.mean_w
    assert result.method == METHOD


def test_by_item_without_two_rankings_has_no_w():
    table = pd.DataFrame([("e1", "r1", ["a", "b"])], columns=["item", "annotator", "value"])
    result = kendall_w_by_item(table, ["a", "b"])
    assert result.mean_w is None and result.n_items == 0 and result.excluded_items == 1


def test_majority_is_the_order_by_mean_rank():
    # Mean ranks: a = 4/3, b = 2, c = 8/3, d = 4.
    orders = [["a", "b", "c", "d"], ["b", "a", "c", "d"], ["a", "c", "b", "d"]]
    assert mean_rank_order(orders, ["a", "b", "c", "d"]) == ["a", "b", "c", "d"]


def test_majority_breaks_equal_mean_ranks_by_the_questions_order():
    # a and b both have mean rank 1.5; the question lists b first.
    assert mean_rank_order([["a", "b"], ["b", "a"]], ["b", "a"]) == ["b", "a"]
    assert mean_rank_order([], ["a", "b"]) == []
