import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchmark.stats.alignment import (
    alignment_from_scores,
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
