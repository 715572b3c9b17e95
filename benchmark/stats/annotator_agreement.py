"""Each annotator's agreement with the other annotators and with gold, and their MACE competence, per question.

The study-wide statistics (``report``) say how far the annotators agree as a group; these say who agrees
less than the rest. One question's long table goes in (``item``, ``annotator``, ``value``; an item is a
rated unit, so a per-seat question's seats are items of their own), and per annotator comes out:

- **with the others**, on the items they share with at least one other annotator:
  ``agreement``, the share of the pairs (their answer, another annotator's answer to the same item)
  that are equal: the annotator's own part of Fleiss's (1971) observed agreement P; for a nominal
  question ``kappa``, Cohen's (1960) kappa of them with each other annotator they share an item with,
  averaged over those annotators (Light's (1971) average pairwise kappa, taken for one annotator;
  pairs whose kappa is undefined, one category used by both, are left out of the mean); for a numeric
  question (ordinal Likert, interval slider) ``mean_abs_difference``, the mean absolute difference over
  the same pairs, in the scale's units;
- **with gold** (the adjudicated answers, one per item), on the items that have a gold answer:
  ``agreement``, the share of their answers equal to gold; for a nominal question Cohen's ``kappa`` of
  them against gold (gold as a second annotator), for a numeric one ``mean_abs_difference``;
- **competence** (nominal questions): MACE's competence of the annotator (Hovy et al. 2013; ``mace``),
  learnt from every annotator's answers to the question with no gold, so it speaks of annotators of
  items nobody has adjudicated too. Undefined (None) with fewer than two annotators or one category.

Parley's own code: no kept library gives per-annotator agreement over an incomplete design; the kappas
are ``kappa.cohen_kappa_from_table``'s. The figures are computed on integer codes (``coded_annotator_agreement``):
every pair of answers to one item is an array row, and the counts are ``np.bincount``s, so a study of 45,000
answers costs a few array passes rather than a Python loop per pair. ``annotator_agreement`` codes a long table
for it; a study report codes its answer rows straight (``annotator.reports.annotators``). Means of float
differences add the same numbers in the same order as a list of the pairs would (other annotators in the order
they first answered, then the annotator's own answers in order), so not even their last bit depends on the path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .kappa import cohen_kappa_from_table
from .mace import VARIATIONAL_METHOD, mace
from .tables import ANNOTATOR, ITEM, VALUE, drop_missing

METHODS = {
    "others_agreement": (
        "share of equal pairs (the annotator's answer, another annotator's answer to the same item): the "
        "annotator's part of Fleiss's (1971) observed agreement"
    ),
    "others_kappa": (
        "Cohen's (1960) kappa of the annotator with each other annotator on the items both answered, "
        "averaged over those annotators (Light 1971's average pairwise kappa, for one annotator)"
    ),
    "others_mean_abs_difference": "mean absolute difference over the same pairs, in the scale's units",
    "gold_agreement": "share of the annotator's answers equal to the item's gold (adjudicated) answer",
    "gold_kappa": "Cohen's (1960) kappa of the annotator against gold, gold taken as a second annotator",
    "gold_mean_abs_difference": "mean absolute difference from the gold answer, in the scale's units",
    "competence": VARIATIONAL_METHOD + "; 10 restarts of 50 iterations, as the authors' tool; learnt without gold",
}


@dataclass
class AnnotatorAgreement:
    """One question's figures per annotator (``annotators``: name -> figures) and the notes."""

    annotators: dict[Any, dict[str, Any]]
    numeric: bool
    notes: list[str] = field(default_factory=list)

    @property
    def methods(self) -> dict[str, str]:
        """The methods of the figures this question has (numeric: differences; nominal: kappas, competence)."""
        left_out = ("kappa", "competence") if self.numeric else ("mean_abs_difference",)
        return {key: text for key, text in METHODS.items() if not key.endswith(left_out)}


def _mean(values: np.ndarray) -> float | None:
    return float(np.mean(values)) if len(values) else None


