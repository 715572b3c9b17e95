"""Drafts, submits and edits of an annotation: the rules that make sure no one's work is lost.

Every autosave carries the ``revision`` the page was showing. A save whose revision is not the
draft's current one came from a stale tab (another tab saved since, or the item was submitted):
it raises ``StaleVersion`` and changes nothing, so a newer version is never overwritten silently.
Each function runs in one transaction with the assignment row locked, so two tabs saving at once
are serialised and every change is all or nothing.

One tab never conflicts with itself, though. A page that unloads (a reload, a link) sends what is
unsaved as a beacon, which reaches the server after the next page of the same tab was served with
the revision before it; a save from an earlier page may also simply arrive late. So a save may name
its browser ``tab`` (a random id the page keeps for the tab's life) and number itself (``tab_save``:
the tab's saves are numbered in the order they are sent). When the stored save came from the same
tab, the revision does not matter: a save numbered higher is newer work of that tab and is stored,
one numbered lower or the same is older and raises ``Superseded`` (nothing changes). A save from any
other tab, or naming none, must carry the current revision as before, so two real tabs still
conflict. The page keeps a copy of unsaved typing until a save is confirmed and sends it again after
a reload (``static/annotator/autosave.js``).

Each version's answers are a ``benchmark.Response`` of the annotator (``Annotation.response``),
whose status these functions keep in step with the version's: a new version's response is a
draft; submitting makes it submitted and the earlier submitted version's superseded, so anyone
reading responses (reports, the episode page) sees one current answer set per assignment.
Leaving draft is when the database checks every answer against its question. A study that asks
the scenario's probes keeps them in a second response of the version (``annotator.probes``), in
step the same way and in the same transactions. A save writes only the answer rows that changed
since the last one (every row written fires the database's answer checks), so an autosave costs
what the annotator changed, not the size of the form.
"""

from collections import defaultdict
from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from benchmark.instruments import versions
from benchmark.instruments.respondents import ANNOTATOR, respondent_for, respondents_for
from benchmark.instruments.targets import Target
from benchmark.models import Answer, Respondent, Response, SocialAttribute

from . import assignment as assignments
from .answer_forms import ParsedForm
from .models import Annotation, Assignment, Span
from .probes import probes_for
from .span_forms import span_row

# More than this many seconds in one save is not time on the page (a sleeping laptop, a forged post).
MAX_SECONDS_PER_SAVE = 3600


class StaleVersion(Exception):
    """The page that posted is behind what is stored: reload it before saving again."""


class Superseded(StaleVersion):
    """A save of this tab sent after this one is already stored: this one is older and is dropped."""


class Incomplete(ValueError):
    """A submit whose answers do not pass the instrument's validation; ``errors`` says which fields."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(f"{len(errors)} field(s) need an answer or a correction")
        self.errors = errors


def current(assignment: Assignment) -> Annotation | None:
    """The latest version of the annotator's work on this assignment (draft or submitted), if any."""
    return assignment.annotations.order_by("-version").first()


def save_draft(
    assignment: Assignment, parsed: ParsedForm, *, revision: int, seconds: int, tab: str = "", tab_save: int = 0
) -> Annotation:
    """Store ``parsed`` as the assignment's draft, replacing what the draft held.

    The first save creates version 1. ``revision`` must be the draft's current revision (0 before
    the first save); otherwise another tab saved since, or the draft was submitted, and
    ``StaleVersion`` is raised. When the stored save came from the same ``tab``, its number
    ``tab_save`` decides instead, as the module's docstring says (``Superseded`` for an older one).
    ``seconds`` spent on the page since the last save are added to the annotation and the
    assignment, and the claim's lease is renewed; if the lease ran out and the slot went to someone
    else, ``annotator.assignment.SlotTaken`` is raised and nothing is stored.
    """
    with transaction.atomic():
        locked = _lock(assignment)
        annotation = _writable_draft(locked, revision, tab, tab_save)
        _store(annotation, parsed)
        _count_save(locked, annotation, seconds, tab, tab_save)
    return annotation


