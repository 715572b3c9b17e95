"""Joining a study's annotator pool through its invite link."""

from django.http import HttpRequest, HttpResponse


def join(request: HttpRequest, token: str) -> HttpResponse:
    raise NotImplementedError