def annotator_agreement(
    table: pd.DataFrame,
    *,
    numeric: bool,
    gold: pd.DataFrame | None = None,
    categories: Sequence[Any] | None = None,
    seed: int = 0,
) -> AnnotatorAgreement:
    """Per-annotator figures of one question (see the module docstring).

    ``table``: one row per answer (``item``, ``annotator``, ``value``; numbers for a numeric question);
    blank answers are dropped, and an annotator's second answer to one item is ignored. ``gold``: one
    row per adjudicated item (``item``, ``value``; a blank value is no gold answer; of two rows for one item
    the last counts). ``categories``: a nominal question's choices, in order (answers outside them count as
    categories of their own).
    """
    answers = drop_missing(table, ITEM, ANNOTATOR, VALUE).drop_duplicates([ITEM, ANNOTATOR])
    labels = nominal_labels(categories, answers[VALUE].unique())
    names = sorted(answers[ANNOTATOR].unique(), key=str)
    item, items = pd.factorize(answers[ITEM])
    annotator = answers[ANNOTATOR].map({name: j for j, name in enumerate(names)}).to_numpy(dtype=np.intp)
    if numeric:
        value = answers[VALUE].to_numpy(dtype=float)
    else:
        value = answers[VALUE].map({label: k for k, label in enumerate(labels)}).to_numpy(dtype=np.intp)
    gold_codes, gold_labels = None, labels
    if gold is not None:
        given = drop_missing(gold, ITEM, VALUE)
        given = dict(zip(given[ITEM], given[VALUE], strict=True))
        answered = [given.get(name) for name in items]
        gold_codes, gold_labels = gold_answers(answered, numeric, labels)
    return coded_annotator_agreement(
        item, annotator, value, names=names, numeric=numeric, labels=labels, gold=gold_codes,
        gold_labels=gold_labels, seed=seed,
    )


def nominal_labels(categories: Sequence[Any] | None, used: Sequence[Any]) -> list[Any]:
    """A nominal question's labels: its choices in order, then the other values answered, sorted as text."""
    return list(categories or []) + sorted(set(used) - set(categories or []), key=str)


def gold_answers(answers: Sequence[Any], numeric: bool, labels: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Each item code's gold answer (None: no gold) as ``coded_annotator_agreement`` takes it: numbers (NaN for
    none) for a numeric question; else codes (-1 for none) into the labels and then the gold answers outside
    them, sorted as text, which it returns too."""
    if numeric:
        return np.array([np.nan if answer is None else float(answer) for answer in answers], dtype=float), labels
    present = [answer for answer in answers if answer is not None]
    gold_labels = labels + sorted(set(present) - set(labels), key=str)
    index = {label: k for k, label in enumerate(gold_labels)}
    return np.array([-1 if answer is None else index[answer] for answer in answers], dtype=np.intp), gold_labels


def first_answers(item: np.ndarray, annotator: np.ndarray) -> np.ndarray:
    """Which rows are an annotator's first answer to their item (a mask): later ones are ignored."""
    keep = np.zeros(len(item), dtype=bool)
    if len(item):
        key = np.asarray(item, dtype=np.int64) * (int(np.max(annotator)) + 1) + np.asarray(annotator, dtype=np.int64)
        keep[np.unique(key, return_index=True)[1]] = True
    return keep


