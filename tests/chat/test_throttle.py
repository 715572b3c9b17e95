"""The study link starts at most PARLEY_ENTRY_RATE new participants per client address: 429 beyond."""

import random

import pytest
from django.test import Client

from chat.models import Participant
from tests.chat.builders import entry_url, join, make_chat_study

pytestmark = pytest.mark.django_db

STAGE = Participant.Stage


@pytest.fixture
def study(settings):
    settings.PARLEY_ENTRY_RATE = "3/h"
    return make_chat_study(slug="throttled")


def address() -> str:
    """A client address of this test alone: counters live in the shared cache (Redis in CI) for an hour."""
    return f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"


def test_a_fourth_new_participant_from_one_address_gets_a_clear_429(study):
    here = address()
    for number in range(3):
        assert Client(REMOTE_ADDR=here).get(entry_url(study, f"made-up-{number}")).status_code == 302

    response = Client(REMOTE_ADDR=here).get(entry_url(study, "made-up-3"))

    assert response.status_code == 429
    assert "Too many people have started this study from your network" in response.text
    assert "try your study link again in about" in response.text
    assert 0 < int(response["Retry-After"]) <= 3600
    assert Participant.objects.filter(study=study).count() == 3


def test_returning_participants_are_not_counted_nor_refused(study):
    here = address()
    browser = Client(REMOTE_ADDR=here)
    join(browser, study, "regular", stage=STAGE.BRIEFING)
    for _ in range(5):
        assert browser.get(entry_url(study, "regular")).url.endswith("/briefing/")

    for number in range(2):
        assert Client(REMOTE_ADDR=here).get(entry_url(study, f"new-{number}")).status_code == 302


def test_another_address_is_counted_apart(study):
    here = address()
    for number in range(4):
        Client(REMOTE_ADDR=here).get(entry_url(study, f"busy-{number}"))

    assert Client(REMOTE_ADDR=address()).get(entry_url(study, "elsewhere")).status_code == 302


def test_wrong_resume_codes_count_against_the_same_allowance(study):
    here = address()
    join(Client(), study, "target", stage=STAGE.BRIEFING)
    guesser = Client(REMOTE_ADDR=here)
    statuses = [
        guesser.post(f"/s/{study.slug}/resume/", {"participant_id": "target", "code": f"AAAA-AAA{n}"}).status_code
        for n in range(5)
    ]
    right = Participant.objects.get(participant_id="target").resume_code

    assert statuses == [400, 400, 400, 429, 429]
    assert guesser.post(f"/s/{study.slug}/resume/", {"participant_id": "target", "code": right}).status_code == 429


def test_the_limit_can_be_turned_off(study, settings):
    settings.PARLEY_ENTRY_RATE = None
    here = address()

    assert all(
        Client(REMOTE_ADDR=here).get(entry_url(study, f"lab-{number}")).status_code == 302 for number in range(6)
    )
