"""Krippendorff's unitizing alpha (alpha_U): agreement of annotators who cut a continuum into units.

Annotators of SHREC-style spans choose where a span starts and ends as well as its label, so
agreement on labels alone (after pairing spans) says nothing about the cuts. alpha_U (Krippendorff
1995, "On the reliability of unitizing contiguous data", Sociological Methodology 25:47-76; 2004,
Content Analysis, 2nd ed., §12.4, and "Measuring the reliability of qualitative text analysis
data", Quality & Quantity 38:787-800) compares every annotator's segmentation of the same
continuum, category by category, and corrects for the disagreement expected by chance.

For one category c, each of the R coders cuts the continuum [0, L) into segments: units of c
(begin b, length l) and the gaps between them (any other label counts as gap). Two segments g of
coder i and h of coder j differ by

    delta^2(g, h) = (b_g - b_h)^2 + (e_g - e_h)^2   both units and overlapping (e = b + l)
                  = l_g^2                            g a unit lying inside the gap h
                  = l_h^2                            h a unit lying inside the gap g
                  = 0                                otherwise.

Observed disagreement D_o(c) = sum over ordered pairs of coders i != j and their segments of
delta^2 / (R (R - 1) L^2). Expected disagreement (every unit of c placed at random into every gap
long enough to hold it, all coders pooled; Krippendorff 2004, p. 253):

    D_e(c) = (2 / L) * sum_units g [ (N_c - 1) (2 l_g^3 - 3 l_g^2 + l_g) / 3
                                     + l_g^2 * sum_{gaps h, l_h >= l_g} (l_h - l_g + 1) ]
             / ( R L (R L - 1) - sum_units g l_g (l_g - 1) ),

N_c the number of units of c over all coders. alpha_U(c) = 1 - D_o(c) / D_e(c), and over all
categories alpha_U = 1 - sum_c D_o(c) / sum_c D_e(c) (the mean of D_o over the mean of D_e).
alpha_U is 1 for identical segmentations, 0 when the cuts agree no better than chance, negative
when worse.

The continuum is discrete: lengths count its smallest units (characters, hundredths of a turn, ten
milliseconds), and the formulas above use integer lengths, computed here in exact rational
arithmetic. The results agree with DKPro Agreement's `KrippendorffAlphaUnitizingAgreement` (Meyer
et al. 2014, "DKPro Agreement", COLING demos), which INCEpTION reports, on Krippendorff's own
worked examples (tests/stats/test_unitizing.py). As there, a coder's units of one category must not
overlap (overlapping ones are merged here, and counted in the notes), and when D_o equals D_e alpha
is 0. A study's items are laid end to end on one continuum with every gap cut where an item ends
(a span cannot run from one episode into the next, so chance may not place one there either; a
single item gives DKPro's value).

Parley's own code, because no kept library has it: the `krippendorff` package computes alpha for
coded items only, and no package in the lock implements alpha_U.
"""

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import accumulate
from typing import Any, NamedTuple

import pandas as pd

METHOD = (
    "Krippendorff's unitizing alpha (alpha_U; Krippendorff 1995, 2004): per label, every pair of "
    "annotators' segmentations of the continuum (units of the label and the gaps between them) is "
    "compared by squared differences of overlapping units' beginnings and ends, or a unit's squared "
    "length when it lies in the other's gap; alpha_U = 1 - observed / expected disagreement, the "
    "expected one placing every unit at random in every gap that holds it; overall alpha_U pools the "
    "labels' disagreements; items are laid end to end on one continuum, gaps cut at the items' ends"
)


class Unit(NamedTuple):
    """One coder's unit of one category on the discrete continuum: [begin, end)."""

    coder: Hashable
    begin: int
    end: int
    category: Hashable


class Segment(NamedTuple):
    begin: int
    end: int
    is_unit: bool