def submit(
    assignment: Assignment, parsed: ParsedForm, *, revision: int, seconds: int, tab: str = "", tab_save: int = 0,
    generated_by: str = "",
) -> Annotation:
    """Save ``parsed`` (validated with ``complete=True``) and submit it; the instrument freezes.

    Raises ``Incomplete`` before touching anything when ``parsed`` has errors, and
    ``StaleVersion`` like ``save_draft`` (which ``tab`` and ``tab_save`` are for). ``generated_by``
    is for answers no person gave (see ``Annotation.generated_by``); the item page never sets it.
    """
    if not parsed.ok:
        raise Incomplete(parsed.errors)
    with transaction.atomic():
        locked = _lock(assignment)
        annotation = _writable_draft(locked, revision, tab, tab_save)
        _store(annotation, parsed)
        _count_save(locked, annotation, seconds, tab, tab_save)
        now = timezone.now()
        annotation.status = Annotation.Status.SUBMITTED
        annotation.submitted_at = now
        annotation.generated_by = generated_by
        annotation.save(update_fields=["status", "submitted_at", "generated_by", "updated_at"])
        # This version's answers become the current ones; the version it edits, if any, is superseded.
        mine = [pk for pk in (annotation.response_id, annotation.probes_response_id) if pk is not None]
        earlier = Q(annotation__assignment=locked) | Q(probe_annotation__assignment=locked)
        Response.objects.filter(Q(pk__in=mine) | (earlier & Q(status=Response.Status.SUBMITTED))).update(status=Case(
            When(pk__in=mine, then=Value(Response.Status.SUBMITTED)),
            default=Value(Response.Status.SUPERSEDED),
        ))
        versions.freeze(annotation.response.instrument)
        assignments.mark_submitted(locked, now=now)
    return annotation


def submit_new(submissions: Sequence[tuple[Assignment, ParsedForm, int | None]]) -> None:
    """Store each new, unsaved assignment with its first version already submitted: ratings made outside
    Parley and imported (``annotator.external_ratings``), thousands at a time.

    Each ``(assignment, parsed, probes instrument pk)`` ends as ``submit`` leaves a first version (a
    submitted annotation of no time on the page, its response and probes' response submitted, the
    instrument frozen), written in a handful of bulk queries instead of a dozen per rating. The
    assignments come already marked submitted; nobody holds a lease on them, so nothing is locked.
    Spans are not stored here: no imported file carries them.
    """
    for _, parsed, _ in submissions:
        if not parsed.ok:
            raise Incomplete(parsed.errors)
        if parsed.spans:
            raise ValueError("submit_new stores answers only, not spans")
    if not submissions:
        return
    with transaction.atomic():
        assignments = Assignment.objects.bulk_create([assignment for assignment, _, _ in submissions])
        studies = {assignment.item.study_id: assignment.item.study for assignment in assignments}
        respondents = respondents_for([assignment.annotator_id for assignment in assignments], ANNOTATOR)
        responses = []
        for assignment, _, probes in submissions:
            instruments = (assignment.item.study.instrument_id, probes)
            responses.extend(
                Response(instrument_id=instrument, episode_id=assignment.item.episode_id, status=Response.Status.DRAFT,
                         respondent=respondents[assignment.annotator_id]) if instrument else None
                for instrument in instruments
            )
        created = iter(Response.objects.bulk_create([response for response in responses if response]))
        responses = [next(created) if response else None for response in responses]
        now = timezone.now()
        Annotation.objects.bulk_create(
            Annotation(assignment=assignment, version=1, status=Annotation.Status.SUBMITTED, submitted_at=now,
                       revision=1, response=responses[2 * number], probes_response=responses[2 * number + 1])
            for number, assignment in enumerate(assignments)
        )
        answers = []
        for number, (_, parsed, _) in enumerate(submissions):
            response_of = {
                response.instrument_id: response.pk for response in responses[2 * number: 2 * number + 2] if response
            }
            answers.extend(
                Answer(response_id=response_of[value.question.instrument_id], question=value.question,
                       **value.target.columns(), value=value.value, number=value.number,
                       reasoning=value.rationale)
                for value in parsed.answers
            )
        Answer.objects.bulk_create(answers, batch_size=2000)
        # Leaving draft is when the database checks every answer against its question.
        response_ids = [response.pk for response in responses if response]
        for start in range(0, len(response_ids), 2000):
            Response.objects.filter(pk__in=response_ids[start: start + 2000]).update(status=Response.Status.SUBMITTED)
        for study in studies.values():
            versions.freeze(study.instrument)


def start_edit(assignment: Assignment, *, version: int, copy: bool = True) -> Annotation:
    """Open a new draft, version + 1, holding a copy of the latest submitted version's answers.

    ``version`` is the version the annotator was looking at; if it is not the latest (an edit was
    already started, or the page is old), ``StaleVersion`` is raised. The submitted version stays
    as it was. Without ``copy`` the draft starts empty (a second qualification attempt answers afresh).
    """
    with transaction.atomic():
        locked = _lock(assignment)
        latest = (
            Annotation.objects.select_for_update().filter(assignment=locked).order_by("-version").first()
        )
        if latest is None or latest.version != version or latest.status != Annotation.Status.SUBMITTED:
            raise StaleVersion("Only the latest submitted version can be edited.")
        probes = latest.probes_response.instrument_id if latest.probes_response_id else None
        draft = _new_version(locked, latest.version + 1, latest.response.instrument_id, probes)
        if copy:
            _copy(latest, draft)
    return draft


