"""Parley's own error pages and one-line log entries for refusals, with DEBUG on as well as off.

The demo runs with DEBUG on, and there Django answers a view's ``Http404`` (a study link with a
wrong slug, an invite with a wrong token) with its yellow debug page listing the query that
failed. A participant or an annotator who mistyped a link should see Parley's page saying what to
do, whatever DEBUG is: ``NotFoundPageMiddleware`` renders ``404.html`` for every ``Http404`` a view
raises. An address that matches no URL at all still gets Django's debug list of URL patterns in
development, which helps whoever is adding a page.

A refusal (403) is an expected answer, not a fault: ``RefusalsInOneLine`` drops the traceback
Django attaches to its "Forbidden" log entry, so the server log shows one line per refusal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.views.defaults import page_not_found


class NotFoundPageMiddleware:
    """A view's ``Http404`` becomes Parley's 404 page, with DEBUG on as well as off."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Http404):
            return page_not_found(request, exception)
        return None


class RefusalsInOneLine(logging.Filter):
    """Log a refused request (403) as its one "Forbidden" line, without the exception's traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403 or (
            record.exc_info and isinstance(record.exc_info[1], PermissionDenied)
        ):
            record.exc_info = None
            record.exc_text = None
        return True
