"""SHREC's scores for models and people answering its eight tasks (SH-12).

Lee et al., "Social Human Robot Embodied Conversation (SHREC) Dataset: Benchmarking Foundational
Models' Social Reasoning" (arXiv 2504.13898), §3 and Tables 1-2. An answer is correct when the
parsed answer equals the gold answer exactly (the paper's Correctness(A, O)); an answer that could
not be parsed (None) or lies outside the task's answer space is wrong, and is a false positive of
no class, so it lowers recall without lowering any class's precision.

Answer spaces (as `benchmark.models.task_items` stores them): detection "competency" / "error" /
"none"; error "error" / "no_error"; attributes a list of the seven attribute keys; multiple
True / False; pre, post, rationale, correction the 1-based option number.

Formulas (tp, fp, fn counted per class c over the n items; 0/0 = 0, "zero division 0"):

- accuracy = #(pred = gold) / n;
- precision_c = tp_c / (tp_c + fp_c), recall_c = tp_c / (tp_c + fn_c),
  F1_c = 2 P R / (P + R); macro-F1 = mean of F1_c over the task's whole label space (a class
  never gold and never predicted counts 0, as scikit-learn's `f1_score(average="macro",
  labels=..., zero_division=0)`);
- attributes (multi-label, Tsoumakas & Katakis 2007; Sorower 2010, "A literature survey on
  algorithms for multi-label learning"): exact-set accuracy = #(P = G) / n; partial match =
  #(|P & G| >= 1) / n (SHREC's "at least one gold attribute predicted"); example-F1 = mean of
  2 |P & G| / (|P| + |G|) (1 when both are empty); macro-F1 over the seven labels; micro-F1 =
  2 sum tp / (2 sum tp + sum fp + sum fn). An unparsed attribute answer counts as the empty
  prediction: wrong for exact and partial, 0 for example-F1, false negatives for its gold labels;
- subsets: mean and standard deviation over the three subsets (sample, ddof 1, unless asked);
- 95 % CI: percentile cluster bootstrap by video (Field & Welsh 2007, "Bootstrapping clustered
  data", JRSS B 69(3)), resampling whole videos with `bootstrap.resampled_sums` on per-video
  sufficient statistics (confusion counts, per-label tp/fp/fn), so every metric's replicate is
  computed from the drawn videos' totals.

Binary macro-F1 never exceeds accuracy when every answer is True or False (SH-A7); the paper's
human multi-attribute row (accuracy 0.57, F1 0.75) is therefore a positive-class F1, which
`binary_positive_f1` gives under its own name. (Unparsed answers break the bound: they lower
accuracy and a recall but no precision.)

Parley's own code, because no kept library fits: scikit-learn is only a test dependency (the tests
check these values against it), and its metrics do not resample clusters.
"""

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np

from .bootstrap import DEFAULT_RESAMPLES, Seed, make_rng, percentile_interval, resampled_sums

DETECTION_LABELS = ("competency", "error", "none")
ERROR_LABELS = ("error", "no_error")
ATTRIBUTE_LABELS = (
    "emotions",
    "engagement",
    "conversational-mechanics",
    "knowledge-state",
    "intention",
    "social-context",
    "social-norms",
)
MULTIPLE_LABELS = (True, False)
OPTION_LABELS = (1, 2, 3, 4, 5)
MCQ_TASKS = ("pre", "post", "rationale", "correction")
TASKS = ("detection", "error", "attributes", "multiple", *MCQ_TASKS)

LABELS: dict[str, tuple[Any, ...]] = {
    "detection": DETECTION_LABELS,
    "error": ERROR_LABELS,
    "attributes": ATTRIBUTE_LABELS,
    "multiple": MULTIPLE_LABELS,
    **{task: OPTION_LABELS for task in MCQ_TASKS},
}

