"""The episode browser: search by text and id, sort by any column, the scenario's name and source, no N+1."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.builders import make_episode, make_researcher, make_scenario, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return make_team()


@pytest.fixture
def browser(client, team):
    client.force_login(make_researcher(team))
    return client


def listed(response) -> list[str]:
    """The episodes' external ids in the order the page lists them."""
    return re.findall(r'href="[^"]*/episodes/\d+/">([^<]+)</a>', response.content.decode())


def test_a_word_of_a_turn_finds_its_episode(browser, team):
    scenario = make_scenario(team=team)
    make_episode(scenario=scenario, external_id="plain", turns=[("speak", "Hello there.")])
    make_episode(scenario=scenario, external_id="umbrella", turns=[("speak", "Where is my umbrella?")])
    assert listed(browser.get(reverse("benchmark:index"), {"q": "UMBRELLA"})) == ["umbrella"]


def test_a_word_of_the_scenario_context_finds_its_episodes(browser, team):
    make_episode(scenario=make_scenario(team=team, context="A quarrel over a fence."), external_id="fence")
    make_episode(scenario=make_scenario(team=team, context="A talk about rent."), external_id="rent")
    assert listed(browser.get(reverse("benchmark:index"), {"q": "fence"})) == ["fence"]


def test_the_id_and_external_id_find_the_episode(browser, team):
    scenario = make_scenario(team=team)
    first = make_episode(scenario=scenario, external_id="sv-run-17")
    make_episode(scenario=scenario, external_id="other")
    assert listed(browser.get(reverse("benchmark:index"), {"q": "run-17"})) == ["sv-run-17"]
    assert "sv-run-17" in listed(browser.get(reverse("benchmark:index"), {"q": str(first.pk)}))


def test_nothing_found_says_so(browser, team):
    make_episode(scenario=make_scenario(team=team))
    body = browser.get(reverse("benchmark:index"), {"q": "zebra"}).content.decode()
    assert "No episodes match these filters and the search “zebra”." in body


def test_another_teams_episode_is_never_found(browser, team):
    make_episode(scenario=make_scenario(team=make_team(), context="Secret fence."), external_id="theirs")
    assert listed(browser.get(reverse("benchmark:index"), {"q": "fence"})) == []


@pytest.mark.parametrize(("sort", "expected"), [
    ("scenario", ["b1", "a1", "a2"]),  # alpha-scenario, then beta-scenario in id order
    ("-turns", ["a2", "b1", "a1"]),
    ("turns", ["a1", "b1", "a2"]),
    ("episode", ["a1", "a2", "b1"]),
    ("-episode", ["b1", "a2", "a1"]),
    ("scenario_source", ["a1", "a2", "b1"]),
])
def test_each_column_sorts_the_list(browser, team, sort, expected):
    beta = make_scenario(team=team, codename="beta-scenario", source="agentsense")
    alpha = make_scenario(team=team, codename="alpha-scenario", source="socialveil")
    make_episode(scenario=beta, external_id="a1", turns=1)
    make_episode(scenario=beta, external_id="a2", turns=5)
    make_episode(scenario=alpha, external_id="b1", turns=3)
    assert listed(browser.get(reverse("benchmark:index"), {"sort": sort})) == expected


def test_a_sort_no_column_has_falls_back_to_the_newest_first(browser, team):
    scenario = make_scenario(team=team)
    make_episode(scenario=scenario, external_id="older")
    make_episode(scenario=scenario, external_id="newer")
    assert listed(browser.get(reverse("benchmark:index"), {"sort": "password"})) == ["newer", "older"]


def test_the_headers_link_to_the_other_direction_of_the_current_sort(browser, team):
    make_episode(scenario=make_scenario(team=team))
    body = browser.get(reverse("benchmark:index"), {"sort": "turns", "source": "simulated"}).content.decode()
    assert 'aria-sort="ascending"' in body
    assert "?sort=-turns&amp;source=simulated" in body or "?source=simulated&amp;sort=-turns" in body


def test_the_scenario_name_and_source_are_shown(browser, team):
    make_episode(scenario=make_scenario(team=team, codename="charity_donation", source="socialveil"))
    body = browser.get(reverse("benchmark:index")).content.decode()
    assert "charity_donation" in body and "socialveil" in body


def test_the_list_takes_the_same_queries_for_more_episodes(browser, team):
    scenario = make_scenario(team=team)
    make_episode(scenario=scenario)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert browser.get(reverse("benchmark:index"), {"sort": "scenario", "q": "neighbours"}).status_code == 200
        return len(captured)

    few = queries()
    for _ in range(5):
        make_episode(scenario=make_scenario(team=team))
    assert queries() == few


def test_the_scenario_filter_tells_same_named_scenarios_apart(browser, team):
    first, second = (make_scenario(team=team, codename="charity_donation", source=source)
                     for source in ("socialveil", "lab"))
    body = browser.get(reverse("benchmark:index")).content.decode()
    assert f"charity_donation #{first.pk} (socialveil)" in body and f"charity_donation #{second.pk} (lab)" in body
