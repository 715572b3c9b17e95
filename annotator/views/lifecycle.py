"""Pages that change a running study: its settings, its phase (pause, resume, close, reopen), its items, its log.

Each is behind ``researcher_required`` and reaches the study through the researcher's teams only; the rules
are ``annotator.lifecycle``'s, and every change lands in the study's log.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from .. import lifecycle, study_log
from ..lifecycle_forms import AddItemsForm, ShortenForm, StudySettingsForm
from ..models import Study
from ..permissions import researcher_required
from .research import researcher_studies


def _study(request: HttpRequest, slug: str) -> Study:
    return get_object_or_404(researcher_studies(request.user).select_related("instrument", "team"), slug=slug)


@require_http_methods(["GET", "POST"])
@researcher_required
def settings(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's settings; a locked one is shown disabled with the reason."""
    study = _study(request, slug)
    form = StudySettingsForm(request.POST or None, instance=study, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            said = lifecycle.update_settings(study, form.changes(), actor=request.user)
        except lifecycle.LifecycleError as problem:
            form.add_error(None, str(problem))
        else:
            messages.success(request, f"Settings saved: {'; '.join(said)}." if said else "Nothing changed.")
            return redirect("annotator:dashboard", slug=study.slug)
    return render(request, "annotator/research/study_settings.html", {"study": study, "form": form})


@require_POST
@researcher_required
def phase(request: HttpRequest, slug: str) -> HttpResponse:
    """Pause, resume, close or reopen (the dashboard's buttons)."""
    study = _study(request, slug)
    try:
        messages.success(request, lifecycle.change_phase(study, request.POST.get("action", ""), actor=request.user))
    except lifecycle.LifecycleError as problem:
        messages.error(request, str(problem))
    return redirect("annotator:dashboard", slug=study.slug)


@require_http_methods(["GET", "POST"])
@researcher_required
def items(request: HttpRequest, slug: str) -> HttpResponse:
    """Add episodes to the study, or remove items nobody claimed (``action`` add or shorten)."""
    study = _study(request, slug)
    action = request.POST.get("action") if request.method == "POST" else None
    add = AddItemsForm(request.POST if action == "add" else None, user=request.user)
    shorten = ShortenForm(request.POST if action == "shorten" else None)
    if action == "add" and add.is_valid():
        try:
            added = lifecycle.add_items(study, add.episodes(study), limit=add.cleaned_data.get("limit"),
                                        seed=study.seed, actor=request.user)
        except lifecycle.LifecycleError as problem:
            add.add_error(None, str(problem))
        else:
            skipped = f" ({added.already_in} matching episodes were in the study already)" if added.already_in else ""
            messages.success(request, f"{added.added} item{'s' if added.added != 1 else ''} added{skipped}.")
            return redirect("annotator:dashboard", slug=study.slug)
    if action == "shorten" and shorten.is_valid():
        removed = lifecycle.shorten(study, shorten.cleaned_data["count"], actor=request.user)
        text = f"{removed.removed} item{'s' if removed.removed != 1 else ''} removed."
        if removed.kept:
            text += (f" {removed.kept} of the {removed.asked} asked could not be removed: every other regular item "
                     "was claimed or submitted by someone, and their work is kept.")
        (messages.warning if removed.kept else messages.success)(request, text)
        return redirect("annotator:dashboard", slug=study.slug)
    context = {"study": study, "add": add, "shorten": shorten, "removable": lifecycle.removable(study)}
    return render(request, "annotator/research/study_items.html", context)


@require_GET
@researcher_required
def log(request: HttpRequest, slug: str) -> HttpResponse:
    """Every change to the study, newest first: who, when, what."""
    study = _study(request, slug)
    return render(request, "annotator/research/study_log.html", {"study": study, "events": study_log.events(study)})
