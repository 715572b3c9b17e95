"""One question's ratings, coded (`coded.CodedRatings`), as the arrays each statistic of `report` takes.

Each function here does on integer codes what the table functions of `tables`, `kappa`, `icc`,
`alignment` and `accuracy` do on a long table of strings, in the same order, so the numbers are the
same: items numbered by first appearance, categories sorted by their labels (or in the declared
order), a crossed design's matrix rows and columns in the sorted order of the item and annotator
names, clusters of items numbered by first appearance. Only the few distinct labels are ever looked
at in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .accuracy import Accuracy, accuracy_from_codes, answer_classes
from .coded import CodedRatings
from .tables import ANNOTATOR, CLUSTER, CONDITION, ITEM, JUDGE, VALUE


def first_appearance(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes renumbered 0..n-1 in order of first appearance (as `tables.item_codes` numbers items), and n."""
    local, uniques = pd.factorize(codes, sort=False)
    return local.astype(np.intp), len(uniques)


def usable(q: CodedRatings) -> tuple[np.ndarray, int]:
    """Rows of items with two ratings or more (`tables.usable_ratings`), and the number of items excluded."""
    sizes = np.bincount(q.item, minlength=len(q.labels[ITEM])) if len(q) else np.zeros(0, dtype=np.intp)
    kept = sizes[q.item] >= 2
    return kept, int((sizes > 0).sum() - (sizes >= 2).sum())


def category_codes(q: CodedRatings, numeric: bool, categories: Sequence[Any] | None) -> tuple[np.ndarray, list[Any]]:
    """`tables.category_codes` of the rows' values: numbers sorted; labels in the declared order, else sorted."""
    if numeric:
        codes, uniques = pd.factorize(pd.Series(q.number), sort=True)
        return codes.astype(np.intp), list(uniques)
    used = distinct(q.value, len(q.labels[VALUE]))
    labels = q.labels[VALUE][used]
    if categories is not None:
        categories = list(categories)
        position = pd.Index(categories).get_indexer(pd.Index(labels, dtype=object)).astype(np.intp)
        if (position < 0).any():
            unknown = sorted({str(v) for v in labels[position < 0]})
            raise ValueError(f"values outside the declared categories: {', '.join(unknown)}")
        lookup = np.zeros(len(q.labels[VALUE]), dtype=np.intp)
        lookup[used] = position
        return lookup[q.value], categories
    try:
        order = sorted(range(len(used)), key=lambda index: labels[index])
    except TypeError:  # mixed types that do not sort: first appearance
        order = list(np.searchsorted(used, pd.unique(q.value)))
    rank = np.zeros(len(q.labels[VALUE]), dtype=np.intp)
    rank[used[order]] = np.arange(len(order))
    return rank[q.value], [labels[index] for index in order]


def has_clusters(q: CodedRatings) -> bool:
    """`tables.has_clusters`: whether some cluster holds two or more items (its lowest and highest item differ)."""
    if q.cluster is None:
        return False
    present = q.cluster >= 0
    if not present.any():
        return False
    items = pd.Series(q.item[present]).groupby(q.cluster[present], sort=False)
    return bool((items.min() != items.max()).any())


def distinct(codes: np.ndarray, size: int) -> np.ndarray:
    """The distinct codes (0..size-1) that occur, ascending."""
    return np.flatnonzero(np.bincount(codes, minlength=size)) if len(codes) else np.zeros(0, dtype=np.intp)


def item_clusters(q: CodedRatings, items: np.ndarray, n_items: int) -> np.ndarray:
    """`tables.item_clusters`: each item's first cluster, else one of its own (a code past the named ones)."""
    own = len(q.labels[CLUSTER]) + q.item
    out = np.full(n_items, -1, dtype=np.int64)
    first_row = np.unique(items, return_index=True)[1]
    out[items[first_row]] = own[first_row]
    named = q.cluster >= 0
    if named.any():
        named_items, first = np.unique(items[named], return_index=True)
        out[named_items] = q.cluster[named][first]
    return out


def _codes_or_nan(codes: np.ndarray, blank: np.ndarray | None = None) -> np.ndarray:
    out = codes.astype(float)
    out[codes < 0] = np.nan
    if blank is not None:
        out[blank[np.maximum(codes, 0)] & (codes >= 0)] = np.nan
    return out