def cancel_edit(assignment: Assignment, *, version: int) -> None:
    """Delete the open edit, draft ``version``, so the submitted version before it is the latest again.

    Only a draft that edits a submitted version can be cancelled: a first draft is the only copy of
    the annotator's work, so it is kept. If ``version`` is not the latest or not such an edit (it
    was submitted or cancelled in another tab, or the page is old), ``StaleVersion`` is raised and
    nothing changes. The assignment stays submitted; a tab still open on the cancelled draft gets
    ``StaleVersion`` on its next save, since the latest version is submitted.
    """
    with transaction.atomic():
        locked = _lock(assignment)
        latest = Annotation.objects.select_for_update().filter(assignment=locked).order_by("-version").first()
        if (
            latest is None
            or latest.version != version
            or latest.status != Annotation.Status.DRAFT
            or not Annotation.objects.filter(
                assignment=locked, version__lt=version, status=Annotation.Status.SUBMITTED
            ).exists()
        ):
            raise StaleVersion("There is no edit to cancel: the item shows its latest version.")
        latest.delete()


def _lock(assignment: Assignment) -> Assignment:
    """Lock the assignment's row for the transaction (on SQLite the transaction holds the write lock)."""
    # NO KEY UPDATE still serialises two saves of this assignment, but lets rows that refer to it be
    # written meanwhile.
    no_key = connection.features.has_select_for_no_key_update
    rows = Assignment.objects.filter(pk=assignment.pk).select_for_update(of=("self",), no_key=no_key)
    return rows.select_related("item__study").get()


def _writable_draft(assignment: Assignment, revision: int, tab: str, tab_save: int) -> Annotation:
    """The draft a save at ``revision`` from ``tab`` may write to (created at revision 0), or ``StaleVersion``."""
    latest = (
        Annotation.objects.select_for_update(of=("self",)).select_related("response__instrument", "probes_response")
        .filter(assignment=assignment).order_by("-version").first()
    )
    if latest is None:
        if revision != 0:
            raise StaleVersion("This page is older than the stored annotation.")
        instrument = assignment.item.study.instrument
        probes = probes_for(instrument, assignment.item.episode.scenario)
        return _new_version(assignment, 1, instrument.pk, probes.pk if probes else None)
    if latest.status == Annotation.Status.SUBMITTED:
        raise StaleVersion("This item was submitted in another tab or window.")
    if tab and tab == latest.saved_by_tab:
        if tab_save <= latest.tab_save:
            raise Superseded("A later save from this tab is already stored.")
        return latest
    if latest.revision != revision:
        raise StaleVersion("This draft was saved from another tab or window.")
    return latest


def _new_version(
    assignment: Assignment, version: int, instrument_id: int, probes_instrument_id: int | None = None
) -> Annotation:
    """A draft version of the annotator's work, with its (draft) response about the item's episode, and
    a second one to the scenario's probes when the study asks them."""
    respondent = _respondent(assignment.annotator)
    responses = [
        Response.objects.create(
            instrument_id=instrument, episode_id=assignment.item.episode_id, respondent=respondent,
            status=Response.Status.DRAFT,
        ) if instrument is not None else None
        for instrument in (instrument_id, probes_instrument_id)
    ]
    return Annotation.objects.create(
        assignment=assignment, version=version, response=responses[0], probes_response=responses[1]
    )


def _respondent(annotator: AbstractBaseUser) -> Respondent:
    return respondent_for(annotator, Respondent.Kind.ANNOTATOR)


def _store(annotation: Annotation, parsed: ParsedForm) -> None:
    """Make the annotation's answer and span rows ``parsed``'s.

    Answers are written as a difference (``_store_answers``), so an autosave that changed one
    answer writes one row. Spans are replaced, each as it was read (a draft's may still lack its
    rationale, correction or attributes: the ``Span`` table allows that, and the submit checks the
    study's rule, ``annotator.span_forms``). Answers to the probes go to the probes' response; an answer to a
    question of neither instrument means the page is older than the version (the scenario's probes
    changed since it was drawn): ``StaleVersion``.
    """
    response_of = {annotation.response.instrument_id: annotation.response_id}
    if annotation.probes_response_id:
        response_of[annotation.probes_response.instrument_id] = annotation.probes_response_id
    if any(value.question.instrument_id not in response_of for value in parsed.answers):
        raise StaleVersion("The questions of this item changed since the page was opened: reload it.")
    _store_answers(
        list(response_of.values()),
        [
            Answer(
                response_id=response_of[value.question.instrument_id],
                question=value.question,
                **value.target.columns(),
                value=value.value,
                number=value.number,
                reasoning=value.rationale,
            )
            for value in parsed.answers
        ],
    )
    annotation.spans.all().delete()
    _create_spans(
        annotation, [(Span(annotation=annotation, **span_row(value)), list(value.attributes)) for value in parsed.spans]
    )


