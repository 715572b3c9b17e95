"""MACE with every restart run in lockstep gives the very numbers (bit for bit) of the restarts run one after
another: ``_old_mace`` below is a private copy of ``benchmark.stats.mace.mace`` as it was before the restarts
were batched (commit 2040699), kept only here to compare against, on 200 random datasets of various sizes,
label counts, missing answers, EM and variational Bayes, 1 to 10 restarts and iteration bounds. The batched
E-step's own logsumexp is checked against scipy's on ties and infinities. The old copy's bincount sums were in
turn checked bit-identical to the `np.add.at` sums MACE was first written with (the last test, moved here)."""

from collections.abc import Sequence

import numpy as np
import pytest
from scipy.special import digamma, logsumexp

from benchmark.stats.mace import EM_METHOD, VARIATIONAL_METHOD, Mace, _codes, _Run, mace


def _old_mace(
    items: Sequence[int] | np.ndarray,
    annotators: Sequence[int] | np.ndarray,
    labels: Sequence[int] | np.ndarray,
    *,
    n_items: int | None = None,
    n_annotators: int | None = None,
    n_labels: int | None = None,
    variational: bool = True,
    prior_knew: float = 0.5,
    prior_guessed: float = 0.5,
    prior_strategy: float = 10.0,
    smoothing: float | None = None,
    iterations: int = 50,  # the default of `mace` since it took the authors' tool's (it was 200 then)
    restarts: int = 10,
    tolerance: float = 1e-9,
    seed: int = 0,
) -> Mace:
    """MACE on annotations given as three equal-length integer code arrays (see the module docstring).

    Codes run from 0; the counts default to the largest code plus one. ``iterations`` bounds each run,
    which stops early once the log-likelihood improves by less than ``tolerance``.
    """
    item, annotator, label = _codes(items, "items"), _codes(annotators, "annotators"), _codes(labels, "labels")
    if not (item.size == annotator.size == label.size):
        raise ValueError("items, annotators and labels must have the same length")
    n_i = n_items if n_items is not None else int(item.max(initial=-1)) + 1
    n_j = n_annotators if n_annotators is not None else int(annotator.max(initial=-1)) + 1
    n_k = n_labels if n_labels is not None else int(label.max(initial=-1)) + 1
    if item.size and (item.max() >= n_i or annotator.max() >= n_j or label.max() >= n_k):
        raise ValueError("a code is not below its stated count")
    method = VARIATIONAL_METHOD if variational else EM_METHOD
    answered = np.bincount(annotator, minlength=n_j)
    if n_k <= 1 or item.size == 0:
        note = "one label only: competence is not identifiable" if n_k <= 1 else "no annotations"
        return Mace(np.full(n_j, np.nan), np.full((n_i, max(n_k, 1)), 1 / max(n_k, 1)), 0.0, method, [note])
    run = _OldRun(item, annotator, label, n_i, n_j, n_k, variational, (prior_knew, prior_guessed, prior_strategy),
               0.01 / n_k if smoothing is None else smoothing)
    rng = np.random.default_rng(seed)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(max(restarts, 1)):
        knew = rng.uniform(0.0, 1.0, n_j)
        strategy = rng.dirichlet(np.ones(n_k), n_j)
        outcome = run.fit(knew, 1.0 - knew, strategy, iterations, tolerance)
        if best is None or outcome[0] > best[0] + 1e-12:
            best = outcome
    assert best is not None
    log_likelihood, competence, posteriors = best
    competence = np.where(answered > 0, competence, np.nan)
    notes = []
    if n_j - int((answered > 0).sum()):
        notes.append(f"{n_j - int((answered > 0).sum())} annotator(s) answered nothing: competence undefined")
    return Mace(competence, posteriors, float(log_likelihood), method, notes)


