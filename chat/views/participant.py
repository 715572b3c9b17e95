"""The participant's pages: link → consent → briefing → chat → questionnaire → completion code
(or, for a chat cut short, the screen-out code).

Participants have no account. The entry page reads their id from the link and binds the
participant to this browser (``chat.access``); a second browser bringing the same id gets the
"already taking part" page, where the resume code the participant was shown moves the chat to it.
Every later page serves only the session's own bound participant, and only at their current
stage: anyone asking for another stage's page is sent to their own. No page ever names the barrier
condition or the model.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial, wraps
from typing import Any
from urllib.parse import quote, urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from benchmark.instruments.forms import InstrumentForm
from benchmark.models import Episode, Seat
from benchmark.recruiting import ID_PATTERN, ID_RULE, InvalidId, ids_from_query

from .. import throttle
from ..access import (
    claim,
    is_bound_to,
    page_for,
    participant_for,
    remembered_participant,
    resume_code_matches,
    settle_stage,
    take_over,
)
from ..answers import save_answers
from ..assignment import StudyFull, assign
from ..flow import (
    NotAdmitted,
    StudyClosed,
    arrive,
    decline,
    start_conversation,
    touch,
)
from ..human_test import HumanTestForm, human_test_for, store_human_test
from ..lifecycle import end_message, ended_by_participant
from ..models import ChatStudy, Participant
from ..participant_briefing import build_briefing

ParticipantView = Callable[[HttpRequest, ChatStudy, Participant], HttpResponse]


def participant_page(stage: str) -> Callable[[ParticipantView], Callable[..., HttpResponse]]:
    """Serve the view only to this session's participant, and only at ``stage``; others are redirected.

    No participant in the session: back to the study link's entry page. A chat that went idle is
    ended first (``settle_stage``), so someone returning after the timeout lands on the questions.
    """

    def decorator(view: ParticipantView) -> Callable[..., HttpResponse]:
        @never_cache
        @wraps(view)
        def wrapped(request: HttpRequest, slug: str) -> HttpResponse:
            study = get_object_or_404(ChatStudy, slug=slug)
            participant = participant_for(request.session, study)
            if participant is None:
                return redirect("chat:entry", slug=study.slug)
            settle_stage(participant)
            if participant.stage != stage:
                return redirect(page_for(participant))
            return view(request, study, participant)

        return wrapped

    return decorator


@require_GET
@never_cache
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """The study link: identify the participant, then send them to where they belong."""
    study = get_object_or_404(ChatStudy, slug=slug)
    try:
        ids = ids_from_query(request.GET)
    except InvalidId as problem:
        return _ask_for_id(request, study, error=str(problem), status=400)
    if ids is None:
        participant = remembered_participant(request.session, study)
        if participant is not None and is_bound_to(participant, request.session):
            return redirect(page_for(settle_stage(participant)))
        if participant is not None and participant.browser_token:
            return _taken(request, study, participant.participant_id)
        if not study.is_open:
            return _closed(request, study)
        return _ask_for_id(request, study)
    try:
        participant = arrive(study, ids, admit=lambda: throttle.spend(request))
    except StudyClosed:
        return _closed(request, study)
    except NotAdmitted as refusal:
        return _busy(request, study, refusal.verdict.retry_after)
    participant.study = study
    if not claim(request.session, participant):
        return _taken(request, study, participant.participant_id)
    return redirect(page_for(settle_stage(participant)))


@require_http_methods(["GET", "POST"])
@never_cache
def resume(request: HttpRequest, slug: str) -> HttpResponse:
    """Move a participant to this browser with the resume code they were shown in their first one.

    The resume link (a GET) only fills in the form; the move itself is a POST. A wrong code counts
    against the address's allowance (``chat.throttle``), checked before the code is compared, so
    guessing is no quicker than arriving with new ids.
    """
    study = get_object_or_404(ChatStudy, slug=slug)
    data = request.POST if request.method == "POST" else request.GET
    participant_id, code = data.get("participant_id", "").strip(), data.get("code", "").strip()
    if request.method == "GET":
        return _resume_page(request, study, participant_id, code=code)
    if not (allowance := throttle.remaining(request)):
        return _busy(request, study, allowance.retry_after)
    participant = None
    if ID_PATTERN.match(participant_id):
        participant = Participant.objects.filter(study=study, participant_id=participant_id).first()
    if participant is None or not resume_code_matches(participant, code):
        if not (allowance := throttle.spend(request)):
            return _busy(request, study, allowance.retry_after)
        error = (
            "That resume code does not match this participant id. Check both against the other browser "
            "(the code has 8 letters and digits, e.g. K7QM-2XPD), or ask the researchers to release your id."
        )
        return _resume_page(request, study, participant_id, error=error, status=400)
    participant.study = study
    take_over(request.session, participant)
    return redirect(page_for(settle_stage(participant)))


def _ask_for_id(request: HttpRequest, study: ChatStudy, *, error: str = "", status: int = 200) -> HttpResponse:
    context = {"study": study, "error": error, "rule": ID_RULE, "value": request.GET.get("participant_id", "")}
    return render(request, "chat/participant/entry.html", context, status=status)


def _taken(request: HttpRequest, study: ChatStudy, participant_id: str) -> HttpResponse:
    """The "already taking part in another browser" page: 409, with the way to resume here."""
    return _resume_page(request, study, participant_id, taken=True, status=409)


def _resume_page(
    request: HttpRequest, study: ChatStudy, participant_id: str, *, code: str = "", taken: bool = False,
    error: str = "", status: int = 200,
) -> HttpResponse:
    context = {"study": study, "participant_id": participant_id, "code": code, "taken": taken, "error": error}
    return render(request, "chat/participant/resume.html", context, status=status)


def _closed(request: HttpRequest, study: ChatStudy) -> HttpResponse:
    return render(request, "chat/participant/closed.html", {"study": study})


def _busy(request: HttpRequest, study: ChatStudy, retry_after: int) -> HttpResponse:
    """429: too many new participants (or wrong resume codes) from this address; try again later."""
    minutes = max(1, round(retry_after / 60))
    response = render(request, "chat/participant/busy.html", {"study": study, "minutes": minutes}, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def _resume_context(request: HttpRequest, study: ChatStudy, participant: Participant) -> dict[str, str]:
    """The resume code and link shown to the participant, to move their chat to another device."""
    query = urlencode({"participant_id": participant.participant_id, "code": participant.resume_code})
    link = request.build_absolute_uri(f"{reverse('chat:resume', args=[study.slug])}?{query}")
    return {"resume_code": participant.resume_code_display, "resume_link": link}


def _return_url(study: ChatStudy, code: str) -> str:
    return study.return_url.replace("{code}", quote(code, safe=""))


@require_http_methods(["GET", "POST"])
@participant_page(Participant.Stage.CONSENT)
def consent(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    """The consent text; agreeing assigns the participant a cell and an episode, declining ends here."""
    error = ""
    if request.method == "POST":
        decision = request.POST.get("decision")
        if decision == "decline":
            decline(participant)
            return redirect("chat:declined", slug=study.slug)
        if decision == "agree":
            if not study.is_open:
                return _closed(request, study)
            try:
                assign(participant)
            except StudyFull:
                return render(request, "chat/participant/full.html", {"study": study})
            return redirect("chat:briefing", slug=study.slug)
        error = "Please choose whether you agree to take part."
    return render(request, "chat/participant/consent.html", {"study": study, "error": error})


@require_GET
@participant_page(Participant.Stage.DECLINED)
def declined(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    return render(request, "chat/participant/declined.html", {"study": study})


def _seats(participant: Participant) -> tuple[Seat, list[Seat]]:
    """The participant's seat and the agents', in seat order, with role, character and scenario loaded."""
    seats = list(
        participant.episode.seats.select_related("role", "character", "episode__scenario").order_by("position")
    )
    human = next(seat for seat in seats if seat.player == Seat.Player.HUMAN)
    return human, [seat for seat in seats if seat.pk != human.pk]


@require_http_methods(["GET", "POST"])
@participant_page(Participant.Stage.BRIEFING)
def briefing(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    """Who the participant plays and what they want; "Start the conversation" opens the chat."""
    if request.method == "POST":
        start_conversation(participant)
        return redirect("chat:chat", slug=study.slug)
    touch(participant)
    human, agents = _seats(participant)
    context = {"study": study, "briefing": build_briefing(study, human, agents)}
    context.update(_resume_context(request, study, participant))
    return render(request, "chat/participant/briefing.html", context)


@require_GET
@participant_page(Participant.Stage.CHAT)
def chat(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    """The chat page; the conversation itself runs over the study's websocket."""
    touch(participant)
    human, agents = _seats(participant)
    context: dict[str, Any] = {
        "study": study,
        "participant": participant,
        "episode": participant.episode,
        "human_seat": human,
        "agent_seat": agents[0],
        "agent_seats": agents,
        "ws_path": f"/ws/chat/{study.slug}/",
        "max_message_chars": study.max_message_chars,
        "questionnaire_url": reverse("chat:questionnaire", args=[study.slug]),
        "screened_out_url": reverse("chat:screened-out", args=[study.slug]),
        "technical_problem_url": reverse("chat:technical-problem", args=[study.slug]),
        "briefing": build_briefing(study, human, agents),
        **_resume_context(request, study, participant),
    }
    return render(request, "chat/chat.html", context)


