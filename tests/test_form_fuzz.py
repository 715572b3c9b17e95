"""Bad input never reaches a traceback: every form of the site, filled with hostile values, by everyone who may send it.

The forms are not listed by hand. Every URL pattern of the site (the authorization matrix checks
that its ``MATRIX`` names them all) is opened as each caller it serves; every form on the page
(``<form>`` with its ``action`` or ``hx-post``, its inputs, selects, text areas and files) is sent
back with each ``PAYLOADS`` value in every field, and every query parameter the page's links and
``hx-get`` addresses use is sent the same way; a POST-only URL is sent its matrix data, and the
form that leads to it is sent from its page. The admin's login is asked too (its model forms are
Django's own, open to superusers only, and not asked here).

Whatever a request gets, it must not be a 500 or an exception: a refusal, the form again with
its errors, or a redirect. Each request runs in a savepoint, so one failing request (a
``DataError`` on PostgreSQL) neither hides the next nor leaves the shared world changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import override_settings
from django.urls import reverse

from tests.test_authorization_matrix import (
    CALLERS,
    MATRIX,
    SITE_ROUTES,
    World,
    build_world,
    client_for,
    refuses,
)

# One hostile value per kind of trouble; each is put into every field of a form at once.
PAYLOADS: dict[str, str] = {
    "long": "x" * 100_000,
    "nested-lists": "[" * 1000 + "]" * 1000,
    "nested-objects": '{"a":' * 1000 + "1" + "}" * 1000,
    "nul": "a\x00b",
    "huge-number": "9" * 5000,
    "overflow": "1e999",
    "negative-overflow": "-99999999999999999999999999999999",
    "not-a-number": "NaN",
    "control-characters": "\x01\x02\x1b[31m\u202e\ufeff",
}
# Bytes that are not UTF-8 (a lone continuation byte, an encoded surrogate), sent as a raw form body.
INVALID_UTF8 = b"%FF%FE%ED%A0%80"


@dataclass
class Form:
    """What one ``<form>`` sends: where, how, and its fields' names by kind."""

    action: str
    method: str
    multipart: bool
    fields: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)


