"""A study's submitted spans as the plain records SHREC's task builders read (``benchmark.shrec.records``).

What counts is what the agreement report counts (``reports.build.latest_submitted``): each
assignment's latest submitted version, on regular items. Per episode the annotators come in the
study's order, which the builders' "first two annotators who marked something" depends on: external
annotators by their number (an imported SHREC file numbers them in column order: Annotations_A is
external 1), then everyone else in the order they took the item.

Each turn is printed under its seat's character name; in an imported SHREC episode the robot's seat
(0) under the transcript's label "AI Agent", so excerpts read as SHREC's do ("User A" is the user's). The
agent is the seat the spans are about (``Span.seat_position``; SHREC's imports set the "AI Agent"
seat), else the first seat a language agent plays, else seat 0. The source the subsets are
stratified by is SHREC's subset (``episode.settings["shrec"]["source"]``) or, for Parley's own
episodes, how the episode came about (simulated, chat, imported).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from benchmark.importing.shrec import AGENT as SHREC_AGENT
from benchmark.instruments.respondents import pseudonym
from benchmark.models import Episode, Seat, Turn
from benchmark.shrec.records import AnnotatorSpans, EpisodeRecord, SpanRecord, TurnRecord

from .models import Span, Study, StudyItem
from .reports.build import latest_submitted

_NOT_EXTERNAL = 10**9  # sorts annotators who are not external after the external ones


def _annotations(study: Study) -> dict[int, list[tuple[int, str]]]:
    """Per episode, its annotations (pk, annotator's name) in the study's annotator order."""
    rows = (
        latest_submitted(study)
        .filter(assignment__item__kind=StudyItem.Kind.REGULAR)
        .values_list(
            "pk", "assignment__item__episode_id", "assignment__annotator_id",
            "assignment__annotator__external_annotator__number", "assignment__claimed_at", "assignment_id",
        )
    )
    ordered = sorted(
        rows, key=lambda row: (row[1], row[3] if row[3] is not None else _NOT_EXTERNAL, row[4], row[5])
    )
    per_episode: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for pk, episode_id, annotator_id, number, _, _ in ordered:
        per_episode[episode_id].append((pk, f"external {number}" if number is not None else pseudonym(annotator_id)))
    return per_episode


def _spans(annotation_ids: list[int]) -> dict[int, list[SpanRecord]]:
    attributes: dict[int, list[str]] = defaultdict(list)
    through = Span.attributes.through.objects.filter(span__annotation_id__in=annotation_ids)
    for span_id, key in through.order_by("socialattribute__position", "socialattribute__key").values_list(
        "span_id", "socialattribute__key"
    ):
        attributes[span_id].append(key)
    spans: dict[int, list[SpanRecord]] = defaultdict(list)
    for span in Span.objects.filter(annotation_id__in=annotation_ids).order_by("annotation_id", "pk"):
        spans[span.annotation_id].append(
            SpanRecord(
                id=span.pk, label=span.label, start_turn=span.start_turn, end_turn=span.end_turn,
                start_s=span.start_s, end_s=span.end_s, attributes=tuple(attributes.get(span.pk, ())),
                rationale=span.rationale, correction=span.correction, channel=span.channel, seat=span.seat_position,
            )
        )
    return spans


def _agent_seat(episode_spans: list[SpanRecord], seats: list[tuple[int, str]]) -> int:
    about = Counter(span.seat for span in episode_spans if span.seat is not None)
    if about:
        return about.most_common(1)[0][0]
    agents = [position for position, player in seats if player == Seat.Player.AGENT]
    return agents[0] if agents else 0


def study_episode_records(study: Study) -> list[EpisodeRecord]:
    """Every episode of the study's regular items with its turns and its annotators' submitted spans."""
    annotations = _annotations(study)
    spans = _spans([pk for rows in annotations.values() for pk, _ in rows])
    episode_ids = list(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).order_by("position").values_list(
            "episode_id", flat=True
        )
    )
    episode_ids = list(dict.fromkeys(episode_ids))
    imported = set(
        Episode.objects.filter(pk__in=episode_ids, settings__has_key="shrec").values_list("pk", flat=True)
    )
    turns: dict[int, list[TurnRecord]] = defaultdict(list)
    for turn in Turn.objects.filter(episode_id__in=episode_ids).select_related("seat__character").order_by(
        "episode_id", "index"
    ):
        speaker = turn.seat.character.name
        if turn.episode_id in imported and turn.seat.position == 0:
            speaker = SHREC_AGENT  # the transcript's own label, which SHREC's excerpts print
        turns[turn.episode_id].append(
            TurnRecord(
                turn.index, turn.seat.position, speaker, turn.content, turn.start_s, turn.end_s,
                tuple((float(seconds), str(word)) for seconds, word in (turn.words or [])),
            )
        )
    seats: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for episode_id, position, player in Seat.objects.filter(episode_id__in=episode_ids).order_by(
        "episode_id", "position"
    ).values_list("episode_id", "position", "player"):
        seats[episode_id].append((position, player))
    records = []
    for episode in Episode.objects.filter(pk__in=episode_ids).only("pk", "external_id", "settings", "source"):
        annotators = [AnnotatorSpans(name, tuple(spans.get(pk, ()))) for pk, name in annotations.get(episode.pk, [])]
        marked = [span for annotator in annotators for span in annotator.spans]
        shrec = (episode.settings or {}).get("shrec") or {}
        records.append(
            EpisodeRecord(
                key=episode.external_id or str(episode.pk),
                turns=turns.get(episode.pk, []),
                annotators=annotators,
                agent_seat=_agent_seat(marked, seats.get(episode.pk, [])),
                source=str(shrec.get("source") or episode.source),
                episode_id=episode.pk,
            )
        )
    order = {episode_id: position for position, episode_id in enumerate(episode_ids)}
    return sorted(records, key=lambda record: order[record.episode_id])
