"""The spans of an imported SHREC file, kept as the submitted annotations of a study's external annotators.

``benchmark.importing.shrec`` reads SHREC's videos into episodes and sends each video's annotator
columns as plain records (``benchmark.importing.signals.spans_imported``), inside the import's
transaction; :func:`keep_imported_spans` stores them. The rules, and why:

- **One study per import tag** (``SHREC: <tag>``; the tag is ``shrec-<file name>`` unless the import
  gave ``--tag``), found again by its slug (:func:`study_slug`, :func:`shrec_study`), so importing the
  file again, or a second file under the same tag, adds to the same study. Its instrument is the SHREC
  spans preset; it is closed (nobody is offered its items: its annotations were made outside Parley),
  its overlap is 2 (SHREC had each video annotated by two people) and it does not require rationales,
  since the released annotations often leave them empty.
- **One item per episode**, in the order the videos are first imported.
- **Annotators by column**: ``Annotations_A`` is external annotator 1, ``_B`` 2, ``_C`` 3, the same
  people across the file's videos (``ExternalAnnotator``, with an account that cannot sign in). A
  column empty for a video gives that video no annotation from that annotator, so a video annotated by
  two has two annotations. Readers take annotators in their number's order ("the first two
  non-empty annotators").
- **Each annotation** is a submitted first version written as imported ratings are
  (``drafts.submit_new``: assignment, response, annotation), holding the column's spans with their
  times, turns, the agent's seat, label, attributes, channel, rationale and correction.
- **Nothing is overwritten**: an annotator's annotation of a video already in the study is left as it
  is when its spans are the file's, and refused (naming the row and column) when they differ.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.db.models import Max
from django.dispatch import receiver
from django.utils import timezone
from django.utils.text import slugify

from benchmark.importing import ImportProblem, ImportResult
from benchmark.importing.shrec_spans import SpanRecord
from benchmark.importing.signals import VideoSpans, spans_imported
from benchmark.instruments.presets import install_preset
from benchmark.models import SocialAttribute, Team

from . import drafts
from .answer_forms import ParsedForm
from .external_ratings import make_external_annotators, source_key
from .forms import default_instructions
from .models import Annotation, Assignment, Span, Study, StudyItem

PRESET = "shrec-spans"
SPANS_QUESTION = "spans"


def study_slug(team: Team, tag: str) -> str:
    """The slug of the study holding the spans imported under ``tag`` into ``team``."""
    return f"{slugify(tag)[:60] or 'shrec'}-t{team.pk}"


def shrec_study(team: Team, tag: str) -> Study | None:
    """The study an import under ``tag`` put its spans in, if there is one."""
    return Study.objects.filter(team=team, slug=study_slug(team, tag)).first()


@receiver(spans_imported, dispatch_uid="annotator_keeps_imported_spans")
def keep_imported_spans(
    sender: Any, *, team: Team, tag: str, file: str, videos: list[VideoSpans], result: ImportResult, **kwargs: Any
) -> str:
    """Store the videos' spans in the tag's study (made if need be); returns the study's slug."""
    study = _study(team, tag, file, result)
    items = _items(study, videos, result)
    annotators = _annotators(study, videos, file, result)
    existing = {(row.item_id, row.annotator_id): row for row in Assignment.objects.filter(item__study=study)}
    stored = _stored_signatures(list(existing.values()))
    now = timezone.now()
    new: list[tuple[Assignment, list[SpanRecord]]] = []
    for video in videos:
        item = items[video.episode_id]
        for read in video.annotators:
            user = annotators[read.column].user
            given = Counter(span.signature() for span in read.spans)
            found = existing.get((item.pk, user.pk))
            if found is None:
                assignment = Assignment(item=item, annotator=user, status=Assignment.Status.SUBMITTED, claimed_at=now,
                                        lease_expires_at=now, submitted_at=now)
                new.append((assignment, read.spans))
            elif stored.get(found.pk, Counter()) != given:
                raise ImportProblem(
                    f"{annotators[read.column].label}'s spans of video {video.external_id!r} are already in study "
                    f"{study.slug!r} and differ from the file's; imported spans are never overwritten: fix the file, "
                    "or import it under another --tag",
                    file=file, place=video.place, field=read.column,
                )
            else:
                result.unchanged["annotation"] += 1
                result.unchanged["span"] += len(read.spans)
    _store(study, new, result)
    result.note(f"the spans are in the annotation study {study.slug!r} ({study.title})")
    return study.slug


