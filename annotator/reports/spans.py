"""The spans of a study's span questions, read for the agreement report: each with its attribute keys,
its position in turns and, for spans on a recording, in seconds, so spans of one item can be paired
across annotators by how much they overlap; and each item's continuum (its turns, its recording's
seconds) for Krippendorff's unitizing alpha."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet
from django.db.models.functions import Length

from benchmark.models import Turn

from ..models import Annotation, Span

if TYPE_CHECKING:
    from .build import Unit


def read_spans(
    annotations: QuerySet[Annotation],
    keys: list[str],
    units: dict[int, Unit],
    owners: dict[int, tuple[int, str]],
) -> list[dict[str, Any]]:
    """The spans of span questions, with their attribute keys and positions in turns."""
    if not keys:
        return []
    rows = list(
        Span.objects.filter(annotation__in=annotations, question__key__in=keys)
        .order_by("pk")
        .values_list(
            "pk", "annotation_id", "question__key", "label", "start_turn", "end_turn", "start_char", "end_char",
            "start_s", "end_s",
        )
    )
    if not rows:
        return []
    attributes: dict[int, list[str]] = defaultdict(list)
    through = Span.attributes.through.objects.filter(span__annotation__in=annotations, span__question__key__in=keys)
    for span_id, key in through.order_by("socialattribute__position", "socialattribute__key").values_list(
        "span_id", "socialattribute__key"
    ):
        attributes[span_id].append(key)
    lengths: dict[tuple[int, int], int] = {}
    if any(row[6] is not None for row in rows):
        episodes = {units[owners[row[1]][0]].episode_id for row in rows if row[1] in owners}
        lengths = {
            (episode_id, index): length
            for episode_id, index, length in Turn.objects.filter(episode_id__in=episodes)
            .annotate(length=Length("content"))
            .values_list("episode_id", "index", "length")
        }
    spans = []
    for pk, annotation_id, key, label, start_turn, end_turn, start_char, end_char, start_s, end_s in rows:
        if annotation_id not in owners:
            continue
        item_id, annotator = owners[annotation_id]
        episode_id = units[item_id].episode_id
        start, end = span_position(
            start_turn,
            end_turn,
            start_char,
            end_char,
            lengths.get((episode_id, start_turn), 0),
            lengths.get((episode_id, end_turn), 0),
        )
        spans.append(
            {
                "item": units[item_id].name,
                "annotator": annotator,
                "question": key,
                "label": label,
                "start": start,
                "end": end,
                "attributes": attributes.get(pk, []),
                "start_s": start_s,
                "end_s": end_s,
            }
        )
    return spans


def span_continua(units: dict[int, Unit]) -> dict[str, dict[str, float | None]]:
    """Each item's continuum: {"turns": number of turn positions, "seconds": length of its recording}.

    Turns run from position 0 to the last turn's index + 1 (as `span_position` measures them). The
    seconds are the recording's duration or, when longer or unknown, the end of its last timed turn;
    None for an episode without either.
    """
    return {
        unit.name: {"turns": None if unit.last_turn is None else float(unit.last_turn + 1), "seconds": unit.seconds}
        for unit in units.values()
    }


def span_position(
    start_turn: int, end_turn: int, start_char: int | None, end_char: int | None, start_length: int, end_length: int
) -> tuple[float, float]:
    """A span as a half-open interval [start, end) measured in turns, each turn one unit long.

    Whole turns s..e give [s, e + 1). Character offsets refine the two ends by the share of the
    turn's text they cut off: characters [c1, c2) of turns s..e give [s + c1 / len(s), e + c2 /
    len(e)). So two spans inside one long turn overlap only as much as their text does, and a
    turn counts the same however long it is.
    """
    start, end = float(start_turn), float(end_turn + 1)
    if start_char is not None and end_char is not None:
        if start_length > 0:
            start = start_turn + min(start_char, start_length) / start_length
        if end_length > 0:
            end = end_turn + min(end_char, end_length) / end_length
    return start, end
