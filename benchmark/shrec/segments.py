"""From annotators' spans to the segments task items are about (spec ``shrec.md`` SH-4, SH-5).

Per episode:

- **Groups.** The spans of the first two annotators who marked anything (``annotators="first_two"``,
  SHREC's released pipeline) are paired by ``benchmark.stats.spans.pair_spans``: SHREC's rule for
  spans with times, IoU over turn ranges for spans marked on turns only. ``"all_pairs"`` pairs every
  two annotators instead (each pair's groups are segments of their own). A group is a pair or a
  singleton; its **first element** (the first annotator's span, else the second's) gives the
  segment's times, turns, label, rationale, correction and channel.
- **Agreed segments**: pairs whose two labels are equal. Their attribute set follows ``attributes``:
  ``first`` (the first annotator's, SHREC's original pipeline), ``or`` (either annotator's, its clean
  pipeline) or ``and`` (both). Singletons and disagreeing pairs keep the first element's attributes.
- **None segments** (nothing annotated): the gaps between the merged union of both annotators' spans
  inside ``[0, the largest end of the groups' first elements]``. Per episode as many None segments
  as agreed ones are kept for the detection task (``balance="n"``; ``"n-1"`` is the released
  pipeline's off-by-one, under which an episode with one agreed segment gives nothing), at most as
  many as there are gaps; a None excerpt that is empty or contained in an annotated segment's excerpt
  (any group's, agreed or not: the released pipeline checks agreed ones only, so a singleton's
  exchange could be shown as "None") is dropped, and the agreed segments kept match the None ones
  kept. Which gaps and which agreed segments are kept is seeded: ascending ``sha256("<seed>|<segment key>|balance")``.

Segment keys are ``"<episode key>:<n>"`` (the n-th group, from 1) and ``"<episode key>:none<n>"`` (the
n-th gap in time order); with ``all_pairs``, ``"<episode key>:<p>.<n>"`` for the p-th pair of annotators.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from benchmark.stats.spans import Interval, pair_spans, pairing_summary

from .excerpts import Excerpt, excerpt
from .records import AnnotatorSpans, EpisodeRecord, SpanRecord

ATTRIBUTE_POLICIES = ("first", "or", "and")
BALANCES = ("n", "n-1")
ANNOTATOR_CHOICES = ("first_two", "all_pairs")


@dataclass(frozen=True)
class SegmentOptions:
    """How spans become segments; the defaults follow SHREC's released pipeline except ``balance``."""

    seed: int = 0
    pairing: str | None = None  # "shrec" / "iou"; None: shrec for spans with times, iou for turn spans
    start_tolerance: float = 3.0
    end_tolerance: float = 3.0
    containment_tolerance: float = 10.0
    min_iou: float = 0.5
    annotators: str = "first_two"
    attributes: str = "first"
    balance: str = "n"
    excerpt: str = "pair"
    seconds_buffer: float = 5.0


@dataclass(eq=False)
class Segment:
    """A stretch of one episode that task items are about: a group of spans, or a gap (label "none")."""

    key: str
    episode: EpisodeRecord
    label: str  # "error", "competency" or "none"
    agreed: bool  # a pair with equal labels (False for singletons, disagreeing pairs and gaps)
    start_s: float | None
    end_s: float | None
    start_turn: int
    end_turn: int
    excerpt: Excerpt
    attributes: tuple[str, ...] = ()
    rationale: str = ""
    correction: str = ""
    channel: str = ""
    seat: int | None = None
    span_ids: tuple[Any, ...] = ()
    annotators: tuple[str, ...] = ()

    @property
    def agent_seat(self) -> int:
        return self.episode.agent_seat if self.seat is None else self.seat


@dataclass
class EpisodeSegments:
    """One episode's segments: every group, the agreed ones, and the detection task's balanced set."""

    groups: list[Segment] = field(default_factory=list)
    agreed: list[Segment] = field(default_factory=list)
    detection: list[Segment] = field(default_factory=list)  # balanced: None segments and agreed ones
    gaps: list[tuple[float, float]] = field(default_factory=list)
    pairing: dict[str, Any] = field(default_factory=dict)  # what pairing showed, for the dataset statistics
    spans: list[SpanRecord] = field(default_factory=list)  # the spans paired (each once)
    method: str = ""  # the pairing method used: shrec or iou