def _study(team: Team, tag: str, file: str, result: ImportResult) -> Study:
    slug = study_slug(team, tag)
    study = Study.objects.filter(slug=slug).select_related("instrument").first()
    if study is not None:
        if study.team_id != team.pk or study.instrument.preset != PRESET:
            raise ImportProblem(
                f"the study {slug!r} exists and does not hold SHREC spans; import under another --tag", file=file
            )
        result.unchanged["study"] += 1
        return study
    instrument = install_preset(PRESET)
    study = Study.objects.create(
        team=team, title=f"SHREC: {tag}"[:200], slug=slug, instrument=instrument, overlap=2, is_open=False,
        spans_need_rationale=False, seed=0, instructions=default_instructions(PRESET),
    )
    result.created["study"] += 1
    return study


def _items(study: Study, videos: list[VideoSpans], result: ImportResult) -> dict[int, StudyItem]:
    """The study's item of each video's episode, made (after the study's last) when it has none."""
    whole = study.items.filter(first_turn__isnull=True, compared_episode__isnull=True, task_item__isnull=True)
    items = {item.episode_id: item for item in whole}
    position = (study.items.aggregate(last=Max("position"))["last"] or -1) + 1
    new = []
    for video in videos:
        if video.episode_id in items:
            result.unchanged["study item"] += 1
            continue
        items[video.episode_id] = StudyItem(study=study, episode_id=video.episode_id, position=position)
        new.append(items[video.episode_id])
        position += 1
    StudyItem.objects.bulk_create(new)
    result.created["study item"] += len(new)
    for item in items.values():
        item.study = study
    return items


def _annotators(study: Study, videos: list[VideoSpans], file: str, result: ImportResult) -> dict[str, Any]:
    """The external annotator of each column the videos use (A -> 1, B -> 2, C -> 3), made if need be."""
    known = {annotator.source_key: annotator for annotator in study.external_annotators.select_related("user")}
    columns = {read.column: read.number for video in videos for read in video.annotators}
    wanted = [(source_key(study, column), number) for column, number in sorted(columns.items(), key=lambda c: c[1])]
    taken = {annotator.number: annotator for annotator in known.values()}
    for key, number in wanted:
        if key not in known and number in taken:
            raise ImportProblem(
                f"external annotator {number} of study {study.slug!r} is not the file's column {number}", file=file
            )
    made = make_external_annotators(study, [(key, number) for key, number in wanted if key not in known])
    result.created["external annotator"] += len(made)
    known.update({annotator.source_key: annotator for annotator in made})
    return {column: known[source_key(study, column)] for column in columns}


def _stored_signatures(assignments: list[Assignment]) -> dict[int, Counter]:
    """The spans of each assignment's latest submitted version, as ``SpanRecord.signature``s, by assignment pk."""
    latest: dict[int, int] = {}
    for annotation_id, assignment_id in Annotation.objects.filter(
        assignment__in=assignments, status=Annotation.Status.SUBMITTED
    ).order_by("assignment_id", "-version").values_list("pk", "assignment_id"):
        latest.setdefault(assignment_id, annotation_id)
    owner = {annotation: assignment for assignment, annotation in latest.items()}
    found: dict[int, Counter] = defaultdict(Counter)
    for span in Span.objects.filter(annotation_id__in=list(owner)).prefetch_related("attributes"):
        record = SpanRecord(
            label=span.label, start_s=span.start_s or 0.0, end_s=span.end_s or 0.0,
            attributes=sorted(attribute.key for attribute in span.attributes.all()), channel=span.channel,
            rationale=span.rationale, correction=span.correction,
        )
        found[owner[span.annotation_id]][record.signature()] += 1
    return found


def _store(study: Study, new: list[tuple[Assignment, list[SpanRecord]]], result: ImportResult) -> None:
    """Each new assignment's submitted first version (``drafts.submit_new``), then its spans and their attributes."""
    if not new:
        return
    drafts.submit_new([(assignment, ParsedForm(), None) for assignment, _ in new])
    annotations = dict(Annotation.objects.filter(assignment__in=[assignment for assignment, _ in new])
                       .values_list("assignment_id", "pk"))
    question = study.instrument.questions.get(key=SPANS_QUESTION)
    rows = [
        (Span(annotation_id=annotations[assignment.pk], question=question, label=span.label,
              start_turn=span.start_turn, end_turn=span.end_turn, start_s=span.start_s, end_s=span.end_s,
              seat_position=span.seat_position, channel=span.channel, rationale=span.rationale,
              correction=span.correction), span.attributes)
        for assignment, spans in new for span in spans
    ]
    created = Span.objects.bulk_create([span for span, _ in rows])
    attribute_ids = dict(SocialAttribute.objects.values_list("key", "pk"))
    Link = Span.attributes.through
    Link.objects.bulk_create(
        Link(span_id=span.pk, socialattribute_id=attribute_ids[key])
        for span, (_, keys) in zip(created, rows, strict=True) for key in keys
    )
    result.created["annotation"] += len(new)
    result.created["span"] += len(created)
