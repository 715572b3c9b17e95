import numpy as np
import pandas as pd
import pytest

from benchmark.stats.accuracy import cluster_bootstrap_accuracy


def study() -> pd.DataFrame:
    """Four scenarios x two items x two ratings; truths alternate per scenario."""
    rows = []
    answers = {
        # scenario: answers of its four ratings
        "s1": ["none", "none", "none", "semantic"],
        "s2": ["semantic", "semantic", "none", "semantic"],
        "s3": ["none", "emotional", "none", "none"],
        "s4": ["semantic", "semantic", "semantic", "semantic"],
    }
    truths = {"s1": "none", "s2": "semantic", "s3": "none", "s4": "semantic"}
    for scenario, given in answers.items():
        for position, answer in enumerate(given):
            rows.append(
                {
                    "item": f"{scenario}-{position // 2}",
                    "annotator": f"a{position % 2}",
                    "value": answer,
                    "truth": truths[scenario],
                    "cluster": scenario,
                }
            )
    return pd.DataFrame(rows)


def test_point_estimates_by_hand():
    result = cluster_bootstrap_accuracy(study(), seed=1)
    # none: s1 3/4, s3 3/4 -> 6/8; semantic: s2 3/4, s4 4/4 -> 7/8; overall 13/16.
    assert result.overall == pytest.approx(13 / 16)
    assert result.by_class["none"]["value"] == pytest.approx(6 / 8)
    assert result.by_class["semantic"]["value"] == pytest.approx(7 / 8)
    assert result.by_class["none"]["n"] == 8
    assert "emotional" not in result.by_class  # an answer no item had as its truth
    assert result.labels == ["emotional", "none", "semantic"]
    assert result.chance == pytest.approx(1 / 3)
    assert result.majority_rate == pytest.approx(0.5)
    assert result.confusion == [[0, 0, 0], [1, 6, 1], [0, 1, 7]]
    assert result.n_clusters == 4 and result.cluster == "cluster"


def test_interval_resamples_clusters():
    result = cluster_bootstrap_accuracy(study(), seed=1, resamples=2000)
    low, high = result.overall_ci95
    assert low <= result.overall <= high
    # Cluster accuracies are 3/4, 3/4, 3/4 and 1, so no resample can go outside [3/4, 1].
    assert low >= 0.75 - 1e-12 and high <= 1.0
    assert result.resamples == 2000


def test_seed_makes_it_reproducible():
    first = cluster_bootstrap_accuracy(study(), seed=7)
    second = cluster_bootstrap_accuracy(study(), seed=7)
    assert first.to_dict() == second.to_dict()
    assert first.seed == 7


def test_without_clusters_each_item_is_one():
    result = cluster_bootstrap_accuracy(study().drop(columns="cluster"), seed=1)
    assert result.n_clusters == 8 and result.cluster == "item"
    assert any("no cluster column" in note for note in result.notes)


def test_numbers_and_text_labels_compare_equal():
    table = pd.DataFrame({"item": [1, 2], "value": ["1", "2"], "truth": [1, 1], "cluster": ["a", "b"]})
    assert cluster_bootstrap_accuracy(table, seed=0).overall == pytest.approx(0.5)


def test_ratings_without_truth_are_left_out():
    table = study()
    table.loc[0, "truth"] = None
    result = cluster_bootstrap_accuracy(table, seed=0)
    assert result.n_ratings == 15
    assert any("without an answer or a truth" in note for note in result.notes)


def test_one_cluster_has_no_interval():
    table = study().assign(cluster="only")
    result = cluster_bootstrap_accuracy(table, seed=0)
    assert result.overall_ci95 is None
    assert any("at least two clusters" in note for note in result.notes)


def test_empty_input_does_not_crash():
    table = pd.DataFrame({"item": [], "value": [], "truth": [], "cluster": []})
    result = cluster_bootstrap_accuracy(table, seed=0)
    assert result.overall is None and result.notes


def test_large_bootstrap_is_vectorised_enough():
    rng = np.random.default_rng(0)
    n = 30_000
    truth = rng.integers(0, 4, n)
    table = pd.DataFrame(
        {
            "item": np.arange(n) // 3,
            "value": np.where(rng.random(n) < 0.7, truth, rng.integers(0, 4, n)),
            "truth": truth,
            "cluster": rng.integers(0, 1000, n),
        }
    )
    result = cluster_bootstrap_accuracy(table, seed=0)
    low, high = result.overall_ci95
    assert low < result.overall < high
    assert high - low < 0.02


def test_chance_counts_the_declared_answer_options():
    # Four options were offered; only two ever occur. Guessing uniformly among them is right 1 time in 4.
    table = pd.DataFrame({"item": [1, 1, 2, 2], "value": ["a", "b", "b", "b"], "truth": ["a", "a", "b", "b"]})
    declared = cluster_bootstrap_accuracy(table, labels=["a", "b", "c", "d"], resamples=0)
    assert declared.chance == 0.25 and declared.to_dict()["chance_method"] == "1 / number of answer options (4)"
    seen = cluster_bootstrap_accuracy(table, resamples=0)
    assert seen.chance == 0.5
    assert seen.to_dict()["chance_method"] == "1 / number of classes seen among truths and answers (2)"


def test_a_truth_outside_the_options_is_a_class_but_not_an_option():
    table = pd.DataFrame({"item": [1, 2], "value": ["a", "b"], "truth": ["a", "other"]})
    result = cluster_bootstrap_accuracy(table, labels=["a", "b"], resamples=0)
    assert result.chance == 0.5 and result.labels == ["a", "b", "other"]
    assert "the truth of some items is not among the answer options: other" in result.notes
