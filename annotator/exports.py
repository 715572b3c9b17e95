"""Export a study's annotations in long format: one row per answer, and one per span.

The same records feed CSV and JSON Lines. Columns (``COLUMNS``):

- ``study`` (slug), ``item`` (the item's number in the study, from 1), ``item_kind`` (regular,
  gold or attention: filter the last two out before computing agreement; training and qualification
  items are not exported, as their answers are practice and screening, not ratings), ``episode`` and
  ``compared_episode`` (external ids, or ``parley-episode-<pk>`` when there is none), ``excerpt`` (for an
  item that shows part of its episode: the turn indexes shown, ``4-8``, or ``0-5;10-15`` for two snippets),
  ``condition`` (the episode's barrier key: exports are for researchers only, and annotators, who
  are blind to it, never reach them);
- ``annotator``: a pseudonymous id, ``a<user pk>``; usernames never leave the site;
- ``participant_id`` and ``crowd_outcome``, for an annotator who came from a crowd platform's link
  (``annotator.crowd``): the platform's id (the researchers pay by it) and ``finished`` or ``screened_out``
  (empty while they are at work); both empty for an annotator with an account of their own;
- ``row_type`` (``answer`` or ``span``), ``question`` (the question's key), ``question_kind``,
  ``seat`` (the seat position for per-seat questions, and the seat a span is about; else empty),
  ``goal`` and ``goal_text`` (for questions asked per goal: ``<role position>.<goal position>``,
  both from 0, and the goal's text; else empty);
- ``value`` (an answer's text or choice — one row per label of a multi-label answer — or a span's
  label: ``error`` / ``competency``), ``number`` (numeric answers), ``rationale``;
- span anchors ``start_turn``, ``start_char``, ``end_turn``, ``end_char`` (turn indexes inclusive;
  characters from start inclusive to end exclusive), ``start_s`` and ``end_s`` (seconds into the
  episode's recording, for a span marked on it), ``text`` (the characters the span selects,
  one line per turn when it runs over several; empty on answer rows), ``attributes`` (social attribute keys, joined
  by ``;`` in CSV, a list in JSON Lines), ``correction`` and ``channel`` (verbal, non-verbal, both, or
  empty when not said);
- ``scheme``, ``scheme_version`` (the instrument's name and version: the column names predate
  instruments and stay, so scripts that read exports keep working; a study that asks the
  scenario's probes exports those answers under the probes instrument's name), ``annotation_version``,
  ``status``, ``created_at``, ``submitted_at`` (ISO 8601, UTC);
- ``generated_by``: empty for a person's answers; otherwise what generated them (the demo's
  ratings say "the offline scripted model for the demo"). Filter them out before publishing;
- ``annotator_removed_at``: when a researcher removed the annotator from the pool (ISO 8601), empty while they are
  in it. Their submitted work is kept, and counted by the report; filter on this column to leave it out.

Gold answers (``annotator.gold``: an item's adjudicated answers) follow the annotations, item by item, as
answer rows whose ``annotator`` is ``gold``, ``status`` ``final`` (with ``all_versions``, a curation still
in draft too, ``draft``), ``annotation_version`` empty and ``submitted_at`` when the curation was last
saved final. Leave them out before computing agreement between annotators: gold is not one of them.

By default only each assignment's latest submitted version is exported; ``all_versions`` adds
every version, drafts included (``status`` tells them apart). Rows come in a fixed order: item,
annotator, version, then answers by question position and seat, then spans by anchor, so two
exports of the same data are byte for byte the same. Annotations are read in batches, each with
its answers and spans prefetched, so memory stays flat however large the study.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator
from itertools import chain, islice
from typing import Any

from asgiref.sync import sync_to_async
from django.db.models import Exists, F, OuterRef, Prefetch, QuerySet

from benchmark import csv_output
from benchmark.exporting import stable_id, timestamp
from benchmark.instruments.respondents import pseudonym
from benchmark.instruments.targets import Target
from benchmark.models import Answer, SocialAttribute, Turn

from .crowd import export_columns
from .gold import GOLD
from .models import Annotation, Curation, Membership, Span, Study, StudyItem

FORMATS = ("csv", "jsonl")
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}
COLUMNS = (
    "study", "item", "item_kind", "episode", "compared_episode", "excerpt", "condition", "annotator",
    "participant_id", "crowd_outcome",
    "row_type", "question", "question_kind", "seat", "goal", "goal_text", "value", "number", "rationale",
    "start_turn", "start_char", "end_turn", "end_char", "start_s", "end_s", "text", "attributes", "correction",
    "channel",
    "scheme", "scheme_version", "annotation_version", "status", "created_at", "submitted_at", "generated_by",
    "annotator_removed_at",
)
_BATCH = 200
_CHUNK_LINES = 500


def exported_annotations(study: Study, *, all_versions: bool = False) -> QuerySet[Annotation]:
    """The study's annotations to export, in export order, with everything a row needs."""
    annotations = Annotation.objects.filter(assignment__item__study=study).exclude(
        assignment__item__kind__in=(StudyItem.Kind.TRAINING, StudyItem.Kind.QUALIFICATION)
    )
    if not all_versions:
        newer = Annotation.objects.filter(
            assignment=OuterRef("assignment"), status=Annotation.Status.SUBMITTED, version__gt=OuterRef("version")
        )
        annotations = annotations.filter(status=Annotation.Status.SUBMITTED).exclude(Exists(newer))
    return (
        annotations.select_related(
            "assignment__item__episode__barrier", "assignment__item__compared_episode", "response__instrument",
            "probes_response__instrument",
        )
        .prefetch_related(
            *(
                Prefetch(
                    f"{response}__answers",
                    queryset=Answer.objects.select_related("question", "goal__role").order_by(
                        "question__position", F("seat_position").asc(nulls_first=True), "goal__role__position",
                        "goal__position", F("turn").asc(nulls_first=True), F("end_turn").asc(nulls_first=True),
                        F("start_char").asc(nulls_first=True), "pk",
                    ),
                )
                for response in ("response", "probes_response")
            ),
            Prefetch("spans", queryset=Span.objects.select_related("question").order_by(
                "start_turn", F("start_char").asc(nulls_first=True),
                "end_turn", F("end_char").asc(nulls_first=True), "pk",
            )),
            Prefetch("spans__attributes", queryset=SocialAttribute.objects.order_by("position", "key")),
        )
        .order_by("assignment__item__position", "assignment__annotator_id", "version", "pk")
    )


