"""Agreement between annotators who mark spans (SHREC, §2.2 and appendices C and H).

Annotators of the same item mark spans freely, so spans must first be paired: two spans from
different annotators of the same item pair up when their intersection over union (IoU) reaches a
threshold, matching greedily from the best IoU down, each span pairing with at most one span of
each other annotator. On those pairs we report what SHREC reports for its annotations: the share
of spans that overlap another annotator's span, label agreement (error vs competency) among
overlapping pairs, the disagreement share, and agreement on the social attributes as F1, partial
match (at least one attribute in common) and exact match (identical sets).

``pair_spans`` pairs the spans of two annotators of one item by either rule: ``iou`` (the greedy
IoU pairing above, the one ``span_agreement`` uses) or ``shrec``, the rule of SHREC's released
pipeline (spec ``shrec.md`` §2.1 item 1), which reads times in seconds: for each span of the first
annotator, in start order, the second annotator's spans still unpaired become candidates when one
strictly contains the other with ends less than ``containment_tolerance`` apart, or their starts are
less than ``start_tolerance`` apart, or their ends less than ``end_tolerance`` apart; the first
candidate (in start order) with the same label is paired, else the **last** candidate is paired
anyway (a disagreeing pair); a paired span leaves the pool; spans left over on either side are
singletons.

Parley's own code, because no kept library covers the design: SHREC's pairing of spans by IoU and
its label and attribute agreement are not in any package we keep. Krippendorff's unitizing alpha,
which compares the annotators' cuts without pairing them, is in `unitizing.py` (the `krippendorff`
package has none).
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .tables import ANNOTATOR, ITEM, drop_missing

START, END, LABEL, ATTRIBUTES = "start", "end", "label", "attributes"
DEFAULT_MIN_IOU = 0.5
PAIRING_METHODS = ("shrec", "iou")

# One span of one annotator for ``pair_spans``: (start, end, label).
Interval = tuple[float, float, Any]
# A group of ``pair_spans``: the index of a span of the first annotator, of the second, or both.
Group = tuple[int | None, int | None]

METHOD = (
    "spans of different annotators of an item are paired greedily by intersection over union "
    "(IoU >= min_iou, best first, one partner per other annotator); overlap_share = spans with a "
    "partner / all spans; label_agreement = pairs with the same label / pairs; disagreement_share "
    "= spans paired with a span of the other label / all spans; attribute F1 = mean over pairs of "
    "2|A & B| / (|A| + |B|), partial match = pairs sharing an attribute, exact match = pairs with "
    "identical attribute sets (SHREC appendix C); pairs where neither span has an attribute are "
    "left out of attribute agreement"
)


@dataclass
class SpanAgreement:
    """Overlap, label and attribute agreement of paired spans."""

    n_items: int
    excluded_items: int
    n_spans: int
    n_pairs: int
    overlap_share: float | None
    label_agreement: float | None
    disagreement_share: float | None
    attribute_f1: float | None
    attribute_partial_match: float | None
    attribute_exact_match: float | None
    attribute_pairs: int
    per_attribute: dict[str, dict[str, Any]]
    min_iou: float
    method: str = METHOD
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_spans": self.n_spans,
            "n_pairs": self.n_pairs,
            "overlap_share": self.overlap_share,
            "label_agreement": self.label_agreement,
            "disagreement_share": self.disagreement_share,
            "attributes": {
                "f1": self.attribute_f1,
                "partial_match": self.attribute_partial_match,
                "exact_match": self.attribute_exact_match,
                "n_pairs": self.attribute_pairs,
            },
            "per_attribute": self.per_attribute,
            "min_iou": self.min_iou,
            "method": self.method,
        }


def attribute_set(value: Any) -> frozenset[str]:
    """A span's attributes as a set: from a list/tuple/set, or text separated by ; , or |."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return frozenset()
    if isinstance(value, str):
        return frozenset(part.strip() for part in re.split(r"[;,|]", value) if part.strip())
    if isinstance(value, Iterable):
        return frozenset(str(part).strip() for part in value if str(part).strip())
    return frozenset([str(value)])


def interval_iou(start_a: Any, end_a: Any, start_b: Any, end_b: Any) -> np.ndarray:
    """IoU of half-open intervals [start, end), elementwise; equal empty intervals count as 1."""
    start_a, end_a, start_b, end_b = (np.asarray(x, dtype=float) for x in (start_a, end_a, start_b, end_b))
    overlap = np.clip(np.minimum(end_a, end_b) - np.maximum(start_a, start_b), 0, None)
    union = (end_a - start_a) + (end_b - start_b) - overlap
    same_point = (start_a == start_b) & (end_a == end_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, overlap / np.where(union > 0, union, 1), same_point.astype(float))


