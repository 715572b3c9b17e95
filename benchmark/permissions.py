"""Who counts as a researcher: one definition for every app's researcher pages.

Researchers are staff users or members of the ``researchers`` group. The annotator and chat apps
both ask here, so a researcher is the same person on every page.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

RESEARCHERS = "researchers"


def is_researcher(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff, or a member of the researchers group: they manage studies and see reports."""
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHERS).exists()


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous users go to the login page; signed-in non-researchers get 403."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_researcher(request.user):
            raise PermissionDenied("Only researchers can open this page.")
        return view(request, *args, **kwargs)

    return wrapped