@require_http_methods(["GET", "POST"])
@participant_page(Participant.Stage.QUESTIONNAIRE)
def questionnaire(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    """The study's questions after the chat, after the human test where there is one (``chat.human_test``);
    submitting stores every answer at once and finishes."""
    data = request.POST if request.method == "POST" else None
    form = InstrumentForm(study.instrument, data, episode=participant.episode)
    test_form = HumanTestForm(human_test_for(participant), data)
    if request.method == "POST" and all([test_form.is_valid(), form.is_valid()]):
        save_answers(participant, form, also=partial(store_human_test, test_form))
        return redirect("chat:done", slug=study.slug)
    end_reason = participant.episode.end_reason if participant.episode else ""
    left = bool(end_reason) and ended_by_participant(participant.episode, end_reason)
    group = bool(end_reason) and participant.episode.seats.count() > 2
    context = {"study": study, "form": form, "test_form": test_form,
               "end_message": end_message(end_reason, participant_left=left, group=group) if end_reason else ""}
    context.update(_resume_context(request, study, participant))
    return render(request, "chat/participant/questionnaire.html", context)


@require_GET
@participant_page(Participant.Stage.DONE)
def done(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    """The completion code, and the way back to the recruiting platform."""
    context = {"study": study, "return_url": _return_url(study, study.completion_code)}
    return render(request, "chat/participant/done.html", context)


@require_GET
@participant_page(Participant.Stage.SCREENED_OUT)
def screened_out(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    """The screen-out code for a chat cut short before the study's minimum (``chat.lifecycle``)."""
    end_reason = participant.episode.end_reason if participant.episode else ""
    context = {
        "study": study,
        "return_url": _return_url(study, study.screen_out_code),
        "left": end_reason == Episode.EndReason.LEAVE,
    }
    return render(request, "chat/participant/screened_out.html", context)


@require_GET
@participant_page(Participant.Stage.TECHNICAL_PROBLEM)
def technical_problem(request: HttpRequest, study: ChatStudy, participant: Participant) -> HttpResponse:
    """The technical-problem code for a chat the model ended before the study's minimum (``chat.lifecycle``)."""
    context = {"study": study, "return_url": _return_url(study, study.technical_problem_code)}
    return render(request, "chat/participant/technical_problem.html", context)