def _greedy_pairs(candidates: pd.DataFrame) -> list[tuple[int, int]]:
    """Pick pairs best IoU first; a span takes at most one partner from each other annotator."""
    ordered = candidates.sort_values(["iou", "id_a", "id_b"], ascending=[False, True, True], kind="mergesort")
    taken: set[tuple[int, Any]] = set()
    pairs = []
    for id_a, id_b, annotator_a, annotator_b in zip(
        ordered["id_a"], ordered["id_b"], ordered["annotator_a"], ordered["annotator_b"], strict=True
    ):
        if (id_a, annotator_b) in taken or (id_b, annotator_a) in taken:
            continue
        taken.add((id_a, annotator_b))
        taken.add((id_b, annotator_a))
        pairs.append((int(id_a), int(id_b)))
    return pairs


def _interval_frame(spans: Sequence[Interval], side: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            f"id_{side}": range(len(spans)),
            f"start_{side}": [float(span[0]) for span in spans],
            f"end_{side}": [float(span[1]) for span in spans],
        }
    )


def _start_order(spans: Sequence[Interval]) -> list[int]:
    return sorted(range(len(spans)), key=lambda index: float(spans[index][0]))


def _shrec_candidate(a: Interval, b: Interval, start_tolerance: float, end_tolerance: float, contained: float) -> bool:
    a_start, a_end, b_start, b_end = float(a[0]), float(a[1]), float(b[0]), float(b[1])
    ends_apart = abs(b_end - a_end)
    if b_start < a_start and b_end > a_end and ends_apart < contained:
        return True
    if b_start > a_start and b_end < a_end and ends_apart < contained:
        return True
    return abs(b_start - a_start) < start_tolerance or ends_apart < end_tolerance


def pair_spans(
    a: Sequence[Interval],
    b: Sequence[Interval],
    method: str = "shrec",
    *,
    start_tolerance: float = 3.0,
    end_tolerance: float = 3.0,
    containment_tolerance: float = 10.0,
    min_iou: float = DEFAULT_MIN_IOU,
) -> list[Group]:
    """Pair two annotators' spans of one item; every span ends in exactly one group.

    ``a`` and ``b`` are ``(start, end, label)`` triples (seconds for ``shrec``; any one coordinate
    for ``iou``, end exclusive). Returns ``(index in a, index in b)`` groups, a missing side None:
    first each span of ``a`` in start order with its partner, then ``b``'s unpaired spans in start
    order. ``shrec`` follows SHREC's released pipeline (see the module docstring; the tolerances are
    its 3 s and 10 s); ``iou`` pairs greedily by IoU >= ``min_iou``, best first, as ``span_agreement``.
    """
    if method not in PAIRING_METHODS:
        raise ValueError(f"unknown pairing method {method!r}: choose one of {', '.join(PAIRING_METHODS)}")
    partner: dict[int, int] = {}
    if method == "shrec":
        pool = _start_order(b)
        for index_a in _start_order(a):
            candidates = [
                index_b for index_b in pool
                if _shrec_candidate(a[index_a], b[index_b], start_tolerance, end_tolerance, containment_tolerance)
            ]
            if not candidates:
                continue
            same = [index_b for index_b in candidates if b[index_b][2] == a[index_a][2]]
            chosen = same[0] if same else candidates[-1]
            partner[index_a] = chosen
            pool.remove(chosen)
    elif a and b:
        merged = _interval_frame(a, "a").merge(_interval_frame(b, "b"), how="cross")
        merged["iou"] = interval_iou(merged["start_a"], merged["end_a"], merged["start_b"], merged["end_b"])
        merged["annotator_a"], merged["annotator_b"] = "a", "b"
        partner = dict(_greedy_pairs(merged[(merged["iou"] >= min_iou) & (merged["iou"] > 0)]))
    paired_b = set(partner.values())
    groups: list[Group] = [(index_a, partner.get(index_a)) for index_a in _start_order(a)]
    groups += [(None, index_b) for index_b in _start_order(b) if index_b not in paired_b]
    return groups


@dataclass
class PairingSummary:
    """What a pairing of two annotators' spans shows: SHREC's overlap share and label agreement."""

    n_spans: int
    n_pairs: int
    n_agreed: int
    overlap_share: float | None  # spans in a pair / all spans
    label_agreement: float | None  # pairs with the same label / pairs


def pairing_summary(a: Sequence[Interval], b: Sequence[Interval], groups: Sequence[Group]) -> PairingSummary:
    """Overlap share and label agreement of ``pair_spans``' groups (SHREC Fig. 2's two numbers)."""
    pairs = [(i, j) for i, j in groups if i is not None and j is not None]
    agreed = sum(a[i][2] == b[j][2] for i, j in pairs)
    n_spans = len(a) + len(b)
    return PairingSummary(
        n_spans, len(pairs), agreed, _share(2 * len(pairs), n_spans), _share(agreed, len(pairs))
    )


def _share(numerator: float, denominator: float) -> float | None:
    return float(numerator / denominator) if denominator else None


