"""The scenario picker: a search that tells same-named scenarios apart, in the chat study and run forms."""

from __future__ import annotations

import pytest
from django.urls import reverse

from benchmark.models import Goal, Scenario, ScenarioBarrier
from benchmark.runs.forms import RunForm
from benchmark.scenarios.picker import option_rows, playable, search_scenarios
from chat.forms import ChatStudyForm
from tests.builders import get_barrier, make_researcher, make_scenario, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return make_team()


@pytest.fixture
def six_charity_donations(team):
    """Six scenarios of one name, as a SocialVeil import leaves them, told apart by external id and context."""
    return [
        make_scenario(team=team, codename="charity_donation", source="socialveil", external_id=f"sv-{n}",
                      context=f"Variant {n}: a colleague asks for money for the {'shelter' if n == 3 else 'library'}.")
        for n in range(6)
    ]


def ids(scenarios) -> set[int]:
    return {scenario.pk for scenario in scenarios}


def test_a_word_of_the_context_finds_the_one_of_six(team, six_charity_donations):
    found = search_scenarios(Scenario.objects.of_team(team), "charity shelter")
    assert ids(found) == {six_charity_donations[3].pk}


def test_the_external_id_finds_it(team, six_charity_donations):
    assert ids(search_scenarios(Scenario.objects.of_team(team), "sv-4")) == {six_charity_donations[4].pk}


def test_the_id_finds_it(team, six_charity_donations):
    wanted = six_charity_donations[2]
    assert wanted.pk in ids(search_scenarios(Scenario.objects.of_team(team), f"#{wanted.pk}"))


def test_a_goal_tag_finds_it(team, six_charity_donations):
    Goal.objects.filter(role__scenario=six_charity_donations[1]).update(tags=["bargaining"])
    assert ids(search_scenarios(Scenario.objects.of_team(team), "bargaining")) == {six_charity_donations[1].pk}


def test_the_source_and_difficulty_find_them(team, six_charity_donations):
    other = make_scenario(team=team, source="sotopia", difficulty="hard")
    scenarios = Scenario.objects.of_team(team)
    assert ids(search_scenarios(scenarios, "socialveil")) == ids(six_charity_donations)
    assert ids(search_scenarios(scenarios, "hard")) == {other.pk}


def test_ticked_scenarios_stay_listed_whatever_the_search(team, six_charity_donations):
    ticked = six_charity_donations[0]
    rows = option_rows(playable(Scenario.objects.of_team(team)), [str(ticked.pk)], "shelter")
    assert [(scenario.pk, checked) for scenario, checked in rows["rows"]] == [
        (ticked.pk, True), (six_charity_donations[3].pk, False)]


def test_the_search_endpoint_shows_what_tells_them_apart(client, team, six_charity_donations):
    ScenarioBarrier.objects.create(scenario=six_charity_donations[3], barrier=get_barrier("semantic"),
                                   style_directive="Be vague.", barrier_positions=[0])
    client.force_login(make_researcher(team))
    response = client.get(reverse("benchmark:scenario-picker"),
                          {"scope": "cast", "field": "scenarios", "scenarios_search": "shelter"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "sv-3" in body and "sv-2" not in body
    assert "source: socialveil" in body and "2 seats" in body and "Variant 3" in body
    assert get_barrier("semantic").name in body
    assert f'value="{six_charity_donations[3].pk}"' in body


def test_the_search_endpoint_shows_no_other_teams_scenarios(client, team, six_charity_donations):
    client.force_login(make_researcher(make_team()))
    body = client.get(reverse("benchmark:scenario-picker"),
                      {"scope": "cast", "field": "scenarios", "scenarios_search": "charity"}).content.decode()
    assert "sv-3" not in body and "No scenario matches" in body


def test_an_unknown_picker_is_not_found(client, team):
    client.force_login(make_researcher(team))
    assert client.get(reverse("benchmark:scenario-picker"), {"scope": "nope", "field": "x"}).status_code == 404
    assert client.get(reverse("benchmark:scenario-picker"), {"scope": "cast", "field": "a b"}).status_code == 404


def test_the_chat_study_form_lists_every_scenario_with_its_details(team, six_charity_donations):
    html = str(ChatStudyForm(user=make_researcher(team))["scenarios"])
    for scenario in six_charity_donations:
        assert f'value="{scenario.pk}"' in html and scenario.external_id in html
    assert "scope=cast" in html


def test_the_run_form_takes_ticked_ids(team, six_charity_donations):
    user = make_researcher(team)
    form = RunForm({"team": str(team.pk), "scenarios": [str(six_charity_donations[1].pk)], "conditions": ["none"],
                    "agent_model": "scripted", "partner_model": "scripted", "judge_model": "scripted",
                    "strategy": "default", "episodes_per_cell": "1", "turn_cap": "4", "temperature": "0.7",
                    "concurrency": "1", "seed": "0", "barrier_seats": "0", "casts": "default"}, user=user)
    assert form.is_valid(), form.errors
    assert form.options().scenarios == (str(six_charity_donations[1].pk),)
    assert 'name="scenarios"' in str(form["scenarios"])
