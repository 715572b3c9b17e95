import numpy as np
import pandas as pd
import pytest
from statsmodels.stats import inter_rater

from benchmark.stats.kappa import (
    binned_kappas,
    cohen_kappa,
    cohen_kappa_from_table,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    percent_agreement,
    percent_agreement_from_counts,
    randolph_kappa,
    randolph_kappa_from_counts,
)
from benchmark.stats.tables import long_from_wide
from tests.stats.references import COHEN_SAS, COHEN_WIKIPEDIA, FLEISS_1971, FLEISS_WIKIPEDIA_COUNTS


def test_fleiss_1971_diagnoses():
    result = fleiss_kappa(long_from_wide(FLEISS_1971), seed=0)
    assert round(result.value, 3) == 0.430
    assert result.n_items == 30 and result.n_ratings == 180
    low, high = result.ci95
    assert low < result.value < high


def test_fleiss_wikipedia_example():
    result = fleiss_kappa_from_counts(FLEISS_WIKIPEDIA_COUNTS, resamples=0)
    assert round(result.value, 3) == 0.210
    assert round(percent_agreement_from_counts(FLEISS_WIKIPEDIA_COUNTS), 3) == 0.378
    assert result.ci95 is None


def test_fleiss_matches_statsmodels_with_equal_ratings():
    table, _ = inter_rater.aggregate_raters(FLEISS_1971)
    assert fleiss_kappa_from_counts(table, resamples=0).value == pytest.approx(inter_rater.fleiss_kappa(table))


def test_fleiss_interval_is_reproducible_with_a_seed():
    first = fleiss_kappa(long_from_wide(FLEISS_1971), seed=42, resamples=200)
    second = fleiss_kappa(long_from_wide(FLEISS_1971), seed=np.random.default_rng(42), resamples=200)
    assert first.ci95 == second.ci95
    assert first.resamples == 200


def test_randolph_by_hand():
    # Two items, three ratings each, q = 3 options. Item 1 (a, a, a): P_1 = 1.
    # Item 2 (a, a, b): 2 of 6 ordered pairs agree, P_2 = 1/3. P = 2/3;
    # kappa_free = (2/3 - 1/3) / (1 - 1/3) = 0.5.
    table = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "value": ["a", "a", "a", "a", "a", "b"]})
    assert randolph_kappa(table, categories=["a", "b", "c"]).value == pytest.approx(0.5)
    # With q taken from the two observed categories: (2/3 - 1/2) / (1/2) = 1/3.
    observed = randolph_kappa(table)
    assert observed.value == pytest.approx(1 / 3)
    assert any("q = 2" in note for note in observed.notes)


@pytest.mark.parametrize(
    ("counts", "free", "fixed"),
    [
        # Randolph's online kappa calculator (justusrandolph.net/kappa), as quoted in statsmodels' tests.
        ([[7, 1], [3, 5]], 0.214286, 0.161905),
        ([[6, 1, 0], [0, 7, 0]], 0.785714, 0.708333),
        ([[6.99, 0.01], [6.99, 0.01]], 0.993343, -0.166667),
    ],
)
def test_randolph_calculator_values(counts, free, fixed):
    assert randolph_kappa_from_counts(np.array(counts)).value == pytest.approx(free, abs=1e-6)
    assert fleiss_kappa_from_counts(np.array(counts), resamples=0).value == pytest.approx(fixed, abs=1e-6)


def test_cohen_textbook_tables():
    assert round(cohen_kappa_from_table(COHEN_WIKIPEDIA).value, 3) == 0.400
    assert round(cohen_kappa_from_table(COHEN_SAS).value, 4) == 0.4842
    assert cohen_kappa_from_table(COHEN_SAS).value == pytest.approx(inter_rater.cohens_kappa(COHEN_SAS).kappa)


def test_cohen_from_a_long_table():
    rows = []
    labels = ["yes", "no"]
    item = 0
    for a, row in enumerate(COHEN_WIKIPEDIA):
        for b, count in enumerate(row):
            for _ in range(count):
                rows += [(item, "A", labels[a]), (item, "B", labels[b])]
                item += 1
    rows.append((item, "A", "yes"))  # rated by one annotator only
    table = pd.DataFrame(rows, columns=["item", "annotator", "value"])
    result = cohen_kappa(table)
    assert result.value == pytest.approx(0.4)
    assert result.excluded_items == 1


def test_cohen_needs_exactly_two_annotators():
    result = cohen_kappa(long_from_wide(FLEISS_1971))
    assert result.value is None
    assert "exactly two annotators" in result.notes[0]


