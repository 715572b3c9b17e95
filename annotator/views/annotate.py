"""Pages annotators work in: their studies, a study's instructions, the item page, drafts and submits.

Each view reads as the same short story: who asks (login), what they may touch (their own
membership or assignment; anything else is a 404, so ids reveal nothing), which function does the
work (``annotator.assignment``, ``annotator.drafts``, ``annotator.answer_forms``), what is rendered.

Annotators are blind to the condition. The item page, its save status and its conflict page are
rendered from plain values only (``annotator.item_page``: names, goals, turn text, the questions'
wording, the assignment's id), never from a model instance, so no template can walk to an
episode's barrier, tag, source, settings or external id, a seat's model, strategy or barrier flag,
a turn's model, an evaluation, or anyone else's answers.
"""

import re
from collections import defaultdict
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST, require_safe

from benchmark.episodes import recordings
from benchmark.models import Recording

from .. import assignment as assignments
from .. import check_actions, crowd, drafts, item_media, pool, qualification, training
from ..answer_forms import FormValues
from ..assignment import QUALITY_KINDS
from ..instructions import summarise
from ..item_page import (
    ItemPage,
    ItemRef,
    StudyRef,
    progress_bar,
    reference_barriers,
    span_attributes,
)
from ..models import Annotation, Assignment, Membership, StudyItem
from ..permissions import is_researcher, own_assignment
from . import crowd as crowd_views

# A browser tab's id, as static/annotator/autosave.js makes it.
TAB_ID = re.compile(r"[0-9a-f]{32}")

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
                "progress": progress_bar(row.get("submitted", 0), row.get("in_progress", 0), remaining),
                "in_progress": row.get("in_progress", 0),
                "remaining": remaining,
                "can_continue": not membership.removed_at and bool(
                    row.get("in_progress", 0) or (study.is_open and remaining)),
                "removed": membership.removed_at is not None,
                "submitted_items": submitted_items[study.pk],
                "curator": membership.is_curator and membership.removed_at is None,  # adjudicates (views/curation)
            }
        )
    context = {"studies": studies, "is_researcher": is_researcher(request.user),
               "invitations": pool.pending_for(request.user)}
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
    questions = list(study.instrument.questions.all())
    context = {
        "study": study,
        "membership": membership,
        "questions": [summarise(question) for question in questions],
        "barriers": reference_barriers(questions, study.team_id),
        "attributes": span_attributes(questions),
    }
    return render(request, "annotator/instructions.html", context)


@require_GET
@login_required
def next_item(request: HttpRequest, slug: str) -> HttpResponse:
    """The annotator's current item, or a newly claimed one; a thank-you page when nothing is left."""
    membership = _membership(request, slug)
    if membership.instructions_read_at is None:
        return redirect("annotator:instructions", slug=slug)
    if crowd.comprehension_due(membership):
        return redirect("annotator:comprehension", slug=slug)
    qualification.settle(membership.study, request.user)  # an attempt another tab finished is scored first
    claimed = assignments.claim_next(membership.study, request.user)
    if claimed is not None:
        return redirect("annotator:item", assignment_id=claimed.pk)
    stopped = stopped_page(request, membership)
    if stopped is not None:
        return stopped
    return crowd_views.end_page(request, membership)


