"""Failed log-ins are throttled (django-axes): a username at one address, and an address that failed
with many usernames, are locked out for a while.

The limit and the cool-off come from the environment (LOGIN_FAILURE_LIMIT, LOGIN_COOLOFF_MINUTES);
the client's address is the connection's, or the one the trusted proxies report (PARLEY_PROXY_COUNT).
"""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from benchmark.login_links import login_link_path
from config.proxies import client_address
from tests.builders import PASSWORD, make_user

pytestmark = pytest.mark.django_db

LIMIT = 3


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT


def log_in(client, username: str, password: str, address: str = "198.51.100.7", **headers):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address, **headers
    )


def fail(client, username: str, times: int = LIMIT, address: str = "198.51.100.7", **headers) -> None:
    for _ in range(times):
        response = log_in(client, username, "not the password", address, **headers)
        assert response.status_code in (200, 429)


def is_logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_a_wrong_password_says_so_below_the_limit(client):
    make_user(username="ana")
    response = log_in(client, "ana", "not the password")
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.text


def test_after_the_limit_even_the_right_password_gets_the_lockout_page(client):
    make_user(username="ana")
    fail(client, "ana")

    response = log_in(client, "ana", PASSWORD)

    assert response.status_code == 429
    assert not is_logged_in(client)
    assert 'class="site-header"' in response.text  # Parley's layout
    assert "Too many failed log-ins" in response.text
    assert "15 minutes" in response.text


def test_the_lockout_ends_after_the_cool_off(client):
    make_user(username="ana")
    fail(client, "ana")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))

    response = log_in(client, "ana", PASSWORD)

    assert response.status_code == 302 and is_logged_in(client)


def test_the_lockout_holds_the_username_at_that_address_only(client):
    """Someone guessing from one address cannot lock the real user out everywhere, nor others out."""
    make_user(username="ana")
    make_user(username="ben")
    fail(client, "ana", address="198.51.100.7")

    assert log_in(client, "ben", PASSWORD, address="198.51.100.7").status_code == 302
    client.logout()
    assert log_in(client, "ana", PASSWORD, address="203.0.113.9").status_code == 302


def test_a_forwarded_for_header_does_not_escape_the_lockout_without_a_trusted_proxy(client):
    make_user(username="ana")
    for number in range(LIMIT):
        fail(client, "ana", times=1, HTTP_X_FORWARDED_FOR=f"192.0.2.{number}")

    response = log_in(client, "ana", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200")

    assert response.status_code == 429 and not is_logged_in(client)


def test_a_one_use_login_link_still_logs_in_a_locked_out_user(client):
    user = make_user(username="ana")
    fail(client, "ana")

    response = client.get(login_link_path(user))

    assert response.status_code == 302 and is_logged_in(client)


def test_the_address_is_the_connections_without_a_trusted_proxy(settings):
    settings.PARLEY_PROXY_COUNT = 0
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="192.0.2.1")
    assert client_address(request) == "10.0.0.2"


@pytest.mark.parametrize(
    ("count", "forwarded_for", "expected"),
    [
        (1, "203.0.113.5", "203.0.113.5"),
        (1, "192.0.2.66, 203.0.113.5", "203.0.113.5"),  # the client's own claim comes first: ignored
        (2, "192.0.2.66, 203.0.113.5, 10.0.0.9", "203.0.113.5"),
        (2, "10.0.0.9", "10.0.0.2"),  # fewer entries than proxies: the header is not to be trusted
        (1, "", "10.0.0.2"),
    ],
)
def test_behind_trusted_proxies_the_address_is_the_one_the_first_proxy_saw(settings, count, forwarded_for,
                                                                          expected):
    settings.PARLEY_PROXY_COUNT = count
    headers = {"HTTP_X_FORWARDED_FOR": forwarded_for} if forwarded_for else {}
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", **headers)
    assert client_address(request) == expected


def test_a_username_longer_than_any_account_is_a_failed_login_not_an_error(client):
    """PostgreSQL refused to record it (varchar 255): a 500 instead of the form."""
    for url in (reverse("login"), reverse("admin:login")):
        response = client.post(url, {"username": "u" * 1000, "password": "x"}, REMOTE_ADDR="198.51.100.7")
        assert response.status_code == 200
    assert {len(name) for name in AccessAttempt.objects.values_list("username", flat=True)} == {255}


def test_spraying_one_password_over_many_usernames_locks_the_address(client, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 10
    make_user(username="ana")
    for number in range(10):
        assert log_in(client, f"user{number}", "Summer2026!").status_code == 200

    response = log_in(client, "ana", PASSWORD)

    assert response.status_code == 429 and not is_logged_in(client)
    assert "No one can log in from your address for now" in response.text
    assert log_in(client, "ana", PASSWORD, address="203.0.113.9").status_code == 302  # other addresses may


def test_the_address_limit_ends_after_the_cool_off(client, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 4
    make_user(username="ana")
    for number in range(4):
        log_in(client, f"user{number}", "Summer2026!")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))

    assert log_in(client, "ana", PASSWORD).status_code == 302
