"""Joining a study's annotator pool through its invite link.

The link carries the study's secret ``invite_token``. Opening it changes nothing: a signed-in
visitor sees the study and a "Join" button, whose POST (with its CSRF token) joins and goes on to
the study's instructions. A GET that enrolled would let a link preview, a mail scanner or another
site's ``<img>`` put someone in a study. An anonymous visitor may sign in (and come back here) or
create an account, which joins them too. A wrong token is a 404; a closed study takes no one new,
and neither does one whose pool has reached its ``max_annotators``. Whoever holds a link could
otherwise make accounts without end: one address may try at most ``PARLEY_SIGNUP_RATE`` sign-ups.
"""

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from benchmark.throttle import allowance

from ..forms import join_team_as_annotators
from ..models import Membership, Study
from ..permissions import ANNOTATORS


def join_study(user: AbstractBaseUser, study: Study) -> bool:
    """Put ``user`` in the annotators group, the study's pool and its team's annotators (a researcher of
    the team stays a researcher); True if they were not in the pool yet."""
    group, _ = Group.objects.get_or_create(name=ANNOTATORS)
    user.groups.add(group)
    join_team_as_annotators(study.team, [user])
    _, joined = Membership.objects.get_or_create(study=study, annotator=user)
    return joined


def pool_is_full(study: Study) -> bool:
    """Whether the study's pool has reached its ``max_annotators`` (never, without one)."""
    return study.max_annotators is not None and study.memberships.count() >= study.max_annotators


class PoolIsFull(Exception):
    """The last place went to someone else: nothing of this join is kept."""


def admit(user: AbstractBaseUser, study: Study) -> None:
    """Join ``user`` unless the pool is full (``PoolIsFull``); call it in a transaction. The study's row is
    locked first, so two people racing for the last place cannot both take it."""
    Study.objects.select_for_update().filter(pk=study.pk).exists()
    if pool_is_full(study) and not Membership.objects.filter(study=study, annotator=user).exists():
        raise PoolIsFull
    join_study(user, study)


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, token: str) -> HttpResponse:
    study = get_object_or_404(
        Study.objects.select_related("team").only("pk", "title", "slug", "is_open", "max_annotators", "team"),
        invite_token=token,
    )
    if not study.is_open:
        return render(request, "annotator/join.html", {"study": study, "closed": True}, status=410)
    member = request.user.is_authenticated and Membership.objects.filter(study=study, annotator=request.user).exists()
    if not member and pool_is_full(study):
        return render(request, "annotator/join.html", {"study": study, "full": True}, status=410)
    if request.user.is_authenticated:
        if request.method == "GET":
            return render(request, "annotator/join.html", {"study": study, "member": member})
        try:
            with transaction.atomic():
                admit(request.user, study)
        except PoolIsFull:
            return render(request, "annotator/join.html", {"study": study, "full": True}, status=410)
        return redirect("annotator:instructions", slug=study.slug)

    form = UserCreationForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and not (allowed := allowance(request, "signup", settings.PARLEY_SIGNUP_RATE,
                                                              spend=True)):
        form.is_valid()  # the typed values come back with their errors, beside this one
        form.add_error(None, "Too many accounts were created from your address; try again later.")
        response = render(request, "annotator/join.html", {"study": study, "form": form}, status=429)
        response["Retry-After"] = str(allowed.retry_after)
        return response
    if form.is_valid():
        try:
            with transaction.atomic():
                user = form.save()
                admit(user, study)
        except PoolIsFull:
            return render(request, "annotator/join.html", {"study": study, "full": True}, status=410)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("annotator:instructions", slug=study.slug)
    return render(request, "annotator/join.html", {"study": study, "form": form})
