"""The pages that run a study: settings (locked ones say why), phase buttons, items, the pool, invitations,
the log, and what annotators see of a paused, closed or removed study."""

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from annotator import lifecycle, pool
from annotator.assignment import claim_next
from annotator.models import Invitation, Membership, StudyEvent
from tests.annotator.builders import make_annotation, make_study
from tests.annotator.test_invites import NEW_PASSWORD
from tests.builders import make_episode, make_researcher, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher():
    return make_researcher()


@pytest.fixture
def study(researcher):
    return make_study(items=3, overlap=2, annotators=2, created_by=researcher)


@pytest.fixture
def signed_in(client, researcher):
    client.force_login(researcher)
    return client


def url(name, study, **kwargs):
    return reverse(f"annotator:{name}", kwargs={"slug": study.slug, **kwargs})


def settings_data(study, **changes):
    data = {name: getattr(study, name) for name in lifecycle.SETTINGS if name != "comprehension_instrument"}
    data = {name: ("on" if value is True else value) for name, value in data.items()
            if value is not None and value is not False}
    return {**data, **changes}


def test_the_settings_page_shows_a_locked_setting_disabled_with_its_reason(signed_in, study):
    annotator = study.annotators.first()
    Membership.objects.filter(study=study, annotator=annotator).update(instructions_read_at=timezone.now())
    claim_next(study, annotator)

    page = signed_in.get(url("study-settings", study)).content.decode()

    assert 'name="seed"' in page and "disabled" in page.split('name="seed"')[1].split(">")[0]
    assert "Locked: Items were already claimed" in page
    assert "it can shrink down to 1" in page


def test_settings_are_saved_and_logged(signed_in, study):
    response = signed_in.post(url("study-settings", study), settings_data(study, overlap=3, lease_minutes=15))

    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.overlap, study.lease_minutes) == (3, 15)
    assert StudyEvent.objects.get(study=study, action="settings").detail == "Overlap k: 2 → 3; Lease (minutes): 60 → 15"


@pytest.mark.parametrize(("changes", "field", "says"), [
    ({"overlap": "0"}, "overlap", "greater than or equal to 1"),
    ({"checks_warn_after": "3", "checks_pause_after": "2"}, "checks_pause_after", "make it 3 or more"),
    ({"crowd_link": "on", "completion_code": ""}, "completion_code", "needs a completion code"),
    ({"max_annotators": "1"}, "max_annotators", "already has 2 annotators"),
    ({"qualification_pass_mark": "120"}, "qualification_pass_mark", "less than or equal to 100"),
])
def test_bad_settings_are_named_on_their_field(signed_in, study, changes, field, says):
    response = signed_in.post(url("study-settings", study), settings_data(study, **changes))

    assert response.status_code == 200
    assert says in str(response.context["form"].errors[field])
    assert not StudyEvent.objects.filter(study=study).exists()


def test_k_below_an_items_ratings_is_named(signed_in, researcher):
    study = make_study(items=1, overlap=2, annotators=2, created_by=researcher)
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    for annotator in study.annotators.all():
        claim_next(study, annotator)

    response = signed_in.post(url("study-settings", study), settings_data(study, overlap="1"))

    assert "Item 1 already has 2 ratings" in str(response.context["form"].errors["overlap"])
    study.refresh_from_db()
    assert study.overlap == 2


def test_the_phase_buttons_move_the_study_and_a_wrong_move_is_said(signed_in, study):
    signed_in.post(url("study-phase", study), {"action": "pause"})
    study.refresh_from_db()
    assert study.phase == "paused"

    response = signed_in.post(url("study-phase", study), {"action": "reopen"}, follow=True)

    assert "The study is paused: it cannot be reopened." in response.content.decode()
    page = signed_in.get(url("dashboard", study)).content.decode()
    assert 'value="resume"' in page and 'value="close"' in page and 'value="pause"' not in page


def test_the_items_page_adds_episodes_and_shortens(signed_in, study):
    scenario = study.items.first().episode.scenario
    make_episode(scenario=scenario, turns=2)

    added = signed_in.post(url("study-items", study), {"action": "add"}, follow=True)

    assert "1 item added (3 matching episodes were in the study already)." in added.content.decode()
    removed = signed_in.post(url("study-items", study), {"action": "shorten", "count": "2"}, follow=True)
    assert "2 items removed." in removed.content.decode()
    assert study.items.count() == 2


def test_shortening_says_how_many_could_not_be_removed(signed_in, researcher):
    study = make_study(items=3, overlap=1, annotators=2, created_by=researcher)
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    for annotator in study.annotators.all():
        claim_next(study, annotator)

    response = signed_in.post(url("study-items", study), {"action": "shorten", "count": "3"}, follow=True)

    page = response.content.decode()
    assert "1 item removed. 2 of the 3 asked could not be removed" in page
    assert study.items.count() == 2


def test_nothing_to_add_is_said_on_the_form(signed_in, study):
    response = signed_in.post(url("study-items", study), {"action": "add"})

    assert "No episode matches that the study does not already have." in response.content.decode()


