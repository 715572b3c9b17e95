"""The character pages: create and edit a team's characters; one who sat in an episode is kept as played."""

from __future__ import annotations

import pytest
from django.urls import reverse

from benchmark.models import Character
from tests.builders import make_character, make_episode, make_researcher, make_scenario, make_team

pytestmark = pytest.mark.django_db

PROFILE = {"first_name": "Ada", "last_name": "Lovelace", "external_id": "", "age": "36", "gender": "woman",
           "pronouns": "she/her", "occupation": "mathematician", "big_five": "", "mbti": "", "moral_values": "",
           "personal_values": "", "personality": "", "decision_style": "", "public_info": "", "secret": "Owes money."}


@pytest.fixture
def team():
    return make_team()


@pytest.fixture
def browser(client, team):
    client.force_login(make_researcher(team))
    return client


def test_a_new_character_belongs_to_the_researchers_team(browser, team):
    response = browser.post(reverse("benchmark:character-new"), PROFILE)
    assert response.status_code == 302
    character = Character.objects.get(first_name="Ada")
    assert (character.team, character.age, character.secret) == (team, 36, "Owes money.")


def test_an_implausible_age_is_named(browser):
    body = browser.post(reverse("benchmark:character-new"), {**PROFILE, "age": "200"}).content.decode()
    assert "An age is at most 130." in body
    assert not Character.objects.filter(first_name="Ada").exists()


def test_a_missing_first_name_is_named(browser):
    response = browser.post(reverse("benchmark:character-new"), {**PROFILE, "first_name": ""})
    assert response.status_code == 200
    assert response.context["form"].errors["first_name"] == ["This field is required."]


def test_a_taken_external_id_is_named(browser, team):
    make_character(team=team, external_id="sotopia-1")
    body = browser.post(reverse("benchmark:character-new"), {**PROFILE, "external_id": "sotopia-1"}).content.decode()
    assert "Another of the team&#x27;s characters has the external id “sotopia-1”." in body


def test_an_unplayed_character_changes_in_place(browser, team):
    character = make_character(team=team, first_name="Bo")
    response = browser.post(reverse("benchmark:character-edit", args=[character.pk]), {**PROFILE, "first_name": "Bea"})
    assert response.status_code == 302
    character.refresh_from_db()
    assert character.first_name == "Bea"


def test_a_character_who_played_is_saved_as_a_new_one(browser, team):
    scenario = make_scenario(team=team)
    make_episode(scenario=scenario)
    played = scenario.roles.get(position=0).character
    url = reverse("benchmark:character-edit", args=[played.pk])
    refused = browser.post(url, {**PROFILE, "first_name": "Changed"})
    assert refused.status_code == 200
    assert "it cannot change under them" in refused.content.decode()
    assert browser.post(url, {**PROFILE, "first_name": "Changed", "save_as_new": "1"}).status_code == 302
    played.refresh_from_db()
    assert played.first_name != "Changed"
    assert Character.objects.filter(team=team, first_name="Changed").exclude(pk=played.pk).exists()


def test_another_teams_character_is_not_found(browser):
    theirs = make_character(team=make_team())
    assert browser.get(reverse("benchmark:character-edit", args=[theirs.pk])).status_code == 404
    assert browser.post(reverse("benchmark:character-edit", args=[theirs.pk]), PROFILE).status_code == 404
    theirs.refresh_from_db()
    assert theirs.first_name != "Ada"


def test_the_list_searches_by_name_and_occupation(browser, team):
    make_character(team=team, first_name="Zelda", occupation="pilot")
    make_character(team=team, first_name="Yusuf", occupation="baker")
    body = browser.get(reverse("benchmark:characters"), {"q": "pilot"}).content.decode()
    assert "Zelda" in body and "Yusuf" not in body
