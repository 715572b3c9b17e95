"""How often one client address may do something costly: one allowance per kind of request.

The counting is django-ratelimit's: a counter per address and fixed window in Django's cache
(Redis, shared by every server process, when ``REDIS_URL`` is set), IPv6 addresses grouped by
their /64 network as one household's devices are. The address is ``REMOTE_ADDR``: behind a
proxy, run daphne with ``--proxy-headers`` so that it is the client's, not the proxy's. A rate of
``None`` (a setting of "off") allows everything. The chat's study link, sign-ups through an
invite link and password-reset mails each have their own group and rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django_ratelimit.core import get_usage


@dataclass(frozen=True)
class Allowance:
    allowed: bool
    retry_after: int = 0  # seconds until the window ends, when not allowed

    def __bool__(self) -> bool:
        return self.allowed


def allowance(request: HttpRequest, group: str, rate: str | None, *, spend: bool) -> Allowance:
    """Whether the request's address may go on in ``group`` at ``rate``, counting this request if ``spend``."""
    usage = get_usage(request, group=group, key="ip", rate=rate, increment=spend)
    if usage is None or not usage["should_limit"]:
        return Allowance(True)
    return Allowance(False, retry_after=max(1, usage["time_left"]))
