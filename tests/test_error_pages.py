"""Error pages: Parley's own layout and a plain sentence, never Django's bare or debug pages.

pytest-django runs every test with DEBUG off, as production does, so these are the pages a
participant or an annotator would see.
"""

import logging

import pytest
from django.test import Client
from django.urls import path, reverse

from config.urls import urlpatterns as site_urlpatterns
from tests.builders import make_user

pytestmark = pytest.mark.django_db


def broken_view(request):
    raise RuntimeError("/srv/parley/secret/path exploded")


# A URL conf with one view that fails, for the 500 page (pytest.mark.urls).
urlpatterns = [*site_urlpatterns, path("broken/", broken_view)]


def assert_parley_page(response, status: int, sentence: str) -> None:
    assert response.status_code == status
    text = response.content.decode()
    assert 'class="site-header"' in text and "Parley" in text
    assert sentence in text
    assert "Traceback" not in text and "DEBUG = True" not in text


def test_a_missing_page_is_a_parley_404(client):
    assert_parley_page(client.get("/no-such-page/"), 404, "Page not found")


def test_a_refused_page_is_a_parley_403_with_the_reason(client):
    client.force_login(make_user())
    response = client.get(reverse("benchmark:runs"))
    assert_parley_page(response, 403, "You may not open this page")
    assert "Only researchers can open this page." in response.content.decode()


@pytest.mark.urls("tests.test_error_pages")
def test_a_server_error_is_a_parley_500_without_details():
    client = Client(raise_request_exception=False)
    response = client.get("/broken/")
    assert_parley_page(response, 500, "Something went wrong on our side")
    assert "/srv/parley" not in response.content.decode()


def test_a_bad_request_is_a_parley_400(client):
    response = client.get("/", HTTP_HOST="not-an-allowed-host.example")
    assert_parley_page(response, 400, "Bad request")


def test_a_form_without_its_security_token_is_a_parley_403_that_says_what_to_do():
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "someone", "password": "secret"})
    assert_parley_page(response, 403, "reload the page")


@pytest.mark.parametrize(
    "url", ["/s/no-such-study/", "/s/no-such-study/consent/", "/annotate/join/not-a-real-invite-token/"]
)
def test_a_wrong_study_link_or_invite_is_parley_404_in_the_demo_with_debug_on(client, settings, url):
    settings.DEBUG = True
    response = client.get(url)
    assert_parley_page(response, 404, "Page not found")
    assert "ChatStudy" not in response.content.decode() and "Study matching" not in response.content.decode()


def test_a_refusal_is_one_log_line_without_a_traceback(client, settings, monkeypatch):
    settings.DEBUG = True  # as in the demo, where Django's own console handler is active too
    written: list[str] = []  # what the server's console handlers print (pytest's own handlers aside)

    def emit(handler: logging.Handler, record: logging.LogRecord) -> None:
        if type(handler) is logging.StreamHandler:
            written.append(handler.format(record))

    monkeypatch.setattr(logging.StreamHandler, "emit", emit)
    client.force_login(make_user())
    assert client.get(reverse("benchmark:runs")).status_code == 403
    refusals = [line for line in written if "Forbidden" in line]
    assert refusals == [f"Forbidden (Permission denied): {reverse('benchmark:runs')}"]
