"""Researchers' pages for chat studies: the list, the study form, the live monitor, transcripts, CSV,
and releasing a participant's id from the browser it is bound to.

Every view is behind ``researcher_required`` and reaches studies only through
``researcher_chat_studies``: a researcher sees the chat studies of their teams, a superuser all;
anyone else's study is a 404, so slugs reveal nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import Count, Q, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from benchmark.agents import llm
from benchmark.models import Episode, Scenario
from benchmark.permissions import researcher_required

from ..access import release, researcher_chat_studies
from ..answers import answer_table
from ..assignment import FINISHED_STAGES, ON_THE_WAY_STAGES, Cell, design_cells
from ..exports import participants_csv
from ..forms import ChatStudyForm
from ..human_test import human_test_answers
from ..models import ChatCondition, ChatStudy, Participant
from ..monitor import active_sessions, with_turn_summary

EXAMPLE_QUERY = {"PROLIFIC_PID": "{{%PROLIFIC_PID%}}", "STUDY_ID": "{{%STUDY_ID%}}", "SESSION_ID": "{{%SESSION_ID%}}"}


@dataclass
class StudyRow:
    study: ChatStudy
    target: int = 0
    finished: int = 0
    in_progress: int = 0
    participants: int = 0

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.finished / self.target)) if self.target else 0


@require_GET
@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    """The researcher's chat studies with how far each has come."""
    studies = list(researcher_chat_studies(request.user).annotate(scenario_count=Count("scenarios", distinct=True)))
    rows = {study.pk: StudyRow(study) for study in studies}
    targets = (
        ChatCondition.objects.filter(study_id__in=rows.keys()).values("study_id").annotate(total=Sum("target")).order_by()
    )
    for entry in targets:
        row = rows[entry["study_id"]]
        row.target = entry["total"] * row.study.scenario_count
    counts = (
        Participant.objects.filter(study_id__in=rows.keys())
        .values("study_id")
        .annotate(
            total=Count("pk"),
            finished=Count("pk", filter=Q(stage__in=FINISHED_STAGES)),
            on_the_way=Count("pk", filter=Q(stage__in=ON_THE_WAY_STAGES)),
        )
        .order_by()
    )
    for entry in counts:
        row = rows[entry["study_id"]]
        row.participants, row.finished, row.in_progress = entry["total"], entry["finished"], entry["on_the_way"]
    context = {"rows": list(rows.values()), "scenario_count": Scenario.objects.owned_by(request.user).count()}
    return render(request, "chat/research/study_list.html", context)


@require_http_methods(["GET", "POST"])
@researcher_required
def study_create(request: HttpRequest) -> HttpResponse:
    form = ChatStudyForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        study = form.save(created_by=request.user)
        messages.success(request, f"Chat study “{study.title}” created. Its link is below.")
        return redirect("chat:monitor", slug=study.slug)
    return render(request, "chat/research/study_form.html", {"form": form, "study": None})