class PageReader(HTMLParser):
    """The forms of a page, and the query parameters its links and htmx addresses use, by path."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.forms: list[Form] = []
        self.queries: dict[str, set[str]] = {}
        self._open: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        for name in ("href", "hx-get", "action"):
            address = urlsplit(attributes.get(name, ""))
            if address.query and not address.netloc:
                path = address.path or urlsplit(self.url).path
                self.queries.setdefault(path, set()).update(key for key, _ in parse_qsl(address.query))
        if tag == "form":
            post = attributes.get("hx-post")
            method = "post" if post else attributes.get("method", "get").lower()
            if method not in ("get", "post"):  # method="dialog" closes a dialog in the browser; nothing is sent
                self._open = None
                return
            self._open = Form(
                action=post or attributes.get("action") or self.url, method=method,
                multipart=attributes.get("enctype") == "multipart/form-data",
            )
            self.forms.append(self._open)
        elif tag in ("input", "select", "textarea", "button") and self._open and attributes.get("name"):
            if attributes.get("type") == "file":
                self._open.files.add(attributes["name"])
            elif attributes["name"] != "csrfmiddlewaretoken":
                self._open.fields.add(attributes["name"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = None


def read_page(url: str, html: str) -> PageReader:
    reader = PageReader(url)
    reader.feed(html)
    return reader


@dataclass
class Fuzzer:
    """Sends hostile requests as one caller and keeps what went wrong, request by request.

    ``sent`` is what this caller has sent already in the module (a form by its method, path and fields; a
    page's query parameters by path and names): the same request over the same world answers the same,
    so a form or link every page carries (the navigation's) is sent once per caller, not once per page.
    """

    world: World
    caller: str
    problems: list[str] = field(default_factory=list)
    sent: set[tuple[str, str, frozenset[str]]] = field(default_factory=set)

    def request(self, method: str, url: str, what: str, data: object = None, content_type: str = "") -> str:
        """The page's text, or "" when the request failed (recorded as a problem)."""
        client = client_for(self.world, self.caller)
        try:
            with transaction.atomic():
                if content_type:  # a raw body
                    response = client.generic(method.upper(), url, data, content_type=content_type)
                else:
                    response = getattr(client, method)(url, data)
                transaction.set_rollback(True)
        except Exception as error:  # the finding itself: name it and go on with the next request
            self.problems.append(f"{method.upper()} {url} as {self.caller} with {what}: {type(error).__name__}: "
                                 f"{str(error)[:200]}")
            return ""
        if response.status_code >= 500:
            self.problems.append(f"{method.upper()} {url} as {self.caller} with {what}: {response.status_code}")
        if response.streaming:
            return ""
        return response.content.decode("utf-8", errors="replace")

    def send_form(self, form: Form) -> None:
        key = (form.method, urlsplit(form.action).path, frozenset(form.fields | form.files))
        if key in self.sent:
            return
        self.sent.add(key)
        for name, payload in PAYLOADS.items():
            data: dict[str, object] = dict.fromkeys(form.fields, payload)
            for file_field in form.files:
                data[file_field] = SimpleUploadedFile(f"{name}.jsonl", payload.encode())
            self.request(form.method, form.action, name, data)
        if form.fields:
            body = "&".join(f"{quote(name)}={INVALID_UTF8.decode()}" for name in sorted(form.fields))
            if form.method == "get":
                self.request("get", f"{urlsplit(form.action).path}?{body}", "bytes that are not UTF-8")
            else:
                self.request("post", form.action, "bytes that are not UTF-8", body.encode(),
                             content_type="application/x-www-form-urlencoded")

    def send_queries(self, queries: dict[str, set[str]]) -> None:
        for path, names in queries.items():
            key = ("query", path, frozenset(names))
            if key in self.sent:
                continue
            self.sent.add(key)
            for name, payload in PAYLOADS.items():
                self.request("get", f"{path}?{urlencode(dict.fromkeys(names, payload))}", f"query {name}")


def callers_served(name: str) -> Iterator[str]:
    """The callers a URL serves (who may send its forms): all but those it refuses."""
    access = MATRIX[name]
    for caller in CALLERS:
        if not refuses(access.expect[caller]):
            yield caller


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[World]:
    with override_settings(VAR_DIR=tmp_path_factory.mktemp("var")), django_db_blocker.unblock():
        with transaction.atomic():
            yield build_world()
            transaction.set_rollback(True)


@pytest.fixture(scope="module")
def sent() -> dict[str, set]:
    """What each caller has sent already in this module, by caller (see ``Fuzzer.sent``)."""
    return {}


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(route.name for route in SITE_ROUTES))
def test_no_form_of_the_site_answers_hostile_input_with_an_error(world, sent, name):
    access = MATRIX[name]
    url = reverse(name, kwargs=access.args(world))
    problems: list[str] = []
    for caller in callers_served(name):
        fuzzer = Fuzzer(world, caller, sent=sent.setdefault(caller, set()))
        if access.method == "POST":  # its matrix data; the page that holds its form sends that form too
            fuzzer.send_form(Form(action=url, method="post", multipart=False, fields=set(access.data)))
        if access.method == "GET" or access.get == 200:
            page = read_page(url, fuzzer.request("get", url, "nothing"))
            for form in page.forms:
                fuzzer.send_form(form)
            fuzzer.send_queries(page.queries)
        problems += fuzzer.problems
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_the_admin_login_takes_hostile_input_without_an_error(world):
    url = reverse("admin:login")
    fuzzer = Fuzzer(world, "anonymous")
    for form in read_page(url, fuzzer.request("get", url, "nothing")).forms:
        fuzzer.send_form(form)
    assert not fuzzer.problems, "\n".join(fuzzer.problems)
