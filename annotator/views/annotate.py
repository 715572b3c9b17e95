"""Pages annotators work in: their studies, a study's instructions, the item page, drafts and submits.

Each view reads as the same short story: who asks (login), what they may touch (their own
membership or assignment; anything else is a 404, so ids reveal nothing), which function does the
work (``annotator.assignment``, ``annotator.drafts``, ``annotator.schemes``), what is rendered.

Annotators are blind to the condition. The item page is built from plain values gathered by
``_ItemPage`` (names, goals, turn text), never from the episode, seat or turn objects, so no
template can reach an episode's barrier, tag, source, settings or external id, a seat's model,
strategy or barrier flag, a turn's model, an evaluation, or anyone else's answers.
"""

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, OuterRef, Prefetch, Q, Subquery
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from benchmark.models import Barrier, Relationship, Seat, Turn

from .. import assignment as assignments
from .. import drafts, schemes
from ..models import Annotation, Assignment, Membership, Question, SocialAttribute, Span, StudyItem
from ..permissions import is_researcher, own_assignment

Kind = Question.Kind

PROFILE_LABELS = {
    "age": "Age",
    "gender": "Gender",
    "pronouns": "Pronouns",
    "occupation": "Occupation",
    "big_five": "Big Five personality",
    "moral_values": "Moral values",
    "personal_values": "Personal values",
    "personality": "Personality",
    "decision_style": "Decision style",
    "public_info": "Public information",
    "secret": "Secret",
}


# Annotators' pages


@require_GET
@login_required
def index(request: HttpRequest) -> HttpResponse:
    """The annotator's studies with their progress, and the items they submitted (to reread or edit)."""
    now = timezone.now()
    counts = {
        row["item__study"]: row
        for row in Assignment.objects.filter(annotator=request.user)
        .values("item__study")
        .annotate(
            submitted=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED)),
            in_progress=Count("pk", filter=Q(status=Assignment.Status.CLAIMED, lease_expires_at__gte=now)),
        )
    }
    submitted_items = defaultdict(list)
    for done in _submitted_assignments(request.user):
        submitted_items[done.item.study_id].append(done)
    studies = []
    for membership in Membership.objects.filter(annotator=request.user).select_related("study"):
        study = membership.study
        row = counts.get(study.pk, {})
        remaining = assignments.remaining_for(study, request.user, now=now)
        studies.append(
            {
                "study": study,
                "instructions_read": membership.instructions_read_at is not None,
                "progress": _progress(row.get("submitted", 0), row.get("in_progress", 0), remaining),
                "in_progress": row.get("in_progress", 0),
                "remaining": remaining,
                "can_continue": study.is_open and bool(row.get("in_progress", 0) or remaining),
                "submitted_items": submitted_items[study.pk],
            }
        )
    context = {"studies": studies, "is_researcher": is_researcher(request.user)}
    return render(request, "annotator/index.html", context)


@require_http_methods(["GET", "POST"])
@login_required
def instructions(request: HttpRequest, slug: str) -> HttpResponse:
    """A study's instructions and what it will ask; "Start" records that they were read."""
    membership = _membership(request, slug)
    study = membership.study
    if request.method == "POST":
        if membership.instructions_read_at is None:
            membership.instructions_read_at = timezone.now()
            membership.save(update_fields=["instructions_read_at"])
        return redirect("annotator:next", slug=study.slug)
    questions = list(study.scheme.questions.all())
    context = {
        "study": study,
        "membership": membership,
        "questions": [_summarise(question) for question in questions],
        "barriers": _reference_barriers(questions),
        "attributes": _span_attributes(questions),
    }
    return render(request, "annotator/instructions.html", context)


@require_GET
@login_required
def next_item(request: HttpRequest, slug: str) -> HttpResponse:
    """The annotator's current item, or a newly claimed one; a thank-you page when nothing is left."""
    membership = _membership(request, slug)
    if membership.instructions_read_at is None:
        return redirect("annotator:instructions", slug=slug)
    claimed = assignments.claim_next(membership.study, request.user)
    if claimed is not None:
        return redirect("annotator:item", assignment_id=claimed.pk)
    submitted = Assignment.objects.filter(
        item__study=membership.study, annotator=request.user, status=Assignment.Status.SUBMITTED
    ).count()
    return render(request, "annotator/done.html", {"study": membership.study, "submitted": submitted})


