"""The episode browser in a real browser: a search by a word of a turn narrows the list in place, a column's
header sorts it (and again the other way), and a filter changed afterwards keeps the sort."""

import re

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from tests.builders import make_episode, make_researcher, make_scenario, make_team

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_researcher_searches_and_sorts_the_episodes(browser_page, screenshot):
    page = browser_page
    team = make_team(name="Lab", slug="lab")
    scenario = make_scenario(team=team, codename="umbrella-talk", source="sotopia")
    make_episode(scenario=scenario, external_id="short-one", turns=[("speak", "Where is my umbrella?")])
    make_episode(scenario=scenario, external_id="long-one", turns=[("speak", "Hello."), ("speak", "An umbrella!"),
                                                                    ("speak", "Thanks.")])
    make_episode(scenario=scenario, external_id="no-match", turns=[("speak", "Nice weather.")])
    signed_in = Client()
    signed_in.force_login(make_researcher(team, username="lab-researcher"))
    page.goto("/")
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": signed_in.cookies[settings.SESSION_COOKIE_NAME].value, "url": page.url}])
    page.goto("/benchmark/")

    rows = page.locator("table.episodes tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("table.episodes")).to_contain_text("sotopia")  # the scenario's source
    page.get_by_label("Search").fill("umbrella")
    expect(rows).to_have_count(2)
    expect(page).to_have_url(re.compile(r"q=umbrella"))

    page.get_by_role("link", name="Turns").click()
    expect(page).to_have_url(re.compile(r"sort=turns"))
    expect(rows.first).to_contain_text("short-one")
    page.get_by_role("link", name=re.compile(r"^Turns")).click()
    expect(page).to_have_url(re.compile(r"sort=-turns"))
    expect(rows.first).to_contain_text("long-one")
    expect(page.get_by_role("columnheader", name=re.compile("Turns"))).to_have_attribute("aria-sort", "descending")

    page.get_by_label("Status").select_option(label="finished")
    expect(page).to_have_url(re.compile(r"status=finished"))
    expect(page).to_have_url(re.compile(r"sort=-turns"))
    expect(rows.first).to_contain_text("long-one")
    screenshot(page, "episodes-search-sort")
