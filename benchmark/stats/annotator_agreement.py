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
are ``kappa.cohen_kappa_from_pairs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from .kappa import cohen_kappa_from_pairs
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

    annotators: dict[str, dict[str, Any]]
    numeric: bool
    notes: list[str] = field(default_factory=list)

    @property
    def methods(self) -> dict[str, str]:
        """The methods of the figures this question has (numeric: differences; nominal: kappas, competence)."""
        left_out = ("kappa", "competence") if self.numeric else ("mean_abs_difference",)
        return {key: text for key, text in METHODS.items() if not key.endswith(left_out)}


def _mean(values: Sequence[float]) -> float | None:
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
    row per adjudicated item (``item``, ``value``). ``categories``: a nominal question's choices, in
    order (answers outside them count as categories of their own).
    """
    answers = drop_missing(table, ITEM, ANNOTATOR, VALUE).drop_duplicates([ITEM, ANNOTATOR])
    answers = answers[[ITEM, ANNOTATOR, VALUE]].reset_index(drop=True)
    labels = list(categories or []) + sorted(set(answers[VALUE]) - set(categories or []), key=str)
    names = sorted(answers[ANNOTATOR].unique(), key=str)
    result = AnnotatorAgreement({name: {"answers": 0} for name in names}, numeric)
    by_annotator = {name: dict(zip(rows[ITEM], rows[VALUE], strict=True))
                    for name, rows in answers.groupby(ANNOTATOR, sort=False)}
    gold_values = {} if gold is None else dict(zip(gold[ITEM], gold[VALUE], strict=True))
    pair_kappas: dict[str, list[float]] = {name: [] for name in names}
    if not numeric:
        for first, second in combinations(names, 2):
            shared = by_annotator[first].keys() & by_annotator[second].keys()
            if shared:
                kappa = cohen_kappa_from_pairs(
                    [(by_annotator[first][i], by_annotator[second][i]) for i in shared], labels
                ).value
                if kappa is not None:
                    pair_kappas[first].append(kappa)
                    pair_kappas[second].append(kappa)
    for name in names:
        result.annotators[name] = _figures(name, by_annotator, gold_values, pair_kappas[name], numeric, labels)
    competence = _competence(answers, names, labels, seed, result.notes) if not numeric else {}
    for name in names:
        if not numeric:
            result.annotators[name]["competence"] = competence.get(name)
    if len(names) < 2:
        result.notes.append("agreement with others: a single annotator answered this question")
    if gold is not None and not any(figures["gold"]["items"] for figures in result.annotators.values()):
        result.notes.append("agreement with gold: no item with a gold answer was answered")
    return result


def _figures(
    name: str, by_annotator: dict[str, dict[Any, Any]], gold: dict[Any, Any], kappas: list[float], numeric: bool,
    labels: list[Any],
) -> dict[str, Any]:
    mine = by_annotator[name]
    others = [(value, theirs[item]) for other, theirs in by_annotator.items() if other != name
              for item, value in mine.items() if item in theirs]
    shared_items = {item for other, theirs in by_annotator.items() if other != name for item in mine if item in theirs}
    with_others: dict[str, Any] = {
        "items": len(shared_items),
        "pairs": len(others),
        "agreement": _mean([float(a == b) for a, b in others]),
    }
    graded = [(value, gold[item]) for item, value in mine.items() if item in gold]
    with_gold: dict[str, Any] = {"items": len(graded), "agreement": _mean([float(a == b) for a, b in graded])}
    if numeric:
        with_others["mean_abs_difference"] = _mean([abs(float(a) - float(b)) for a, b in others])
        with_gold["mean_abs_difference"] = _mean([abs(float(a) - float(b)) for a, b in graded])
    else:
        with_others["kappa"] = _mean(kappas)
        gold_labels = labels + sorted({value for _, value in graded} - set(labels), key=str)
        with_gold["kappa"] = cohen_kappa_from_pairs(graded, gold_labels).value if graded else None
    return {"answers": len(mine), "others": with_others, "gold": with_gold}


def _competence(
    answers: pd.DataFrame, names: list[str], labels: list[Any], seed: int, notes: list[str]
) -> dict[str, float | None]:
    """MACE's competence per annotator name; empty (with a note) when MACE cannot tell."""
    if len(names) < 2 or len(labels) < 2:
        notes.append("competence: MACE needs at least two annotators and two categories used")
        return {}
    item_codes, _ = pd.factorize(answers[ITEM])
    annotator_index = {name: j for j, name in enumerate(names)}
    label_index = {label: k for k, label in enumerate(labels)}
    result = mace(
        item_codes, answers[ANNOTATOR].map(annotator_index).to_numpy(), answers[VALUE].map(label_index).to_numpy(),
        n_annotators=len(names), n_labels=len(labels), seed=seed,
    )
    return {name: None if np.isnan(value) else float(value) for name, value in zip(names, result.competence,
                                                                                     strict=True)}