def cohen_table(q: CodedRatings, codes: np.ndarray) -> pd.DataFrame | None:
    """The table `kappa.cohen_kappa` takes, in codes (an empty annotator name is missing, as there)."""
    if q.annotator is None:
        return None
    labels = q.labels[ANNOTATOR]
    empty = np.fromiter((isinstance(name, str) and name == "" for name in labels), dtype=bool, count=len(labels))
    return pd.DataFrame({ITEM: q.item, ANNOTATOR: _codes_or_nan(q.annotator, empty), VALUE: codes})


def crossed_table(q: CodedRatings) -> pd.DataFrame | None:
    """The kept rows for `icc.crossed_matrix`, items and annotators numbered in the sorted order of their names."""
    if q.annotator is None:
        return None
    columns = {}
    for column, codes in ((ITEM, q.item), (ANNOTATOR, q.annotator)):
        used = distinct(codes[codes >= 0], len(q.labels[column]))
        rank = np.full(len(q.labels[column]) + 1, np.nan)
        rank[used[pd.Index(q.labels[column][used], dtype=object).argsort()]] = np.arange(len(used))
        columns[column] = rank[codes]
    return pd.DataFrame({**columns, VALUE: q.number})


def condition_table(q: CodedRatings) -> pd.DataFrame:
    """Items, numbers, conditions (coded, in sorted order of their names) and judge scores for `alignment`."""
    table = pd.DataFrame({ITEM: q.item, VALUE: q.number})
    if q.condition is not None:
        table[CONDITION] = _codes_or_nan(q.condition)
    if q.judge is not None:
        table[JUDGE] = q.judge
    return table


def condition_names(q: CodedRatings, means: dict[str, Any]) -> dict[str, Any]:
    """`means_by_condition`'s keys (coded conditions) back to the conditions' names."""
    names = q.labels[CONDITION]
    return {side: {str(names[int(float(key))]): cell for key, cell in cells.items()} for side, cells in means.items()}


def accuracy(
    q: CodedRatings, numeric: bool, labels: Sequence[Any] | None, resamples: int, seed: int
) -> Accuracy:
    """`accuracy.cluster_bootstrap_accuracy` of the question's rows, on codes."""
    notes: list[str] = []
    rows = q.take(q.truth >= 0)  # type: ignore[operator]
    if len(rows) < len(q):
        notes.append(f"{len(q) - len(rows)} ratings without an answer or a truth left out")
    if rows.cluster is None:
        notes.append("no cluster column: each item is its own cluster")
        clusters, cluster_name = rows.item, ITEM
    else:
        clusters, cluster_name = np.where(rows.cluster >= 0, rows.cluster, len(q.labels[CLUSTER]) + rows.item), CLUSTER
    as_text = not ((numeric or q.numeric_values) and q.numeric_truths)
    truth_labels = q.labels["truth"]
    truth_keys = [str(label).strip() if as_text else label for label in truth_labels]
    if numeric:
        answer_codes, answer_uniques = pd.factorize(pd.Series(rows.number), sort=False)
        answer_keys = [str(float(label)).strip() if as_text else float(label) for label in answer_uniques]
    else:
        answer_codes, answer_uniques = pd.factorize(rows.value, sort=False)
        value_labels = q.labels[VALUE][answer_uniques]
        answer_keys = [str(label).strip() if as_text else label for label in value_labels]
    used_truths = distinct(rows.truth, len(truth_labels))
    truth_used = [truth_keys[code] for code in used_truths]
    classes, options = answer_classes(answer_keys, truth_used, labels, as_text, notes)
    if classes is None:
        try:
            classes = sorted(set(truth_used) | set(answer_keys))
        except TypeError:
            classes = list(dict.fromkeys([*truth_used, *answer_keys]))
    index = {key: position for position, key in enumerate(classes)}
    truth_class = np.zeros(len(truth_keys), dtype=np.intp)
    truth_class[used_truths] = [index[key] for key in truth_used]
    answer_class = np.array([index[key] for key in answer_keys], dtype=np.intp)
    cluster_codes, n_clusters = first_appearance(clusters)
    return accuracy_from_codes(
        truth_class[rows.truth], answer_class[answer_codes], [str(label) for label in classes], cluster_codes,
        n_clusters, cluster_name=cluster_name, n_options=None if options is None else len(options), notes=notes,
        resamples=resamples, seed=seed,
    )
