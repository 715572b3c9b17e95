"""Accuracy of annotators against a known truth, with a cluster bootstrap.

The unit of analysis is one rating (an annotator's answer for an item whose truth is known, e.g.
the barrier injected into an episode). Ratings of the same scenario are not independent, so
intervals resample whole clusters (default: scenario) with replacement, as SocialVeil §5.2 does
for barrier identification (120 scenarios, 1,000 resamples, percentile 95% CIs). See Field, C. A.
& Welsh, A. H. (2007), "Bootstrapping clustered data", JRSS B 69(3):369-390.

The resampling is vectorised: per-cluster counts of correct and total ratings per true class
form a clusters x 2K matrix, and each resample's totals are one row of W @ that matrix (see
`bootstrap`).

Parley's own code, because no kept library covers the design: accuracy itself is a share, and no
kept library (numpy, pandas, scipy, krippendorff) resamples clusters (see `bootstrap`).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, Seed, make_rng, percentile_interval, resampled_sums
from .tables import CLUSTER, ITEM, TRUTH, VALUE, category_codes, drop_missing

METHOD = (
    "accuracy = share of ratings equal to the item's truth; per class, over ratings of items whose "
    "truth is that class. 95% CI: percentile cluster bootstrap, resampling clusters with "
    "replacement (Field & Welsh 2007). chance = 1 / number of answer options when they are "
    "declared, else 1 / number of classes seen among truths and answers (uniform guessing); "
    "majority_rate = share of ratings whose truth is the most common class"
)


@dataclass
class Accuracy:
    """Overall and per-class accuracy with cluster-bootstrap CIs, chance baselines, confusion matrix."""

    overall: float | None
    overall_ci95: list[float] | None
    by_class: dict[str, dict[str, Any]]
    chance: float | None
    majority_rate: float | None
    labels: list[str]
    confusion: list[list[int]]
    resamples: int
    cluster: str
    n_clusters: int
    n_ratings: int
    seed: int | None
    chance_method: str = "1 / number of classes"
    method: str = METHOD
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": {"value": self.overall, "ci95": self.overall_ci95},
            "by_class": self.by_class,
            "chance": self.chance,
            "chance_method": self.chance_method,
            "majority_rate": self.majority_rate,
            "confusion": {"labels": self.labels, "matrix": self.confusion, "rows": "truth", "columns": "answer"},
            "resamples": self.resamples,
            "cluster": self.cluster,
            "n_clusters": self.n_clusters,
            "n_ratings": self.n_ratings,
            "seed": self.seed,
            "method": self.method,
        }


def _comparable(answers: pd.Series, truths: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Both columns as numbers when both are numeric, else both as text (so 1 and "1" match)."""
    if pd.api.types.is_numeric_dtype(answers) and pd.api.types.is_numeric_dtype(truths):
        return answers, truths
    return answers.astype(str).str.strip(), truths.astype(str).str.strip()


def _listed(labels: Sequence[Any]) -> str:
    return ", ".join(str(label) for label in labels)


def answer_classes(
    answers: Any, truths: Any, labels: Sequence[Any] | None, as_text: bool, notes: list[str]
) -> tuple[list[Any] | None, list[Any] | None]:
    """The classes in order and the answer options, given the options annotators had (`labels`);
    (None, None) without them. Answers outside the options become options, truths outside them classes
    that are not options (each noted). `as_text`: labels are compared as text with spaces stripped."""
    if labels is None:
        return None, None
    options = list(dict.fromkeys(str(label).strip() if as_text else label for label in labels))
    other_answers = sorted(set(answers) - set(options), key=str)
    if other_answers:
        notes.append(f"answers outside the options counted as options: {_listed(other_answers)}")
    options += other_answers
    other_truths = sorted(set(truths) - set(options), key=str)
    if other_truths:
        notes.append(f"the truth of some items is not among the answer options: {_listed(other_truths)}")
    return options + other_truths, options


def cluster_bootstrap_accuracy(
    table: pd.DataFrame,
    *,
    item: str = ITEM,
    value: str = VALUE,
    truth: str = TRUTH,
    cluster: str | None = CLUSTER,
    labels: Sequence[Any] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = None,
) -> Accuracy:
    """Accuracy of answers in `value` against `truth`, overall and per true class.

    Each of `resamples` bootstrap samples draws as many clusters as there are, with replacement;
    a statistic's replicate is (correct ratings) / (ratings) summed over the drawn clusters, and
    its 95% CI the 2.5th-97.5th percentiles. Without a `cluster` column each item is a cluster.

    `labels` are the answer options annotators had (e.g. `--categories`, a question's choices):
    chance is then 1 / their number, the score of guessing uniformly among them, as Randolph's
    kappa takes q from the same options. An answer outside them is added as an option, a truth
    outside them as a class that is not an option (both noted). Without `labels`, the classes
    are every label seen among truths and answers, and chance is 1 / their number.
    """
    notes: list[str] = []
    rows = drop_missing(table, value, truth)
    if len(rows) < len(table):
        notes.append(f"{len(table) - len(rows)} ratings without an answer or a truth left out")
    if cluster is None or cluster not in rows.columns:
        notes.append("no cluster column: each item is its own cluster")
        clusters = rows[item].astype(str)
        cluster_name = item
    else:
        clusters = rows[cluster].astype(str).where(rows[cluster].notna(), "item:" + rows[item].astype(str))
        cluster_name = cluster
    answers, truths = _comparable(rows[value], rows[truth])
    as_text = not pd.api.types.is_numeric_dtype(answers)
    labels, options = answer_classes(set(answers), set(truths), labels, as_text, notes)
    codes, label_list = category_codes(pd.concat([truths, answers], ignore_index=True), labels)
    cluster_codes, cluster_uniques = pd.factorize(clusters, sort=False)
    return accuracy_from_codes(
        codes[: len(rows)], codes[len(rows) :], [str(label) for label in label_list], cluster_codes,
        len(cluster_uniques), cluster_name=cluster_name, n_options=None if options is None else len(options),
        notes=notes, resamples=resamples, seed=seed,
    )


