"""What the spans a task set was built from look like: SHREC's dataset statistics (Fig. 2, Figs. 13–14).

Stored with the task set (``TaskSet.params["dataset"]``) so the results page can draw the panel
without reading the annotator app: per source and overall, the episodes, the spans paired, the
pairs and the agreed pairs, overlap share (spans in a pair / spans) and label agreement (agreed pairs
/ pairs), and how often each label, channel and attribute was marked. Counts cover the spans the
pairing used (the first two annotators who marked something, or every pair with ``all_pairs``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from .records import ATTRIBUTE_KEYS, EpisodeRecord
from .segments import EpisodeSegments

OVERALL = "all"


def _share(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 6) if denominator else None


def dataset_statistics(episodes: Sequence[EpisodeRecord], segments: Mapping[str, EpisodeSegments]) -> dict[str, Any]:
    """Per source (and ``"all"``): episodes, spans, pairs, agreement and the label/channel/attribute counts."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    labels: dict[str, Counter[str]] = defaultdict(Counter)
    channels: dict[str, Counter[str]] = defaultdict(Counter)
    attributes: dict[str, Counter[str]] = defaultdict(Counter)
    for episode in episodes:
        result = segments[episode.key]
        for source in (episode.source or "", OVERALL):
            counts[source].update(episodes=1, **result.pairing)
            for span in result.spans:
                labels[source][span.label] += 1
                channels[source][span.channel or "unknown"] += 1
                attributes[source].update(span.attributes)
    statistics = {}
    for source in sorted(counts, key=lambda name: (name == OVERALL, name)):
        tally = counts[source]
        statistics[source] = {
            "episodes": tally["episodes"],
            "spans": tally["spans"],
            "pairs": tally["pairs"],
            "agreed_pairs": tally["agreed"],
            "overlap_share": _share(2 * tally["pairs"], tally["spans"]),
            "label_agreement": _share(tally["agreed"], tally["pairs"]),
            "labels": dict(sorted(labels[source].items())),
            "channels": dict(sorted(channels[source].items())),
            "attributes": {key: attributes[source][key] for key in ATTRIBUTE_KEYS},
        }
    return statistics