@dataclass
class UnitizingAlpha:
    """alpha_U overall and per category, with its disagreements."""

    alpha: float | None
    observed: float | None
    expected: float | None
    by_category: dict[str, dict[str, Any]]
    n_coders: int
    n_units: int
    continuum_length: float
    resolution: float
    n_items: int = 0
    excluded_items: int = 0
    coordinate: str = ""
    method: str = METHOD
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "observed_disagreement": self.observed,
            "expected_disagreement": self.expected,
            "by_label": self.by_category,
            "coordinate": self.coordinate,
            "resolution": self.resolution,
            "continuum_length": self.continuum_length,
            "n_items": self.n_items,
            "excluded_items": self.excluded_items,
            "n_coders": self.n_coders,
            "n_units": self.n_units,
            "method": self.method,
            "notes": list(self.notes),
        }


def segments(units: Iterable[tuple[int, int]], length: int, boundaries: Sequence[int] = ()) -> list[Segment]:
    """One coder's units of one category and the gaps between them, tiling [0, length) in order.

    Units must not overlap (merge them first); zero-length gaps are left out. A gap is cut at each
    of the `boundaries` (where one item of a study ends and the next begins).
    """
    out: list[Segment] = []
    cuts = sorted(set(boundaries))

    def gap(begin: int, end: int) -> None:
        for cut in cuts[bisect_right(cuts, begin) : bisect_left(cuts, end)]:
            out.append(Segment(begin, cut, False))
            begin = cut
        out.append(Segment(begin, end, False))

    position = 0
    for begin, end in sorted(units):
        if begin > position:
            gap(position, begin)
        out.append(Segment(begin, end, True))
        position = end
    if position < length:
        gap(position, length)
    return out


def distance(g: Segment, h: Segment) -> int:
    """delta^2 of two segments of different coders (Krippendorff 1995, eq. for delta_ijgh)."""
    if g.is_unit and h.is_unit:
        if g.begin < h.end and h.begin < g.end:
            return (g.begin - h.begin) ** 2 + (g.end - h.end) ** 2
        return 0
    if g.is_unit and not h.is_unit and h.begin <= g.begin and g.end <= h.end:
        return (g.end - g.begin) ** 2
    if h.is_unit and not g.is_unit and g.begin <= h.begin and h.end <= g.end:
        return (h.end - h.begin) ** 2
    return 0


def _pair_disagreement(first: list[Segment], second: list[Segment]) -> int:
    """Sum of delta^2 over every overlapping pair of two tilings (the only pairs that can differ)."""
    total, i, j = 0, 0, 0
    while i < len(first) and j < len(second):
        total += distance(first[i], second[j])
        if first[i].end <= second[j].end:
            i += 1
        else:
            j += 1
    return total


def observed_disagreement(tilings: Sequence[list[Segment]], length: int) -> Fraction:
    """D_o of one category: summed delta^2 over ordered coder pairs / (R (R - 1) L^2)."""
    r = len(tilings)
    total = sum(
        _pair_disagreement(tilings[a], tilings[b]) for a in range(r) for b in range(a + 1, r)
    )
    return Fraction(2 * total, r * (r - 1) * length * length)


def expected_disagreement(tilings: Sequence[list[Segment]], length: int) -> Fraction:
    """D_e of one category (Krippendorff 2004, p. 253), all coders' units and gaps pooled."""
    r = len(tilings)
    units = [s.end - s.begin for tiling in tilings for s in tiling if s.is_unit]
    gaps = sorted(s.end - s.begin for tiling in tilings for s in tiling if not s.is_unit)
    # longer[k] = sum of the gaps from the k-th shortest on, so the gaps that hold a unit are summed at once.
    longer = list(accumulate(reversed(gaps), initial=0))[::-1]
    n_c = len(units)
    numerator = 0
    for unit in units:
        # l (l - 1) (2 l - 1) is divisible by 6, so this third is a whole number.
        within = (n_c - 1) * unit * (unit - 1) * (2 * unit - 1) // 3
        first = bisect_left(gaps, unit)
        # sum over gaps h >= l of (h - l + 1)
        placements = longer[first] - (unit - 1) * (len(gaps) - first)
        numerator += within + unit * unit * placements
    denominator = length * (r * length * (r * length - 1) - sum(unit * (unit - 1) for unit in units))
    return Fraction(2 * numerator, denominator) if denominator else Fraction(0)


