"""Who counts as a researcher: one definition for every app's researcher pages.

Researchers are staff users, members of the ``researchers`` group, and every team's researchers
(``TeamMember`` with the researcher role, as ``manage.py add_team_member`` makes them). The
annotator and chat apps both ask here, so a researcher is the same person on every page.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from .models import TeamMember

RESEARCHERS = "researchers"


def is_researcher(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff, a member of the researchers group or a team's researcher: they manage studies and see reports."""
    if not user.is_authenticated or not user.is_active:
        return False
    return (
        user.is_staff
        or user.groups.filter(name=RESEARCHERS).exists()
        or TeamMember.objects.filter(user=user, role=TeamMember.Role.RESEARCHER).exists()
    )


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous users go to the login page; signed-in non-researchers get 403."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_researcher(request.user):
            raise PermissionDenied("Only researchers can open this page.")
        return view(request, *args, **kwargs)

    return wrapped