def span_agreement(
    spans: pd.DataFrame,
    *,
    item: str = ITEM,
    annotator: str = ANNOTATOR,
    start: str = START,
    end: str = END,
    label: str = LABEL,
    attributes: str | None = ATTRIBUTES,
    min_iou: float = DEFAULT_MIN_IOU,
    end_inclusive: bool = False,
    coders: pd.DataFrame | None = None,
) -> SpanAgreement:
    """Pair the spans of each item across annotators and measure their agreement.

    `start`/`end` are positions in one coordinate (turn index or character offset); `end` is
    exclusive unless `end_inclusive` (turn ranges usually are: turn 3 to turn 3 is one turn).
    `coders` (columns item, annotator) lists who completed each item, so an annotator who marked
    nothing still counts; by default the annotators are read from the spans. Items with fewer
    than two annotators are excluded and counted.
    """
    notes: list[str] = []
    rows = drop_missing(spans, item, annotator, start, end).reset_index(drop=True)
    who = rows[[item, annotator]] if coders is None else drop_missing(coders, item, annotator)[[item, annotator]]
    per_item = who.drop_duplicates().groupby(item, sort=False)[annotator].size()
    all_items = set(per_item.index) | set(rows[item].unique())
    analysed = set(per_item.index[per_item >= 2])
    excluded = len(all_items - analysed)
    if excluded:
        notes.append(f"{excluded} items with fewer than two annotators excluded")
    rows = rows[rows[item].isin(analysed)].reset_index(drop=True)
    n_spans = len(rows)
    result = SpanAgreement(
        len(analysed), excluded, n_spans, 0, None, None, None, None, None, None, 0, {}, min_iou, notes=notes
    )
    if n_spans == 0:
        notes.append("no spans to compare")
        return result

    starts = rows[start].to_numpy(dtype=float)
    ends = rows[end].to_numpy(dtype=float) + (1 if end_inclusive else 0)
    frame = pd.DataFrame(
        {
            "item": rows[item].to_numpy(),
            "annotator": rows[annotator].astype(str).to_numpy(),
            "id": np.arange(n_spans),
            "start": starts,
            "end": ends,
        }
    )
    merged = frame.merge(frame, on="item", suffixes=("_a", "_b"))
    merged = merged[merged["annotator_a"] < merged["annotator_b"]]
    merged["iou"] = interval_iou(merged["start_a"], merged["end_a"], merged["start_b"], merged["end_b"])
    candidates = merged[(merged["iou"] >= min_iou) & (merged["iou"] > 0)]
    pairs = np.array(_greedy_pairs(candidates), dtype=np.intp).reshape(-1, 2)
    n_pairs = len(pairs)
    paired = np.zeros(n_spans, dtype=bool)
    paired[pairs.ravel()] = True

    result.n_pairs = n_pairs
    result.overlap_share = float(paired.mean())
    if n_pairs == 0:
        notes.append("no spans overlap across annotators: label and attribute agreement undefined")
        return result

    if label in rows.columns:
        labels = rows[label].astype(str).to_numpy()
        same = labels[pairs[:, 0]] == labels[pairs[:, 1]]
        result.label_agreement = float(same.mean())
        disagreeing = np.zeros(n_spans, dtype=bool)
        disagreeing[pairs[~same].ravel()] = True
        result.disagreement_share = float(disagreeing.mean())
    else:
        notes.append("no label column: label agreement not computed")

    if attributes is not None and attributes in rows.columns:
        sets = [attribute_set(value) for value in rows[attributes]]
        _attribute_agreement(result, sets, pairs)
    else:
        notes.append("no attributes column: attribute agreement not computed")
    return result


def _attribute_agreement(result: SpanAgreement, sets: list[frozenset[str]], pairs: np.ndarray) -> None:
    names = sorted(set().union(*sets))
    f1, partial, exact = [], [], []
    both = dict.fromkeys(names, 0)
    marked = dict.fromkeys(names, 0)
    for a, b in pairs:
        first, second = sets[a], sets[b]
        if not first and not second:
            continue
        common = len(first & second)
        f1.append(2 * common / (len(first) + len(second)))
        partial.append(common > 0)
        exact.append(first == second)
        for name in first & second:
            both[name] += 1
        for name in first:
            marked[name] += 1
        for name in second:
            marked[name] += 1
    skipped = len(pairs) - len(f1)
    if skipped:
        pairs_text = "1 pair" if skipped == 1 else f"{skipped} pairs"
        result.notes.append(f"{pairs_text} where neither span has an attribute left out of attribute agreement")
    if not f1:
        result.notes.append("attribute agreement is undefined: no paired span has an attribute")
    result.attribute_pairs = len(f1)
    result.attribute_f1 = float(np.mean(f1)) if f1 else None
    result.attribute_partial_match = float(np.mean(partial)) if partial else None
    result.attribute_exact_match = float(np.mean(exact)) if exact else None
    result.per_attribute = {
        name: {
            "spans": sum(name in s for s in sets),
            "pairs_both": both[name],
            "f1": _share(2 * both[name], marked[name]),
        }
        for name in names
    }
    unpaired = [name for name in names if not marked[name]]
    if unpaired:
        result.notes.append(
            f"per_attribute f1 is undefined for {', '.join(unpaired)}: no paired span has "
            f"{'it' if len(unpaired) == 1 else 'them'}"
        )
