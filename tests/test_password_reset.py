"""Forgotten passwords: Django's reset flow, mailed through the site's e-mail settings, throttled per address."""

import re

import pytest
from django.urls import reverse

from tests.builders import PASSWORD, make_user

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a fresh and rather long passphrase"


def ask_for_reset(client, email: str, address: str = "198.51.100.7"):
    return client.post(reverse("password_reset"), {"email": email}, REMOTE_ADDR=address)


def link_in(mail) -> str:
    return re.search(r"https?://[^/\s]+(/accounts/reset/\S+/)", mail.body).group(1)


def test_the_login_page_offers_a_reset(client):
    assert f'href="{reverse("password_reset")}"' in client.get(reverse("login")).text


def test_a_reset_link_is_mailed_and_sets_a_new_password(client, mailoutbox):
    user = make_user(username="ana", email="ana@example.org")

    response = ask_for_reset(client, "ana@example.org")

    assert response.status_code == 302 and response.url == reverse("password_reset_done")
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["ana@example.org"]
    assert mailoutbox[0].subject == "Your Parley password"
    form = client.get(link_in(mailoutbox[0]), follow=True)
    assert "Choose a new password" in form.text and 'class="site-header"' in form.text
    done = client.post(form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done.url == reverse("password_reset_complete")
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD) and not user.check_password(PASSWORD)


def test_a_used_reset_link_no_longer_works(client, mailoutbox):
    make_user(username="ana", email="ana@example.org")
    ask_for_reset(client, "ana@example.org")
    form = client.get(link_in(mailoutbox[0]), follow=True)
    client.post(form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})

    again = client.get(link_in(mailoutbox[0]), follow=True)

    assert "This link is used, expired or wrong" in again.text


def test_an_unknown_address_gets_the_same_page_and_no_mail(client, mailoutbox):
    make_user(username="ana", email="ana@example.org")

    response = ask_for_reset(client, "nobody@example.org")

    assert response.status_code == 302 and response.url == reverse("password_reset_done")
    assert mailoutbox == []


def test_reset_mails_are_limited_per_address(client, mailoutbox, settings):
    settings.PARLEY_PASSWORD_RESET_RATE = "2/h"
    make_user(username="ana", email="ana@example.org")
    for _ in range(2):
        assert ask_for_reset(client, "ana@example.org").status_code == 302

    response = ask_for_reset(client, "ana@example.org")

    assert response.status_code == 429
    assert "Too many password resets were asked for from your address" in response.text
    assert len(mailoutbox) == 2
    assert ask_for_reset(client, "ana@example.org", address="203.0.113.9").status_code == 302
