"""Joining a study through its invite link: signed in, signing up, a wrong token, a closed study, a full
pool, and sign-ups limited per address."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator.models import Membership
from annotator.permissions import ANNOTATORS
from tests.annotator.builders import make_study
from tests.builders import make_user
from tests.concurrency import at_once, errors

pytestmark = pytest.mark.django_db


NEW_PASSWORD = "a long and unusual passphrase 42"


@pytest.fixture
def study():
    return make_study(slug="invited", title="Invited study")


def join_url(study) -> str:
    return reverse("annotator:join", args=[study.invite_token])


def instructions_url(study) -> str:
    return reverse("annotator:instructions", args=[study.slug])


def test_a_signed_in_user_is_asked_to_confirm_and_nothing_happens_on_get(client, study):
    """Opening the link (a preview, a mail scanner, a stray click) must not enrol anyone."""
    user = make_user()
    client.force_login(user)

    response = client.get(join_url(study))

    assert response.status_code == 200
    assert "Invited study" in response.text
    assert f'<form method="post" action="{join_url(study)}"' in response.text
    assert 'name="csrfmiddlewaretoken"' in response.text
    assert ">Join this study</button>" in response.text
    assert not Membership.objects.exists()
    assert not user.groups.filter(name=ANNOTATORS).exists()


def test_a_signed_in_user_joins_by_confirming_and_goes_to_the_instructions(client, study):
    user = make_user()
    client.force_login(user)

    response = client.post(join_url(study))

    assert response.status_code == 302
    assert response.url == instructions_url(study)
    assert Membership.objects.filter(study=study, annotator=user).exists()
    assert user.groups.filter(name=ANNOTATORS).exists()


def test_joining_needs_the_form_token(study):
    user = make_user()
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    assert client.post(join_url(study)).status_code == 403
    assert not Membership.objects.exists()


def test_joining_twice_keeps_one_membership(client, study):
    user = make_user()
    client.force_login(user)

    client.post(join_url(study))
    client.post(join_url(study))

    assert Membership.objects.filter(study=study, annotator=user).count() == 1


def test_a_member_opening_the_link_again_is_pointed_to_the_instructions(client, study):
    user = make_user()
    client.force_login(user)
    client.post(join_url(study))

    response = client.get(join_url(study))

    assert "You are in this study already" in response.text
    assert f'href="{instructions_url(study)}"' in response.text
    assert "Join this study</button>" not in response.text


def test_an_anonymous_visitor_can_sign_in_or_create_an_account(client, study):
    response = client.get(join_url(study))

    assert response.status_code == 200
    assert "Invited study" in response.text
    assert f'{reverse("login")}?next={join_url(study)}' in response.text
    assert 'name="username"' in response.text and 'name="password2"' in response.text
    assert not Membership.objects.exists()


def test_signing_up_creates_an_annotator_in_the_study_and_logs_them_in(client, study):
    response = client.post(
        join_url(study), {"username": "newcomer", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    )

    assert response.status_code == 302
    assert response.url == instructions_url(study)
    user = get_user_model().objects.get(username="newcomer")
    assert user.groups.filter(name=ANNOTATORS).exists()
    assert Membership.objects.filter(study=study, annotator=user).exists()
    assert not user.is_staff
    assert client.session["_auth_user_id"] == str(user.pk)


def test_a_bad_sign_up_says_why_and_creates_nothing(client, study):
    make_user(username="taken")

    response = client.post(join_url(study), {"username": "taken", "password1": "short", "password2": "other"})

    assert response.status_code == 200
    assert "A user with that username already exists." in response.text
    assert "The two password fields didn" in response.text
    assert not Membership.objects.exists()


def test_a_wrong_token_is_a_404(client, study):
    client.force_login(make_user())

    assert client.get(reverse("annotator:join", args=["not-the-token"])).status_code == 404
    assert client.post(reverse("annotator:join", args=["not-the-token"])).status_code == 404
    assert not Membership.objects.exists()


def test_a_wrong_token_is_a_404_for_anonymous_visitors_too(client, study):
    assert client.get(reverse("annotator:join", args=["not-the-token"])).status_code == 404
    assert client.post(
        reverse("annotator:join", args=["not-the-token"]),
        {"username": "x", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    ).status_code == 404
    assert not get_user_model().objects.filter(username="x").exists()


@pytest.mark.parametrize("signed_in", [True, False], ids=["signed-in", "anonymous"])
def test_a_closed_study_says_so_and_takes_no_one(client, signed_in):
    study = make_study(is_open=False, closed_at=timezone.now())
    if signed_in:
        client.force_login(make_user())

    response = client.get(join_url(study))

    assert response.status_code == 410
    assert "This study is closed" in response.text
    assert 'name="password1"' not in response.text and "Join this study</button>" not in response.text
    assert client.post(join_url(study)).status_code == 410
    assert not Membership.objects.exists()


def test_a_closed_study_refuses_sign_ups(client):
    study = make_study(is_open=False, closed_at=timezone.now())

    response = client.post(join_url(study), {"username": "late", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD})

    assert response.status_code == 410
    assert not get_user_model().objects.filter(username="late").exists()


def test_the_invite_link_works_after_signing_in_through_it(client, study):
    """The sign-in button comes back to the invite link, whose button then joins."""
    user = make_user(username="returning")
    login_page = client.get(f'{reverse("login")}?next={join_url(study)}')
    assert login_page.status_code == 200

    response = client.post(
        reverse("login"), {"username": "returning", "password": "correct horse battery staple", "next": join_url(study)}
    )
    assert response.url == join_url(study)
    assert ">Join this study</button>" in client.get(response.url).text
    assert client.post(response.url).url == instructions_url(study)
    assert Membership.objects.filter(study=study, annotator=user).exists()


def sign_up(client, study, username: str, address: str = "198.51.100.7"):
    return client.post(join_url(study), {"username": username, "password1": NEW_PASSWORD,
                                         "password2": NEW_PASSWORD}, REMOTE_ADDR=address)


def test_sign_ups_through_an_invite_are_limited_per_address(study, settings):
    """Whoever held the link could create accounts without end."""
    settings.PARLEY_SIGNUP_RATE = "3/h"
    for number in range(3):
        assert sign_up(Client(), study, f"new{number}").status_code == 302

    refused = sign_up(Client(), study, "new3")

    assert refused.status_code == 429
    assert "Too many accounts were created from your address" in refused.text
    assert not get_user_model().objects.filter(username="new3").exists()
    assert sign_up(Client(), study, "new3", address="203.0.113.9").status_code == 302


def test_a_full_pool_takes_no_one_new_but_its_members_still_get_in(client, study):
    study.max_annotators = 1
    study.save(update_fields=["max_annotators"])
    assert sign_up(Client(), study, "first").status_code == 302

    refused = sign_up(client, study, "second")
    assert refused.status_code == 410 and "has all the annotators it needs" in refused.text
    assert not get_user_model().objects.filter(username="second").exists()
    someone = make_user()
    client.force_login(someone)
    assert client.post(join_url(study)).status_code == 410
    assert not Membership.objects.filter(study=study, annotator=someone).exists()

    client.force_login(get_user_model().objects.get(username="first"))
    assert client.post(join_url(study)).status_code == 302


def test_the_study_form_offers_the_pool_limit(client):
    client.force_login(make_user(staff=True))
    assert 'name="max_annotators"' in client.get(reverse("annotator:study-create")).text


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_people_racing_for_the_last_place_do_not_both_get_it():
    study = make_study(slug="racing", title="Racing study")
    study.max_annotators = 1
    study.save(update_fields=["max_annotators"])
    people = [make_user(), make_user()]

    def join_as(user):
        browser = Client()
        browser.force_login(user)
        return browser.post(join_url(study)).status_code

    outcomes = at_once(*[lambda user=user: join_as(user) for user in people])

    assert not errors(outcomes)
    assert sorted(outcomes) == [302, 410]
    assert Membership.objects.filter(study=study).count() == 1