def seeded_order(seed: int, key: str, purpose: str) -> str:
    """The hex digest seeded choices sort by: version-independent, unlike ``random``."""
    return hashlib.sha256(f"{seed}|{key}|{purpose}".encode()).hexdigest()


def check_options(options: SegmentOptions) -> list[str]:
    """What is wrong with ``options``, one message per problem."""
    problems = []
    if options.pairing not in (None, "shrec", "iou"):
        problems.append(f"unknown pairing {options.pairing!r}: choose shrec or iou")
    if options.attributes not in ATTRIBUTE_POLICIES:
        problems.append(f"unknown attribute policy {options.attributes!r}: choose first, or or and")
    if options.balance not in BALANCES:
        problems.append(f"unknown balance {options.balance!r}: choose n or n-1")
    if options.annotators not in ANNOTATOR_CHOICES:
        problems.append(f"unknown annotator choice {options.annotators!r}: choose first_two or all_pairs")
    return problems


def _position(span: SpanRecord, timed: bool) -> Interval:
    if timed:
        return (float(span.start_s), float(span.end_s), span.label)  # type: ignore[arg-type]
    return (float(span.start_turn), float(span.end_turn + 1), span.label)


def _attributes(first: SpanRecord, second: SpanRecord | None, policy: str) -> tuple[str, ...]:
    if second is None or policy == "first":
        return tuple(sorted(first.attributes))
    if policy == "or":
        return tuple(sorted(set(first.attributes) | set(second.attributes)))
    return tuple(sorted(set(first.attributes) & set(second.attributes)))


def _segment(episode: EpisodeRecord, key: str, first: SpanRecord, second: SpanRecord | None, names, options):
    agreed = second is not None and second.label == first.label
    return Segment(
        key=key,
        episode=episode,
        label=first.label,
        agreed=agreed,
        start_s=first.start_s,
        end_s=first.end_s,
        start_turn=first.start_turn,
        end_turn=first.end_turn,
        excerpt=_cut(episode, options, first.start_s, first.end_s, first.start_turn, first.end_turn, first.seat),
        attributes=_attributes(first, second, options.attributes) if agreed else tuple(sorted(first.attributes)),
        rationale=first.rationale.strip(),
        correction=first.correction.strip(),
        channel=first.channel,
        seat=first.seat,
        span_ids=(first.id,) if second is None else (first.id, second.id),
        annotators=names,
    )


def _cut(episode, options, start_s, end_s, start_turn, end_turn, seat) -> Excerpt:
    return excerpt(
        episode, options.excerpt, start_s=start_s, end_s=end_s, start_turn=start_turn, end_turn=end_turn,
        agent_seat=seat, seconds_buffer=options.seconds_buffer,
    )


AnnotatorPair = tuple[AnnotatorSpans, AnnotatorSpans | None]


def annotator_pairs(episode: EpisodeRecord, timed: bool, choice: str) -> list[AnnotatorPair]:
    """Which annotators are paired: the first two who marked something (a lone one is paired with no one)."""
    marked = []
    for annotator in episode.annotators:
        spans = tuple(span for span in annotator.spans if span.timed or not timed)
        if spans:
            marked.append(AnnotatorSpans(annotator.name, spans))
    if len(marked) < 2:
        return [(marked[0], None)] if marked else []
    if choice == "all_pairs":
        return list(combinations(marked, 2))
    return [(marked[0], marked[1])]


def merged_gaps(intervals: list[tuple[float, float]], limit: float) -> list[tuple[float, float]]:
    """Stretches of ``[0, limit]`` no interval covers (touching intervals merge), in time order."""
    gaps, covered = [], 0.0
    for start, end in sorted(intervals):
        if start > covered:
            gaps.append((covered, start))
        covered = max(covered, end)
    if covered < limit:
        gaps.append((covered, limit))
    return [(start, min(end, limit)) for start, end in gaps if start < limit]


