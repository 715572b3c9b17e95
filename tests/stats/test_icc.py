import numpy as np
import pandas as pd
import pingouin
import pytest

from benchmark.stats.icc import (
    BALANCED_METHOD,
    UNBALANCED_METHOD,
    icc_oneway,
    icc_oneway_from_f,
    icc_twoway,
    icc_twoway_from_matrix,
)
from benchmark.stats.tables import long_from_wide
from tests.stats.references import SHROUT_FLEISS


@pytest.fixture
def shrout_fleiss():
    return long_from_wide(SHROUT_FLEISS)


def test_oneway_matches_shrout_fleiss_table_4(shrout_fleiss):
    result = icc_oneway(shrout_fleiss)
    assert round(result.icc1, 2) == 0.17
    assert round(result.icc1k, 2) == 0.44
    # Three decimals from the published mean squares: (11.24 - 6.26) / (11.24 + 3 * 6.26) = .166.
    assert result.icc1 == pytest.approx(0.166, abs=5e-4)
    assert result.icc1k == pytest.approx(0.443, abs=5e-4)
    assert result.ms_between == pytest.approx(11.24, abs=5e-3)
    assert result.ms_within == pytest.approx(6.26, abs=5e-3)
    assert (result.df1, result.df2, result.k) == (5.0, 18.0, 4.0)
    assert result.method == BALANCED_METHOD


def test_twoway_matches_shrout_fleiss_table_4(shrout_fleiss):
    result = icc_twoway(shrout_fleiss)
    assert [round(v, 2) for v in (result.icc2, result.icc2k, result.icc3, result.icc3k)] == [0.29, 0.62, 0.71, 0.91]
    assert result.icc2 == pytest.approx(0.290, abs=5e-4)
    assert result.icc3 == pytest.approx(0.715, abs=5e-4)
    assert result.icc2k == pytest.approx(0.620, abs=5e-4)
    assert result.icc3k == pytest.approx(0.909, abs=5e-4)
    assert (result.df1, result.df2) == (5.0, 15.0)


@pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")
def test_all_six_iccs_and_intervals_match_pingouin(shrout_fleiss):
    oneway, twoway = icc_oneway(shrout_fleiss), icc_twoway(shrout_fleiss)
    table = pingouin.intraclass_corr(shrout_fleiss, targets="item", raters="annotator", ratings="value")
    table = table.set_index("Type")
    ours = {
        "ICC(1,1)": (oneway.icc1, oneway.icc1_ci95),
        "ICC(1,k)": (oneway.icc1k, oneway.icc1k_ci95),
        "ICC(A,1)": (twoway.icc2, twoway.icc2_ci95),
        "ICC(A,k)": (twoway.icc2k, twoway.icc2k_ci95),
        "ICC(C,1)": (twoway.icc3, twoway.icc3_ci95),
        "ICC(C,k)": (twoway.icc3k, twoway.icc3k_ci95),
    }
    for name, (value, interval) in ours.items():
        assert value == pytest.approx(table.loc[name, "ICC"], abs=1e-9), name
        # pingouin rounds its intervals to two decimals.
        assert np.round(interval, 2).tolist() == pytest.approx(list(table.loc[name, "CI95"]), abs=1e-9), name
    assert oneway.f_value == pytest.approx(table.loc["ICC(1,1)", "F"])
    assert oneway.p == pytest.approx(table.loc["ICC(1,1)", "pval"])
    assert twoway.f_value == pytest.approx(table.loc["ICC(C,1)", "F"])


def test_interval_formula_reproduces_socialveil_report():
    # SocialVeil §5.2: 120 scenarios, 3 of 6 annotators each. Unresolved confusion
    # F(119, 240) = 4.26, ICC(1,k) = .77 [.68, .83]; mutual understanding F = 4.80, .79 [.72, .85].
    confusion = icc_oneway_from_f(4.26, 119, 240, 3)
    assert round(confusion["icc1k"], 2) == 0.77
    assert np.round(confusion["icc1k_ci95"], 2).tolist() == [0.68, 0.83]
    mutual = icc_oneway_from_f(4.80, 119, 240, 3)
    assert round(mutual["icc1k"], 2) == 0.79
    assert np.round(mutual["icc1k_ci95"], 2).tolist() == [0.72, 0.85]