@require_GET
@login_required
def item(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The item page: context, both characters, the transcript, and the form (or the submitted answers)."""
    assignment = own_assignment(request, assignment_id)
    page = _ItemPage(assignment)
    return render(request, "annotator/item.html", page.context(request.user, _Values.stored(page.annotation)))


@require_POST
@login_required
def save_draft(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Autosave (htmx, or a beacon as the page closes): store the draft and say whether it is saved."""
    assignment = own_assignment(request, assignment_id)
    page = _ItemPage(assignment, with_answers=False)
    parsed = page.parse(request.POST, complete=False)
    try:
        annotation = drafts.save_draft(
            assignment, parsed, revision=_number(request.POST, "revision"), seconds=_number(request.POST, "seconds")
        )
    except (drafts.StaleVersion, assignments.SlotTaken) as problem:
        return _save_status(request, assignment, error=str(problem), status=409)
    problems = list(parsed.errors.values())
    if unstored := drafts.unstored_spans(parsed):
        problems.append(f"{unstored} marked span(s) will be saved once they have a rationale (and a correction).")
    return _save_status(request, assignment, annotation=annotation, problems=problems)


@require_POST
@login_required
def submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Validate every answer; on errors keep the draft and show them by their fields, else submit and go on."""
    assignment = own_assignment(request, assignment_id)
    page = _ItemPage(assignment, with_answers=False)
    revision, seconds = _number(request.POST, "revision"), _number(request.POST, "seconds")
    parsed = page.parse(request.POST, complete=True)
    try:
        if not parsed.ok:
            draft = page.parse(request.POST, complete=False)
            drafts.save_draft(assignment, draft, revision=revision, seconds=seconds)
            page = _ItemPage(assignment)
            context = page.context(request.user, _Values.posted(request.POST), errors=parsed.errors)
            return render(request, "annotator/item.html", context, status=400)
        drafts.submit(assignment, parsed, revision=revision, seconds=seconds)
    except (drafts.StaleVersion, assignments.SlotTaken) as problem:
        context = {"assignment": assignment, "study": assignment.item.study, "message": str(problem)}
        return render(request, "annotator/conflict.html", context, status=409)
    messages.success(request, "Submitted — thank you.")
    return redirect("annotator:next", slug=assignment.item.study.slug)


@require_POST
@login_required
def edit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Open a new version of a submitted annotation; the submitted one stays as it was."""
    assignment = own_assignment(request, assignment_id)
    try:
        drafts.start_edit(assignment, version=_number(request.POST, "version"))
    except drafts.StaleVersion:
        messages.info(request, "This item already has a newer version; it is shown below.")
    return redirect("annotator:item", assignment_id=assignment.pk)


# Who may touch what, and small readers


def _membership(request: HttpRequest, slug: str) -> Membership:
    """The signed-in user's membership of the study; anyone outside the pool (researchers too) gets a 404."""
    return get_object_or_404(
        Membership.objects.select_related("study__scheme"), study__slug=slug, annotator=request.user
    )


def _number(data: QueryDict, name: str) -> int:
    """A non-negative whole number from the form; anything else counts as 0."""
    try:
        return max(0, int(data.get(name, 0)))
    except (TypeError, ValueError):
        return 0


def _save_status(
    request: HttpRequest,
    assignment: Assignment,
    *,
    annotation: Annotation | None = None,
    error: str = "",
    problems: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "assignment": assignment,
        "revision": annotation.revision if annotation else 0,
        "saved_at": timezone.localtime(annotation.updated_at) if annotation else None,
        "error": error,
        "problems": problems or [],
    }
    return render(request, "annotator/partials/_save_status.html", context, status=status)


# The item page


@dataclass
class _Option:
    value: str
    label: str
    description: str
    shortcut: str  # the digit that picks it


@dataclass
class _Field:
    """One input of a question (one per character for per-seat questions), its value and its errors."""

    name: str
    value: str = ""
    error: str = ""
    rationale_name: str = ""
    rationale_value: str = ""
    rationale_error: str = ""
    seat_name: str = ""


@dataclass
class _Entry:
    """A question as the form shows it: one stop for the j / k keys."""

    question: Question
    answer: _Field
    options: list[_Option] = field(default_factory=list)
    slider: dict[str, Any] = field(default_factory=dict)
    spans: str = "[]"
    span_labels: list[str] = field(default_factory=list)


@dataclass
class _Section:
    title: str
    entries: list[_Entry]


@dataclass
class _Speaker:
    name: str
    profile: list[tuple[str, str]]
    goal: str
    reason: str
    private_knowledge: str


@dataclass
class _Turn:
    index: int
    number: int
    speaker: str
    action_type: str
    content: str


@dataclass
class _Conversation:
    label: str
    turns: list[_Turn]
    spans_target: bool


class _Values:
    """Field values for the form: what was just posted, or what a stored annotation holds."""

    def __init__(self, posted: QueryDict | None, stored: dict[tuple[int, int | None, str], str]) -> None:
        self._posted = posted
        self._stored = stored

    @classmethod
    def posted(cls, data: QueryDict) -> "_Values":
        return cls(data, {})

    @classmethod
    def stored(cls, annotation: Annotation | None) -> "_Values":
        stored: dict[tuple[int, int | None, str], str] = {}
        if annotation is not None:
            for answer in annotation.answers.all():
                stored[answer.question_id, answer.seat_position, "answer"] = answer.value
                stored[answer.question_id, answer.seat_position, "rationale"] = answer.rationale
            spans = defaultdict(list)
            for span in annotation.spans.all():
                spans[span.question_id].append(_span_json(span))
            for question_id, rows in spans.items():
                stored[question_id, None, "spans"] = json.dumps(rows)
        return cls(None, stored)

    def get(self, question: Question, seat: int | None, part: str) -> str:
        if self._posted is not None:
            return self._posted.get(schemes.field_name(question, seat, part), "")
        return self._stored.get((question.pk, None if part == "spans" else seat, part), "")


def _span_json(span: Span) -> dict[str, Any]:
    """A stored span as the span editor (static/annotator/spans.js) and ``schemes.parse_form`` read it."""
    return {
        "label": span.label,
        "start_turn": span.start_turn,
        "end_turn": span.end_turn,
        "start_char": span.start_char,
        "end_char": span.end_char,
        "attributes": [attribute.key for attribute in span.attributes.all()],
        "rationale": span.rationale,
        "correction": span.correction,
    }


class _ItemPage:
    """What the item page needs of an assignment, read in a fixed number of queries."""

    def __init__(self, assignment: Assignment, *, with_answers: bool = True) -> None:
        self.assignment = assignment
        self.item: StudyItem = assignment.item
        annotations = Annotation.objects.filter(assignment=assignment).select_related("scheme").order_by("-version")
        if with_answers:
            annotations = annotations.prefetch_related(
                "answers", Prefetch("spans", queryset=Span.objects.prefetch_related("attributes").order_by("pk"))
            )
        self.annotation: Annotation | None = annotations.first()
        self.scheme = self.annotation.scheme if self.annotation else self.item.study.scheme
        self.questions = list(self.scheme.questions.all())
        episodes = [self.item.episode_id] + ([self.item.compared_episode_id] if self.item.compared_episode_id else [])
        seats = Seat.objects.filter(episode_id__in=episodes).select_related("character", "role").order_by("position")
        turns = Turn.objects.filter(episode_id__in=episodes).order_by("index")
        self.seats = {episode: [seat for seat in seats if seat.episode_id == episode] for episode in episodes}
        turns = list(turns.only("episode_id", "index", "seat_id", "action_type", "content"))
        self.turns = {episode: [turn for turn in turns if turn.episode_id == episode] for episode in episodes}

    @property
    def main_seats(self) -> list[Seat]:
        return self.seats[self.item.episode_id]

    def parse(self, data: QueryDict, *, complete: bool) -> schemes.ParsedForm:
        return schemes.parse_form(
            self.scheme,
            data,
            seats=[seat.position for seat in self.main_seats],
            turn_lengths=_turn_lengths(self.turns[self.item.episode_id]),
            complete=complete,
            seat_labels={seat.position: seat.character.name for seat in self.main_seats},
        )

    def context(self, annotator: Any, values: _Values, *, errors: dict[str, str] | None = None) -> dict[str, Any]:
        """The template's context; ``annotator`` is the signed-in user, whose assignment this is."""
        errors = errors or {}
        assignment, item, study = self.assignment, self.item, self.item.study
        read_only = self.annotation is not None and self.annotation.status == Annotation.Status.SUBMITTED
        sections = _sections(
            self.questions, self.main_seats, values, errors, pairwise=bool(item.compared_episode_id)
        )
        anchors = dict(pair for section in sections for entry in section.entries for pair in _anchors(entry))
        has_spans = any(question.kind == Kind.SPAN for question in self.questions)
        conversations = [
            _conversation("Conversation A" if item.compared_episode_id else "", self.seats[episode],
                          self.turns[episode], spans_target=has_spans and episode == item.episode_id)
            for episode in self.seats
        ]
        if len(conversations) > 1:
            conversations[1].label = "Conversation B"
        submitted = Assignment.objects.filter(
            item__study=study, annotator=annotator, status=Assignment.Status.SUBMITTED
        ).count()
        return {
            "assignment": assignment,
            "study": study,
            "annotation": self.annotation,
            "read_only": read_only,
            "revision": self.annotation.revision if self.annotation and not read_only else 0,
            "saved_at": timezone.localtime(self.annotation.updated_at) if self.annotation else None,
            "context_text": item.episode.scenario.context,
            "relationship": Relationship(item.episode.scenario.relationship).label,
            "speakers": _speakers(self.main_seats, show_secret=any(q.dimension == "secret" for q in self.questions)),
            "conversations": conversations,
            "pairwise": len(conversations) > 1,
            "attention_instruction": item.attention_instruction if item.kind == StudyItem.Kind.ATTENTION else "",
            "sections": sections,
            "errors": errors,
            "error_links": [(anchors.get(name, ""), message) for name, message in errors.items()],
            "barriers": _reference_barriers(self.questions),
            "attributes": _span_attributes(self.questions),
            "has_spans": has_spans,
            "progress": _progress(
                submitted,
                int(assignment.status == Assignment.Status.CLAIMED),
                assignments.remaining_for(study, annotator),
            ),
        }


def _turn_lengths(turns: list[Turn]) -> list[int]:
    """Characters in each turn by index, against which span anchors are checked."""
    lengths = [0] * (max((turn.index for turn in turns), default=-1) + 1)
    for turn in turns:
        lengths[turn.index] = len(turn.content)
    return lengths


def _anchors(entry: _Entry) -> list[tuple[str, str]]:
    """(field name, id on the page) for an entry's fields, for the links of the error summary."""
    anchors = [(entry.answer.name, f"q-{entry.answer.name}")]
    if entry.answer.rationale_name:
        anchors.append((entry.answer.rationale_name, entry.answer.rationale_name))
    return anchors


def _sections(
    questions: list[Question], seats: list[Seat], values: _Values, errors: dict[str, str], *, pairwise: bool
) -> list[_Section]:
    """The form, question by question; consecutive per-seat questions are grouped per character."""
    sections: list[_Section] = []
    run: list[Question] = []

    def close_run() -> None:
        for seat in seats:
            entries = [_entry(question, seat, values, errors) for question in run]
            sections.append(_Section(title=f"About {seat.character.name}", entries=entries))
        run.clear()

    for question in questions:
        if question.kind == Kind.PAIRWISE and not pairwise and not question.required:
            continue  # asked only of items that pair two conversations
        if question.per_seat:
            run.append(question)
            continue
        if run:
            close_run()
        sections.append(_Section(title="", entries=[_entry(question, None, values, errors)]))
    if run:
        close_run()
    return sections


def _entry(question: Question, seat: Seat | None, values: _Values, errors: dict[str, str]) -> _Entry:
    options = question.options or {}
    if question.kind == Kind.SPAN:
        name = schemes.field_name(question, part="spans")
        return _Entry(
            question=question,
            answer=_Field(name=name, error=errors.get(name, "")),
            spans=values.get(question, None, "spans") or "[]",
            span_labels=list(options.get("labels", [])),
        )
    position = seat.position if seat else None
    name = schemes.field_name(question, position)
    answer = _Field(name=name, value=values.get(question, position, "answer"), error=errors.get(name, ""),
                    seat_name=seat.character.name if seat else "")
    if question.rationale != "none":
        answer.rationale_name = schemes.field_name(question, position, "rationale")
        answer.rationale_value = values.get(question, position, "rationale")
        answer.rationale_error = errors.get(answer.rationale_name, "")
    choices = options.get("anchors") if question.kind == Kind.LIKERT else options.get("choices")
    entry = _Entry(
        question=question,
        answer=answer,
        options=[
            _Option(
                value=str(choice.get("value", "")),
                label=str(choice.get("label") or choice.get("value", "")),
                description=str(choice.get("description", "")),
                shortcut=str(number) if number <= 9 else "",
            )
            for number, choice in enumerate(choices or [], start=1)
        ],
    )
    if question.kind == Kind.SLIDER:
        labels = options.get("labels") or {}
        low, high = options.get("min", 0), options.get("max", 10)
        entry.slider = {
            "min": low,
            "max": high,
            "step": options.get("step", 1),
            "start": answer.value or (low + high) / 2,
            "min_label": labels.get("min", ""),
            "max_label": labels.get("max", ""),
        }
    return entry


def _speakers(seats: list[Seat], *, show_secret: bool) -> list[_Speaker]:
    """Each character's profile and goal: what a close friend would see, plus the secret when it is asked about."""
    speakers = []
    for seat in seats:
        profile = seat.character.visible_to(Relationship.FAMILY)
        if show_secret and seat.character.secret:
            profile["secret"] = seat.character.secret
        speakers.append(
            _Speaker(
                name=seat.character.name,
                profile=[(label, profile[key]) for key, label in PROFILE_LABELS.items() if key in profile],
                goal=seat.role.goal,
                reason=seat.role.reason,
                private_knowledge=seat.role.private_knowledge,
            )
        )
    return speakers


def _conversation(label: str, seats: list[Seat], turns: list[Turn], *, spans_target: bool) -> _Conversation:
    names = {seat.pk: seat.character.name for seat in seats}
    return _Conversation(
        label=label,
        turns=[
            _Turn(turn.index, turn.index + 1, names.get(turn.seat_id, ""), turn.action_type, turn.content)
            for turn in turns
        ],
        spans_target=spans_target,
    )


def _reference_barriers(questions: list[Question]) -> list[Barrier]:
    """The barriers a barrier-type question offers, for the reference panel (none if it asks no such thing).

    The panel describes every condition alike, so it tells nothing about this item's.
    """
    asked = [question for question in questions if question.truth == "episode.barrier"]
    if not asked:
        return []
    offered = {str(choice.get("value")) for question in asked for choice in question.options.get("choices", [])}
    return [barrier for barrier in Barrier.objects.all() if barrier.key in offered]


def _span_attributes(questions: list[Question]) -> list[SocialAttribute]:
    """The social attributes the scheme's span questions offer, in their usual order."""
    spans = [question for question in questions if question.kind == Kind.SPAN]
    keys = {key for question in spans for key in question.options.get("attributes", [])}
    return list(SocialAttribute.objects.filter(key__in=keys)) if keys else []


def _summarise(question: Question) -> dict[str, Any]:
    """What a question asks for, in a line, for the instructions page."""
    options = question.options or {}
    details: list[dict[str, Any]] = []
    if question.kind == Kind.LIKERT:
        details = options.get("anchors", [])
        values = [str(anchor.get("value")) for anchor in details]
        answer = f"a rating from {values[0]} to {values[-1]}" if values else "a rating"
    elif question.kind == Kind.SLIDER:
        labels = options.get("labels") or {}
        answer = f"a score from {options.get('min')} to {options.get('max')}"
        if labels:
            answer += f" ({options.get('min')}: {labels.get('min', '')}; {options.get('max')}: {labels.get('max', '')})"
    elif question.kind in (Kind.CATEGORICAL, Kind.PAIRWISE):
        choices = options.get("choices", [])
        answer = "one of: " + ", ".join(str(choice.get("label") or choice.get("value")) for choice in choices)
        details = [choice for choice in choices if choice.get("description")]
    elif question.kind == Kind.SPAN:
        answer = "stretches of the transcript you mark as a social error or a social competency"
    else:
        answer = "a short text"
    return {
        "question": question,
        "answer": answer,
        "details": details,
        "numbered": question.kind == Kind.LIKERT,
        "per_seat": question.per_seat,
    }


def _progress(submitted: int, in_progress: int, remaining: int) -> dict[str, int]:
    """Submitted of the items the annotator has or can still get."""
    total = submitted + in_progress + remaining
    return {"submitted": submitted, "total": total, "percent": round(100 * submitted / total) if total else 100}


def _submitted_assignments(user: Any) -> list[Assignment]:
    """The user's submitted items, with their latest version (an edit may be open)."""
    latest = Annotation.objects.filter(assignment=OuterRef("pk")).order_by("-version")
    return list(
        Assignment.objects.filter(annotator=user, status=Assignment.Status.SUBMITTED)
        .select_related("item")
        .annotate(
            latest_version=Subquery(latest.values("version")[:1]),
            latest_status=Subquery(latest.values("status")[:1]),
        )
        .order_by("submitted_at", "pk")
    )