def _gap_segment(episode: EpisodeRecord, key: str, gap: tuple[float, float], timed: bool, options) -> Segment:
    if timed:
        start_s, end_s = gap
        inside = [
            turn.index for turn in episode.turns
            if turn.start_s is not None and turn.start_s < end_s and (turn.end_s or turn.start_s) > start_s
        ]
        start_turn, end_turn = (min(inside), max(inside)) if inside else (0, 0)
    else:
        start_s = end_s = None
        start_turn, end_turn = int(gap[0]), int(gap[1]) - 1
    cut = _cut(episode, options, start_s, end_s, start_turn, end_turn, None)
    if timed and not cut.lines:
        cut = Excerpt((), None, None)
    return Segment(key, episode, "none", False, start_s, end_s, start_turn, end_turn, cut)


def episode_segments(episode: EpisodeRecord, options: SegmentOptions) -> EpisodeSegments:
    """The episode's groups, agreed segments and balanced detection set (see the module docstring)."""
    timed = episode.timed
    method = options.pairing or ("shrec" if timed else "iou")
    if method == "shrec" and not timed and any(a.spans for a in episode.annotators):
        raise ValueError(
            f"episode {episode.key}: SHREC's pairing reads times, and these spans are marked on turns only "
            "(use the iou pairing)"
        )
    result = EpisodeSegments(method=method)
    pairs = annotator_pairs(episode, timed, options.annotators)
    summary: Counter[str] = Counter()
    for number, (first, second) in enumerate(pairs, start=1):
        spans_b = second.spans if second else ()
        result.spans += [span for span in (*first.spans, *spans_b) if span not in result.spans]
        a = [_position(span, timed) for span in first.spans]
        b = [_position(span, timed) for span in spans_b]
        groups = pair_spans(
            a, b, method, start_tolerance=options.start_tolerance, end_tolerance=options.end_tolerance,
            containment_tolerance=options.containment_tolerance, min_iou=options.min_iou,
        )
        counted = pairing_summary(a, b, groups)
        summary.update(spans=counted.n_spans, pairs=counted.n_pairs, agreed=counted.n_agreed)
        prefix = f"{episode.key}:{number}." if options.annotators == "all_pairs" else f"{episode.key}:"
        ends: list[float] = []
        for index, (i, j) in enumerate(groups, start=1):
            head = first.spans[i] if i is not None else spans_b[j]
            partner = spans_b[j] if i is not None and j is not None else None
            sides = ((first.name, i), (second.name if second else "", j))
            names = tuple(name for name, side in sides if side is not None)
            segment = _segment(episode, f"{prefix}{index}", head, partner, names, options)
            result.groups.append(segment)
            if segment.agreed:
                result.agreed.append(segment)
            ends.append((a[i] if i is not None else b[j])[1])
        if number == 1:
            limit = max(ends, default=0.0)
            result.gaps = merged_gaps([(s, e) for s, e, _ in a + b], limit)
    result.pairing = dict(summary)
    _balance(episode, result, timed, options)
    return result


def _balance(episode: EpisodeRecord, result: EpisodeSegments, timed: bool, options: SegmentOptions) -> None:
    wanted = len(result.agreed) - (1 if options.balance == "n-1" else 0)
    wanted = max(0, min(wanted, len(result.gaps)))
    gaps = [
        _gap_segment(episode, f"{episode.key}:none{n}", gap, timed, options)
        for n, gap in enumerate(result.gaps, start=1)
    ]
    gaps.sort(key=lambda segment: seeded_order(options.seed, segment.key, "balance"))
    annotated_texts = [segment.excerpt.text for segment in result.groups]
    kept = [
        segment for segment in gaps[:wanted]
        if segment.excerpt.lines and not any(segment.excerpt.text in text for text in annotated_texts)
    ]
    agreed = sorted(result.agreed, key=lambda segment: seeded_order(options.seed, segment.key, "balance"))
    result.detection = kept + agreed[: len(kept)]