# Accuracy of answering uniformly at random (the paper's chance levels, §3). The attribute task's
# exact-set accuracy: one of the 2**7 - 1 = 127 non-empty subsets of the seven attributes.
CHANCE: dict[str, float] = {
    "detection": 1 / 3,
    "error": 1 / 2,
    "attributes": 1 / 127,
    "multiple": 1 / 2,
    **{task: 1 / 5 for task in MCQ_TASKS},
}

# Each task's metrics, in the order of the paper's tables; the first is the task's primary metric.
METRICS: dict[str, tuple[str, ...]] = {
    "detection": ("accuracy", "macro_f1"),
    "error": ("accuracy", "macro_f1"),
    "attributes": ("exact", "macro_f1", "partial", "example_f1", "micro_f1"),
    "multiple": ("accuracy", "macro_f1", "positive_f1"),
    **{task: ("accuracy",) for task in MCQ_TASKS},
}

METHOD = (
    "accuracy = exact agreement of the parsed answer with the gold answer (unparsed = wrong); "
    "macro-F1 = mean per-class F1 over the task's label space, an unparsed or out-of-space answer "
    "being wrong and no class's false positive, 0/0 = 0; attributes: exact-set accuracy, partial "
    "match (>= 1 gold attribute predicted), example-F1 = mean 2|P&G|/(|P|+|G|), macro- and "
    "micro-F1 over the seven attributes; multiple: positive_f1 = F1 of True; mean +- sample SD "
    "(ddof 1) over subsets; 95% CI: percentile bootstrap resampling whole videos (Field & Welsh 2007)"
)


class ClassScores(NamedTuple):
    """Precision, recall and F1 of one class."""

    precision: float
    recall: float
    f1: float


@dataclass
class AttributeScores:
    """Multi-label scores of the attribute task (SH-A6)."""

    exact: float
    partial: float
    example_f1: float
    macro_f1: float
    micro_f1: float
    per_label: dict[str, ClassScores]
    n: int

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["per_label"] = {label: scores._asdict() for label, scores in self.per_label.items()}
        return out


class MeanSD(NamedTuple):
    """Mean and standard deviation of a metric over subsets (None when undefined)."""

    mean: float | None
    sd: float | None
    n: int


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator) / float(denominator) if denominator else 0.0


def _f1(tp: float, fp: float, fn: float) -> ClassScores:
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return ClassScores(precision, recall, _ratio(2 * precision * recall, precision + recall))


def _same(gold: Any, pred: Any) -> bool:
    # `True == 1` in Python; an answer matches only a gold of its own kind.
    return pred is not None and type(pred) is type(gold) and pred == gold


def _check_lengths(gold: Sequence[Any], pred: Sequence[Any]) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold answers but {len(pred)} predictions")


def accuracy(gold: Sequence[Hashable], pred: Sequence[Hashable | None]) -> float:
    """Share of predictions equal to the gold answer; None (unparsed) is wrong. 0 for no items."""
    _check_lengths(gold, pred)
    return _ratio(sum(_same(g, p) for g, p in zip(gold, pred, strict=True)), len(gold))


def _confusion(gold: Sequence[Hashable], pred: Sequence[Hashable | None], labels: Sequence[Hashable]) -> np.ndarray:
    """k x (k + 1) counts: rows gold class, columns predicted class, the last column unparsed or out of space."""
    _check_lengths(gold, pred)
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    counts = np.zeros((k, k + 1))
    for g, p in zip(gold, pred, strict=True):
        if g not in index or not _same(labels[index[g]], g):
            raise ValueError(f"gold answer {g!r} is not in the label space {list(labels)}")
        column = index[p] if p is not None and p in index and _same(labels[index[p]], p) else k
        counts[index[g], column] += 1
    return counts


def _class_scores_from_confusion(counts: np.ndarray) -> list[ClassScores]:
    k = counts.shape[0]
    tp = np.diag(counts[:, :k])
    predicted = counts[:, :k].sum(axis=0)
    actual = counts.sum(axis=1)
    return [_f1(tp[j], predicted[j] - tp[j], actual[j] - tp[j]) for j in range(k)]