def test_unequal_ratings_use_adjusted_group_size():
    table = pd.DataFrame(
        {
            "item": ["a", "a", "b", "b", "b", "c", "c", "c", "c"],
            "value": [1, 2, 4, 5, 4, 2, 2, 3, 1],
        }
    )
    result = icc_oneway(table)
    # By hand: N = 9, n_i = 2, 3, 4, k0 = (9 - 29/9) / 2 = 2.8889; means 1.5, 4.333, 2;
    # grand mean 2.6667; SSB = 2 * 1.3611 + 3 * 2.7778 + 4 * .4444 = 12.8333, MSB = 6.4167;
    # SSW = .5 + .6667 + 2 = 3.1667, MSW = .5278.
    assert result.k == pytest.approx(26 / 9)
    assert result.ms_between == pytest.approx(77 / 12)
    assert result.ms_within == pytest.approx(19 / 36)
    msb, msw, k0 = 77 / 12, 19 / 36, 26 / 9
    assert result.icc1 == pytest.approx((msb - msw) / (msb + (k0 - 1) * msw))
    assert result.icc1k == pytest.approx((msb - msw) / msb)
    assert (result.df1, result.df2) == (2.0, 6.0)
    assert result.method == UNBALANCED_METHOD


def test_items_with_one_rating_are_excluded_and_counted(shrout_fleiss):
    extra = pd.DataFrame({"item": [100, 101], "annotator": [0, 1], "value": [3.0, 4.0]})
    result = icc_oneway(pd.concat([shrout_fleiss, extra]))
    assert result.excluded_items == 2
    assert result.n_items == 6
    assert result.icc1 == pytest.approx(icc_oneway(shrout_fleiss).icc1)
    assert "2 items with fewer than two ratings excluded" in result.notes


def test_no_variance_is_undefined_not_nan():
    table = long_from_wide(np.full((5, 3), 4.0))
    result = icc_oneway(table)
    assert result.icc1 is None and result.icc1k is None and result.f_value is None
    assert any("no variance" in note for note in result.notes)


def test_perfect_agreement_gives_one():
    table = long_from_wide(np.repeat([[1.0], [3.0], [5.0], [2.0]], 3, axis=1))
    result = icc_oneway(table)
    assert result.icc1 == 1.0 and result.icc1k == 1.0
    assert result.icc1_ci95 == [1.0, 1.0]
    assert result.f_value is None and result.p == 0.0


def test_identical_item_means_leave_icc1k_unbounded():
    table = long_from_wide([[1, 3], [3, 1], [2, 2]])
    result = icc_oneway(table)
    assert result.icc1 == pytest.approx(-1.0)
    assert result.icc1k is None
    assert any("icc1k" in note for note in result.notes)


def test_one_item_is_not_enough():
    result = icc_oneway(long_from_wide([[1, 2, 3]]))
    assert result.icc1 is None
    assert result.notes


def test_twoway_needs_a_fully_crossed_design(shrout_fleiss):
    assert icc_twoway(shrout_fleiss.iloc[1:]) is None


