"""Keeping a computed value (a report, its figures) in Django's cache under a key made of what it depends on.

Reports are slow to build and draw but ask the same question of the same data on every reload, so
their callers name everything the value depends on (the filters, who asks, a stamp of the data
read) and ``cached`` computes it only when no value is kept under that key. The cache is each
process's own memory by default and shared by every process with ``REDIS_URL``; a value is kept at
most ``settings.PARLEY_REPORT_CACHE_SECONDS`` (0 keeps none), which bounds what a stamp cannot see.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache

T = TypeVar("T")
PREFIX = "parley-report"


def cached(compute: Callable[[], T], *parts: object) -> T:
    """The value kept under ``parts`` (their ``repr``, hashed), else ``compute()``, kept for next time.

    An exception ``compute`` raises is raised again each time, never kept."""
    key = f"{PREFIX}:{hashlib.sha256(repr(parts).encode()).hexdigest()}"
    found = cache.get(key)
    if found is None:
        found = compute()
        cache.set(key, found, settings.PARLEY_REPORT_CACHE_SECONDS)
    return found
