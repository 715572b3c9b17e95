"""The EFA of ProMediate's Table 3 against an exact two-factor model and scikit-learn's FactorAnalysis."""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import FactorAnalysis

from benchmark.stats.factors import factor_analysis, varimax

METRICS = ["CC", "TLE", "ME", "RL", "MI", "X"]
SIMPLE = np.array([[0.9, 0], [0.8, 0], [0.7, 0], [0, 0.6], [0, 0.7], [0, 0.5]])


def with_correlation(corr, n, seed=0):
    """n rows whose sample correlation matrix is exactly `corr` (whitened noise coloured by its Cholesky factor)."""
    z = np.random.default_rng(seed).standard_normal((n, corr.shape[0]))
    z -= z.mean(axis=0)
    z = z @ np.linalg.inv(np.linalg.cholesky(np.cov(z, rowvar=False)).T)
    return z @ np.linalg.cholesky(corr).T


def model_data(loadings, n, seed):
    rng = np.random.default_rng(seed)
    unique = np.sqrt(1 - (loadings**2).sum(axis=1))
    return rng.standard_normal((n, loadings.shape[1])) @ loadings.T + rng.standard_normal((n, len(loadings))) * unique


def test_recovers_an_exact_two_factor_model():
    corr = SIMPLE @ SIMPLE.T + np.diag(1 - (SIMPLE**2).sum(axis=1))
    data = pd.DataFrame(with_correlation(corr, 50) * 3 + 7, columns=METRICS)
    result = factor_analysis(data)
    assert np.allclose(result.loadings, SIMPLE, atol=1e-6)
    assert np.allclose(result.uniquenesses, 1 - (SIMPLE**2).sum(axis=1), atol=1e-6)
    assert result.salient == [[True, False]] * 3 + [[False, True]] * 3
    assert result.n == 50 and result.excluded == 0 and not result.notes
    assert "maximum-likelihood" in result.method and "varimax" in result.method


def match_up_to_sign_and_order(ours, theirs):
    best = np.inf
    for order in itertools.permutations(range(theirs.shape[1])):
        for signs in itertools.product((1, -1), repeat=theirs.shape[1]):
            best = min(best, np.abs(ours - theirs[:, order] * np.array(signs)).max())
    return best


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_scikit_learn_factor_analysis_with_varimax(seed):
    loadings = np.array([[0.9, 0.1], [0.75, 0.0], [0.1, 0.6], [-0.1, 0.55], [0.3, 0.3], [0.5, 0.4]])
    data = model_data(loadings, 300, seed)
    result = factor_analysis(pd.DataFrame(data, columns=METRICS))
    standardised = (data - data.mean(axis=0)) / data.std(axis=0)
    reference = FactorAnalysis(2, rotation="varimax", svd_method="lapack", tol=1e-12, max_iter=100_000)
    reference.fit(standardised)
    assert match_up_to_sign_and_order(np.array(result.loadings), reference.components_.T) < 2e-3
    assert np.allclose(result.uniquenesses, reference.noise_variance_, atol=2e-3)


def test_unrotated_fit_reproduces_the_same_correlation_model_as_scikit_learn():
    data = model_data(SIMPLE, 250, 4)
    result = factor_analysis(pd.DataFrame(data, columns=METRICS), rotation="none")
    reference = FactorAnalysis(2, svd_method="lapack", tol=1e-12, max_iter=100_000)
    reference.fit((data - data.mean(axis=0)) / data.std(axis=0))
    ours, theirs = np.array(result.loadings), reference.components_.T
    assert np.allclose(ours @ ours.T, theirs @ theirs.T, atol=2e-3)
    assert "no rotation" in result.method


def test_varimax_leaves_simple_structure_alone_and_undoes_a_rotation():
    angle = 0.6
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    for normalise in (False, True):
        rotated = varimax(SIMPLE @ turn, kaiser_normalise=normalise)
        assert match_up_to_sign_and_order(rotated, SIMPLE) < 1e-9


def test_varimax_undoes_a_rotation_of_three_factors():
    simple = np.array([[0.8, 0, 0], [0.7, 0, 0], [0, 0.6, 0], [0, 0.7, 0], [0, 0, 0.5], [0, 0, 0.9], [0.6, 0, 0]])
    turn, _ = np.linalg.qr(np.random.default_rng(8).standard_normal((3, 3)))
    assert match_up_to_sign_and_order(varimax(simple @ turn), simple) < 1e-9


def test_rows_with_a_missing_metric_are_left_out_and_counted():
    data = pd.DataFrame(model_data(SIMPLE, 80, 5), columns=METRICS)
    data.loc[[3, 10], "ME"] = None
    result = factor_analysis({name: data[name].tolist() for name in METRICS})
    assert result.n == 78 and result.excluded == 2
    assert result.notes[0] == "2 conversations with a missing metric left out"
    assert result.metrics == METRICS


def test_data_that_cannot_carry_the_model_gives_no_loadings_and_says_why():
    few = factor_analysis(pd.DataFrame(model_data(SIMPLE, 5, 6), columns=METRICS))
    assert few.loadings is None and "more conversations than metrics" in few.notes[0]
    data = pd.DataFrame(model_data(SIMPLE, 60, 6), columns=METRICS).assign(MI=4.0)
    constant = factor_analysis(data)
    assert constant.loadings is None and constant.notes == ["metrics that never vary cannot be analysed: MI"]
    three = factor_analysis(data[["CC", "TLE", "ME"]])
    assert three.loadings is None and "not identified" in three.notes[0]


def test_a_metric_the_factor_explains_entirely_is_noted_as_heywood():
    loadings = np.array([[0.999, 0], [0.8, 0], [0.7, 0], [0, 0.6], [0, 0.7], [0, 0.5]])
    corr = loadings @ loadings.T + np.diag(1 - (loadings**2).sum(axis=1))
    result = factor_analysis(pd.DataFrame(with_correlation(corr, 40), columns=METRICS))
    assert any(note.startswith("Heywood case") and "CC" in note for note in result.notes)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"rotation": "promax"}, "rotation must be one of varimax, none"), ({"n_factors": 0}, "n_factors")],
)
def test_bad_options_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        factor_analysis(pd.DataFrame(model_data(SIMPLE, 30, 7), columns=METRICS), **kwargs)
