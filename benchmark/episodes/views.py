"""Researcher pages: the episode browser and one episode's transcript and every respondent's answers.

Every view here is for researchers (staff or the researchers group, ``benchmark.permissions``).
"""

from django.core.paginator import Paginator
from django.db.models import Count, Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from ..agents.llm import is_scripted
from ..evaluation.answer_groups import answer_groups
from ..models import Episode, Seat
from ..permissions import researcher_required
from .forms import EpisodeFilterForm

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
        .order_by("-created_at", "-pk")  # Meta.ordering does not apply to a GROUP BY query
        .prefetch_related(Prefetch("seats", queryset=Seat.objects.select_related("character")))
    )
    page = Paginator(episodes, EPISODES_PER_PAGE).get_page(request.GET.get("page"))
    context = {"form": form, "page": page}
    if request.htmx and not request.htmx.history_restore_request:
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
    }
    return render(request, "benchmark/episode_detail.html", context)
