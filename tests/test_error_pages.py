"""Error pages: Parley's own layout and a plain sentence, never Django's bare or debug pages.

pytest-django runs every test with DEBUG off, as production does, so these are the pages a
participant or an annotator would see.
"""

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
