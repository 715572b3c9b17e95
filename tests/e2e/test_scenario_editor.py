"""A researcher writes a two-seat scenario with a goal and a probe in the browser, then finds it in the run
form's scenario picker among five others of the same name, by a word of its context."""

import re

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from benchmark.models import Probe, Scenario
from tests.builders import make_character, make_researcher, make_scenario, make_team

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def sign_in(page, user) -> None:
    signed_in = Client()  # the live server has the default password hashers: log in by session
    signed_in.force_login(user)
    page.goto("/")
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": signed_in.cookies[settings.SESSION_COOKIE_NAME].value, "url": page.url}])


def test_researcher_writes_a_scenario_and_picks_it_among_same_named_ones(browser_page, screenshot):
    page = browser_page
    team = make_team(name="Lab", slug="lab")
    researcher = make_researcher(team, username="lab-researcher")
    ada, bo = make_character(team=team, first_name="Ada"), make_character(team=team, first_name="Bo")
    for number in range(5):
        make_scenario(team=team, codename="charity_donation", source="socialveil", external_id=f"sv-{number}",
                      context=f"Variant {number}: a colleague asks for a donation to the library.")
    sign_in(page, researcher)
    page.goto("/")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Scenarios").click()
    expect(page.get_by_role("heading", name="Scenarios", level=1)).to_be_visible()
    page.get_by_role("link", name="New scenario").click()

    page.get_by_label("Name (codename)").fill("charity_donation")
    page.get_by_label("External id").fill("mine-1")
    page.get_by_label("Source", exact=True).fill("lab")
    page.locator("#id_context").fill("A neighbour collects for the lighthouse fund.")
    page.locator("#id_roles-0-character").select_option(label=ada.name)
    page.locator("#id_roles-0-reason").fill("The lighthouse saved her brother.")
    page.locator("#id_roles-1-character").select_option(label=bo.name)
    page.locator("#id_goals-0-role").select_option(label="role 1")
    page.locator("#id_goals-0-text").fill("Get a pledge of 20 euros.")
    page.locator("#id_goals-0-goal_type").select_option(label="cooperation")
    page.locator("#id_probes-0-about").select_option(label="role 1")
    page.locator("#id_probes-0-topic").select_option(label="goal")
    page.locator("#id_probes-0-text").fill("What does the collector want?")
    page.locator("#id_probes-0-options").fill("a pledge\na loan\na ride")
    page.locator("#id_probes-0-correct").fill("1")
    screenshot(page, "scenario-editor-01-new")
    page.get_by_role("button", name="Create the scenario").click()

    expect(page.get_by_role("status")).to_contain_text("is saved")
    mine = Scenario.objects.get(external_id="mine-1")
    assert [role.character for role in mine.roles.order_by("position")] == [ada, bo]
    assert mine.roles.get(position=0).goals.get().text == "Get a pledge of 20 euros."
    assert Probe.objects.get(scenario=mine).options == ["a pledge", "a loan", "a ride"]
    screenshot(page, "scenario-editor-02-saved")

    page.goto("/benchmark/runs/new/")
    options = page.locator("#id_scenarios-options .picker-option")
    expect(options.filter(has_text="charity_donation")).to_have_count(6)  # six of one name, told apart below
    page.get_by_label("Search scenarios").fill("lighthouse")
    expect(options).to_have_count(1)
    expect(options.first).to_contain_text("external id: mine-1")
    expect(options.first).to_contain_text("source: lab")
    expect(options.first).to_contain_text("2 seats")
    options.first.get_by_role("checkbox").check()
    page.get_by_label("Search scenarios").fill("library")
    expect(options).to_have_count(6)  # the ticked one stays, with the five that match
    expect(page.locator("#id_scenarios-options input:checked")).to_have_count(1)
    expect(page.locator("#id_scenarios-options input:checked")).to_have_value(str(mine.pk))
    screenshot(page, "scenario-editor-03-picker")
    assert re.search(r"/benchmark/runs/new/$", page.url)
