"""The pool page and its actions (release, reassign, remove, make curator), invitations, and their acceptance.

Researcher pages are behind ``researcher_required`` and reach the study through the researcher's teams only;
an annotator accepts only an invitation made to them (anyone else's is a 404). The rules are
``annotator.pool``'s.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from .. import pool
from ..lifecycle_forms import InviteForm
from ..models import Study
from ..permissions import researcher_required
from .research import duration, researcher_studies


def _study(request: HttpRequest, slug: str) -> Study:
    return get_object_or_404(researcher_studies(request.user).select_related("team"), slug=slug)


def _page(request: HttpRequest, study: Study, invite: InviteForm) -> HttpResponse:
    rows = pool.annotator_rows(study)
    for row in rows:
        row["median_time"] = "" if row["median_seconds"] is None else duration(row["median_seconds"])
        row["others"] = [other for other in rows if other is not row and other["status"] in ("active", "curator")]
    context = {
        "study": study, "rows": rows, "columns": pool.columns(), "invite": invite,
        "invitations": study.invitations.select_related("user", "invited_by").filter(accepted_at__isnull=True),
    }
    return render(request, "annotator/research/pool.html", context)


@require_GET
@researcher_required
def annotators(request: HttpRequest, slug: str) -> HttpResponse:
    """Each member's standing and work, with the actions on them, and the invitations still open."""
    return _page(request, _study(request, slug), InviteForm())


@require_POST
@researcher_required
def annotator_action(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """``action``: release, remove, reinstate, curator, uncurator, or reassign (with ``assignment`` and ``to``)."""
    study = _study(request, slug)
    action = request.POST.get("action", "")
    try:
        if action == "release":
            released = pool.release(study, user_id, actor=request.user)
            messages.success(request, f"{released} item{'s' if released != 1 else ''} released back to the pool.")
        elif action == "remove":
            released = pool.remove(study, user_id, actor=request.user)
            messages.success(request, f"Removed from the pool; {released} item{'s' if released != 1 else ''} in "
                             "progress released. Their submitted work is kept and marked.")
        elif action == "reinstate":
            pool.reinstate(study, user_id, actor=request.user)
            messages.success(request, "Back in the pool.")
        elif action in ("curator", "uncurator"):
            pool.set_curator(study, user_id, action == "curator", actor=request.user)
            messages.success(request, "Curator status changed.")
        elif action == "reassign":
            new = pool.reassign(study, _number(request, "assignment"), _number(request, "to"), actor=request.user)
            messages.success(request, f"Item {new.item.position + 1} reassigned to {new.annotator.get_username()}.")
        else:
            messages.error(request, "Choose release, reassign, remove or curator.")
    except pool.PoolError as problem:
        messages.error(request, str(problem))
    return redirect("annotator:pool", slug=study.slug)


def _number(request: HttpRequest, name: str) -> int:
    try:
        return int(request.POST.get(name, ""))
    except ValueError:
        raise pool.PoolError(f"Choose the {'item' if name == 'assignment' else 'annotator'}.") from None


@require_POST
@researcher_required
def invite(request: HttpRequest, slug: str) -> HttpResponse:
    """Invite one person by username or e-mail; a bad one is named on its field."""
    study = _study(request, slug)
    form = InviteForm(request.POST)
    if form.is_valid():
        username, email = form.cleaned_data["username"], form.cleaned_data["email"]
        try:
            if username:
                pool.invite_user(study, username, actor=request.user)
                messages.success(request, f"{username} is invited: they accept on their annotator page.")
            else:
                join = request.build_absolute_uri(reverse("annotator:join", args=[study.invite_token]))
                pool.invite_email(study, email, join, actor=request.user)
                messages.success(request, f"An invitation was sent to {email}.")
        except pool.PoolError as problem:
            form.add_error("username" if username else "email", str(problem))
        else:
            return redirect("annotator:pool", slug=study.slug)
    return _page(request, study, form)


@require_POST
@login_required
def accept_invitation(request: HttpRequest, invitation_id: int) -> HttpResponse:
    """The invited person joins the study; an invitation to someone else is a 404."""
    invitation = next((mine for mine in pool.pending_for(request.user) if mine.pk == invitation_id), None)
    if invitation is None:
        raise Http404("No such invitation.")
    try:
        pool.accept(invitation, request.user)
    except pool.PoolError as problem:
        messages.error(request, str(problem))
        return redirect("annotator:index")
    return redirect("annotator:instructions", slug=invitation.study.slug)

