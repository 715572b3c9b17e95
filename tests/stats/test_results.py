"""The results analyses on a small fixture whose numbers are worked out by hand below.

Fixture: one partner model "m", two scenarios (s1 hard, s2 standard), one episode per scenario
and condition. Each episode has a barrier seat and a partner seat; goal is per seat, mutual
understanding (mutual) per episode.

    partner goal     none  semantic  sociocultural  emotional
    s1 (hard)          8       4          7             6
    s2 (standard)      6       5          4             2
    mutual
    s1                 4       2          2             3
    s2                 5       1          4             3

Partner goal, all scenarios:
    none      mean 7    SD sqrt(((8-7)^2 + (6-7)^2) / 1) = sqrt(2)   SE sqrt(2) / sqrt(2) = 1
    semantic  mean 4.5  SD sqrt(0.5)                                 SE 0.5    change (4.5 - 7) / 7 = -35.714...%
    emotional mean 4    SD sqrt(8)                                   SE 2      change (4 - 7) / 7 = -42.857...%
Mutual understanding: none 4.5 (SE 0.5); semantic 1.5 (SE 0.5), change -66.67%; emotional 3 (SE 0),
change -33.33%.

Barrier-specific deviation of semantic on partner goal (others: sociocultural, emotional):
    s1: 4 - (7 + 6) / 2 = -2.5;  s2: 5 - (4 + 2) / 2 = 2
    deviation (-2.5 + 2) / 2 = -0.25;  percent 100 x (-0.5) / (6.5 + 3) = -5.263...%
    bootstrap over two scenarios: resamples {s1,s1}, {s1,s2}, {s2,s2} give -2.5, -0.25, 2 (each extreme
    with probability 1/4), so the 2.5th and 97.5th percentiles are -2.5 and 2; for the percent,
    100 x -5 / 13 = -38.46% and 100 x 4 / 6 = 66.67%.
Emotional: s1 6 - 5.5 = 0.5, s2 2 - 4.5 = -2.5: deviation -1, percent 100 x -2 / 10 = -20%.
Sociocultural: s1 7 - 5 = 2, s2 4 - 3.5 = 0.5: deviation 1.25, percent 100 x 2.5 / 8.5 = 29.41%.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from benchmark.stats import results
from benchmark.stats.results import Scale, correlation, describe, percent_change, results_report

# The two dimensions these tables use, as the judge's instruments give them (Parley's presets).
SCALES = {"goal": Scale(0, 10, per_seat=True), "mutual_understanding": Scale(1, 5, per_seat=False)}

PARTNER_GOAL = {
    ("s1", "none"): 8, ("s1", "semantic"): 4, ("s1", "sociocultural"): 7, ("s1", "emotional"): 6,
    ("s2", "none"): 6, ("s2", "semantic"): 5, ("s2", "sociocultural"): 4, ("s2", "emotional"): 2,
}
MUTUAL = {
    ("s1", "none"): 4, ("s1", "semantic"): 2, ("s1", "sociocultural"): 2, ("s1", "emotional"): 3,
    ("s2", "none"): 5, ("s2", "semantic"): 1, ("s2", "sociocultural"): 4, ("s2", "emotional"): 3,
}
DIFFICULTY = {"s1": "hard", "s2": "standard"}


def fixture_table(**overrides) -> pd.DataFrame:
    rows = []
    for number, ((scenario, condition), goal) in enumerate(PARTNER_GOAL.items(), start=1):
        common = {
            "episode": number, "scenario": scenario, "condition": condition, "difficulty": DIFFICULTY[scenario],
            "partner_model": "m", "barrier_model": "b", "evaluator": "judge", "prompt_version": "v1",
            "mutual_understanding": MUTUAL[(scenario, condition)],
            "transcript.hedges": float(number),
        }
        rows.append({**common, "seat": 0, "seat_role": "barrier", "goal": 5.0})
        rows.append({**common, "seat": 1, "seat_role": "partner", "goal": float(goal)})
    table = pd.DataFrame(rows)
    for column, value in overrides.items():
        table[column] = value
    return table


@pytest.fixture(scope="module")
def report():
    return results_report(
        fixture_table(), scales=SCALES, dimensions=["goal", "mutual_understanding"], resamples=2000, seed=7
    )


def test_means_and_standard_errors_match_the_hand_computation(report):
    goal = report["means"]["m"]
    assert goal["none"]["goal"]["mean"] == pytest.approx(7)
    assert goal["none"]["goal"]["sd"] == pytest.approx(math.sqrt(2))
    assert goal["none"]["goal"]["se"] == pytest.approx(1)
    assert goal["semantic"]["goal"]["se"] == pytest.approx(0.5)
    assert goal["emotional"]["goal"]["sd"] == pytest.approx(math.sqrt(8))
    assert goal["emotional"]["goal"]["se"] == pytest.approx(2)
    assert goal["emotional"]["goal"]["n"] == 2


def test_episode_level_dimension_counts_each_episode_once(report):
    mutual = report["means"]["m"]
    assert mutual["none"]["mutual_understanding"] == {
        "n": 2, "mean": 4.5, "sd": pytest.approx(math.sqrt(0.5)), "se": pytest.approx(0.5),
        "percent_change": None, "notes": ["percent_change: this is the baseline"],
    }
    assert mutual["emotional"]["mutual_understanding"]["se"] == 0


def test_percent_change_is_relative_to_the_absolute_baseline(report):
    cells = report["means"]["m"]
    assert cells["semantic"]["goal"]["percent_change"] == pytest.approx(-250 / 7)
    assert cells["emotional"]["goal"]["percent_change"] == pytest.approx(-300 / 7)
    assert cells["semantic"]["mutual_understanding"]["percent_change"] == pytest.approx(-200 / 3)
    assert cells["emotional"]["mutual_understanding"]["percent_change"] == pytest.approx(-100 / 3)


def test_percent_change_divides_by_the_absolute_value_of_a_negative_baseline():
    assert percent_change(-3.0, -2.0) == (pytest.approx(-50.0), None)


def test_percent_change_from_a_zero_baseline_is_null_with_the_reason():
    change, reason = percent_change(-1.0, 0.0)
    assert change is None
    assert "baseline mean is 0" in reason


def test_zero_baseline_in_a_report_gives_a_null_change_and_a_note():
    table = fixture_table()
    table.loc[table["condition"] == "none", "goal"] = 0.0
    cell = results_report(table, scales=SCALES, dimensions=["goal"], resamples=0)["means"]["m"]["semantic"]["goal"]
    assert cell["percent_change"] is None
    assert cell["notes"] == ["percent_change: the baseline mean is 0, so a change in percent is undefined"]


def test_difficulty_split_keeps_only_that_tags_scenarios(report):
    hard = report["means_by_difficulty"]["hard"]["m"]
    assert report["difficulties"] == ["hard", "standard"]
    assert hard["none"]["goal"]["mean"] == 8
    assert hard["semantic"]["goal"]["percent_change"] == pytest.approx(-50)


def test_a_single_score_has_a_mean_but_no_standard_error(report):
    cell = report["means_by_difficulty"]["standard"]["m"]["none"]["goal"]
    assert (cell["n"], cell["mean"], cell["sd"], cell["se"]) == (1, 6, None, None)
    assert "SD and SE need at least two scores" in cell["notes"]


def test_standard_error_is_the_sample_sd_over_root_n():
    cell = describe([2.0, 4.0, 9.0])
    # mean 5, squared deviations 9 + 1 + 16 = 26, SD sqrt(26 / 2) = sqrt(13), SE sqrt(13) / sqrt(3)
    assert cell["sd"] == pytest.approx(math.sqrt(13))
    assert cell["se"] == pytest.approx(math.sqrt(13 / 3))


def _deviation(report, barrier, dimension="goal"):
    return next(e for e in report["deviations"] if e["barrier"] == barrier and e["dimension"] == dimension)


def test_deviation_is_from_the_mean_of_the_other_barriers_on_the_same_scenario(report):
    semantic = _deviation(report, "semantic")
    assert semantic["other_barriers"] == ["emotional", "sociocultural"]  # sorted when no order is given
    assert semantic["scenarios"] == 2
    assert semantic["deviation"] == pytest.approx(-0.25)
    assert semantic["others_mean"] == pytest.approx(4.75)
    assert semantic["barrier_mean"] == pytest.approx(4.5)
    assert semantic["deviation_percent"] == pytest.approx(-50 / 9.5)
    assert _deviation(report, "emotional")["deviation"] == pytest.approx(-1)
    assert _deviation(report, "emotional")["deviation_percent"] == pytest.approx(-20)
    assert _deviation(report, "sociocultural")["deviation"] == pytest.approx(1.25)
    assert _deviation(report, "sociocultural")["deviation_percent"] == pytest.approx(250 / 8.5)


def test_deviation_bootstrap_resamples_scenarios(report):
    semantic = _deviation(report, "semantic")
    assert semantic["deviation_ci95"] == pytest.approx([-2.5, 2.0])
    assert semantic["deviation_percent_ci95"] == pytest.approx([-500 / 13, 400 / 6])
    assert semantic["ci_excludes_zero"] is False


def test_deviation_never_compares_with_the_baseline(report):
    assert {entry["barrier"] for entry in report["deviations"]} == {"semantic", "sociocultural", "emotional"}


def test_bootstrap_is_the_same_for_the_same_seed_and_differs_for_another():
    table = fixture_table()
    big = pd.concat([table.assign(episode=table["episode"] + 100 * k,
                                  scenario=table["scenario"] + f"-{k}",
                                  goal=table["goal"] + (k % 3)) for k in range(6)])

    def intervals(seed):
        report = results_report(big, scales=SCALES, dimensions=["goal"], resamples=300, seed=seed)
        return [entry["deviation_ci95"] for entry in report["deviations"]]

    assert intervals(1) == intervals(1)
    assert intervals(1) != intervals(2)


def test_deviations_need_two_barriers():
    table = fixture_table()
    table = table[table["condition"].isin(["none", "semantic"])]
    entry = results_report(table, scales=SCALES, dimensions=["goal"], resamples=10)["deviations"][0]
    assert entry["deviation"] is None
    assert entry["notes"] == ["needs episodes under at least two barriers (other than 'none')"]


def test_no_bootstrap_leaves_the_interval_null_with_a_note():
    report = results_report(fixture_table(), scales=SCALES, dimensions=["goal"], resamples=0)
    entry = _deviation(report, "semantic")
    assert entry["deviation"] == pytest.approx(-0.25)
    assert entry["deviation_ci95"] is None
    assert "ci95: bootstrap skipped (0 resamples)" in entry["notes"]


def test_barrier_seat_analysis_groups_by_the_barrier_model():
    report = results_report(fixture_table(), scales=SCALES, dimensions=["goal"], seat_role="barrier", resamples=0)
    assert report["models"] == ["b"]
    assert report["means"]["b"]["semantic"]["goal"]["mean"] == 5
    assert report["means"]["b"]["semantic"]["goal"]["percent_change"] == 0


def test_pearson_and_spearman_on_three_hand_computed_pairs():
    # dx = (-1, 0, 1), dy = (-1, 1, 0): r = 1 / sqrt(2 * 2) = 0.5; t = 0.5 sqrt(1 / 0.75) = 1/sqrt(3)
    # with 1 degree of freedom (Cauchy): p = 1 - 2 atan(1/sqrt(3)) / pi = 1 - 1/3 = 2/3.
    entry = correlation([1, 2, 3], [1, 3, 2])
    assert entry["pearson_r"] == pytest.approx(0.5)
    assert entry["pearson_p"] == pytest.approx(2 / 3)
    assert entry["spearman_rho"] == pytest.approx(0.5)
    assert entry["spearman_p"] == pytest.approx(2 / 3)
    assert entry["n"] == 3


def test_spearman_ranks_while_pearson_does_not():
    # y = (1, 2, 10): Pearson r = 9 / sqrt(2 * 48.667) = 0.9122; ranks are identical, so rho = 1 and p = 0.
    entry = correlation([1, 2, 3], [1, 2, 10])
    assert entry["pearson_r"] == pytest.approx(9 / math.sqrt(2 * 146 / 3))
    assert entry["spearman_rho"] == 1
    assert entry["spearman_p"] == 0


def test_correlation_matches_scipy_on_random_data():
    rng = np.random.default_rng(5)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    y[3] = np.nan
    entry = correlation(x, y)
    keep = np.isfinite(y)
    pearson, spearman = scipy_stats.pearsonr(x[keep], y[keep]), scipy_stats.spearmanr(x[keep], y[keep])
    assert entry["n"] == 29
    assert entry["pearson_r"] == pytest.approx(pearson.statistic)
    assert entry["pearson_p"] == pytest.approx(pearson.pvalue)
    assert entry["spearman_rho"] == pytest.approx(spearman.statistic)
    assert entry["spearman_p"] == pytest.approx(spearman.pvalue)


def test_correlation_with_a_constant_is_null_with_the_reason():
    entry = correlation([1, 1, 1, 1], [1, 2, 3, 4])
    assert (entry["pearson_r"], entry["pearson_p"], entry["spearman_rho"], entry["spearman_p"]) == (None,) * 4
    assert entry["notes"] == ["undefined: the feature does not vary"]


def test_correlation_with_fewer_than_three_pairs_is_null_with_the_reason():
    entry = correlation([1, 2, np.nan], [3, 4, 5])
    assert entry["n"] == 2
    assert entry["pearson_r"] is None
    assert entry["notes"] == ["a correlation needs at least three episodes with both values"]


def test_report_correlates_each_feature_with_each_dimension_over_episodes(report):
    entries = report["correlations"]["all"]
    assert [(e["feature"], e["dimension"]) for e in entries] == [
        ("transcript.hedges", "goal"), ("transcript.hedges", "mutual_understanding"),
    ]
    goal = [PARTNER_GOAL[key] for key in PARTNER_GOAL]
    assert entries[0]["n"] == 8
    assert entries[0]["pearson_r"] == pytest.approx(scipy_stats.pearsonr(range(1, 9), goal).statistic)
    assert list(report["correlations"]["by_model"]) == ["m"]


def test_report_has_no_nan_anywhere():
    table = fixture_table()
    table.loc[table["condition"] == "emotional", "goal"] = np.nan
    report = results_report(table, scales=SCALES, dimensions=["goal", "mutual_understanding"], resamples=50)
    json.dumps(report, allow_nan=False)
    assert report["means"]["m"]["emotional"]["goal"]["mean"] is None


def test_table_mixing_evaluators_is_refused_by_name():
    table = fixture_table()
    table.loc[0, "evaluator"] = "other-judge"
    with pytest.raises(ValueError, match="mixes several evaluators"):
        results_report(table, scales=SCALES, dimensions=["goal"])


def test_table_missing_a_column_is_refused_by_name():
    with pytest.raises(ValueError, match="no column scenario"):
        results_report(fixture_table().drop(columns="scenario"))


def test_an_empty_table_reports_nothing_without_failing():
    empty = fixture_table().iloc[0:0]
    report = results_report(empty, scales=SCALES, dimensions=["goal"])
    assert report["means"] == {} and report["deviations"] == []
    assert report["notes"] == ["no scored episodes: there is nothing to report"]


def test_conditions_follow_the_given_order():
    report = results_report(fixture_table(), scales=SCALES, dimensions=["goal"], resamples=0,
                            conditions=["none", "semantic", "sociocultural", "emotional"])
    assert report["conditions"] == ["none", "semantic", "sociocultural", "emotional"]
    assert list(report["means"]["m"]) == report["conditions"]
    assert results.ordered_conditions(["b", "none", "a"]) == ["none", "a", "b"]
