"""How failed log-ins are throttled: django-axes, with Parley's two additions.

django-axes counts failures per username at one address (``AXES_LOCKOUT_PARAMETERS``) and locks
that pair out after ``LOGIN_FAILURE_LIMIT`` of them: a guesser cannot lock the real user out from
elsewhere. That alone lets one address try one password on many accounts (password spraying), each
account staying under its limit, so ``ParleyLoginHandler`` also locks an address out once it has
failed ``LOGIN_ADDRESS_FAILURE_LIMIT`` times within the cool-off, whatever the usernames. The count
comes from axes' own table of attempts, so the two limits share one record and one cool-off.

``attempted_username`` is what axes records of a typed username: cut to the column's length and
without NUL characters, which PostgreSQL refuses to store; a login form with a username of a
thousand characters is then only a failed log-in, not an error.
"""

from __future__ import annotations

from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest

USERNAME_MAX_LENGTH = AccessAttempt._meta.get_field("username").max_length


def attempted_username(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """The username axes records (``AXES_USERNAME_CALLABLE``), storable in any database."""
    if credentials:
        username = credentials.get("username")
    else:
        username = getattr(request, "POST", {}).get("username")
    if not isinstance(username, str):
        return None
    return username.replace("\x00", "\N{REPLACEMENT CHARACTER}")[:USERNAME_MAX_LENGTH]


def address_failures(request: HttpRequest) -> int:
    """Failed log-ins from the request's address within the cool-off, for any username."""
    attempts = AccessAttempt.objects.filter(ip_address=request.axes_ip_address)
    if settings.AXES_COOLOFF_TIME is not None:
        attempts = attempts.filter(attempt_time__gte=get_cool_off_threshold(request))
    return attempts.aggregate(failures=Sum("failures_since_start"))["failures"] or 0


class ParleyLoginHandler(AxesDatabaseHandler):
    """axes' database handler (``AXES_HANDLER``), also locking an address that failed too often."""

    def is_locked(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        if super().is_locked(request, credentials):
            return True
        limit = settings.LOGIN_ADDRESS_FAILURE_LIMIT
        if limit and address_failures(request) >= limit:
            # axes' backend raises without flagging the request (each failure during a lockout restarts
            # the cool-off), and its failure handler flags only a username's lockout: flag this one here.
            request.axes_locked_out = True
            request.parley_address_locked_out = True  # the lockout page says why
            return True
        return False
