"""Joining a study's annotator pool through its invite link.

The link carries the study's secret ``invite_token``. Opening it changes nothing: a signed-in
visitor sees the study and a "Join" button, whose POST (with its CSRF token) joins and goes on to
the study's instructions. A GET that enrolled would let a link preview, a mail scanner or another
site's ``<img>`` put someone in a study. An anonymous visitor may sign in (and come back here) or
create an account, which joins them too. A wrong token is a 404; a closed study takes no one new.
"""

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

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


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, token: str) -> HttpResponse:
    study = get_object_or_404(
        Study.objects.select_related("team").only("pk", "title", "slug", "is_open", "team"), invite_token=token
    )
    if not study.is_open:
        return render(request, "annotator/join.html", {"study": study, "closed": True}, status=410)
    if request.user.is_authenticated:
        if request.method == "POST":
            join_study(request.user, study)
            return redirect("annotator:instructions", slug=study.slug)
        member = Membership.objects.filter(study=study, annotator=request.user).exists()
        return render(request, "annotator/join.html", {"study": study, "member": member})

    form = UserCreationForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        with transaction.atomic():
            user = form.save()
            join_study(user, study)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("annotator:instructions", slug=study.slug)
    return render(request, "annotator/join.html", {"study": study, "form": form})