def test_cohen_without_annotators_is_undefined():
    table = pd.DataFrame({"item": [1, 1], "value": ["a", "a"]})
    assert cohen_kappa(table).value is None


def test_single_category_is_undefined():
    table = long_from_wide(np.full((4, 3), "same"))
    result = fleiss_kappa(table)
    assert result.value is None and result.ci95 is None
    assert any("one category" in note for note in result.notes)
    assert cohen_kappa_from_table([[5]]).value is None
    assert randolph_kappa(table).value is None


def test_percent_agreement_counts_pairs():
    table = pd.DataFrame({"item": [1, 1, 1, 2, 2], "value": ["a", "a", "b", "c", "c"]})
    assert percent_agreement(table) == pytest.approx((1 / 3 + 1) / 2)


def test_items_with_one_rating_are_excluded_and_counted():
    table = pd.concat([long_from_wide(FLEISS_1971), pd.DataFrame({"item": [99], "annotator": [0], "value": [1]})])
    result = fleiss_kappa(table, resamples=0)
    assert round(result.value, 3) == 0.430
    assert result.excluded_items == 1


def test_binned_kappas_follow_sotopia_bins():
    # On a 0-10 scale in 5 bins, 0 and 1 share [0, 2) but 1 and 2 do not; 9 and 10 share [8, 10].
    table = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "value": [0, 1, 1, 2, 9, 10]})
    result = binned_kappas(table, low=0, high=10, bins=(5,))
    assert result["5"]["percent_agreement"] == pytest.approx(2 / 3)
    assert result["5"]["randolph"] == pytest.approx((2 / 3 - 1 / 5) / (1 - 1 / 5))
    three = binned_kappas(table, low=0, high=10, bins=(3,))["3"]
    assert three["percent_agreement"] == pytest.approx(1.0)


def test_binned_kappas_put_lower_edges_in_their_own_bin():
    # 1-10 in 5 bins is [1, 2.8), [2.8, 4.6), [4.6, 6.4), [6.4, 8.2), [8.2, 10]: every item agrees.
    table = pd.DataFrame(
        {"item": [1, 1, 2, 2, 3, 3, 4, 4], "value": [2.8, 3.5, 4.6, 5.0, 8.2, 9.0, 1.0, 2.0]}
    )
    five = binned_kappas(table, low=1, high=10, bins=(5,))["5"]
    assert five["fleiss"] == pytest.approx(1.0)
    assert five["percent_agreement"] == 1.0


def test_fleiss_pools_category_shares_over_ratings_and_says_it_can_differ_from_gwet():
    # P_i = 6/12, 2/2, 0/2, so P = 0.5. Pooled over the 8 ratings, p = (4/8, 4/8): P_e = 0.5, kappa = 0.
    # Gwet (2014) averages each item's shares instead: (3/4 + 0 + 1/2) / 3 = 5/12 for x, kappa = -0.029.
    counts = np.array([[3, 1], [0, 2], [1, 1]])
    result = fleiss_kappa_from_counts(counts, resamples=0)
    assert result.value == pytest.approx(0.0, abs=1e-15)
    gwet_chance = (5 / 12) ** 2 + (7 / 12) ** 2
    assert (0.5 - gwet_chance) / (1 - gwet_chance) == pytest.approx(-0.0286, abs=1e-4)
    assert "pooled over all ratings" in result.method and "Gwet (2014)" in result.method


def clustered_ratings(seed: int = 3) -> pd.DataFrame:
    """Six scenarios of eight episodes; the episodes of one scenario are rated alike."""
    rng = np.random.default_rng(seed)
    rows = []
    for scenario in range(6):
        pattern = rng.choice(["x", "y", "z"], size=3)
        for episode in range(8):
            for annotator in range(3):
                rows.append((f"{scenario}-{episode}", annotator, pattern[annotator], f"s{scenario}"))
    return pd.DataFrame(rows, columns=["item", "annotator", "value", "cluster"])


def test_fleiss_interval_resamples_clusters_when_there_are_clusters():
    table = clustered_ratings()
    items = fleiss_kappa(table.drop(columns="cluster"), resamples=500, seed=1)
    clusters = fleiss_kappa(table, cluster="cluster", resamples=500, seed=1)
    assert clusters.value == pytest.approx(items.value)
    # 6 scenarios, not 48 independent episodes: the interval is much wider.
    assert clusters.ci95[1] - clusters.ci95[0] > 2 * (items.ci95[1] - items.ci95[0])
    assert "resampling clusters" in clusters.method and "resampling clusters" not in items.method