def test_twoway_with_zero_residual_is_undefined():
    result = icc_twoway_from_matrix(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert result.icc2 is None and result.icc3 is None
    assert result.notes


def thirty_by_three(seed: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    latent = rng.normal(3, 1, 30)
    return np.clip(np.rint(latent[:, None] + rng.normal(0, 0.7, (30, 3))), 1, 5)


ONEWAY_VALUES = ("icc1", "icc1k", "f_value", "ms_between", "ms_within")


@pytest.mark.parametrize("unbalanced", [False, True], ids=["balanced", "unbalanced"])
@pytest.mark.parametrize("shift", [1e9, -1e9, 1e6])
def test_shifting_every_rating_changes_no_icc(shift, unbalanced):
    matrix = thirty_by_three()
    if unbalanced:
        matrix[::4, 2] = np.nan
    plain, shifted = icc_oneway(long_from_wide(matrix)), icc_oneway(long_from_wide(matrix + shift))
    assert shifted.icc1 is not None, shifted.notes
    for name in ONEWAY_VALUES:
        assert getattr(shifted, name) == pytest.approx(getattr(plain, name), rel=1e-6), name
    assert shifted.icc1_ci95 == pytest.approx(plain.icc1_ci95, rel=1e-6)
    assert shifted.icc1k_ci95 == pytest.approx(plain.icc1k_ci95, rel=1e-6)
    if not unbalanced:
        two, two_shifted = icc_twoway_from_matrix(matrix), icc_twoway_from_matrix(matrix + shift)
        for name in ("icc2", "icc2k", "icc3", "icc3k", "f_value"):
            assert getattr(two_shifted, name) == pytest.approx(getattr(two, name), rel=1e-6), name
        assert two_shifted.icc2_ci95 == pytest.approx(two.icc2_ci95, rel=1e-6)


def test_small_units_change_no_icc():
    # Ratings of 1e-8 to 5e-8 (a scale in other units) vary as much, relatively, as 1 to 5.
    matrix = thirty_by_three()
    plain, small = icc_oneway(long_from_wide(matrix)), icc_oneway(long_from_wide(matrix * 1e-8))
    assert small.icc1 == pytest.approx(plain.icc1, rel=1e-9), small.notes
    two, two_small = icc_twoway_from_matrix(matrix), icc_twoway_from_matrix(matrix * 1e-8)
    assert two_small.icc3 == pytest.approx(two.icc3, rel=1e-9), two_small.notes


def test_perfect_agreement_far_from_zero_still_gives_one():
    table = long_from_wide(np.repeat([[1.0], [3.0], [5.0], [2.0]], 3, axis=1) + 1e9)
    result = icc_oneway(table)
    assert result.icc1 == 1.0 and result.f_value is None


def test_no_variance_means_every_rating_is_identical():
    shifted = long_from_wide(np.full((5, 3), 4.0) + 1e9)
    assert icc_oneway(shifted).icc1 is None
    # Items identical within and one rating a hair off: variance, so an ICC.
    matrix = np.full((5, 3), 4.0)
    matrix[0, 0] += 1e-7
    result = icc_oneway(long_from_wide(matrix))
    assert result.icc1 is not None and not any("no variance" in note for note in result.notes)


def test_unbalanced_interval_is_searle_thomas_hultquist_as_iccest_thd_and_says_so():
    # R's ICC::ICCest(CI.type = "THD"): n0 = n_bar - sum (n_i - n_bar)^2 / ((a - 1) N),
    # F_L = F / qf(.975, a - 1, N - a), F_U = F * qf(.975, N - a, a - 1), bound = (F - 1) / (F + n0 - 1).
    from scipy import stats as scipy_stats

    matrix = thirty_by_three()
    matrix[::3, 2] = np.nan
    matrix[1::3, 0] = np.nan
    result = icc_oneway(long_from_wide(matrix))
    sizes = (~np.isnan(matrix)).sum(axis=1)
    assert sizes.min() >= 2  # every item counts
    a, total = len(sizes), sizes.sum()
    n_bar = total / a
    n0 = n_bar - ((sizes - n_bar) ** 2).sum() / ((a - 1) * total)
    f_low = result.f_value / scipy_stats.f.ppf(0.975, a - 1, total - a)
    f_high = result.f_value * scipy_stats.f.ppf(0.975, total - a, a - 1)
    assert result.k == pytest.approx(n0, rel=1e-12)
    assert result.icc1_ci95 == pytest.approx([(f_low - 1) / (f_low + n0 - 1), (f_high - 1) / (f_high + n0 - 1)])
    assert "Thomas & Hultquist 1978" in result.method and "Searle's (1971)" in result.method
    assert 'ICC::ICCest(CI.type = "THD")' in result.method and "Donner 1986" in result.method


def test_an_unbounded_twoway_interval_is_noted():
    # Found by the property test: ICC(2,k)'s interval is unbounded here, and was null without a note.
    result = icc_twoway_from_matrix(np.array([[0.0, 3.0], [1.0, 1.0]]))
    assert result.icc2k_ci95 is None
    assert any(note.startswith("icc2k_ci95") for note in result.notes)


def test_equal_item_means_stay_equal_whatever_the_order_of_the_ratings():
    # Both items average 1/3. Centred on the mean (1/3, which no float holds), the item sums
    # depended on the order of the ratings and ICC(1,k) came out -6.5e32 in one order.
    table = pd.DataFrame({"item": [0, 1, 0, 1, 0, 1], "value": [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]})
    for order in ([0, 1, 2, 3, 4, 5], [5, 2, 1, 3, 0, 4]):
        result = icc_oneway(table.iloc[order])
        assert result.ms_between == 0.0 and result.icc1k is None
