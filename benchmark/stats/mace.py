"""MACE: each annotator's competence and each item's label posterior, learnt from the annotations alone.

Hovy, Berg-Kirkpatrick, Vaswani & Hovy (2013), "Learning Whom to Trust with MACE", NAACL-HLT 2013,
pp. 1120-1130 (https://aclanthology.org/N13-1132). The generative model, for items i, annotators j
and K labels:

    T_i  ~ Uniform(K)                       the item's true label
    S_ij ~ Bernoulli(1 - theta_j)           whether annotator j was "spamming" on item i
    A_ij = T_i                  if S_ij = 0 (they knew, with probability theta_j, their competence)
    A_ij ~ Categorical(xi_j)    if S_ij = 1 (they guessed by their own strategy xi_j)

so p(A_ij = a | T_i = t) = theta_j [a = t] + (1 - theta_j) xi_j(a). The parameters are learnt by
EM (section 2.1): the E-step gives each item's posterior over T_i,

    p(T_i = t | A) ∝ prod_j (theta_j [a_ij = t] + (1 - theta_j) xi_j(a_ij)),

and each annotation's expected "knew" count, p(T_i = a_ij | A) theta_j / (theta_j + (1 - theta_j)
xi_j(a_ij)) (an answer that differs from the true label can only be a guess); the M-step sets
theta_j to the share of annotator j's expected "knew" counts and xi_j to their guesses' label
shares, each count plus a small ``smoothing`` (0.01 / K by default, as the authors' tool) before
normalising. The paper's variational-Bayes option (section 2.2) puts a Beta prior on theta_j
(pseudo-counts ``prior_knew`` and ``prior_guessed``, 0.5 each as the tool's default) and a symmetric
Dirichlet on xi_j (``prior_strategy``, 10 as the tool's), and replaces the M-step's probabilities by
the mean-field weights exp(digamma(count + prior) - digamma(total + priors)); it keeps poor
annotators' competence away from exactly 0 and good ones' from 1. The competence reported is then
that weight for knowing, exp(E_q[log theta_j]), as the authors' tool reports it (it lies a little
below the posterior mean of theta_j). EM finds local optima, so it is run from ``restarts``
random starts and the run of best log marginal likelihood, sum_i log sum_t (1/K) prod_j p(a_ij | t),
is kept (with the variational weights in place of the probabilities under variational Bayes).

The defaults are the authors' tool's (MACE.jar 0.3, ``src/edu/isi/MACE.java`` at github.com/dirkhovy/MACE):
variational Bayes, not plain EM (``--em`` opts out); 10 restarts; 50 iterations each (its
``DEFAULT_ITERATIONS``: one E-step, then 50 M-steps each followed by an E-step, as here); Beta(0.5, 0.5) on
knowing against guessing (``--alpha``, ``--beta``); Dirichlet(10) on each strategy (fixed in the tool);
smoothing 0.01 / K for plain EM. The tool has no convergence test, it always runs its 50 iterations; here a
restart also stops once its log-likelihood moves by less than ``tolerance`` (1e-9), where further iterations
would change its competences by far less than the figures show. Its ``--threshold`` (predict labels only for
the least uncertain items) concerns labels, not competence, and is left out. Parley once ran up to 200
iterations; 50, as the tool, gives what its users compare against, at a quarter of the time on a large study.

The input is integer-coded: one row per annotation (item, annotator, label), missing annotations
simply absent. Everything is deterministic given ``seed``. Parley's own code, because no kept
library implements MACE; ``tests/stats/test_mace.py`` checks it against the authors' Java tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import digamma, logsumexp

EM_METHOD = (
    "MACE (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013, 'Learning Whom to Trust with MACE', NAACL-HLT): "
    "each annotator answers the true label with probability theta (their competence) and otherwise guesses "
    "from a strategy of their own; EM with random restarts, the run of best log-likelihood kept"
)
VARIATIONAL_METHOD = EM_METHOD.replace("EM with", "variational-Bayes EM (Beta and Dirichlet priors) with")


@dataclass
class Mace:
    """MACE's estimates: competence per annotator code (NaN for one who answered nothing, or when only
    one label exists: then knowing and guessing cannot be told apart), the label posterior per item code
    (uniform for an item nobody answered), and the kept run's log marginal likelihood."""

    competence: np.ndarray
    posteriors: np.ndarray
    log_likelihood: float
    method: str
    notes: list[str] = field(default_factory=list)

    @property
    def labels(self) -> np.ndarray:
        """Each item's most probable label."""
        return self.posteriors.argmax(axis=1)


