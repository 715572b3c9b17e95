"""How many new participants one client address may start, and wrong resume codes it may try.

Made-up ids cost nothing, so a script can fill a study with participants who consent and leave
(the minimum of turns, ``chat.lifecycle``, stops them from earning the completion code; this stops
them from taking the places). The study link creates at most ``settings.PARLEY_ENTRY_RATE`` new
participants per client address per period ("10/hour" unless configured; "off" for none), and
wrong resume codes count against the same allowance, so the codes cannot be guessed either.
Returning participants are never counted.

The counting is ``benchmark.throttle``'s (per address and fixed window, in the cache).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from benchmark.throttle import Allowance, allowance

GROUP = "chat-entry"


def spend(request: HttpRequest) -> Allowance:
    """Count one new participant (or one wrong resume code) for the request's address."""
    return allowance(request, GROUP, settings.PARLEY_ENTRY_RATE, spend=True)


def remaining(request: HttpRequest) -> Allowance:
    """Whether the request's address has any allowance left, without spending it."""
    return allowance(request, GROUP, settings.PARLEY_ENTRY_RATE, spend=False)