def _alpha(observed: Fraction, expected: Fraction) -> float | None:
    if expected == 0:
        return None
    return 0.0 if observed == expected else float(1 - observed / expected)


def unitizing_alpha(
    units: Iterable[Unit | tuple[Hashable, int, int, Hashable]],
    coders: Sequence[Hashable],
    length: int,
    *,
    resolution: float = 1.0,
    boundaries: Sequence[int] = (),
) -> UnitizingAlpha:
    """alpha_U of `coders` who marked `units` (coder, begin, end, category) on the continuum [0, length).

    Positions are whole numbers (the continuum's smallest units). A coder who marked nothing still
    counts (all gap). `boundaries` cut every gap (the ends of a study's items laid end to end: a
    unit cannot be placed across them by chance either). A coder's overlapping units of one
    category are merged (noted); units of unknown coders or outside the continuum are refused
    (ValueError).
    """
    notes: list[str] = []
    coder_list = list(dict.fromkeys(coders))
    if length <= 0:
        raise ValueError(f"the continuum must have a positive length, not {length}")
    by_category: dict[Hashable, dict[Hashable, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
    n_units = 0
    dropped_empty = 0
    for coder, begin, end, category in units:
        if coder not in coder_list:
            raise ValueError(f"unit of {coder!r}, who is not among the coders {coder_list}")
        if not 0 <= begin <= end <= length:
            raise ValueError(f"unit [{begin}, {end}) of {coder!r} lies outside the continuum [0, {length})")
        if begin == end:
            dropped_empty += 1
            continue
        by_category[category][coder].append((int(begin), int(end)))
        n_units += 1
    if dropped_empty:
        notes.append(f"{dropped_empty} units of zero length left out")
    merged = 0
    result = UnitizingAlpha(
        None, None, None, {}, len(coder_list), n_units, length * resolution, resolution, notes=notes
    )
    if len(coder_list) < 2:
        notes.append("alpha_U needs at least two coders")
        return result
    if not by_category:
        notes.append("no units: alpha_U is undefined")
        return result
    observed_total, expected_total = Fraction(0), Fraction(0)
    for category in sorted(by_category, key=str):
        tilings = []
        for coder in coder_list:
            kept, count = _merge(by_category[category].get(coder, []))
            merged += count
            tilings.append(segments(kept, length, boundaries))
        observed = observed_disagreement(tilings, length)
        expected = expected_disagreement(tilings, length)
        observed_total += observed
        expected_total += expected
        result.by_category[str(category)] = {
            "alpha": _alpha(observed, expected),
            "observed_disagreement": float(observed),
            "expected_disagreement": float(expected),
            "n_units": sum(len(v) for v in by_category[category].values()),
        }
    if merged:
        notes.append(f"{merged} overlapping units of the same coder and label merged")
    k = len(by_category)
    result.observed, result.expected = float(observed_total / k), float(expected_total / k)
    result.alpha = _alpha(observed_total, expected_total)
    if result.alpha is None:
        notes.append("no unit fits any gap: expected disagreement is 0 and alpha_U undefined")
    return result


def _merge(units: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], int]:
    """Overlapping units (sharing more than an end point) merged; how many merges were made."""
    kept: list[tuple[int, int]] = []
    merges = 0
    for begin, end in sorted(units):
        if kept and begin < kept[-1][1]:
            kept[-1] = (kept[-1][0], max(kept[-1][1], end))
            merges += 1
        else:
            kept.append((begin, end))
    return kept, merges


def study_unitizing_alpha(
    spans: pd.DataFrame,
    continua: Mapping[Hashable, float],
    *,
    coders: pd.DataFrame | None = None,
    item: str = "item",
    annotator: str = "annotator",
    start: str = "start",
    end: str = "end",
    label: str = "label",
    resolution: float = 0.01,
    coordinate: str = "",
) -> UnitizingAlpha:
    """alpha_U of a study's spans: each item's continuum [0, continua[item]) laid end to end, gaps
    cut at the items' ends, so neither the order of the items nor which annotator of an item is
    coder 1 changes the result.

    `start`/`end` are positions on the item's continuum (turn positions, seconds), rounded to
    `resolution`. The annotators of an item come from `coders` (item, annotator: who submitted it,
    so one who marked nothing counts) or else from the spans; they are numbered in the order
    given, and alpha_U compares coder 1 with coder 2 and so on across items, so every item takes
    the same number R of coders: the smallest number among items with two or more (items with
    more keep their first R, noted). Items with fewer than two annotators or no continuum length
    are left out and counted; spans without positions are left out and counted.
    """
    notes: list[str] = []
    who = spans[[item, annotator]] if coders is None else coders[[item, annotator]]
    annotators: dict[Hashable, list[Hashable]] = defaultdict(list)
    for item_name, person in who.dropna().drop_duplicates().itertuples(index=False):
        annotators[item_name].append(person)
    for item_name, person in spans[[item, annotator]].dropna().drop_duplicates().itertuples(index=False):
        if person not in annotators[item_name]:
            annotators[item_name].append(person)
    lengths = {name: _steps(continua.get(name), resolution) for name in annotators}
    analysed = [name for name in annotators if len(annotators[name]) >= 2 and lengths[name]]
    excluded = len(annotators) - len(analysed)
    if excluded:
        notes.append(f"{excluded} items with fewer than two annotators or no continuum left out")
    if not analysed:
        result = unitizing_alpha([], [], 1, resolution=resolution)
        result.n_coders, result.continuum_length = 0, 0.0
        result.notes[:0] = notes
        result.excluded_items, result.coordinate = excluded, coordinate
        return result
    r = min(len(annotators[name]) for name in analysed)
    extra = sum(len(annotators[name]) > r for name in analysed)
    if extra:
        notes.append(f"{extra} items had more than {r} annotators: their first {r} are compared")
    offsets, position = {}, 0
    for name in analysed:
        offsets[name] = position
        position += lengths[name]
    slot = {(name, person): k for name in analysed for k, person in enumerate(annotators[name][:r])}
    units, unplaced, clipped = [], 0, 0
    for item_name, person, begin, finish, category in spans[[item, annotator, start, end, label]].itertuples(
        index=False
    ):
        if (item_name, person) not in slot:
            continue
        if pd.isna(begin) or pd.isna(finish):
            unplaced += 1
            continue
        size = lengths[item_name]
        low = min(max(_steps(begin, resolution), 0), size)
        high = min(max(_steps(finish, resolution), low), size)
        clipped += not 0 <= _steps(begin, resolution) <= _steps(finish, resolution) <= size
        offset = offsets[item_name]
        category = "" if pd.isna(category) else category
        units.append(Unit(slot[(item_name, person)], offset + low, offset + high, category))
    if unplaced:
        notes.append(f"{unplaced} spans without a position on this continuum left out")
    if clipped:
        notes.append(f"{clipped} spans reaching outside their item's continuum cut to it")
    ends = [offsets[name] for name in analysed[1:]]
    result = unitizing_alpha(units, list(range(r)), position, resolution=resolution, boundaries=ends)
    result.notes[:0] = notes
    result.n_items, result.excluded_items, result.coordinate = len(analysed), excluded, coordinate
    return result


def _steps(value: Any, resolution: float) -> int:
    """A position or length in whole steps of `resolution` (0 when missing)."""
    if value is None or pd.isna(value):
        return 0
    return int(round(float(value) / resolution))