def accuracy_from_codes(
    truth_codes: np.ndarray,
    answer_codes: np.ndarray,
    text_labels: list[str],
    cluster_codes: np.ndarray,
    n_clusters: int,
    *,
    cluster_name: str,
    n_options: int | None,
    notes: list[str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = None,
) -> Accuracy:
    """Accuracy from each rating's class code of its truth and of its answer (classes `text_labels`)
    and its cluster's code (0..n_clusters-1); `n_options` answer options when declared (else chance
    is one over the classes). See `cluster_bootstrap_accuracy`."""
    k = len(text_labels)
    n_ratings = len(truth_codes)
    seed_value = seed if isinstance(seed, int) else None
    if n_ratings == 0:
        return Accuracy(
            None,
            None,
            {},
            None,
            None,
            text_labels,
            [],
            resamples,
            cluster_name,
            0,
            0,
            seed_value,
            notes=[*notes, "no ratings with both an answer and a truth"],
        )

    correct = (truth_codes == answer_codes).astype(float)
    confusion = np.bincount(truth_codes * k + answer_codes, minlength=k * k).reshape(k, k)
    per_cell = cluster_codes * k + truth_codes
    correct_by = np.bincount(per_cell, weights=correct, minlength=n_clusters * k).reshape(n_clusters, k)
    total_by = np.bincount(per_cell, minlength=n_clusters * k).reshape(n_clusters, k).astype(float)
    class_totals = total_by.sum(axis=0)
    class_correct = correct_by.sum(axis=0)

    overall_ci = None
    class_ci: list[list[float] | None] = [None] * k
    if resamples and n_clusters >= 2:
        sums = resampled_sums(np.hstack([correct_by, total_by]), resamples, make_rng(seed))
        correct_r, total_r = sums[:, :k], sums[:, k:]
        overall_ci = percentile_interval(correct_r.sum(axis=1) / total_r.sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            per_class = correct_r / total_r
        for j in np.flatnonzero(class_totals):
            class_ci[j] = percentile_interval(per_class[:, j])
            missing = int((total_r[:, j] == 0).sum())
            if missing:
                notes.append(f"class {text_labels[j]}: {missing} resamples without it left out of its CI")
    elif resamples:
        notes.append("a bootstrap CI needs at least two clusters")
    else:
        notes.append("no CI: bootstrap skipped (0 resamples)")

    by_class = {
        text_labels[j]: {
            "value": float(class_correct[j] / class_totals[j]),
            "ci95": class_ci[j],
            "n": int(class_totals[j]),
        }
        for j in np.flatnonzero(class_totals)
    }
    never_true = [text_labels[j] for j in range(k) if class_totals[j] == 0]
    if never_true:
        notes.append(f"answers never true for any item (no per-class accuracy): {', '.join(never_true)}")
    if n_options is not None:
        chance, chance_method = 1.0 / n_options, f"1 / number of answer options ({n_options})"
    else:
        chance, chance_method = 1.0 / k, f"1 / number of classes seen among truths and answers ({k})"
    if k < 2:
        notes.append("only one class: the task cannot be failed by chance")
    return Accuracy(
        overall=float(correct.mean()),
        overall_ci95=overall_ci,
        by_class=by_class,
        chance=chance,
        majority_rate=float(class_totals.max() / n_ratings),
        labels=text_labels,
        confusion=confusion.tolist(),
        resamples=resamples,
        cluster=cluster_name,
        n_clusters=n_clusters,
        n_ratings=n_ratings,
        seed=seed_value,
        chance_method=chance_method,
        notes=notes,
    )


# ProMediate's mediator-intelligence validation (App. F) groups the 1–5 scale before comparing a
# person's score with the judge's, because ratings cluster at 4–5 and kappa says little there.
MI_GROUPS_FINE = ((1, 2), (3,), (4, 5))
MI_GROUPS_COARSE = ((1, 2), (3, 4, 5))


def grouped_accuracy(pairs: Sequence[tuple[Any, Any]], groups: Sequence[Sequence[Any]]) -> float | None:
    """Share of (answer, reference) pairs whose two values fall in the same group of the scale.

    With groups {1–2},{3},{4–5} a 5 against a 4 agrees and a 3 against a 4 does not (ProMediate,
    Liu et al. 2025, §4.3.3 and App. F: 0.73 and 0.98 for the two groupings). Pairs with a missing
    value ("not applicable") are left out; None when no pair is left. A value in no group is refused.
    """
    group_of: dict[Any, int] = {}
    for index, group in enumerate(groups):
        for value in group:
            if value in group_of:
                raise ValueError(f"value {value!r} is in two groups")
            group_of[value] = index
    kept = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not kept:
        return None
    agree = 0
    for answer, reference in kept:
        for value in (answer, reference):
            if value not in group_of:
                raise ValueError(f"value {value!r} is in none of the groups {list(groups)}")
        agree += group_of[answer] == group_of[reference]
    return agree / len(kept)