def _codes(values: Sequence[int] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.int64).reshape(-1)
    if array.size and array.min() < 0:
        raise ValueError(f"{name}: codes must be non-negative integers")
    return array


def mace(
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
    iterations: int = 50,
    restarts: int = 10,
    tolerance: float = 1e-9,
    seed: int = 0,
) -> Mace:
    """MACE on annotations given as three equal-length integer code arrays (see the module docstring).

    Codes run from 0; the counts default to the largest code plus one. ``iterations`` bounds each run (50,
    as the authors' tool), which stops early once the log-likelihood improves by less than ``tolerance``.
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
    run = _Run(item, annotator, label, n_i, n_j, n_k, variational, (prior_knew, prior_guessed, prior_strategy),
               0.01 / n_k if smoothing is None else smoothing, max(restarts, 1))
    rng = np.random.default_rng(seed)
    # Each restart's start drawn in the order the restarts used to draw them one after another.
    starts = [(rng.uniform(0.0, 1.0, n_j), rng.dirichlet(np.ones(n_k), n_j)) for _ in range(run.n_r)]
    knew = np.array([start[0] for start in starts])
    strategy = np.array([start[1] for start in starts])
    log_likelihoods, competences, posteriors_all = run.fit(knew, 1.0 - knew, strategy, iterations, tolerance)
    best = 0
    for r in range(1, run.n_r):  # the first best run wins, as when the restarts ran one after another
        if log_likelihoods[r] > log_likelihoods[best] + 1e-12:
            best = r
    log_likelihood, competence, posteriors = log_likelihoods[best], competences[best], posteriors_all[best].T.copy()
    competence = np.where(answered > 0, competence, np.nan)
    notes = []
    if n_j - int((answered > 0).sum()):
        notes.append(f"{n_j - int((answered > 0).sum())} annotator(s) answered nothing: competence undefined")
    return Mace(competence, posteriors, float(log_likelihood), method, notes)


class _Run:
    """One dataset's EM iterations, every restart at once: the arrays carry a leading restart axis, so each
    numpy call serves all the runs still iterating (the cost on large data is the calls, not the arithmetic).
    Every number is computed by the same operations on the same values, and every sum adds the same numbers
    in the same order, as when the restarts ran one by one: the results are bit-identical to that
    (``tests/stats/test_mace_batched.py`` checks it against a copy of the one-by-one code)."""

    DENSE = 2  # item x slot tables up to this many times the annotations replace the bincount

    def __init__(
        self, item: np.ndarray, annotator: np.ndarray, label: np.ndarray, n_i: int, n_j: int, n_k: int,
        variational: bool, priors: tuple[float, float, float], smoothing: float, n_r: int,
    ) -> None:
        self.item, self.annotator, self.label = item, annotator, label
        self.n_i, self.n_j, self.n_k, self.n_r = n_i, n_j, n_k, n_r
        self.variational, self.priors, self.smoothing = variational, priors, smoothing
        self.annotation = np.arange(label.size)
        # Sums per item by `np.bincount`, one bin per (restart, true label, item): each item's prior comes
        # first, then its annotations in order, so every sum adds the same numbers in the same order as one
        # restart's `np.add.at` per label did. The bins' indices for the first r restarts are a prefix.
        blocks = np.arange(n_r * n_k)[:, None] * n_i
        self.item_bins = (blocks + np.concatenate([np.arange(n_i), item])[None, :]).reshape(-1)
        self.prior = np.full(n_i, -np.log(n_k))
        restart = np.arange(n_r)[:, None]
        self.annotator_bins = (restart * n_j + annotator[None, :]).reshape(-1)
        self.strategy_bins = (restart * (n_j * n_k) + (annotator * n_k + label)[None, :]).reshape(-1)
        # The same sums as sequential adds over item x slot (an item's s-th annotation in slot s; a missing one
        # adds 0.0, which changes no sum of these non-positive terms), when that table is not much larger.
        counts = np.bincount(item, minlength=n_i)
        width = int(counts.max(initial=0))
        self.slots = None
        if n_i * width <= self.DENSE * item.size:
            order = np.argsort(item, kind="stable")
            slot = np.arange(item.size) - np.repeat(np.cumsum(counts) - counts, counts)
            self.slots = np.full((width, n_i), item.size)  # the index past the last annotation: a 0.0 term
            self.slots[slot, item[order]] = order
            # Each slot's answered label per item (0 for a missing annotation, whose terms are 0.0 for every label).
            self.slot_labels = np.append(label, 0)[self.slots]
            self.columns = np.arange(n_i)

    def expectations(
        self, knew: np.ndarray, guessed: np.ndarray, strategy: np.ndarray, posteriors: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """E-step for r restarts (parameters r x annotator [x label]): their log marginal likelihoods, item
        posteriors (r x label x item; None unless ``posteriors``: the iterations only need each annotation's
        own label's, taken by the same operations on the same numbers), and each annotation's expected "knew"
        count (r x annotation)."""
        a, j, n_r, n_i = self.label, self.annotator, knew.shape[0], self.n_i
        guess = guessed[:, j] * strategy[:, j, a]  # weight of guessing this very label
        knew_j = knew[:, j]
        # log(knew [a = t] + guess) per true label t: log(guess) where t is not the answer (knew * 0 + guess is
        # guess exactly), log(knew + guess) where it is; written after each (restart, label)'s item priors.
        log_guess, log_knew = np.log(guess), np.log(knew_j + guess)
        if self.slots is not None:
            zero = np.zeros((n_r, 1))
            log_guess, log_knew = np.concatenate([log_guess, zero], 1), np.concatenate([log_knew, zero], 1)
            log_items = np.repeat(np.broadcast_to(self.prior, (n_r, 1, n_i)), self.n_k, axis=1)
            for slots, labels in zip(self.slots, self.slot_labels, strict=True):
                # Every label's sum plus the guess, except the answered label's, which gets its own term: each
                # sum still takes one addition of its own term per slot, only without a label-wide select.
                answered = log_items[:, labels, self.columns]
                log_items += log_guess[:, None, slots]
                log_items[:, labels, self.columns] = answered + log_knew[:, slots]
        else:
            weights = np.empty((n_r, self.n_k, n_i + self.item.size))
            weights[:, :, :n_i] = self.prior
            per_label = weights[:, :, n_i:]
            np.copyto(per_label, log_guess[:, None, :])
            per_label[:, self.label, self.annotation] = log_knew
            log_items = np.bincount(
                self.item_bins[: weights.size], weights=weights.reshape(-1), minlength=n_r * self.n_k * n_i
            ).reshape(n_r, self.n_k, n_i)
        norm = self.logsumexp(log_items)
        log_likelihoods = np.array([norm[r].sum() for r in range(n_r)])
        if posteriors:
            every = np.exp(log_items - norm[:, None, :])
            return log_likelihoods, every, every[:, a, self.item] * knew_j / (knew_j + guess)
        own = np.exp(log_items[:, a, self.item] - norm[:, self.item])  # the posterior of each answer's label
        return log_likelihoods, None, own * knew_j / (knew_j + guess)

    def logsumexp(self, log_items: np.ndarray) -> np.ndarray:
        """`scipy.special.logsumexp` over the labels of r x label x item, by its very operations (the maximum
        and the ties' count m apart, log1p(sum of the rest's exp / m) + log(m) + maximum) done label by label,
        without its array-API overhead or its direct sum kept for non-finite results; where a result is not
        finite, scipy's own function gives them all. The sum over labels is numpy's over rows of item x label,
        as scipy sums; numpy adds a row of fewer than 8 numbers one after another (its pairwise summation starts
        at 8), so with up to 7 labels it is the label slices added in order, without copying the terms into
        rows (that copy was half the function's time)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            maximum = log_items.max(axis=1)
            ties = log_items == maximum[:, None, :]
            m = np.count_nonzero(ties, axis=1).astype(np.float64)
            terms = np.exp(log_items - maximum[:, None, :])
            np.copyto(terms, 0.0, where=ties)
            if self.n_k < 8:
                total = terms[:, 0] + terms[:, 1]
                for label in range(2, self.n_k):
                    total += terms[:, label]
            else:
                total = np.ascontiguousarray(terms.transpose(0, 2, 1)).reshape(-1, self.n_k).sum(axis=1)
                total = total.reshape(maximum.shape)
            total = np.where(total == 0, total, total / m)
            out = np.log1p(total) + np.log(m) + maximum
        if np.isfinite(out).all():
            return out
        rows = np.ascontiguousarray(log_items.transpose(0, 2, 1)).reshape(-1, self.n_k)
        return logsumexp(rows, axis=1).reshape(maximum.shape)

    def maximise(self, expected_knew: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """M-step: the parameters (or, under variational Bayes, the mean-field weights) from expected counts."""
        n_r = expected_knew.shape[0]
        size = expected_knew.size
        knew_counts = np.bincount(
            self.annotator_bins[:size], weights=expected_knew.reshape(-1), minlength=n_r * self.n_j
        ).reshape(n_r, self.n_j)
        guessed = (1.0 - expected_knew).reshape(-1)
        guess_counts = np.bincount(
            self.annotator_bins[:size], weights=guessed, minlength=n_r * self.n_j
        ).reshape(n_r, self.n_j)
        strategy_counts = np.bincount(
            self.strategy_bins[:size], weights=guessed, minlength=n_r * self.n_j * self.n_k
        ).reshape(n_r, self.n_j, self.n_k)
        if self.variational:
            prior_knew, prior_guessed, prior_strategy = self.priors
            total = digamma(knew_counts + guess_counts + prior_knew + prior_guessed)
            knew = np.exp(digamma(knew_counts + prior_knew) - total)
            guessed = np.exp(digamma(guess_counts + prior_guessed) - total)
            strategy = np.exp(
                digamma(strategy_counts + prior_strategy)
                - digamma(strategy_counts.sum(axis=2, keepdims=True) + self.n_k * prior_strategy)
            )
            return knew, guessed, strategy
        s = self.smoothing
        knew = (knew_counts + s) / (knew_counts + guess_counts + 2 * s)
        strategy = (strategy_counts + s) / (strategy_counts.sum(axis=2, keepdims=True) + self.n_k * s)
        return knew, 1.0 - knew, strategy

    def fit(
        self, knew: np.ndarray, guessed: np.ndarray, strategy: np.ndarray, iterations: int, tolerance: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Iterate every restart from its start, in lockstep; a restart whose log-likelihood has settled stops
        (its parameters no longer change) while the others go on. Returns each restart's log-likelihood,
        competence and posteriors."""
        knew, guessed, strategy = knew.copy(), guessed.copy(), strategy.copy()
        previous = np.full(self.n_r, -np.inf)
        running = np.arange(self.n_r)
        for _ in range(max(iterations, 1)):
            log_likelihoods, _, expected_knew = self.expectations(
                knew[running], guessed[running], strategy[running], posteriors=False
            )
            knew[running], guessed[running], strategy[running] = self.maximise(expected_knew)
            settled = np.abs(log_likelihoods - previous[running]) < tolerance
            previous[running] = log_likelihoods
            running = running[~settled]
            if not running.size:
                break
        log_likelihoods, posteriors, _ = self.expectations(knew, guessed, strategy)
        return log_likelihoods, knew, posteriors