def class_f1(
    gold: Sequence[Hashable], pred: Sequence[Hashable | None], labels: Sequence[Hashable]
) -> dict[Hashable, ClassScores]:
    """Precision, recall and F1 of every label of the space (0/0 = 0).

    An unparsed (None) or out-of-space prediction is a false negative of the gold class and a false
    positive of no class. A gold answer outside `labels` is refused (ValueError).
    """
    scores = _class_scores_from_confusion(_confusion(gold, pred, labels))
    return dict(zip(labels, scores, strict=True))


def macro_f1(gold: Sequence[Hashable], pred: Sequence[Hashable | None], labels: Sequence[Hashable]) -> float:
    """Unweighted mean of the per-class F1 over the whole label space (SH-A5)."""
    scores = class_f1(gold, pred, labels)
    return _ratio(sum(s.f1 for s in scores.values()), len(scores))


def binary_positive_f1(gold: Sequence[Hashable], pred: Sequence[Hashable | None], positive: Hashable) -> float:
    """F1 of the positive class alone (e.g. True for the multiple-attribute task)."""
    _check_lengths(gold, pred)
    tp = sum(_same(g, positive) and _same(g, p) for g, p in zip(gold, pred, strict=True))
    fp = sum(_same(positive, p) and not _same(g, positive) for g, p in zip(gold, pred, strict=True))
    fn = sum(_same(g, positive) and not _same(positive, p) for g, p in zip(gold, pred, strict=True))
    return _f1(tp, fp, fn).f1


def collapse_to_error(answers: Sequence[str | None]) -> list[str | None]:
    """Detection answers as the error task's: "error" stays, "competency" and "none" become "no_error".

    An unparsed answer (None) or one outside the detection space stays None (SH-A5's collapsed scores).
    """
    return [
        None if a not in DETECTION_LABELS else ("error" if a == "error" else "no_error") for a in answers
    ]


def _label_set(value: Any, labels: Sequence[str], what: str) -> frozenset[str] | None:
    if value is None:
        return None
    chosen = frozenset(value)
    unknown = chosen - set(labels)
    if unknown and what == "gold":
        raise ValueError(f"gold attributes {sorted(unknown)} are not among {list(labels)}")
    return chosen


def _attribute_totals(
    gold_sets: Sequence[Any], pred_sets: Sequence[Any], labels: Sequence[str]
) -> np.ndarray:
    """Per item: exact, partial, example-F1, then tp, fp, fn of every label (n x (3 + 3k))."""
    _check_lengths(gold_sets, pred_sets)
    k = len(labels)
    rows = np.zeros((len(gold_sets), 3 + 3 * k))
    for i, (g_raw, p_raw) in enumerate(zip(gold_sets, pred_sets, strict=True)):
        gold = _label_set(g_raw, labels, "gold")
        if gold is None:
            raise ValueError(f"item {i + 1}: gold attributes missing")
        pred = _label_set(p_raw, labels, "prediction")
        parsed = pred is not None
        pred = (pred or frozenset()) & set(labels)
        common = len(gold & pred)
        rows[i, 0] = parsed and pred == gold
        rows[i, 1] = common >= 1 or (parsed and not gold and not pred)
        if parsed:
            rows[i, 2] = 1.0 if not gold and not pred else 2 * common / (len(gold) + len(pred))
        for j, label in enumerate(labels):
            rows[i, 3 + j] = label in gold and label in pred
            rows[i, 3 + k + j] = label in pred and label not in gold
            rows[i, 3 + 2 * k + j] = label in gold and label not in pred
    return rows


