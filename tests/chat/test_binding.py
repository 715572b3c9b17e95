"""One participant, one browser: a second browser with the same id is turned away unless it has
the resume code, and a researcher can release the id so the next browser takes over."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from chat.models import Participant
from tests.builders import make_researcher, make_team, make_user
from tests.chat.builders import entry_url, join, make_chat_study, make_participant, sign_in

pytestmark = pytest.mark.django_db

STAGE = Participant.Stage


@pytest.fixture
def study():
    return make_chat_study(slug="bound", completion_code="C0DE-42", return_url="https://example.org/done?cc={code}")


def url(name, study):
    return reverse(f"chat:{name}", args=[study.slug])


def release_url(participant):
    return reverse("chat:release", args=[participant.study.slug, participant.pk])


def resume(client, study, participant_id, code):
    return client.post(url("resume", study), {"participant_id": participant_id, "code": code})


# A second browser with the same id


def test_a_second_browser_with_the_same_id_gets_the_already_taking_part_page(client, study):
    join(client, study, "victim", stage=STAGE.CHAT)
    intruder = Client()

    response = intruder.get(entry_url(study, "victim"))

    assert response.status_code == 409
    assert "already taking part in another browser" in response.text
    assert "resume code" in response.text
    assert intruder.get(url("chat", study)).status_code == 302
    assert client.get(url("chat", study)).status_code == 200  # the first browser keeps the conversation


def test_a_second_browser_never_sees_the_completion_code(client, study):
    join(client, study, "finisher", stage=STAGE.CONSENT)
    Participant.objects.filter(participant_id="finisher").update(stage=STAGE.DONE)
    intruder = Client()

    page = intruder.get(entry_url(study, "finisher"), follow=True).text
    done = intruder.get(url("done", study), follow=True).text

    assert "already taking part in another browser" in page
    assert "C0DE-42" not in page and "C0DE-42" not in done
    assert "C0DE-42" in client.get(url("done", study)).text


def test_the_page_of_the_second_browser_says_what_to_do(client, study):
    join(client, study, "lost-phone", stage=STAGE.BRIEFING)

    page = Client().get(entry_url(study, "lost-phone")).text

    assert "continue in that browser" in page
    assert "ask the researchers to release" in page
    assert 'name="code"' in page


def test_the_first_browser_to_bring_a_new_id_keeps_it(study):
    first, second = Client(), Client()

    assert first.get(entry_url(study, "twin")).url == url("consent", study)
    assert second.get(entry_url(study, "twin")).status_code == 409
    assert Participant.objects.filter(study=study).count() == 1


# The resume code


def test_the_briefing_and_the_chat_page_show_the_resume_code_and_link(client, study):
    participant = join(client, study, "mover", stage=STAGE.BRIEFING)
    shown = participant.resume_code_display

    briefing = client.get(url("briefing", study)).text
    client.post(url("briefing", study))
    chat = client.get(url("chat", study)).text

    assert shown in briefing and shown in chat
    assert f"{url('resume', study)}?participant_id=mover&amp;code={participant.resume_code}" in chat


def test_the_resume_code_moves_the_conversation_to_a_new_browser(client, study):
    participant = join(client, study, "mover", stage=STAGE.CHAT)
    phone = Client()
    phone.get(entry_url(study, "mover"))

    response = resume(phone, study, "mover", participant.resume_code_display.lower())

    assert response.url == url("chat", study)
    assert phone.get(url("chat", study)).status_code == 200
    assert client.get(url("chat", study)).url == url("entry", study)  # the old browser has lost it
    assert client.get(url("entry", study)).status_code == 409


def test_the_resume_link_asks_before_moving_the_conversation(client, study):
    participant = join(client, study, "mover", stage=STAGE.CHAT)
    phone = Client()

    page = phone.get(f"{url('resume', study)}?participant_id=mover&code={participant.resume_code}")

    assert page.status_code == 200
    assert "Continue in this browser" in page.text
    assert client.get(url("chat", study)).status_code == 200  # a GET moves nothing


def test_a_wrong_resume_code_is_refused_and_moves_nothing(client, study):
    join(client, study, "mover", stage=STAGE.CHAT)
    intruder = Client()

    response = resume(intruder, study, "mover", "AAAA-AAAA")

    assert response.status_code == 400
    assert "does not match" in response.text
    assert intruder.get(url("chat", study)).status_code == 302
    assert client.get(url("chat", study)).status_code == 200


def test_a_resume_code_for_an_unknown_id_is_refused_the_same_way(study):
    response = resume(Client(), study, "nobody", "AAAA-AAAA")

    assert response.status_code == 400
    assert "does not match" in response.text
    assert not Participant.objects.exists()


# The researcher releases an id


@pytest.fixture
def researcher(study):
    return study.created_by


def test_the_researcher_releases_an_id_and_the_next_browser_takes_over(client, study, researcher):
    participant = join(client, study, "stuck", stage=STAGE.CHAT)
    staff = Client()
    staff.force_login(researcher)

    response = staff.post(release_url(participant), {"next": "monitor"})

    assert response.url == reverse("chat:monitor", args=[study.slug])
    new_browser = Client()
    assert new_browser.get(entry_url(study, "stuck")).url == url("chat", study)
    assert new_browser.get(url("chat", study)).status_code == 200
    assert client.get(url("chat", study)).url == url("entry", study)


def test_releasing_retires_the_old_resume_code(client, study, researcher):
    participant = join(client, study, "stuck", stage=STAGE.CHAT)
    old_code = participant.resume_code
    staff = Client()
    staff.force_login(researcher)

    staff.post(release_url(participant))

    assert Participant.objects.get(pk=participant.pk).resume_code != old_code
    assert resume(Client(), study, "stuck", old_code).status_code == 400


def test_the_monitor_and_the_transcript_offer_the_release_button(client, study, researcher):
    participant = make_participant(study, participant_id="bound-one", stage=STAGE.CHAT)
    sign_in(Client(), participant)
    client.force_login(researcher)

    for page in (reverse("chat:monitor", args=[study.slug]),
                 reverse("chat:transcript", args=[study.slug, participant.pk])):
        text = client.get(page).text
        assert f'action="{release_url(participant)}"' in text
        assert "Release" in text


def test_release_only_answers_a_post(client, study, researcher):
    participant = make_participant(study, stage=STAGE.CHAT)
    client.force_login(researcher)

    assert client.get(release_url(participant)).status_code == 405


def test_release_needs_the_csrf_token(study, researcher):
    participant = make_participant(study, stage=STAGE.CHAT)
    browser = Client()
    sign_in(browser, participant)
    staff = Client(enforce_csrf_checks=True)
    staff.force_login(researcher)

    assert staff.post(release_url(participant)).status_code == 403
    assert browser.get(url("chat", study)).status_code == 200


def test_release_is_for_the_studys_researchers_only(client, study):
    participant = make_participant(study, stage=STAGE.CHAT)
    browser = Client()
    sign_in(browser, participant)
    annotator = make_user(username="annotator")
    annotator.groups.add(Group.objects.get_or_create(name="annotators")[0])

    assert Client().post(release_url(participant)).url.startswith(reverse("login"))
    client.force_login(annotator)
    assert client.post(release_url(participant)).status_code == 403
    client.force_login(make_researcher(make_team()))  # a researcher of another team
    assert client.post(release_url(participant)).status_code == 404
    assert browser.get(url("chat", study)).status_code == 200
