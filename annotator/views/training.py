"""Pages of training, qualification and checks that act: the annotator's second attempt, the researcher's item
setup (kind, explanation, known answers) and the restore of an annotator paused by failed checks.

The rules are in ``annotator.training``, ``annotator.qualification``, ``annotator.check_actions`` and
``annotator.item_setup``; these views check who asks and what they may touch, call them, and redirect.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from .. import check_actions, qualification
from ..item_setup import ItemSetupForm
from ..models import Membership, StudyItem
from ..permissions import researcher_required
from .research import researcher_studies


@require_POST
@login_required
def retry(request: HttpRequest, slug: str) -> HttpResponse:
    """Start the second qualification attempt (the annotator's own, from the page that offered it)."""
    membership = get_object_or_404(Membership.objects.select_related("study"), study__slug=slug,
                                   annotator=request.user)
    if not qualification.start_retry(membership.study, request.user):
        messages.info(request, "There is no second attempt to start: your next item is shown instead.")
    return redirect("annotator:next", slug=slug)


@require_http_methods(["GET", "POST"])
@researcher_required
def item_setup(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    """An item's kind, its training explanation or attention instruction, and its known answers."""
    study = get_object_or_404(researcher_studies(request.user).select_related("instrument"), slug=slug)
    item = get_object_or_404(StudyItem.objects.select_related("episode__scenario"), study=study, pk=item_id)
    form = ItemSetupForm(request.POST or None, item=item)
    if request.method == "POST" and form.is_valid():
        form.save(request.user)
        messages.success(request, f"Item {item.position + 1} saved as {item.get_kind_display()}.")
        return redirect("annotator:dashboard", slug=study.slug)
    context = {"study": study, "item": item, "form": form,
               "key_fields": [(form[name], form[tolerance] if tolerance else None) for name, tolerance in
                              form.key_fields]}
    return render(request, "annotator/research/item_setup.html", context, status=400 if form.errors else 200)


@require_POST
@researcher_required
def restore_annotator(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """Let an annotator whom failed checks paused claim items again."""
    study = get_object_or_404(researcher_studies(request.user), slug=slug)
    membership = get_object_or_404(Membership.objects.select_related("annotator"), study=study, annotator_id=user_id)
    annotator = membership.annotator
    if check_actions.restore(study, annotator, request.user):
        messages.success(request, f"{annotator.get_username()} is restored: only checks failed from now on count.")
    else:
        messages.info(request, f"{annotator.get_username()} was not paused.")
    return redirect("annotator:dashboard", slug=study.slug)