def records(study: Study, *, all_versions: bool = False) -> Iterator[dict[str, Any]]:
    """One dict per answer and per span, keys in ``COLUMNS`` order."""
    turns: dict[int, dict[int, str]] = {}  # the contents of the episodes that have spans, read once each
    removed = dict(Membership.objects.filter(study=study, removed_at__isnull=False)
                   .values_list("annotator_id", "removed_at"))
    crowd_columns = export_columns(study)
    no_crowd = {"participant_id": None, "crowd_outcome": None}
    for annotation in exported_annotations(study, all_versions=all_versions).iterator(chunk_size=_BATCH):
        item = annotation.assignment.item
        shared = {
            "study": study.slug,
            "item": item.position + 1,
            "item_kind": item.kind,
            "episode": stable_id(item.episode),
            "compared_episode": stable_id(item.compared_episode) if item.compared_episode else None,
            "excerpt": ";".join(f"{first}-{last}" for first, last in item.windows()) or None,
            "condition": item.episode.barrier.key,
            "annotator": pseudonym(annotation.assignment.annotator_id),
            **crowd_columns.get(annotation.assignment.annotator_id, no_crowd),
        }
        tail = {
            "scheme": annotation.response.instrument.name,
            "scheme_version": annotation.response.instrument.version,
            "annotation_version": annotation.version,
            "status": annotation.status,
            "created_at": timestamp(annotation.created_at, "seconds"),
            "submitted_at": timestamp(annotation.submitted_at, "seconds"),
            "generated_by": annotation.generated_by,
            "annotator_removed_at": timestamp(removed.get(annotation.assignment.annotator_id), "seconds"),
        }
        responses = [annotation.response] + ([annotation.probes_response] if annotation.probes_response_id else [])
        for response in responses:
            yield from _answer_rows(response, shared, {
                **tail, "scheme": response.instrument.name, "scheme_version": response.instrument.version,
            })
        for span in annotation.spans.all():
            if item.episode_id not in turns:
                turns[item.episode_id] = dict(
                    Turn.objects.filter(episode_id=item.episode_id).values_list("index", "content")
                )
            yield {
                **shared,
                "row_type": "span",
                "question": span.question.key,
                "question_kind": span.question.kind,
                "seat": span.seat_position,
                "goal": None,
                "goal_text": None,
                "value": span.label,
                "number": None,
                "rationale": span.rationale,
                "start_turn": span.start_turn,
                "start_char": span.start_char,
                "end_turn": span.end_turn,
                "end_char": span.end_char,
                "start_s": span.start_s,
                "end_s": span.end_s,
                "text": span_text(span, turns[item.episode_id]),
                "attributes": [attribute.key for attribute in span.attributes.all()],
                "correction": span.correction,
                "channel": span.channel,
                **tail,
            }


