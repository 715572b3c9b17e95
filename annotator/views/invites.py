"""Joining a study's annotator pool through its invite link.

The link carries the study's secret
``invite_token``. Opening it changes nothing: a signed-in visitor sees the study and a "Join" button,
whose POST (with its CSRF token) joins and goes on to the study's instructions. A GET that enrolled
would let a link preview, a mail scanner or another site's ``<img>`` put someone in a study. An
anonymous visitor may sign in (and come back here) or create an account, which joins them too. A link
sent by e-mail (``annotator.pool.invite_email``) carries a signed ``invitation``, accepted when its
holder joins. A wrong token is a 404; a closed study takes no one new (a paused one does), and neither
does one whose pool has reached its ``max_annotators``. Whoever holds a link could otherwise make
accounts without end: one address may try at most ``PARLEY_SIGNUP_RATE`` sign-ups.
"""

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from benchmark.throttle import allowance

from ..models import Invitation, Membership, Study
from ..pool import PoolIsFull, admit, mark_accepted, pool_is_full, signed_invitation


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, token: str) -> HttpResponse:
    study = get_object_or_404(
        Study.objects.select_related("team").only("pk", "title", "slug", "is_open", "closed_at", "max_annotators",
                                                 "team"),
        invite_token=token,
    )
    if study.phase == "closed":  # a paused study still takes members: they start once it resumes
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
                mark_accepted(study, request.user, _invitation(request, study))
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
                mark_accepted(study, user, _invitation(request, study))
        except PoolIsFull:
            return render(request, "annotator/join.html", {"study": study, "full": True}, status=410)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("annotator:instructions", slug=study.slug)
    return render(request, "annotator/join.html", {"study": study, "form": form})


def _invitation(request: HttpRequest, study: Study) -> Invitation | None:
    token = request.GET.get("invitation", "")
    return signed_invitation(study, token) if token else None
