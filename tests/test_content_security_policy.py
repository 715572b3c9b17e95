"""Every page carries a Content-Security-Policy that lets only Parley's own scripts run.

The browser side (no page of Parley's breaks under it) is tests/e2e/test_content_security_policy.py.
"""

import re

import pytest
from django.conf import settings
from django.urls import reverse

from tests.builders import make_user

pytestmark = pytest.mark.django_db


def policy(response) -> dict[str, list[str]]:
    header = response.headers["Content-Security-Policy"]
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {name: sources for name, *sources in directives}


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/no-such-page/"], ids=["home", "login", "404"])
def test_pages_allow_scripts_from_parley_only(client, path):
    directives = policy(client.get(path))

    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"]  # no 'unsafe-inline', no 'unsafe-eval', no other host
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'self'"]
    assert directives["form-action"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["connect-src"] == ["'self'"]


def test_a_lockout_page_carries_the_policy_too(client, settings):
    settings.AXES_FAILURE_LIMIT = 1
    make_user(username="ana")
    client.post(reverse("login"), {"username": "ana", "password": "wrong"})
    response = client.post(reverse("login"), {"username": "ana", "password": "wrong"})
    assert response.status_code == 429
    assert policy(response)["script-src"] == ["'self'"]


# An inline <script>, an on...= handler, a style= attribute, htmx's hx-on (which needs eval).
REFUSED_IN_TEMPLATES = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=|\sstyle\s*=|\shx-on")


def test_no_template_has_inline_scripts_handlers_or_style_attributes():
    """What the policy would refuse, or what would need it loosened, stays out of the templates."""
    offenders = [
        f"{template.relative_to(settings.BASE_DIR)}: {match.group(0)}"
        for template in sorted((settings.BASE_DIR / "templates").rglob("*.html"))
        for match in REFUSED_IN_TEMPLATES.finditer(template.read_text())
    ]
    assert offenders == []