def gold_records(study: Study, *, all_versions: bool = False) -> Iterator[dict[str, Any]]:
    """One record per gold answer (final curations; drafts too with ``all_versions``), in item order."""
    curations = Curation.objects.filter(item__study=study)
    if not all_versions:
        curations = curations.filter(status=Curation.Status.FINAL)
    curations = curations.select_related("item__episode__barrier", "item__compared_episode", "response__instrument")
    answers = Answer.objects.select_related("question", "goal__role").order_by(
        "question__position", F("seat_position").asc(nulls_first=True), "goal__role__position", "goal__position",
        F("turn").asc(nulls_first=True), "pk",
    )
    for curation in curations.prefetch_related(Prefetch("response__answers", queryset=answers)).order_by(
        "item__position"
    ):
        item, final = curation.item, curation.status == Curation.Status.FINAL
        shared = {
            "study": study.slug, "item": item.position + 1, "item_kind": item.kind, "episode": stable_id(item.episode),
            "compared_episode": stable_id(item.compared_episode) if item.compared_episode else None,
            "excerpt": ";".join(f"{first}-{last}" for first, last in item.windows()) or None,
            "condition": item.episode.barrier.key, "annotator": GOLD, "participant_id": None, "crowd_outcome": None,
        }
        tail = {
            "scheme": curation.response.instrument.name, "scheme_version": curation.response.instrument.version,
            "annotation_version": None, "status": curation.status,
            "created_at": timestamp(curation.created_at, "seconds"),
            "submitted_at": timestamp(curation.updated_at, "seconds") if final else None, "generated_by": "",
            "annotator_removed_at": None,
        }
        yield from _answer_rows(curation.response, shared, tail)


def _answer_rows(response: Any, shared: dict[str, Any], tail: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One record per answer of ``response`` (an annotation version's, or its probes').

    An answer about a turn fills ``start_turn`` and ``end_turn`` with that turn (an answer about a span,
    with the span's turns and characters), as a marked span's row does.
    """
    for answer in response.answers.all():
        goal, target = answer.goal, Target.of(answer)
        yield {
            **shared,
            "row_type": "answer",
            "question": answer.question.key,
            "question_kind": answer.question.kind,
            "seat": target.seat,
            "goal": f"{goal.role.position}.{goal.position}" if goal else None,
            "goal_text": goal.text if goal else None,
            "value": answer.value,
            "number": answer.number,
            "rationale": answer.reasoning,
            "start_turn": target.turn, "start_char": target.start_char,
            "end_turn": target.turn if target.end_turn is None else target.end_turn, "end_char": target.end_char,
            "start_s": None, "end_s": None,
            "text": None,
            "attributes": None,
            "correction": None,
            "channel": None,
            **tail,
        }


def span_text(span: Span, contents: dict[int, str]) -> str:
    """The characters ``span`` selects from ``contents`` (turn index → text), one line per turn.

    Character offsets apply within the first turn (from ``start_char``) and the last (up to
    ``end_char``); turns between are taken whole, as is every turn of a span without offsets.
    """
    lines = []
    for index in range(span.start_turn, span.end_turn + 1):
        content = contents.get(index, "")
        start = span.start_char if index == span.start_turn and span.start_char is not None else 0
        end = span.end_char if index == span.end_turn and span.end_char is not None else len(content)
        lines.append(content[start:end])
    return "\n".join(lines)


def csv_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The header, then one CSV line per record; empty cells for None, attributes joined by ';'.

    Text a spreadsheet would run as a formula gets a leading quote (``benchmark.csv_output``).
    """

    def cells(row: dict[str, Any]) -> list[Any]:
        attributes = row["attributes"]
        joined = {"attributes": None if attributes is None else ";".join(attributes)}
        return [joined[column] if column in joined else row[column] for column in COLUMNS]

    return csv_output.csv_lines(COLUMNS, (cells(row) for row in rows))


def jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


def in_chunks(lines: Iterator[str], size: int = _CHUNK_LINES) -> Iterator[str]:
    """``lines`` joined a few hundred at a time, so a response is not sent line by line."""
    while chunk := "".join(islice(lines, size)):
        yield chunk


async def in_chunks_async(lines: Iterator[str], size: int = _CHUNK_LINES) -> AsyncIterator[str]:
    """``in_chunks`` for ASGI: each chunk is read (from the database) in Django's sync thread."""
    take = sync_to_async(lambda: "".join(islice(lines, size)))
    while chunk := await take():
        yield chunk


def export_lines(study: Study, fmt: str, *, all_versions: bool = False) -> Iterator[str]:
    """The export of ``study`` in ``fmt`` (one of ``FORMATS``), line by line."""
    rows = chain(records(study, all_versions=all_versions), gold_records(study, all_versions=all_versions))
    return csv_lines(rows) if fmt == "csv" else jsonl_lines(rows)