def _pairs(item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (one answer, another answer to the same item), as two arrays of row numbers."""
    order = np.argsort(item, kind="stable")
    ordered = item[order]
    start = np.searchsorted(ordered, ordered, side="left")
    size = np.searchsorted(ordered, ordered, side="right") - start
    position = np.arange(len(item)) - start
    mine, theirs = [], []
    for step in range(1, int(size.max(initial=0))):
        shared = size > step
        mine.append(order[shared])
        theirs.append(order[start[shared] + (position[shared] + step) % size[shared]])
    empty = np.zeros(0, dtype=np.intp)
    return np.concatenate([empty, *mine]), np.concatenate([empty, *theirs])


def coded_annotator_agreement(
    item: np.ndarray,
    annotator: np.ndarray,
    value: np.ndarray,
    *,
    names: Sequence[Any],
    numeric: bool,
    labels: Sequence[Any] = (),
    gold: np.ndarray | None = None,
    gold_labels: Sequence[Any] = (),
    seed: int = 0,
) -> AnnotatorAgreement:
    """Per-annotator figures of one question from integer codes (see the module docstring).

    One row per answer, at most one per (item, annotator) (``first_answers``), in the order they were given:
    ``item`` codes, ``annotator`` codes indexing ``names`` (every name answered), and ``value``: the number
    for a numeric question, else a code indexing ``labels`` (``nominal_labels``). ``gold``: per item code its
    gold answer (``gold_answers``: a number or NaN, or a code indexing ``gold_labels``, which begin with
    ``labels``, or -1), None when no gold was given.
    """
    item, annotator = np.asarray(item, dtype=np.intp), np.asarray(annotator, dtype=np.intp)
    value = np.asarray(value, dtype=float if numeric else np.intp)
    n_j, labels = len(names), list(labels)
    result = AnnotatorAgreement({name: {"answers": 0} for name in names}, numeric)
    answers = np.bincount(annotator, minlength=n_j)
    mine, theirs = _pairs(item)
    # Pairs in the order the figures add them: by annotator, then by the other annotator in the order they
    # first answered, then by the annotator's own answers in order.
    first = np.full(n_j, len(item))
    np.minimum.at(first, annotator, np.arange(len(item)))
    arrival = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    order = np.lexsort((mine, arrival[annotator[theirs]], annotator[mine]))
    mine, theirs = mine[order], theirs[order]
    pair_bounds = np.searchsorted(annotator[mine], np.arange(n_j + 1))
    equal = value[mine] == value[theirs]
    shared = np.bincount(annotator, weights=np.bincount(item)[item] > 1, minlength=n_j)
    # Each annotator's answers to items with a gold answer, in order, and that gold answer.
    given = np.zeros(len(item), dtype=value.dtype) if gold is None else np.asarray(gold, dtype=value.dtype)[item]
    graded = np.zeros(0, dtype=np.intp)
    if gold is not None:
        graded = np.flatnonzero(~np.isnan(given) if numeric else given >= 0)
        graded = graded[np.argsort(annotator[graded], kind="stable")]
    gold_bounds = np.searchsorted(annotator[graded], np.arange(n_j + 1))
    gold_equal = value[graded] == given[graded]
    pair_kappas: list[list[float]] = [[] for _ in names]
    if not numeric:
        for first_name, second_name, kappa in _pair_kappas(annotator[mine], annotator[theirs], value[mine],
                                                           value[theirs], n_j, len(labels)):
            pair_kappas[first_name].append(kappa)
            pair_kappas[second_name].append(kappa)
    for j, name in enumerate(names):
        pairs = slice(int(pair_bounds[j]), int(pair_bounds[j + 1]))
        grades = slice(int(gold_bounds[j]), int(gold_bounds[j + 1]))
        with_others: dict[str, Any] = {
            "items": int(shared[j]), "pairs": pairs.stop - pairs.start, "agreement": _mean(equal[pairs]),
        }
        with_gold: dict[str, Any] = {"items": grades.stop - grades.start, "agreement": _mean(gold_equal[grades])}
        if numeric:
            with_others["mean_abs_difference"] = _mean(np.abs(value[mine[pairs]] - value[theirs[pairs]]))
            rows = graded[grades]
            with_gold["mean_abs_difference"] = _mean(np.abs(value[rows] - given[rows]))
        else:
            with_others["kappa"] = _mean(np.array(pair_kappas[j]))
            rows = graded[grades]
            with_gold["kappa"] = _gold_kappa(value[rows], given[rows], len(labels), len(gold_labels))
        result.annotators[name] = {"answers": int(answers[j]), "others": with_others, "gold": with_gold}
    if not numeric:
        competence = _competence(item, annotator, value, n_j, len(labels), seed, result.notes)
        for name, figure in zip(names, competence, strict=True):
            result.annotators[name]["competence"] = figure
    if n_j < 2:
        result.notes.append("agreement with others: a single annotator answered this question")
    if gold is not None and not len(graded):
        result.notes.append("agreement with gold: no item with a gold answer was answered")
    return result


def _pair_kappas(
    first: np.ndarray, second: np.ndarray, first_value: np.ndarray, second_value: np.ndarray, n_j: int, n_k: int
) -> list[tuple[int, int, float]]:
    """Cohen's kappa of each two annotators who share an item (the first as rows), in the order of
    ``itertools.combinations`` of the annotators; pairs whose kappa is undefined are left out."""
    once = first < second
    if not once.any():
        return []
    key = first[once] * n_j + second[once]
    pairs, pair = np.unique(key, return_inverse=True)
    cells = pair.reshape(-1) * n_k * n_k + first_value[once] * n_k + second_value[once]
    tables = np.bincount(cells, minlength=len(pairs) * n_k * n_k).reshape(-1, n_k, n_k)
    kappas = []
    for both, table in zip(pairs.tolist(), tables, strict=True):
        kappa = cohen_kappa_from_table(table).value
        if kappa is not None:
            kappas.append((both // n_j, both % n_j, kappa))
    return kappas


def _gold_kappa(mine: np.ndarray, gold: np.ndarray, n_k: int, n_gold: int) -> float | None:
    """Cohen's kappa of one annotator's answers against gold, over the labels and the gold answers outside them
    that this annotator met (the table's size is that of the pairs' own categories)."""
    if not len(mine):
        return None
    table = np.bincount(mine * n_gold + gold, minlength=n_gold * n_gold).reshape(n_gold, n_gold)
    kept = np.concatenate([np.arange(n_k), np.unique(gold[gold >= n_k])])
    return cohen_kappa_from_table(table[np.ix_(kept, kept)]).value


def _competence(
    item: np.ndarray, annotator: np.ndarray, value: np.ndarray, n_j: int, n_k: int, seed: int, notes: list[str]
) -> list[float | None]:
    """MACE's competence per annotator code; None for all (with a note) when MACE cannot tell."""
    if n_j < 2 or n_k < 2:
        notes.append("competence: MACE needs at least two annotators and two categories used")
        return [None] * n_j
    item_codes, _ = pd.factorize(item)
    result = mace(item_codes, annotator, value, n_annotators=n_j, n_labels=n_k, seed=seed)
    return [None if np.isnan(figure) else float(figure) for figure in result.competence]
