"""What the spans a task set was built from look like: SHREC's dataset statistics (Fig. 2, Figs. 13–14).

Stored with the task set (``TaskSet.params["dataset"]``) so the results page can draw the panel
without reading the annotator app. Counts only, so readers compute the shares: overlap share =
``paired_annotations / annotations``, label agreement = ``agreed_pairs / pairs``. They cover the spans
the pairing used (the first two annotators who marked something, or every pair with ``all_pairs``),
overall and per source (SHREC's subset; how a Parley episode came about)::

    {"pairing": "shrec", "overall": {...}, "by_source": {"empathic": {...}, ...}}

each with ``videos``, ``annotators`` (distinct annotators whose spans were paired), ``annotations``
(spans), ``paired_annotations`` (spans in a pair), ``pairs``, ``agreed_pairs``, ``labels``, ``channels``
(``""``: not given) and ``attributes`` (spans ticking each of the seven) as counts, and
``agreed_attribute_counts`` (how many attributes each agreed segment has, in build order).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from .records import ATTRIBUTE_KEYS, EpisodeRecord
from .segments import EpisodeSegments

CHANNELS = ("verbal", "non-verbal", "both", "")


class _Tally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.annotators: set[str] = set()
        self.labels: Counter[str] = Counter()
        self.channels: Counter[str] = Counter()
        self.attributes: Counter[str] = Counter()
        self.agreed_attribute_counts: list[int] = []

    def add(self, result: EpisodeSegments) -> None:
        pairing = result.pairing
        self.counts.update(
            videos=1, annotations=pairing.get("spans", 0), paired_annotations=2 * pairing.get("pairs", 0),
            pairs=pairing.get("pairs", 0), agreed_pairs=pairing.get("agreed", 0),
        )
        self.annotators.update(name for segment in result.groups for name in segment.annotators)
        for span in result.spans:
            self.labels[span.label] += 1
            self.channels[span.channel] += 1
            self.attributes.update(set(span.attributes))
        self.agreed_attribute_counts += [len(segment.attributes) for segment in result.agreed]

    def as_dict(self) -> dict[str, Any]:
        counts = self.counts
        return {
            "videos": counts["videos"],
            "annotators": len(self.annotators),
            "annotations": counts["annotations"],
            "paired_annotations": counts["paired_annotations"],
            "pairs": counts["pairs"],
            "agreed_pairs": counts["agreed_pairs"],
            "labels": {label: self.labels[label] for label in ("error", "competency")},
            "channels": {channel: self.channels[channel] for channel in CHANNELS},
            "attributes": {key: self.attributes[key] for key in ATTRIBUTE_KEYS},
            "agreed_attribute_counts": self.agreed_attribute_counts,
        }


def dataset_statistics(episodes: Sequence[EpisodeRecord], segments: Mapping[str, EpisodeSegments]) -> dict[str, Any]:
    """The statistics of the module docstring (``pairing``: the method used, or "mixed" when episodes differed)."""
    overall = _Tally()
    by_source: dict[str, _Tally] = defaultdict(_Tally)
    for episode in episodes:
        result = segments[episode.key]
        overall.add(result)
        by_source[episode.source].add(result)
    methods = sorted({segments[episode.key].method for episode in episodes})
    return {
        "pairing": methods[0] if len(methods) == 1 else "mixed",
        "overall": overall.as_dict(),
        "by_source": {source: by_source[source].as_dict() for source in sorted(by_source)},
    }
