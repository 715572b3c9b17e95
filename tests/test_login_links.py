import pytest
from django.test import Client
from django.urls import reverse

from benchmark.login_links import login_link_path
from tests.builders import make_user
from tests.concurrency import at_once, errors

pytestmark = pytest.mark.django_db


def test_a_valid_link_logs_the_user_in(client):
    user = make_user()

    response = client.get(login_link_path(user))

    assert response.status_code == 302
    assert response.url == reverse("annotator:index")  # where an annotator's work is
    assert client.session["_auth_user_id"] == str(user.pk)


def test_a_used_link_fails_with_a_message(client):
    user = make_user()
    path = login_link_path(user)
    client.get(path)
    client.logout()

    response = client.get(path, follow=True)

    assert response.redirect_chain[-1] == (reverse("login"), 302)
    assert "_auth_user_id" not in client.session
    assert "This login link is used, expired or wrong" in response.text


def test_a_forged_token_fails(client):
    user = make_user()
    uidb64 = login_link_path(user).split("/")[2]

    response = client.get(reverse("login-link", args=[uidb64, "c0ffee-0123456789abcdef0123456789abcdef"]), follow=True)

    assert response.redirect_chain[-1] == (reverse("login"), 302)
    assert "_auth_user_id" not in client.session
    assert "This login link is used, expired or wrong" in response.text


def test_a_link_for_an_unknown_user_fails(client):
    response = client.get(reverse("login-link", args=["OTk5OTk", "c0ffee-0123456789abcdef"]))

    assert response.status_code == 302
    assert response.url == reverse("login")


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_link_opened_eight_times_at_once_logs_in_once():
    """Each request checked the token before any had moved last_login: 8 parallel GETs gave 7 sessions."""
    user = make_user()
    path = login_link_path(user)

    def open_link() -> bool:
        browser = Client()
        browser.get(path)
        return "_auth_user_id" in browser.session

    outcomes = at_once(*[open_link] * 8)

    assert not errors(outcomes)
    assert outcomes.count(True) == 1
