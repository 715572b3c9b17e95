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

The settings the rule reads are worked out once (``allowed_origins``), not at every handshake: the
hosts, the trusted origins split into exact ones and subdomain patterns, the proxy's header. A test
that changes one of those settings (``override_settings``) makes them worked out again, through
Django's ``setting_changed`` signal.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

# What ``allowed_origins`` reads; a change to any of them (in tests) works the rule out again.
SETTINGS_READ = frozenset(
    {"ALLOWED_HOSTS", "DEBUG", "CSRF_TRUSTED_ORIGINS", "SECURE_PROXY_SSL_HEADER", "USE_X_FORWARDED_HOST"}
)


@dataclass(frozen=True)
class AllowedOrigins:
    """The rule of the module docstring, with the settings it reads already worked out."""

    hosts: tuple[str, ...]  # ALLOWED_HOSTS, or Django's local defaults when it is empty in debug mode
    trusted: frozenset[str]  # CSRF_TRUSTED_ORIGINS without a wildcard, compared whole
    trusted_subdomains: tuple[tuple[str, str], ...]  # (scheme, ".domain[:port]") of each https://*.domain entry
    proxy_header: bytes | None  # the header a TLS proxy sets (SECURE_PROXY_SSL_HEADER), as a handshake names it
    proxy_secure_value: str
    forwarded_host: bool  # USE_X_FORWARDED_HOST

    @classmethod
    def from_settings(cls) -> AllowedOrigins:
        hosts = tuple(settings.ALLOWED_HOSTS)
        if settings.DEBUG and not hosts:
            hosts = (".localhost", "127.0.0.1", "[::1]")
        trusted = settings.CSRF_TRUSTED_ORIGINS
        proxy_header, proxy_secure_value = None, ""
        if settings.SECURE_PROXY_SSL_HEADER:
            header, proxy_secure_value = settings.SECURE_PROXY_SSL_HEADER
            proxy_header = header.removeprefix("HTTP_").replace("_", "-").lower().encode("latin1")
        return cls(
            hosts=hosts,
            trusted=frozenset(entry for entry in trusted if "*" not in entry),
            trusted_subdomains=tuple(
                (entry.scheme, entry.netloc.removeprefix("*"))
                for entry in (urlsplit(pattern) for pattern in trusted if "*" in pattern)
            ),
            proxy_header=proxy_header,
            proxy_secure_value=proxy_secure_value,
            forwarded_host=settings.USE_X_FORWARDED_HOST,
        )

    def allow(self, origin: str, host: str, *, secure: bool) -> bool:
        """True when a page at ``origin`` may open a socket sent to ``host`` (rule in the module docstring)."""
        if not origin or origin == "null":
            return False
        if origin == f"{'https' if secure else 'http'}://{host}":
            domain, _ = split_domain_port(host)
            if domain and validate_host(domain, self.hosts):
                return True
        if origin in self.trusted:
            return True
        if not self.trusted_subdomains:
            return False
        try:
            parsed = urlsplit(origin)
        except ValueError:
            return False
        return any(
            parsed.scheme == scheme and is_same_domain(parsed.netloc, domain)
            for scheme, domain in self.trusted_subdomains
        )

    def handshake(self, scope: dict[str, Any]) -> tuple[str, str, bool]:
        """The handshake's origin, the host it was sent to (as Django's ``HttpRequest.get_host`` reads it,
        without checking) and whether it came over TLS (``wss``, or the proxy header Django trusts)."""
        wanted = {b"origin", b"host", b"x-forwarded-host", self.proxy_header}
        headers = {}
        for name, value in scope.get("headers", []):
            if (name := name.lower()) in wanted:
                headers[name] = value.decode("latin1")
        host = headers.get(b"host", "")
        if self.forwarded_host and b"x-forwarded-host" in headers:
            host = headers[b"x-forwarded-host"]
        if self.proxy_header in headers:
            secure = headers[self.proxy_header].split(",", 1)[0].strip() == self.proxy_secure_value
        else:
            secure = scope.get("scheme", "ws") == "wss"
        return headers.get(b"origin", ""), host, secure


@functools.cache
def allowed_origins() -> AllowedOrigins:
    """The rule for this process's settings, worked out at the first handshake."""
    return AllowedOrigins.from_settings()


@receiver(setting_changed)
def _work_out_again(*, setting: str, **_kwargs: Any) -> None:
    if setting in SETTINGS_READ:
        allowed_origins.cache_clear()


class SameOriginValidator:
    """ASGI middleware: pass a websocket handshake on only from an allowed origin, else answer 403."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator guards websocket connections only.")
        rule = allowed_origins()
        origin, host, secure = rule.handshake(scope)
        if rule.allow(origin, host, secure=secure):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
