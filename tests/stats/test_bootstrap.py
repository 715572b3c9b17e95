import numpy as np

from benchmark.stats.bootstrap import draw_counts, make_rng, percentile_interval, resampled_sums


def test_each_resample_draws_every_unit_count_once_in_total():
    blocks = list(draw_counts(7, 25, make_rng(0)))
    counts = np.vstack(blocks)
    assert counts.shape == (25, 7)
    assert (counts.sum(axis=1) == 7).all()


def test_blocks_bound_memory(monkeypatch):
    import benchmark.stats.bootstrap as bootstrap

    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 100)
    blocks = list(draw_counts(40, 10, make_rng(0)))
    assert len(blocks) == 5 and all(len(block) == 2 for block in blocks)


def test_resampled_sums_are_weighted_totals():
    totals = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    sums = resampled_sums(totals, 50, make_rng(1))
    assert sums.shape == (50, 2)
    assert np.allclose(sums[:, 1], 10 * sums[:, 0])
    assert ((sums[:, 0] >= 3) & (sums[:, 0] <= 9)).all()


def test_same_seed_same_draws():
    first = resampled_sums(np.arange(5.0), 20, make_rng(3))
    second = resampled_sums(np.arange(5.0), 20, make_rng(3))
    assert np.array_equal(first, second)


def test_percentile_interval_ignores_undefined_replicates():
    assert percentile_interval(np.array([np.nan, np.nan])) is None
    low, high = percentile_interval(np.concatenate([np.linspace(0, 1, 101), [np.nan]]))
    assert round(low, 3) == 0.025 and round(high, 3) == 0.975


def test_repeated_patterns_draw_the_same_distribution():
    # 600 units with 3 distinct totals: the pattern (multinomial) path. Each resample's first column
    # is then the number of units drawn from the first pattern, Binomial(600, 1/2).
    totals = np.repeat(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]), [300, 200, 100], axis=0)
    sums = resampled_sums(totals, 4000, make_rng(0))
    assert (sums[:, 2] == 600).all()  # every resample draws 600 units
    assert abs(sums[:, 0].mean() - 300) < 1.5
    assert abs(sums[:, 0].var() - 600 * 0.5 * 0.5) < 15
    assert abs(sums[:, 1].mean() - 200) < 1.5


def test_distinct_units_use_direct_draws():
    totals = np.arange(50.0)[:, None]
    sums = resampled_sums(totals, 4000, make_rng(0))
    assert abs(sums[:, 0].mean() - totals.sum()) < 10
    # Var of the sum of 50 draws = 50 * population variance of 0..49.
    assert abs(sums[:, 0].var() / (50 * totals.var()) - 1) < 0.1