def _attribute_scores_from_totals(totals: np.ndarray, n: int, labels: Sequence[str]) -> AttributeScores:
    k = len(labels)
    tp, fp, fn = totals[3 : 3 + k], totals[3 + k : 3 + 2 * k], totals[3 + 2 * k :]
    per_label = {label: _f1(tp[j], fp[j], fn[j]) for j, label in enumerate(labels)}
    return AttributeScores(
        exact=_ratio(totals[0], n),
        partial=_ratio(totals[1], n),
        example_f1=_ratio(totals[2], n),
        macro_f1=_ratio(sum(s.f1 for s in per_label.values()), k),
        micro_f1=_ratio(2 * tp.sum(), 2 * tp.sum() + fp.sum() + fn.sum()),
        per_label=per_label,
        n=n,
    )


def attribute_scores(
    gold_sets: Sequence[Sequence[str]],
    pred_sets: Sequence[Sequence[str] | None],
    labels: Sequence[str] = ATTRIBUTE_LABELS,
) -> AttributeScores:
    """Exact-set accuracy, partial match, example-F1, macro- and micro-F1 and per-label P/R/F1 (SH-A6).

    A prediction of None (unparsed) is wrong for exact and partial match and scores 0 example-F1;
    predicted keys outside `labels` are ignored; a gold key outside them is refused.
    """
    rows = _attribute_totals(gold_sets, pred_sets, labels)
    return _attribute_scores_from_totals(rows.sum(axis=0), len(rows), labels)