def test_the_pool_page_lists_members_and_acts_on_them(signed_in, study):
    first, second = study.annotators.all()
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    held = claim_next(study, first)

    page = signed_in.get(url("pool", study)).content.decode()
    assert first.username in page and f'name="assignment" value="{held.pk}"' in page

    signed_in.post(url("pool-action", study, user_id=first.pk),
                   {"action": "reassign", "assignment": held.pk, "to": second.pk})
    assert claim_next(study, second).item == held.item
    signed_in.post(url("pool-action", study, user_id=first.pk), {"action": "remove"})
    page = signed_in.get(url("pool", study)).content.decode()
    assert "removed on" in page


def test_a_pool_action_on_someone_outside_the_pool_is_said(signed_in, study):
    response = signed_in.post(url("pool-action", study, user_id=make_user().pk), {"action": "remove"}, follow=True)

    assert "not in this study" in response.content.decode()


@pytest.mark.parametrize(("data", "field", "says"), [
    ({"username": "nobody"}, "username", "No one has the username"),
    ({"email": "not-an-address"}, "email", "valid email"),
    ({"username": "kim", "email": "kim@example.org"}, "email", "not both"),
    ({}, "username", "Give the username or the e-mail address"),
])
def test_bad_invitations_are_named_on_their_field(signed_in, study, data, field, says):
    make_user(username="kim")

    response = signed_in.post(url("invite", study), data)

    assert response.status_code == 200
    assert says in str(response.context["invite"].errors[field])
    assert not Invitation.objects.exists()


def test_an_email_invitation_sends_the_link_and_signing_up_through_it_accepts_it(
    signed_in, study, client, django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        signed_in.post(url("invite", study), {"email": "kim@example.org"})
    link = mail.outbox[0].body.split("\n")[3]
    assert link.startswith("http://testserver/annotate/join/")
    client.logout()

    client.post(link.removeprefix("http://testserver"),
                {"username": "kim", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD})

    kim = Membership.objects.get(study=study, annotator__username="kim").annotator
    assert kim.email == "kim@example.org"
    assert Invitation.objects.get(study=study).accepted_at is not None


def test_only_the_invited_person_may_accept(client, study, researcher):
    invitation = pool.invite_user(study, make_user(username="kim").username, actor=researcher)
    client.force_login(make_user())

    assert client.post(reverse("annotator:accept-invitation", args=[invitation.pk])).status_code == 404


def test_the_log_page_lists_who_did_what(signed_in, study, researcher):
    lifecycle.change_phase(study, "pause", actor=researcher)

    page = signed_in.get(url("study-log", study)).content.decode()

    assert "Study paused." in page and researcher.username in page


# What annotators see


def test_an_annotator_sees_a_paused_study_and_can_finish_their_item(client, study, researcher):
    annotator = study.annotators.first()
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    held = claim_next(study, annotator)
    lifecycle.change_phase(study, "pause", actor=researcher)
    client.force_login(annotator)

    page = client.get(reverse("annotator:index")).content.decode()

    assert "This study is paused: you can finish the item you have in progress" in page
    assert client.get(reverse("annotator:next", args=[study.slug])).url == reverse("annotator:item", args=[held.pk])


def test_an_annotator_sees_a_closed_study(client, study, researcher):
    annotator = study.annotators.first()
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    lifecycle.change_phase(study, "close", actor=researcher)
    client.force_login(annotator)

    assert "This study is closed." in client.get(reverse("annotator:index")).content.decode()
    assert "The study is closed." in client.get(reverse("annotator:next", args=[study.slug])).content.decode()


def test_a_removed_annotator_is_told_and_gets_nothing(client, study, researcher):
    annotator = study.annotators.first()
    Membership.objects.filter(study=study).update(instructions_read_at=timezone.now())
    pool.remove(study, annotator.pk, actor=researcher)
    client.force_login(annotator)

    assert "removed you from this study" in client.get(reverse("annotator:index")).content.decode()
    assert "removed you from this study" in client.get(reverse("annotator:next", args=[study.slug])).content.decode()


def test_an_invitation_shows_on_the_annotator_page_and_accepting_joins(client, study, researcher):
    kim = make_user(username="kim")
    invitation = pool.invite_user(study, "kim", actor=researcher)
    client.force_login(kim)

    assert "Invitation: " + study.title in client.get(reverse("annotator:index")).content.decode()
    response = client.post(reverse("annotator:accept-invitation", args=[invitation.pk]))

    assert response.url == reverse("annotator:instructions", args=[study.slug])
    assert Membership.objects.filter(study=study, annotator=kim).exists()


def test_a_removed_annotator_cannot_edit_what_they_submitted(client):
    study = make_study(items=1, annotators=1)
    annotator = study.memberships.get().annotator
    assignment = claim_next(study, annotator)
    make_annotation(assignment, submitted_at=timezone.now())
    assignment.status, assignment.submitted_at = "submitted", timezone.now()
    assignment.save()
    Membership.objects.filter(study=study, annotator=annotator).update(removed_at=timezone.now())
    client.force_login(annotator)

    client.post(reverse("annotator:edit", args=[assignment.pk]), {"version": "1"})

    assert list(assignment.annotations.values_list("version", "status")) == [(1, "submitted")]
