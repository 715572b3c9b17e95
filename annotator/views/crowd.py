"""Crowd annotators' pages: the platform's link, the comprehension check, and the one end page.

The link makes or finds the worker (``annotator.crowd.arrive``), signs their account in and sends them on to
the study's instructions, setting the cookie that binds the id to this browser. Every refusal is a page that
says why in words a worker can act on, never a traceback. The comprehension check asks the study's
comprehension instrument with the one form that asks an instrument on a page
(``benchmark.instruments.forms.InstrumentForm``). ``end_page`` is where a member's participation ends,
whoever ends it: the queue running dry (``annotate.next_item``), a failed comprehension check here, or failed
qualification items (the training pages): a crowd worker sees the study's completion or screen-out code.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from benchmark.recruiting import ID_RULE, InvalidId, ids_from_query, is_token, new_token
from benchmark.throttle import allowance

from .. import crowd
from ..models import Assignment, Membership, Study

PLATFORM_PARAMETERS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


@require_GET
@never_cache
def link(request: HttpRequest, token: str) -> HttpResponse:
    """The crowd platform's link: identify the worker by the id in the query, bind this browser, sign in."""
    study = get_object_or_404(Study.objects.select_related("team"), invite_token=token)
    if not study.crowd_link:
        return _refused(request, study, crowd.NotCrowdStudy.title, "Check the link the study site gave you; if it "
                        "is right, tell the researchers.", crowd.NotCrowdStudy.status)
    try:
        ids = ids_from_query(request.GET)
    except InvalidId as problem:
        return _refused(request, study, "The participant id in this link cannot be used", str(problem), 400)
    if ids is None:
        return _refused(request, study, "This link has no participant id",
                        "Open the study from the crowd platform's page, which adds your id to the link "
                        f"(PROLIFIC_PID). {ID_RULE}", 400)
    if request.user.is_authenticated and not crowd.is_crowd_account(request.user):
        return _refused(request, study, "You are signed in with your own account",
                        f"You are signed in as {request.user.get_username()}. This link is for annotators sent by "
                        "a crowd platform: log out first, or join the study with its invite link instead.", 409)
    cookie = request.COOKIES.get(crowd.COOKIE_NAME)
    browser = cookie if is_token(cookie) else new_token()
    try:
        worker = crowd.arrive(study, ids, browser, allow_new=lambda: allowance(
            request, "signup", settings.PARLEY_SIGNUP_RATE, spend=True))
    except crowd.Refused as refusal:
        response = _refused(request, study, refusal.title, str(refusal), refusal.status)
        if isinstance(refusal, crowd.NotAdmitted):
            response["Retry-After"] = str(refusal.retry_after)
        return response
    login(request, worker.user, backend="django.contrib.auth.backends.ModelBackend")
    response = redirect("annotator:next", slug=study.slug)
    response.set_cookie(
        crowd.COOKIE_NAME, browser, max_age=crowd.COOKIE_MAX_AGE, httponly=True, samesite="Lax",
        secure=request.is_secure() or settings.SESSION_COOKIE_SECURE,
    )
    return response


@require_http_methods(["GET", "POST"])
@login_required
@never_cache
def comprehension(request: HttpRequest, slug: str) -> HttpResponse:
    """The comprehension check: all scored questions right to go on; a second failure ends participation."""
    membership = _member(request, slug)
    if not crowd.comprehension_due(membership):
        return redirect("annotator:next", slug=slug)
    if membership.instructions_read_at is None:
        return redirect("annotator:instructions", slug=slug)
    study = membership.study
    form = crowd.comprehension_form(study, request.POST if request.method == "POST" else None)
    retry = membership.comprehension_failures > 0
    if request.method == "POST" and form.is_valid():
        outcome = crowd.grade_comprehension(membership, form)
        if outcome.result == "passed":
            return redirect("annotator:next", slug=slug)
        if outcome.result == "disqualified":
            return redirect("annotator:end", slug=slug)
        form, retry = crowd.comprehension_form(study), True  # a fresh form: the right answers are not shown
    context = {"study": study, "form": form, "retry": retry, "attempts": crowd.COMPREHENSION_ATTEMPTS}
    return render(request, "annotator/crowd/comprehension.html", context, status=400 if form.errors else 200)


@require_GET
@login_required
@never_cache
def end(request: HttpRequest, slug: str) -> HttpResponse:
    """The end page of a member who was disqualified; anyone else goes on to their next item (or the done page)."""
    membership = _member(request, slug)
    if membership.disqualified_at is None:
        return redirect("annotator:next", slug=slug)
    return end_page(request, membership)


def end_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Where a member's participation ends: call it for a disqualified member, or when nothing is left for them.

    A disqualified member is thanked politely, and a crowd worker given the study's screen-out code; anyone
    else is shown what they submitted, and a crowd worker the completion code, once the study is not merely
    paused (a paused study may give them more work later).
    """
    study = membership.study
    worker = crowd.worker_of(request.user, study)
    if membership.disqualified_at is not None:
        if worker is not None:
            crowd.screen_out(worker)
        context = {"study": study, "worker": worker, "code": study.screen_out_code if worker else ""}
        return render(request, "annotator/crowd/screened_out.html", context)
    paused = not study.is_open and study.closed_at is None
    if worker is not None and not paused:
        crowd.finish(worker)
    submitted = Assignment.objects.filter(
        item__study=study, annotator=request.user, status=Assignment.Status.SUBMITTED
    ).count()
    context = {
        "study": study, "submitted": submitted, "worker": worker, "removed": membership.removed_at is not None,
        "code": study.completion_code if worker is not None and not paused else "",
    }
    return render(request, "annotator/done.html", context)


def platform_link(request: HttpRequest, study: Study) -> str:
    """The link to give the crowd platform, with Prolific's placeholders for the ids it fills in."""
    link = request.build_absolute_uri(reverse("annotator:crowd-link", args=[study.invite_token]))
    return link + "?" + "&".join(f"{name}={{{{%{name}%}}}}" for name in PLATFORM_PARAMETERS)


def _member(request: HttpRequest, slug: str) -> Membership:
    """The signed-in user's membership of the study with its comprehension instrument; outside the pool, a 404."""
    return get_object_or_404(
        Membership.objects.select_related("study__comprehension_instrument"), study__slug=slug, annotator=request.user
    )


def _refused(request: HttpRequest, study: Study, title: str, message: str, status: int) -> HttpResponse:
    return render(request, "annotator/crowd/refused.html", {"study": study, "title": title, "message": message},
                  status=status)