def subset_mean_sd(values: Sequence[float | None], ddof: int = 1) -> MeanSD:
    """Mean and standard deviation over subsets (SH-A8: ddof 1 = sample SD, the default; 0 = population).

    Missing values (None, NaN) are left out; the SD is None when fewer than ddof + 1 values remain.
    """
    x = np.array([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return MeanSD(None, None, 0)
    sd = float(np.std(x, ddof=ddof)) if x.size > ddof else None
    return MeanSD(float(x.mean()), sd, int(x.size))


def _check_task(task: str) -> None:
    if task not in LABELS:
        raise ValueError(f"unknown SHREC task {task!r}; expected one of {', '.join(TASKS)}")


def _single_label_scores(task: str, counts: np.ndarray) -> dict[str, float]:
    n = counts.sum()
    k = counts.shape[0]
    scores = _class_scores_from_confusion(counts)
    out = {"accuracy": _ratio(np.trace(counts[:, :k]), n)}
    if "macro_f1" in METRICS[task]:
        out["macro_f1"] = _ratio(sum(s.f1 for s in scores), k)
    if task == "multiple":
        out["positive_f1"] = scores[LABELS[task].index(True)].f1
    return out


def task_scores(task: str, gold: Sequence[Any], pred: Sequence[Any]) -> dict[str, float]:
    """The task's metrics (`METRICS[task]`, in the paper's order) for one set of answers.

    detection, error: accuracy, macro_f1; attributes: exact, macro_f1, partial, example_f1,
    micro_f1; multiple: accuracy, macro_f1, positive_f1 (F1 of True); pre, post, rationale,
    correction: accuracy.
    """
    _check_task(task)
    if task == "attributes":
        result = attribute_scores(gold, pred)
        return {metric: getattr(result, metric) for metric in METRICS[task]}
    return _single_label_scores(task, _confusion(gold, pred, LABELS[task]))


def _per_item_totals(task: str, gold: Sequence[Any], pred: Sequence[Any]) -> np.ndarray:
    """Per item sufficient statistics whose column sums give every metric of the task."""
    if task == "attributes":
        return _attribute_totals(gold, pred, ATTRIBUTE_LABELS)
    labels = LABELS[task]
    return np.vstack([_confusion([g], [p], labels).ravel() for g, p in zip(gold, pred, strict=True)])


def _scores_from_totals(task: str, totals: np.ndarray, n: int) -> dict[str, float]:
    if task == "attributes":
        result = _attribute_scores_from_totals(totals, n, ATTRIBUTE_LABELS)
        return {metric: getattr(result, metric) for metric in METRICS[task]}
    k = len(LABELS[task])
    return _single_label_scores(task, totals.reshape(k, k + 1))


def cluster_bootstrap_scores(
    task: str,
    gold: Sequence[Any],
    pred: Sequence[Any],
    clusters: Sequence[Hashable],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = 0,
) -> dict[str, dict[str, Any]]:
    """Every metric of the task with a percentile 95% CI from a bootstrap over clusters (videos).

    Each resample draws as many videos as there are, with replacement, and recomputes every metric
    from the drawn videos' summed statistics (confusion counts; for attributes per-item exact,
    partial and example-F1 plus per-label tp/fp/fn). Returns {metric: {"value", "ci95", "n",
    "clusters"}}; ci95 is None with fewer than two videos or 0 resamples.
    """
    _check_task(task)
    _check_lengths(gold, pred)
    _check_lengths(gold, clusters)
    n = len(gold)
    values = task_scores(task, gold, pred)
    names, inverse = np.unique(np.array([str(c) for c in clusters], dtype=object), return_inverse=True)
    out = {
        metric: {"value": value, "ci95": None, "n": n, "clusters": len(names)}
        for metric, value in values.items()
    }
    if n == 0 or not resamples or len(names) < 2:
        return out
    items = _per_item_totals(task, gold, pred)
    by_cluster = np.zeros((len(names), items.shape[1] + 1))
    np.add.at(by_cluster, inverse, np.hstack([items, np.ones((n, 1))]))
    sums = resampled_sums(by_cluster, resamples, make_rng(seed))
    replicates = [_scores_from_totals(task, row[:-1], int(row[-1])) for row in sums]
    for metric in values:
        out[metric]["ci95"] = percentile_interval(np.array([r[metric] for r in replicates]))
    return out


def scores_by_group(
    task: str, gold: Sequence[Any], pred: Sequence[Any], groups: Sequence[Hashable]
) -> dict[str, dict[str, Any]]:
    """The task's metrics within each group of items, e.g. agreed vs disagreed samples (Fig. 5: F1,
    partial and exact match of the attribute task) or one source dataset; {group: {"n", metric...}},
    groups in sorted order."""
    _check_task(task)
    _check_lengths(gold, pred)
    _check_lengths(gold, groups)
    out: dict[str, dict[str, Any]] = {}
    for group in sorted(set(groups), key=str):
        chosen = [i for i, g in enumerate(groups) if g == group]
        out[str(group)] = {
            "n": len(chosen),
            **task_scores(task, [gold[i] for i in chosen], [pred[i] for i in chosen]),
        }
    return out


def scores_by_attribute(
    task: str,
    gold: Sequence[Any],
    pred: Sequence[Any],
    attribute_sets: Sequence[Sequence[str] | None],
    labels: Sequence[str] = ATTRIBUTE_LABELS,
) -> dict[str, dict[str, Any]]:
    """The task's metrics over the items annotated with each attribute (Figs. 6-7: error detection
    per attribute). An item counts under every attribute of its gold set; items without attributes
    (None segments) count under none, since the paper does not say where they belong (§5 item 13).
    For detection and error the F1 of the error class is added as `error_f1`. An attribute no item
    has gets {"n": 0} only."""
    _check_task(task)
    _check_lengths(gold, pred)
    _check_lengths(gold, attribute_sets)
    out: dict[str, dict[str, Any]] = {}
    for label in labels:
        chosen = [i for i, s in enumerate(attribute_sets) if s and label in s]
        cell: dict[str, Any] = {"n": len(chosen)}
        if chosen:
            g, p = [gold[i] for i in chosen], [pred[i] for i in chosen]
            cell.update(task_scores(task, g, p))
            if task in ("detection", "error"):
                cell["error_f1"] = binary_positive_f1(g, p, "error")
        out[label] = cell
    return out
