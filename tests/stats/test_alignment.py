from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchmark.stats.alignment import (
    alignment_from_scores,
    exact_means,
    fisher_z_interval,
    judge_alignment,
    mean_interval,
    means_by_condition,
)


def test_fisher_interval_reproduces_socialveil_table_4():
    # SocialVeil, Table 4 caption, n = 120: confusion r = .80 [.72, .86], mutual r = .79 [.71, .85].
    assert np.round(fisher_z_interval(0.80, 120), 2).tolist() == [0.72, 0.86]
    assert np.round(fisher_z_interval(0.79, 120), 2).tolist() == [0.71, 0.85]


def test_pearson_and_spearman_match_scipy():
    rng = np.random.default_rng(3)
    human = rng.normal(size=40)
    judge = human + rng.normal(scale=0.8, size=40)
    result = alignment_from_scores(human, judge)
    reference = stats.pearsonr(human, judge)
    assert result.pearson_r == pytest.approx(reference.statistic)
    assert result.p == pytest.approx(reference.pvalue)
    assert result.ci95 == pytest.approx(list(reference.confidence_interval(0.95)))
    assert result.spearman_rho == pytest.approx(stats.spearmanr(human, judge).statistic)
    assert result.n == 40


def test_judge_alignment_uses_the_human_mean_per_item():
    table = pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 3, 3, 4],
            "value": [1, 3, 4, 4, 2, 3, 5],
            "judge": [2, 2, 4, 4, 3, 3, 4],
        }
    )
    result = judge_alignment(table)
    expected = stats.pearsonr([2, 4, 2.5, 5], [2, 4, 3, 4]).statistic
    assert result.pearson_r == pytest.approx(expected)
    assert result.n == 4


def test_constant_scores_are_undefined():
    result = alignment_from_scores([1, 2, 3, 4], [2, 2, 2, 2])
    assert result.pearson_r is None and result.p is None
    assert "judge scores do not vary" in result.notes[0]


def test_too_few_items():
    result = alignment_from_scores([1, 2], [1, 2])
    assert result.pearson_r is None and result.notes


def test_perfect_correlation_has_a_degenerate_interval():
    result = alignment_from_scores([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert result.pearson_r == pytest.approx(1.0)
    assert result.ci95 == [result.pearson_r, result.pearson_r]
    assert result.p == 0.0


def test_mean_interval_matches_the_t_distribution():
    values = [3.0, 4.0, 2.5, 5.0, 4.5]
    expected = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    result = mean_interval(values)
    assert result["ci95"] == pytest.approx(list(expected))
    assert result["n"] == 5
    assert mean_interval([2.0]) == {"mean": 2.0, "ci95": None, "n": 1}


def test_means_by_condition_for_humans_and_judge():
    table = pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 3, 3],
            "value": [1, 3, 3, 5, 4, 4],
            "condition": ["none", "none", "none", "none", "semantic", "semantic"],
            "judge": [2, 2, 5, 5, 3, 3],
        }
    )
    result = means_by_condition(table)
    assert result["human"]["none"]["mean"] == pytest.approx(3.0)  # item means 2 and 4
    assert result["human"]["none"]["n"] == 2
    assert result["judge"]["none"]["mean"] == pytest.approx(3.5)
    assert result["human"]["semantic"] == {"mean": 4.0, "ci95": None, "n": 1}


def rows_of(*items: tuple[str, list[float], float | None]) -> pd.DataFrame:
    """A long table from (item, its ratings, the judge's score repeated on each rating)."""
    return pd.DataFrame(
        [(item, value, judge) for item, values, judge in items for value in values],
        columns=["item", "value", "judge"],
    )


def test_spearman_keeps_a_judge_tie_between_items_rated_three_and_four_times():
    # Three copies of 1.9 average to 1.8999999999999997 in floating point, which would break
    # the judge's tie between items b (rated 3 times) and c (rated 4 times): rho 1.0.
    table = rows_of(("a", [1, 1], 1.0), ("b", [2, 2, 2], 1.9), ("c", [3, 3, 3, 3], 1.9), ("d", [4, 4], 3.0),
                    ("e", [5, 5], 4.0))
    result = judge_alignment(table)
    expected = stats.spearmanr([1, 2, 3, 4, 5], [1.0, 1.9, 1.9, 3.0, 4.0]).statistic
    assert result.spearman_rho == pytest.approx(expected, abs=1e-12)
    assert result.spearman_rho < 0.98
    assert result.notes == []


def test_spearman_keeps_a_tie_between_human_means_of_unequal_items():
    # The human means of b (1.9 three times) and c (1.9 four times) are both exactly 1.9.
    table = rows_of(("a", [1, 1], 1.0), ("b", [1.9, 1.9, 1.9], 2.0), ("c", [1.9, 1.9, 1.9, 1.9], 3.0),
                    ("d", [4, 4], 4.0), ("e", [5, 5], 5.0))
    result = judge_alignment(table)
    expected = stats.spearmanr([1.0, 1.9, 1.9, 4.0, 5.0], [1, 2, 3, 4, 5]).statistic
    assert result.spearman_rho == pytest.approx(expected, abs=1e-12)
    assert result.spearman_rho < 0.98


def test_a_judge_score_that_varies_within_an_item_is_averaged_and_noted():
    table = rows_of(("a", [1, 1], 1.0), ("b", [2, 2], 2.0), ("c", [3, 3], 3.0), ("d", [4, 4], 4.0))
    table.loc[table.index[-1], "judge"] = 5.0  # item d: judge 4 on one row, 5 on the other
    result = judge_alignment(table)
    assert result.pearson_r == pytest.approx(stats.pearsonr([1, 2, 3, 4], [1, 2, 3, 4.5]).statistic)
    assert result.notes == ["the judge score varies within 1 item; their mean is used"]


def test_exact_means_round_the_true_mean_once():
    rng = np.random.default_rng(7)
    groups = pd.Series(rng.integers(0, 300, 2000))
    for values in (rng.normal(size=2000), rng.integers(-5, 6, 2000).astype(float), np.round(rng.random(2000), 1)):
        series = pd.Series(values)
        means = exact_means(series, groups)
        for name, members in series.groupby(groups):
            assert means[name] == float(sum(map(Fraction, members), Fraction(0)) / len(members))