@require_GET
@login_required
def item(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The item page: context, both characters, the transcript, and the form (or the submitted answers)."""
    assignment = own_assignment(request, assignment_id)
    page = ItemPage(assignment)
    failed = request.session.pop(_failed_submit_key(assignment), None)
    if failed is None:
        context = page.context(request.user, FormValues.stored(page.annotation))
    else:
        # Once, right after a submit that did not go through: what was posted, with each problem by its field.
        context = page.context(request.user, FormValues.posted(QueryDict(failed["posted"])), errors=failed["errors"])
        context["failed_submit"] = True
    context["answers_final"] = training.answers_final(assignment.item)
    context["training_item"] = assignment.item.kind == StudyItem.Kind.TRAINING
    context["training_feedback"] = training.feedback(
        assignment, {seat.position: seat.character.name for seat in page.main_seats}
    )
    return render(request, "annotator/item.html", context)


@require_safe
@login_required
def recording(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The recording of the item's episode, for the annotator holding the item (claimed, or submitted to
    reread) when the item shows the whole episode; a claim released to someone else sees it no more. Range
    requests let the player seek."""
    assignment = own_assignment(request, assignment_id)
    if assignment.status == Assignment.Status.RELEASED:
        raise Http404("This item is no longer yours.")
    if not item_media.plays_recording(assignment.item):
        raise Http404("This item shows part of its episode, without the recording.")
    return recordings.serve(request, Recording.objects.filter(episode_id=assignment.item.episode_id).first())


@require_POST
@login_required
def save_draft(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Autosave (htmx, or a beacon as the page closes): store the draft and say whether it is saved."""
    assignment = own_assignment(request, assignment_id)
    page = ItemPage(assignment, with_answers=False)
    parsed = page.parse(request.POST, complete=False)
    try:
        annotation = drafts.save_draft(assignment, parsed, **_sender(request.POST))
    except drafts.Superseded:
        # A late save from an earlier page of this tab: what the tab sent after it is stored.
        return _save_status(request, assignment, annotation=drafts.current(assignment))
    except (drafts.StaleVersion, assignments.SlotTaken) as problem:
        return _save_status(request, assignment, error=str(problem), status=409)
    return _save_status(request, assignment, annotation=annotation, problems=list(parsed.errors.values()))


@require_http_methods(["GET", "POST"])
def submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Validate every answer; on errors keep the draft and show them by their fields, else submit and go on.

    Both outcomes redirect (post/redirect/get), so a reload never sends the submit again with a
    revision the failed submit itself made stale. A GET (the address opened from history) goes to
    the item page, which checks who asks.
    """
    if request.method == "GET":
        return redirect("annotator:item", assignment_id=assignment_id)
    return _submit(request, assignment_id)


@login_required
def _submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = own_assignment(request, assignment_id)
    page = ItemPage(assignment, with_answers=False)
    sender = _sender(request.POST)
    parsed = page.parse(request.POST, complete=True)
    try:
        if not parsed.ok:
            draft = page.parse(request.POST, complete=False)
            drafts.save_draft(assignment, draft, **sender)
            posted = request.POST.copy()
            posted.pop("csrfmiddlewaretoken", None)
            request.session[_failed_submit_key(assignment)] = {"posted": posted.urlencode(), "errors": parsed.errors}
            return redirect("annotator:item", assignment_id=assignment.pk)
        drafts.submit(assignment, parsed, **sender)
    except (drafts.StaleVersion, assignments.SlotTaken) as problem:
        study = assignment.item.study
        context = {"assignment": ItemRef(assignment.pk), "study": StudyRef(study.title, study.slug),
                   "message": str(problem)}
        return render(request, "annotator/conflict.html", context, status=409)
    return _after_submit(request, assignment)


def _after_submit(request: HttpRequest, assignment: Assignment) -> HttpResponse:
    """Where a submit leads: a training item's correct answers; after a check, a warning if checks act; else on."""
    item, study = assignment.item, assignment.item.study
    if item.kind == StudyItem.Kind.TRAINING:
        return redirect("annotator:item", assignment_id=assignment.pk)
    if item.kind == StudyItem.Kind.QUALIFICATION:
        qualification.settle(study, request.user)
    elif item.kind in QUALITY_KINDS and check_actions.act_on_checks(study, request.user) == "warned":
        messages.warning(request, "Several of your answers to check items did not match what they should be. "
                         "Please read each conversation and the instructions with care: if this goes on, your "
                         "work in this study will be paused.")
        return redirect("annotator:next", slug=study.slug)
    messages.success(request, "Submitted — thank you.")
    return redirect("annotator:next", slug=study.slug)


@require_POST
@login_required
def edit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Open a new version of a submitted annotation; the submitted one stays as it was."""
    assignment = own_assignment(request, assignment_id)
    if training.answers_final(assignment.item):
        messages.info(request, "Answers to training and qualification items cannot be edited once submitted.")
        return redirect("annotator:item", assignment_id=assignment.pk)
    if Membership.objects.filter(study_id=assignment.item.study_id, annotator=request.user,
                                 removed_at__isnull=False).exists():
        messages.info(request, "A researcher removed you from this study's pool: what you submitted is kept as it is.")
        return redirect("annotator:item", assignment_id=assignment.pk)
    try:
        drafts.start_edit(assignment, version=_number(request.POST, "version"))
    except drafts.StaleVersion:
        messages.info(request, "This item already has a newer version; it is shown below.")
    return redirect("annotator:item", assignment_id=assignment.pk)


@require_POST
@login_required
def cancel_edit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Throw away an edit in progress; the item shows the submitted version again, read-only."""
    assignment = own_assignment(request, assignment_id)
    try:
        drafts.cancel_edit(assignment, version=_number(request.POST, "version"))
    except drafts.StaleVersion as problem:
        messages.info(request, str(problem))
    else:
        messages.success(request, "Edit cancelled: your submitted answers are unchanged.")
    return redirect("annotator:item", assignment_id=assignment.pk)


def stopped_page(request: HttpRequest, membership: Membership) -> HttpResponse | None:
    """The page for an annotator who gets no item because of where they stand: a second qualification attempt
    to start, qualification failed (the one end page: thanks, and a crowd worker's screen-out code), or paused by
    failed checks; None for anyone else."""
    study = membership.study
    current = training.stage(study, request.user)
    if current.name == "retry":
        context = {"study": study, "score": qualification.last_score(study, request.user)}
        return render(request, "annotator/training/retry.html", context)
    if current.name == "disqualified":
        membership.refresh_from_db(fields=["disqualified_at"])
        return crowd_views.end_page(request, membership)
    if current.name == "paused":
        return render(request, "annotator/training/paused.html", {"study": study})
    return None


# Who may touch what, and small readers


def _membership(request: HttpRequest, slug: str) -> Membership:
    """The signed-in user's membership of the study; anyone outside the pool (researchers too) gets a 404."""
    return get_object_or_404(
        Membership.objects.select_related("study__instrument"), study__slug=slug, annotator=request.user
    )


def _failed_submit_key(assignment: Assignment) -> str:
    """Where a failed submit leaves its answers and problems in the session for the item page to show once."""
    return f"annotator:failed-submit:{assignment.pk}"


def _number(data: QueryDict, name: str) -> int:
    """A non-negative whole number from the form; anything else counts as 0."""
    try:
        return max(0, int(data.get(name, 0)))
    except (TypeError, ValueError):
        return 0


def _sender(data: QueryDict) -> dict[str, Any]:
    """What a save says about the page that sent it: ``revision``, ``seconds``, and its tab and that tab's
    number for the save (``annotator.drafts``). A tab id or number out of shape counts as no tab."""
    tab, tab_save = data.get("tab", ""), _number(data, "tab_save")
    if not (TAB_ID.fullmatch(tab) and 0 < tab_save < 2**31):
        tab, tab_save = "", 0
    revision, seconds = _number(data, "revision"), _number(data, "seconds")
    return {"revision": revision, "seconds": seconds, "tab": tab, "tab_save": tab_save}


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
        "assignment": ItemRef(assignment.pk),
        "revision": annotation.revision if annotation else 0,
        "saved_at": timezone.localtime(annotation.updated_at) if annotation else None,
        "error": error,
        "problems": problems or [],
    }
    return render(request, "annotator/partials/_save_status.html", context, status=status)


def _submitted_assignments(user: Any) -> list[Assignment]:
    """The user's submitted items, with their latest version (an edit may be open), the opening of the
    scenario's shared context to recognise each by (what the item page shows anyway, never the
    condition) and, for the demo's generated ratings, what generated it."""
    latest = Annotation.objects.filter(assignment=OuterRef("pk")).order_by("-version")
    return list(
        Assignment.objects.filter(annotator=user, status=Assignment.Status.SUBMITTED)
        .select_related("item")
        .annotate(
            latest_version=Subquery(latest.values("version")[:1]),
            latest_status=Subquery(latest.values("status")[:1]),
            latest_generated_by=Subquery(latest.values("generated_by")[:1]),
            context=F("item__episode__scenario__context"),
        )
        .order_by("submitted_at", "pk")
    )
