"""The client's address, as far as Parley can trust it.

Without a proxy it is the connection's address (``REMOTE_ADDR``), and an ``X-Forwarded-For`` header
is ignored: any client can write one, and believing it would let an attacker pick a fresh address
for every guess at a password. Behind ``PARLEY_PROXY_COUNT`` trusted reverse proxies, each of which
appends the address it received the request from to ``X-Forwarded-For``, the client is the
N-th entry from the right: whatever stands to its left was written by the client itself. A header
with fewer entries than proxies did not pass through all of them, so the connection's address is
used instead. The login throttle (django-axes, ``AXES_CLIENT_IP_CALLABLE``) counts failures by it.
"""

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The address that the outermost trusted proxy (or, with none, this server) saw the request from."""
    connection = request.META.get("REMOTE_ADDR", "")
    proxies = settings.PARLEY_PROXY_COUNT
    if proxies <= 0:
        return connection
    forwarded = [entry.strip() for entry in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [entry for entry in forwarded if entry]
    if len(forwarded) < proxies:
        return connection
    return forwarded[-proxies]
