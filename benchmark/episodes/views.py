"""Researcher pages: the episode browser and one episode's transcript and every respondent's answers.

Every view here is for researchers (staff or the researchers group, ``benchmark.permissions``).
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST, require_safe

from ..agents.llm import is_scripted
from ..evaluation.answer_groups import answer_groups
from ..models import Episode, Recording, Seat
from ..permissions import researcher_required
from . import recordings
from .forms import EpisodeFilterForm, RecordingForm

EPISODES_PER_PAGE = 50
SCRIPTED_LABEL = "scripted (offline)"


@require_GET
@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    """The episode browser; an htmx request gets only the results, so filtering swaps in place."""
    form = EpisodeFilterForm(request.GET, user=request.user)
    episodes = form.filter(
        Episode.objects.owned_by(request.user)
        .select_related("scenario", "barrier")
        .annotate(turn_count=Count("turns"))
        .prefetch_related(Prefetch("seats", queryset=Seat.objects.select_related("character")))
    )
    page = Paginator(form.order(episodes), EPISODES_PER_PAGE).get_page(request.GET.get("page"))
    partial = request.htmx and not request.htmx.history_restore_request
    context = {"form": form, "page": page, "columns": form.columns(), "sort": form.chosen_sort, "swap_sort": partial}
    if partial:
        response = render(request, "benchmark/partials/_episode_rows.html", context)
    else:
        response = render(request, "benchmark/episode_list.html", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_GET
@researcher_required
def episode(request: HttpRequest, pk: int) -> HttpResponse:
    """One episode: its scenario (roles, goals, probes), who sat where, the transcript, and every
    respondent's answers (judges, interviewed agents, people)."""
    episode = get_object_or_404(
        Episode.objects.owned_by(request.user).select_related("scenario__template", "barrier"), pk=pk
    )
    seats = list(episode.seats.select_related("role", "character"))
    for seat in seats:
        seat.is_scripted = is_scripted(seat.model)
    turns = list(episode.turns.select_related("seat__character"))
    for turn in turns:
        turn.is_scripted = is_scripted(turn.model)
    context = {
        "episode": episode,
        "scenario": episode.scenario,
        "roles": episode.scenario.roles.select_related("character").prefetch_related("goals"),
        "probes": episode.scenario.probes.select_related("about__character"),
        "barrier_prompts": episode.scenario.barrier_prompts.select_related("barrier"),
        "seats": seats,
        "turns": turns,
        "answer_groups": answer_groups(episode),
        "scripted_label": SCRIPTED_LABEL,
        "under_barrier": not episode.barrier.is_baseline,
        "recording": Recording.objects.filter(episode=episode).first(),
        "recording_form": RecordingForm(),
        "max_recording_mb": recordings.max_bytes() // (1024 * 1024),
    }
    return render(request, "benchmark/episode_detail.html", context)


@require_safe
@researcher_required
def recording(request: HttpRequest, pk: int) -> HttpResponse:
    """The episode's uploaded recording, for the researchers of its team; the player seeks with Range requests."""
    episode = get_object_or_404(Episode.objects.owned_by(request.user), pk=pk)
    return recordings.serve(request, Recording.objects.filter(episode=episode).first())


@csrf_exempt  # checked by _attach_recording, once the size limit's upload handler is in place
@require_POST
@researcher_required
def attach_recording(request: HttpRequest, pk: int) -> HttpResponse:
    """Upload a recording or give its address; refused with a message, before anything is stored, when the
    file is too large or is not audio or video."""
    episode = get_object_or_404(Episode.objects.owned_by(request.user), pk=pk)
    back = redirect(reverse("benchmark:episode", args=[episode.pk]) + "#recording")
    # Refuse an oversized upload by its announced length, before its body is read at all; one that says
    # less than it brings is stopped by the handler as its bytes pass the limit.
    announced = request.META.get("CONTENT_LENGTH") or "0"
    if announced.isdigit() and int(announced) > recordings.max_bytes() + 64 * 1024:
        messages.error(request, f"Not attached: the upload is over the limit of {recordings.max_bytes() // 2**20} MB "
                                "for a recording.")
        return back
    limit = recordings.SizeLimit(request)
    request.upload_handlers.insert(0, limit)
    return _attach_recording(request, episode, limit, back)


@csrf_protect
def _attach_recording(request: HttpRequest, episode: Episode, limit: recordings.SizeLimit,
                      back: HttpResponse) -> HttpResponse:
    form = RecordingForm(request.POST, request.FILES)
    if limit.refused:
        messages.error(request, f"Not attached: {limit.refused}")
        return back
    if not form.is_valid():
        for problems in form.errors.values():
            for problem in problems:
                messages.error(request, f"Not attached: {problem}")
        return back
    data = form.cleaned_data
    try:
        if data["file"]:
            attached = recordings.attach_upload(episode, data["file"], duration_s=data["duration_s"])
        else:
            attached = recordings.attach_url(episode, data["url"], kind=data["kind"] or Recording.Kind.VIDEO,
                                             duration_s=data["duration_s"])
    except recordings.RecordingRefused as problem:
        messages.error(request, f"Not attached: {problem}")
        return back
    messages.success(request, f"The {attached.kind} recording is attached to this episode.")
    return back


@require_POST
@researcher_required
def remove_recording(request: HttpRequest, pk: int) -> HttpResponse:
    """Take the episode's recording away (an uploaded file is deleted)."""
    episode = get_object_or_404(Episode.objects.owned_by(request.user), pk=pk)
    if recordings.remove(episode):
        messages.success(request, "The recording is removed from this episode.")
    return redirect(reverse("benchmark:episode", args=[episode.pk]) + "#recording")
