"""One Redis connection pool per server process for Django's cache.

Under ASGI Django keeps its cache objects per request context (``django.core.cache.caches`` is an
asgiref ``Local``), so every page request and every chat socket got a ``RedisCache`` of its own and,
with it, a new connection pool: each opened a new connection to Redis (and left it to the garbage
collector). ``SharedConnectionPool`` gives every cache object of the process the same pool for the
same server and options; redis-py's pools are thread-safe, and a forked worker starts afresh.
"""

from __future__ import annotations

import threading
from typing import Any

import redis


class SharedConnectionPool(redis.ConnectionPool):
    _shared: dict[tuple, redis.ConnectionPool] = {}
    _lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> redis.ConnectionPool:
        key = (url, tuple(sorted((name, repr(value)) for name, value in options.items())))
        with cls._lock:
            if key not in cls._shared:
                cls._shared[key] = super().from_url(url, **options)
            return cls._shared[key]
