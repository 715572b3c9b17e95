"""Who may do what in the annotator app: one place for every view and export to ask."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from .models import Assignment

RESEARCHERS = "researchers"
ANNOTATORS = "annotators"


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


def own_assignment(request: HttpRequest, assignment_id: int) -> Assignment:
    """The signed-in annotator's own assignment; anyone else's is a 404, so ids reveal nothing."""
    return get_object_or_404(
        Assignment.objects.select_related("item__study__scheme", "item__episode__scenario"),
        pk=assignment_id,
        annotator=request.user,
    )