@require_http_methods(["GET", "POST"])
@researcher_required
def study_edit(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(researcher_chat_studies(request.user), slug=slug)
    form = ChatStudyForm(request.POST or None, instance=study, user=request.user)
    if request.method == "POST" and form.is_valid():
        study = form.save()
        messages.success(request, f"Chat study “{study.title}” saved.")
        return redirect("chat:monitor", slug=study.slug)
    return render(request, "chat/research/study_form.html", {"form": form, "study": study})


# The monitor


def _monitor_context(study: ChatStudy) -> dict:
    """What the live part of the monitor shows. It only reads (polled GETs must not write): chats quiet
    past the timeout are counted as stalled and listed as idle, and ``end_idle_chats`` ends them.

    Active sessions and all participants are read in the same poll, so the two tables always agree.
    """
    now = timezone.now()
    cells = design_cells(study, now=now)
    participants = list(with_turn_summary(Participant.objects.filter(study=study)).order_by("-created_at", "-pk"))
    tests = human_test_answers(participants)
    for participant in participants:
        participant.human_test = tests.get(participant.pk)
    return {
        "study": study,
        "sessions": active_sessions(study, now=now),
        "participants": participants,
        "grid": _grid(cells),
        "totals": {
            "finished": sum(c.finished for c in cells),
            "in_progress": sum(c.in_progress for c in cells),
            "stalled": sum(c.stalled for c in cells),
            "screened_out": sum(c.screened_out for c in cells),
            "target": sum(c.target for c in cells),
        },
        "now": now,
    }


def _grid(cells: list[Cell]) -> dict:
    """Cells as a table: one row per scenario, one column per condition."""
    conditions = list(dict.fromkeys(cell.barrier for cell in cells))
    rows: dict[int, dict] = {}
    for cell in cells:
        rows.setdefault(cell.scenario.pk, {"scenario": cell.scenario, "cells": []})["cells"].append(cell)
    return {"conditions": conditions, "rows": list(rows.values())}


@require_GET
@researcher_required
def monitor(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's link, its design cells and active sessions (polled live), and every participant."""
    study = get_object_or_404(researcher_chat_studies(request.user), slug=slug)
    context = _monitor_context(study)
    link = request.build_absolute_uri(reverse("chat:entry", args=[study.slug]))
    finished_episodes = Episode.objects.of_team(study.team).filter(
        tag=study.episode_tag, status=Episode.Status.FINISHED
    ).count()
    context.update({
        "study_link": link,
        "prolific_link": f"{link}?{urlencode(EXAMPLE_QUERY, safe='{}%')}",
        "agent_model": study.agent_model or llm.model_for("agent"),
        "finished_episodes": finished_episodes,
        "annotate_url": _annotate_url(study),
    })
    return render(request, "chat/research/monitor.html", context)


@require_GET
@researcher_required
def monitor_live(request: HttpRequest, slug: str) -> HttpResponse:
    """The part of the monitor htmx polls: design cells, active sessions and all participants."""
    study = get_object_or_404(researcher_chat_studies(request.user), slug=slug)
    return render(request, "chat/research/partials/_monitor_live.html", _monitor_context(study))


def _annotate_url(study: ChatStudy) -> str:
    """The annotation-study form, prefilled with this study's finished chat episodes (if installed)."""
    try:
        url = reverse("annotator:study-create")
    except NoReverseMatch:
        return ""
    query = {
        "title": f"Annotate {study.title}",
        "tag": study.episode_tag,
        "status": Episode.Status.FINISHED,
        "source": Episode.Source.HUMAN_CHAT,
    }
    return f"{url}?{urlencode(query)}"


@require_GET
@researcher_required
def transcript(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """One participant's conversation, read-only: seats, every turn, how it ended, their answers."""
    study = get_object_or_404(researcher_chat_studies(request.user), slug=slug)
    participant = get_object_or_404(
        Participant.objects.select_related("scenario", "barrier", "episode", "response__instrument"),
        study=study, pk=pk,
    )
    seats, turns = [], []
    if participant.episode is not None:
        seats = list(participant.episode.seats.select_related("character", "role"))
        turns = list(participant.episode.turns.select_related("seat__character"))
    answers = []
    if participant.response_id is not None:
        table = answer_table(participant.response.instrument, [participant])
        found = table.answers[participant.pk]
        answers = [(table.prompts[key], found.get(key, "")) for key in table.keys]
    context = {
        "study": study,
        "participant": participant,
        "episode": participant.episode,
        "seats": seats,
        "turns": turns,
        "answers": answers,
        "human_test": human_test_answers([participant]).get(participant.pk),
    }
    return render(request, "chat/research/transcript.html", context)


@require_POST
@researcher_required
def release_participant(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Unbind a participant from their browser, e.g. when they lost it or someone else took their id:
    the next browser that opens the study link with the id takes over (``chat.access.release``)."""
    study = get_object_or_404(researcher_chat_studies(request.user), slug=slug)
    participant = get_object_or_404(Participant, study=study, pk=pk)
    release(participant)
    messages.success(
        request,
        f"Participant {participant.participant_id} is released: the next browser that opens the study link "
        "with their id takes over, and their old resume code no longer works.",
    )
    if request.POST.get("next") == "monitor":
        return redirect("chat:monitor", slug=study.slug)
    return redirect("chat:transcript", slug=study.slug, pk=participant.pk)


@require_GET
@researcher_required
def export(request: HttpRequest, slug: str) -> HttpResponse:
    """Every participant of the study and their answers, as CSV."""
    study = get_object_or_404(researcher_chat_studies(request.user), slug=slug)
    response = HttpResponse(participants_csv(study), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-participants.csv"'
    return response
