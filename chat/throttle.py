"""How many new participants one client address may start, and wrong resume codes it may try.

Made-up ids cost nothing, so a script can fill a study with participants who consent and leave
(the minimum of turns, ``chat.lifecycle``, stops them from earning the completion code; this stops
them from taking the places). The study link creates at most ``settings.PARLEY_ENTRY_RATE`` new
participants per client address per period ("10/hour" unless configured; "off" for none), and
wrong resume codes count against the same allowance, so the codes cannot be guessed either.
Returning participants are never counted.

The counting is django-ratelimit's: a counter per address and fixed window in Django's cache
(Redis, shared by every server process, when ``REDIS_URL`` is set), IPv6 addresses grouped by
their /64 network as one household's devices are. The address is ``REMOTE_ADDR``: behind a
proxy, run daphne with ``--proxy-headers`` so that it is the participant's, not the proxy's.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

GROUP = "chat-entry"


@dataclass(frozen=True)
class Allowance:
    allowed: bool
    retry_after: int = 0  # seconds until the window ends, when not allowed

    def __bool__(self) -> bool:
        return self.allowed


def spend(request: HttpRequest) -> Allowance:
    """Count one new participant (or one wrong resume code) for the request's address."""
    return _allowance(request, increment=True)


def remaining(request: HttpRequest) -> Allowance:
    """Whether the request's address has any allowance left, without spending it."""
    return _allowance(request, increment=False)


def _allowance(request: HttpRequest, *, increment: bool) -> Allowance:
    usage = get_usage(request, group=GROUP, key="ip", rate=settings.PARLEY_ENTRY_RATE, increment=increment)
    if usage is None or not usage["should_limit"]:
        return Allowance(True)
    return Allowance(False, retry_after=max(1, usage["time_left"]))
