"""Invariants every agreement statistic must keep, checked on generated data (hypothesis)."""

import json
import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from benchmark.stats.accuracy import cluster_bootstrap_accuracy
from benchmark.stats.alpha import krippendorff_alpha
from benchmark.stats.icc import icc_oneway
from benchmark.stats.kappa import fleiss_kappa, randolph_kappa
from benchmark.stats.report import question_report
from benchmark.stats.tables import long_from_wide
from tests.stats.notes import unexplained_nulls

# STATS_EXAMPLES=1000 for a deeper search.
SETTINGS = settings(max_examples=int(os.environ.get("STATS_EXAMPLES", "60")), deadline=None)


@st.composite
def rating_matrices(draw, categories: int = 4, min_items: int = 2):
    """Items x annotators matrices of codes 0..categories-1 with some ratings missing."""
    n_items = draw(st.integers(min_items, 12))
    n_annotators = draw(st.integers(2, 5))
    cells = st.one_of(st.none(), st.integers(0, categories - 1))
    rows = draw(
        st.lists(st.lists(cells, min_size=n_annotators, max_size=n_annotators), min_size=n_items, max_size=n_items)
    )
    return np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)


def relabelled(table: pd.DataFrame) -> pd.DataFrame:
    names = {0.0: "zebra", 1.0: "apple", 2.0: "mango", 3.0: "kiwi"}
    return table.assign(value=table["value"].map(names))


def shuffled_annotators(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    annotators = table["annotator"].unique()
    mapping = dict(zip(annotators, np.random.default_rng(seed).permutation(annotators), strict=True))
    return table.assign(annotator=table["annotator"].map(mapping)).sample(frac=1, random_state=seed)


def same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b, abs_tol=1e-9))


def finite_json(value) -> None:
    json.dumps(value, allow_nan=False)


@SETTINGS
@given(st.lists(st.integers(0, 3), min_size=2, max_size=10), st.integers(2, 5))
def test_perfect_agreement_gives_one(truths, raters):
    assume(len(set(truths)) >= 2)  # one category only: kappa is undefined, tested elsewhere
    table = long_from_wide(np.repeat(np.array(truths, dtype=float)[:, None], raters, axis=1))
    assert fleiss_kappa(table, resamples=0).value == pytest.approx(1.0)
    assert randolph_kappa(table).value == pytest.approx(1.0)
    assert icc_oneway(table).icc1 == pytest.approx(1.0)
    alphas = krippendorff_alpha(table, levels=("nominal", "ordinal", "interval")).values
    assert all(value == pytest.approx(1.0) for value in alphas.values())


@SETTINGS
@given(rating_matrices())
def test_relabelling_categories_changes_nothing(matrix):
    table = long_from_wide(matrix)
    renamed = relabelled(table)
    assert same(fleiss_kappa(table, resamples=0).value, fleiss_kappa(renamed, resamples=0).value)
    assert same(randolph_kappa(table).value, randolph_kappa(renamed).value)
    assert same(
        krippendorff_alpha(table).values["nominal"],
        krippendorff_alpha(renamed).values["nominal"],
    )


@SETTINGS
@given(rating_matrices(), st.integers(0, 1000))
def test_permuting_annotators_changes_nothing(matrix, seed):
    table = long_from_wide(matrix)
    moved = shuffled_annotators(table, seed)
    assert same(fleiss_kappa(table, resamples=0).value, fleiss_kappa(moved, resamples=0).value)
    assert same(icc_oneway(table).icc1, icc_oneway(moved).icc1)
    assert same(icc_oneway(table).icc1k, icc_oneway(moved).icc1k)
    for level in ("nominal", "ordinal", "interval"):
        first = krippendorff_alpha(table, levels=(level,)).values[level]
        assert same(first, krippendorff_alpha(moved, levels=(level,)).values[level])


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 2), st.integers(0, 2)),
        min_size=1,
        max_size=60,
    ),
    st.integers(0, 2**32 - 1),
)
def test_bootstrap_interval_contains_the_point_estimate(rows, seed):
    table = pd.DataFrame(rows, columns=["cluster", "value", "truth"]).assign(item=lambda t: t.index)
    result = cluster_bootstrap_accuracy(table, seed=seed, resamples=400)
    finite_json(result.to_dict())
    if result.n_clusters < 2:
        assert result.overall_ci95 is None
        assert "a bootstrap CI needs at least two clusters" in result.notes
    else:
        low, high = result.overall_ci95
        assert low - 1e-12 <= result.overall <= high + 1e-12


@SETTINGS
@given(rating_matrices(min_items=4), st.integers(0, 2**32 - 1))
def test_fleiss_interval_contains_the_point_estimate(matrix, seed):
    result = fleiss_kappa(long_from_wide(matrix), seed=seed, resamples=400)
    if result.value is None:
        assert result.ci95 is None and any("Fleiss' kappa" in note for note in result.notes)
    elif result.n_items < 2:
        assert result.ci95 is None and "no CI for Fleiss' kappa from a single item" in result.notes
    else:
        assert result.ci95[0] - 1e-9 <= result.value <= result.ci95[1] + 1e-9


@SETTINGS
@given(rating_matrices(categories=5, min_items=0), st.booleans())
def test_reports_never_contain_nan_and_explain_every_null(matrix, categorical):
    table = long_from_wide(matrix) if matrix.size else pd.DataFrame({"item": [], "annotator": [], "value": []})
    table = relabelled(table) if categorical and len(table) else table
    report = question_report(table, resamples=50)
    finite_json(report)
    assert unexplained_nulls(report) == []
