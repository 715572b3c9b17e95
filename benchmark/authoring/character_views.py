"""The researcher's character pages: the team's characters, a new one, and editing one.

Every view is for researchers; a character of another team is a 404.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from ..models import Character
from ..permissions import researcher_required
from ..scenarios.picker import search_text
from .character_forms import CharacterForm, seat_count

CHARACTERS_PER_PAGE = 50
SAVE_AS_NEW = "save_as_new"


@require_GET
@researcher_required
def character_list(request: HttpRequest) -> HttpResponse:
    text = search_text(request.GET)
    characters = Character.objects.owned_by(request.user).annotate(seat_count=Count("seats"))
    for word in text.split()[:10]:
        characters = characters.filter(
            Q(first_name__icontains=word) | Q(last_name__icontains=word) | Q(occupation__icontains=word)
            | Q(external_id__icontains=word)
        )
    page = Paginator(characters.order_by("first_name", "last_name", "pk"), CHARACTERS_PER_PAGE).get_page(
        request.GET.get("page"))
    return render(request, "benchmark/characters/list.html", {"page": page, "text": text})


@require_http_methods(["GET", "POST"])
@researcher_required
def character_new(request: HttpRequest) -> HttpResponse:
    return _edit(request, None)


@require_http_methods(["GET", "POST"])
@researcher_required
def character_edit(request: HttpRequest, pk: int) -> HttpResponse:
    return _edit(request, get_object_or_404(Character.objects.owned_by(request.user), pk=pk))


def _edit(request: HttpRequest, character: Character | None) -> HttpResponse:
    as_new = character is not None and SAVE_AS_NEW in request.POST
    data = request.POST if request.method == "POST" else None
    form = CharacterForm(data, instance=character, user=request.user, save_as_new=as_new)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        messages.success(request, f"{'Saved as a new character' if as_new else 'Saved'}: {saved} (#{saved.pk}).")
        return redirect("benchmark:character-edit", saved.pk)
    context = {"form": form, "character": character, "seats": seat_count(character) if character else 0,
               "save_as_new": SAVE_AS_NEW}
    return render(request, "benchmark/characters/edit.html", context)