def _store_answers(response_ids: list[int], wanted: list[Answer]) -> None:
    """Make the answer rows of ``response_ids`` equal to ``wanted``, writing only the rows that differ.

    Every answer row written fires the answer triggers (``benchmark.instruments.triggers``), so a
    stored row that already says what is wanted is left alone; one whose value, number or
    reasoning changed is updated in place (it keeps its pk); what is no longer wanted is deleted
    and what is new inserted: at most one query each. A row is matched to a wanted answer by its
    place (response, question, seat, goal), and where a multi-label question has several rows in
    one place, by value first, so a row is only ever given a value no other row of its place holds.
    """
    places: dict[tuple, list[Answer]] = defaultdict(list)
    for row in Answer.objects.filter(response_id__in=response_ids).order_by("pk"):
        places[_place(row)].append(row)
    unmatched, changed, new = [], [], []
    for answer in wanted:
        rows = places.get(_place(answer), [])
        same_value = next((row for row in rows if row.value == answer.value), None)
        if same_value is None:
            unmatched.append(answer)
            continue
        rows.remove(same_value)
        if (same_value.number, same_value.reasoning) != (answer.number, answer.reasoning):
            same_value.number, same_value.reasoning = answer.number, answer.reasoning
            changed.append(same_value)
    for answer in unmatched:
        rows = places.get(_place(answer))
        if not rows:
            new.append(answer)
            continue
        row = rows.pop(0)
        row.value, row.number, row.reasoning = answer.value, answer.number, answer.reasoning
        changed.append(row)
    removed = [row.pk for rows in places.values() for row in rows]
    if removed:
        Answer.objects.filter(pk__in=removed).delete()
    if changed:
        Answer.objects.bulk_update(changed, ["value", "number", "reasoning"])
    if new:
        Answer.objects.bulk_create(new)


def _place(answer: Answer) -> tuple[int, int, Target]:
    """Where an answer sits in its response: its question, about which target."""
    return answer.response_id, answer.question_id, Target.of(answer)


def _create_spans(annotation: Annotation, spans: list[tuple[Span, list[str]]]) -> None:
    """Insert spans and their attribute links in two bulk queries (plus one to look up the attributes)."""
    if not spans:
        return
    created = Span.objects.bulk_create([span for span, _ in spans])
    keys = {key for _, span_keys in spans for key in span_keys}
    attribute_ids = dict(SocialAttribute.objects.filter(key__in=keys).values_list("key", "pk")) if keys else {}
    Link = Span.attributes.through
    Link.objects.bulk_create(
        Link(span_id=span.pk, socialattribute_id=attribute_ids[key])
        for span, (_, span_keys) in zip(created, spans, strict=True)
        for key in dict.fromkeys(span_keys)
        if key in attribute_ids
    )


def _copy(source: Annotation, target: Annotation) -> None:
    """Copy ``source``'s answers (its probes' too), spans and span attributes onto ``target``."""
    copied = {source.response_id: target.response_id}
    if source.probes_response_id and target.probes_response_id:
        copied[source.probes_response_id] = target.probes_response_id
    Answer.objects.bulk_create(
        Answer(
            response_id=copied[answer.response_id],
            question_id=answer.question_id,
            **Target.of(answer).columns(),
            value=answer.value,
            number=answer.number,
            reasoning=answer.reasoning,
        )
        for answer in Answer.objects.filter(response_id__in=copied).order_by("pk")
    )
    spans = list(source.spans.prefetch_related("attributes").order_by("pk"))  # keep their numbering
    _create_spans(
        target,
        [
            (
                Span(
                    annotation=target,
                    question_id=span.question_id,
                    label=span.label,
                    start_turn=span.start_turn,
                    end_turn=span.end_turn,
                    start_char=span.start_char,
                    end_char=span.end_char,
                    start_s=span.start_s,
                    end_s=span.end_s,
                    seat_position=span.seat_position,
                    channel=span.channel,
                    rationale=span.rationale,
                    correction=span.correction,
                ),
                [attribute.key for attribute in span.attributes.all()],
            )
            for span in spans
        ],
    )


def _count_save(assignment: Assignment, annotation: Annotation, seconds: int, tab: str, tab_save: int) -> None:
    """Bump the revision, note which tab saved, add the time spent, and keep the claim alive."""
    seconds = max(0, min(int(seconds), MAX_SECONDS_PER_SAVE))
    annotation.revision += 1
    annotation.saved_by_tab, annotation.tab_save = tab, tab_save if tab else 0
    annotation.seconds_spent += seconds
    annotation.save(update_fields=["revision", "saved_by_tab", "tab_save", "seconds_spent", "updated_at"])
    assignment.seconds_spent += seconds
    assignment.save(update_fields=["seconds_spent"])
    if assignment.status != Assignment.Status.SUBMITTED:
        assignments.renew(assignment)

