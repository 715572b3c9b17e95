"""Which pages may open the site's websockets: the rule Django's CSRF check applies to a form's Origin.

A browser sends the session cookie with every websocket handshake, whichever page opens the
socket, and websockets have no CSRF token: the ``Origin`` header is the only thing that tells our
own pages from another site's. So a handshake is let through only when, as
``django.middleware.csrf.CsrfViewMiddleware._origin_verified`` decides for a POST:

1. its ``Host`` header names one of ``ALLOWED_HOSTS`` (as any request must), and the ``Origin`` is
   exactly the origin the socket was opened on: ``http://`` + Host for ``ws``, ``https://`` +
   Host for ``wss`` (or behind a TLS proxy as ``SECURE_PROXY_SSL_HEADER`` says), so scheme, host
   and port must all agree; or
2. the ``Origin`` is one of ``CSRF_TRUSTED_ORIGINS``, compared whole (scheme, host and port), or
   under one of its ``https://*.example.org`` entries, subdomains with the same scheme and port.

Channels' ``AllowedHostsOriginValidator`` only compares the host name with ``ALLOWED_HOSTS``, so
``http://127.0.0.1:9999`` (another program on the same machine) or ``https://127.0.0.1`` passed
for a site served at ``http://127.0.0.1:8000``. A refused handshake gets HTTP 403, as there.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain


def allowed_hosts() -> list[str]:
    """``ALLOWED_HOSTS``, with Django's local defaults when it is empty in debug mode."""
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def origin_allowed(origin: str, host: str, *, secure: bool) -> bool:
    """True when a page at ``origin`` may open a socket sent to ``host`` (rule in the module docstring)."""
    if not origin or origin == "null":
        return False
    domain, _ = split_domain_port(host)
    if domain and validate_host(domain, allowed_hosts()) and origin == f"{'https' if secure else 'http'}://{host}":
        return True
    trusted = settings.CSRF_TRUSTED_ORIGINS
    if origin in (entry for entry in trusted if "*" not in entry):
        return True
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    return any(
        parsed.scheme == entry.scheme and is_same_domain(parsed.netloc, entry.netloc.removeprefix("*"))
        for entry in (urlsplit(pattern) for pattern in trusted if "*" in pattern)
    )


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    return {name.decode("latin1").lower(): value.decode("latin1") for name, value in scope.get("headers", [])}


def is_secure(scope: dict[str, Any], headers: dict[str, str]) -> bool:
    """Whether the socket came over TLS: ``wss``, or the proxy header Django trusts says ``https``."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        header, secure_value = proxy
        name = header.removeprefix("HTTP_").replace("_", "-").lower()
        if name in headers:
            return headers[name].split(",", 1)[0].strip() == secure_value
    return scope.get("scheme", "ws") == "wss"


def request_host(headers: dict[str, str]) -> str:
    """The host the socket was sent to, as Django's ``HttpRequest.get_host`` reads it (without checking)."""
    if settings.USE_X_FORWARDED_HOST and "x-forwarded-host" in headers:
        return headers["x-forwarded-host"]
    return headers.get("host", "")


class SameOriginValidator:
    """ASGI middleware: pass a websocket handshake on only from an allowed origin, else answer 403."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator guards websocket connections only.")
        headers = _headers(scope)
        if origin_allowed(headers.get("origin", ""), request_host(headers), secure=is_secure(scope, headers)):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