class _OldRun:
    """One dataset's EM iterations (the arrays shared by every restart)."""

    def __init__(
        self, item: np.ndarray, annotator: np.ndarray, label: np.ndarray, n_i: int, n_j: int, n_k: int,
        variational: bool, priors: tuple[float, float, float], smoothing: float,
    ) -> None:
        self.item, self.annotator, self.label = item, annotator, label
        self.n_i, self.n_j, self.n_k = n_i, n_j, n_k
        self.variational, self.priors, self.smoothing = variational, priors, smoothing
        self.same = label[:, None] == np.arange(n_k)[None, :]  # annotation x candidate true label
        # Sums per item by `np.bincount` (much faster than `np.add.at`): each item's prior comes first, then its
        # annotations in order, so every sum adds the same numbers in the same order as `np.add.at` did.
        self.items_prior_first = np.concatenate([np.arange(n_i), item])
        self.prior = np.full(n_i, -np.log(n_k))
        self.strategy_cell = annotator * n_k + label

    def expectations(
        self, knew: np.ndarray, guessed: np.ndarray, strategy: np.ndarray
    ) -> tuple[float, np.ndarray, np.ndarray]:
        """E-step: log marginal likelihood, item posteriors, and each annotation's expected "knew" count."""
        a, j = self.label, self.annotator
        guess = guessed[j] * strategy[j, a]  # weight of guessing this very label
        per_label = np.log(knew[j][:, None] * self.same + guess[:, None])  # annotation x true label
        log_items = np.empty((self.n_i, self.n_k))
        for k in range(self.n_k):
            weights = np.concatenate([self.prior, per_label[:, k]])
            log_items[:, k] = np.bincount(self.items_prior_first, weights=weights, minlength=self.n_i)
        norm = logsumexp(log_items, axis=1)
        posteriors = np.exp(log_items - norm[:, None])
        expected_knew = posteriors[self.item, a] * knew[j] / (knew[j] + guess)
        return float(norm.sum()), posteriors, expected_knew

    def maximise(self, expected_knew: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """M-step: the parameters (or, under variational Bayes, the mean-field weights) from expected counts."""
        j = self.annotator
        knew_counts = np.bincount(j, weights=expected_knew, minlength=self.n_j)
        guess_counts = np.bincount(j, weights=1.0 - expected_knew, minlength=self.n_j)
        strategy_counts = np.bincount(
            self.strategy_cell, weights=1.0 - expected_knew, minlength=self.n_j * self.n_k
        ).reshape(self.n_j, self.n_k)
        if self.variational:
            prior_knew, prior_guessed, prior_strategy = self.priors
            total = digamma(knew_counts + guess_counts + prior_knew + prior_guessed)
            knew = np.exp(digamma(knew_counts + prior_knew) - total)
            guessed = np.exp(digamma(guess_counts + prior_guessed) - total)
            strategy = np.exp(
                digamma(strategy_counts + prior_strategy)
                - digamma(strategy_counts.sum(axis=1, keepdims=True) + self.n_k * prior_strategy)
            )
            return knew, guessed, strategy
        s = self.smoothing
        knew = (knew_counts + s) / (knew_counts + guess_counts + 2 * s)
        strategy = (strategy_counts + s) / (strategy_counts.sum(axis=1, keepdims=True) + self.n_k * s)
        return knew, 1.0 - knew, strategy

    def fit(
        self, knew: np.ndarray, guessed: np.ndarray, strategy: np.ndarray, iterations: int, tolerance: float
    ) -> tuple[float, np.ndarray, np.ndarray]:
        """Iterate from one start; returns the log-likelihood, the competence and the posteriors."""
        previous = -np.inf
        for _ in range(max(iterations, 1)):
            log_likelihood, _, expected_knew = self.expectations(knew, guessed, strategy)
            knew, guessed, strategy = self.maximise(expected_knew)
            if abs(log_likelihood - previous) < tolerance:
                break
            previous = log_likelihood
        log_likelihood, posteriors, _ = self.expectations(knew, guessed, strategy)
        return log_likelihood, knew, posteriors


def _dataset(rng: np.random.Generator) -> tuple[dict, dict]:
    n_i, n_j, n_k = int(rng.integers(1, 120)), int(rng.integers(1, 9)), int(rng.integers(2, 6))
    competence, truth = rng.uniform(0, 1, n_j), rng.integers(0, n_k, n_i)
    cells = [(i, j) for i in range(n_i) for j in range(n_j) if rng.random() > rng.choice([0.0, 0.3, 0.8])]
    if not cells:
        cells = [(0, 0)]
    item = np.array([i for i, _ in cells])
    annotator = np.array([j for _, j in cells])
    knew = rng.random(item.size) < competence[annotator]
    label = np.where(knew, truth[item], rng.integers(0, n_k, item.size))
    order = rng.permutation(item.size)  # annotations in any order, not item by item
    arguments = {"items": item[order], "annotators": annotator[order], "labels": label[order]}
    options = {
        "variational": bool(rng.random() < 0.5),
        "restarts": int(rng.integers(1, 11)),
        "iterations": int(rng.choice([1, 2, 5, 50, 200])),
        "seed": int(rng.integers(0, 1000)),
    }
    if rng.random() < 0.3:  # more items, annotators or labels than the codes show (unanswered ones)
        options |= {"n_items": n_i + 2, "n_annotators": n_j + 1, "n_labels": n_k + 1}
    if rng.random() < 0.15:  # no smoothing: EM can reach a competence of 1, guesses of weight 0, log(0)
        options["smoothing"] = 0.0
    if rng.random() < 0.2:
        options["tolerance"] = float(rng.choice([0.0, 1e-3, 1e-6]))
    return arguments, options


def _assert_identical(new: Mace, old: Mace) -> None:
    assert np.array_equal(new.competence, old.competence, equal_nan=True)
    assert np.array_equal(new.posteriors, old.posteriors, equal_nan=True)
    assert new.posteriors.shape == old.posteriors.shape and new.competence.shape == old.competence.shape
    assert np.array_equal(new.log_likelihood, old.log_likelihood, equal_nan=True)
    assert (new.method, new.notes) == (old.method, old.notes)


@pytest.mark.parametrize("block", range(4))
def test_batched_restarts_are_bit_identical_to_one_after_another(block):
    rng = np.random.default_rng(block)
    for _ in range(50):
        arguments, options = _dataset(rng)
        _assert_identical(mace(**arguments, **options), _old_mace(**arguments, **options))


@pytest.mark.parametrize("dense", [0, 1000])
def test_both_ways_of_summing_per_item_are_bit_identical(dense, monkeypatch):
    """By bincount (no item x slot table) and by the item x slot table whatever its size."""
    monkeypatch.setattr(_Run, "DENSE", dense)
    rng = np.random.default_rng(100 + dense)
    for _ in range(50):
        arguments, options = _dataset(rng)
        _assert_identical(mace(**arguments, **options), _old_mace(**arguments, **options))


def test_bit_identical_on_a_study_sized_dataset():
    rng = np.random.default_rng(7)
    item = np.repeat(np.arange(2000), 3)
    annotator = rng.integers(0, 12, item.size)
    label = np.where(rng.random(item.size) < 0.5, item % 3, rng.integers(0, 3, item.size))
    for variational in (True, False):
        _assert_identical(mace(item, annotator, label, variational=variational),
                          _old_mace(item, annotator, label, variational=variational))


@pytest.mark.parametrize("n_k", range(2, 8))
def test_the_batched_logsumexp_is_scipys_bit_for_bit(n_k):
    rng = np.random.default_rng(n_k)
    log_items = rng.normal(0, 30, (3, n_k, 400))
    log_items[:, :, :100] = np.round(log_items[:, :, :100] / 10)  # ties for the maximum
    log_items[:, 0, 100:150] = -np.inf  # an impossible label
    log_items[:, :, 150:160] = -np.inf  # an impossible item (all labels)
    log_items[1, :, 160:170] = 800.0  # exp overflows without the shift
    run = _Run(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), 400, 1, n_k,
               True, (0.5, 0.5, 10.0), 0.01, 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = logsumexp(log_items.transpose(0, 2, 1), axis=2)
    got = run.logsumexp(log_items)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isneginf(got[:, 150:160]).all()


def _reference_expectations(self, knew, guessed, strategy):
    """The E-step as first written, with `np.add.at` (slow on large studies): the sums must not move."""
    a, j = self.label, self.annotator
    guess = guessed[j] * strategy[j, a]
    per_label = np.log(knew[j][:, None] * self.same + guess[:, None])
    log_items = np.full((self.n_i, self.n_k), -np.log(self.n_k))
    np.add.at(log_items, self.item, per_label)
    norm = logsumexp(log_items, axis=1)
    posteriors = np.exp(log_items - norm[:, None])
    return float(norm.sum()), posteriors, posteriors[self.item, a] * knew[j] / (knew[j] + guess)


def _reference_strategy_counts(self, expected_knew):
    counts = np.zeros((self.n_j, self.n_k))
    np.add.at(counts, (self.annotator, self.label), 1.0 - expected_knew)
    return counts


@pytest.mark.parametrize("variational", [True, False])
def test_the_old_copys_sums_by_bincount_are_bit_identical_to_add_at(variational, monkeypatch):
    import sys

    module = sys.modules[__name__]
    rng = np.random.default_rng(11)
    items = np.repeat(np.arange(300), 3)
    annotators = rng.integers(0, 12, items.size)
    labels = np.where(rng.random(items.size) < 0.6, items % 4, rng.integers(0, 4, items.size))
    fast = _old_mace(items, annotators, labels, variational=variational, restarts=3)
    run = module._OldRun(items, annotators, labels, 300, 12, 4, variational, (0.5, 0.5, 10.0), 0.01)
    knew, strategy = rng.random(12), rng.dirichlet(np.ones(4), 12)
    for got, want in zip(run.expectations(knew, 1 - knew, strategy),
                         _reference_expectations(run, knew, 1 - knew, strategy), strict=True):
        assert np.array_equal(got, want)
    monkeypatch.setattr(module._OldRun, "expectations", _reference_expectations)
    original = module._OldRun.maximise

    def maximise(self, expected):
        assert np.array_equal(
            np.bincount(self.strategy_cell, weights=1.0 - expected, minlength=self.n_j * self.n_k).reshape(
                self.n_j, self.n_k), _reference_strategy_counts(self, expected))
        return original(self, expected)

    monkeypatch.setattr(module._OldRun, "maximise", maximise)
    slow = _old_mace(items, annotators, labels, variational=variational, restarts=3)
    assert np.array_equal(fast.competence, slow.competence, equal_nan=True)
    assert np.array_equal(fast.posteriors, slow.posteriors)
    assert fast.log_likelihood == slow.log_likelihood
