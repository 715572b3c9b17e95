"""A researcher's first visit, in a real browser: log in, browse episodes, filter, read a transcript."""

import re

import pytest
from playwright.sync_api import expect

from benchmark.models import ActionType
from tests.benchmark.results_data import judged_experiment
from tests.builders import PASSWORD, make_character, make_episode, make_scenario, make_scores, make_user

# Transactional, because the live server reads the data from another thread; serialized
# rollback puts the seeded barriers back for the tests that run after this one.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def episodes():
    """One episode under each of three barriers; the semantic one has a varied transcript."""
    scenario = make_scenario(
        codename="shared-flat-rent",
        context="Two flatmates meet in their kitchen to settle how this month's rent will be paid.",
        roles=[
            {
                "goal": "Pay your half of the rent a week late without upsetting your flatmate.",
                "character": make_character(first_name="Maya", last_name="Okafor", occupation="nurse"),
            },
            {
                "goal": "Get the whole rent paid by Friday.",
                "reason": "The landlord charges a late fee.",
                "character": make_character(first_name="Tomás", last_name="Reyes", occupation="baker",
                                            gender="man", pronouns="he/him"),
            },
        ],
    )
    semantic = make_episode(
        scenario=scenario,
        barrier="semantic",
        external_id="pilot-semantic-1",
        tag="pilot",
        seat_fields={"model": "scripted"},
        turns=[
            (ActionType.SPEAK, "So about the thing... it's kind of the stuff from before, you know?"),
            (ActionType.SPEAK, "Sorry, which thing? Do you mean the rent?"),
            (ActionType.NON_VERBAL, "shrugs and looks at the calendar"),
            (ActionType.ACTION, "slides an envelope across the table"),
            (ActionType.LEAVE, ""),
        ],
    )
    make_scores(semantic, [("mutual_understanding", None, 2)], evaluator="scripted",
                reasoning="The partner never learned what 'the thing' was.")
    make_episode(scenario=scenario, barrier="none", external_id="pilot-none-1", tag="pilot")
    make_episode(scenario=scenario, barrier="emotional", external_id="pilot-emotional-1", tag="pilot")
    return semantic


def test_researcher_logs_in_filters_episodes_and_reads_a_transcript(browser_page, screenshot, episodes):
    page = browser_page
    researcher = make_user(staff=True, username="researcher")

    page.goto("/")
    page.get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill(researcher.username)
    page.get_by_label("Password").fill(PASSWORD)
    screenshot(page, "01-login")
    page.get_by_role("button", name="Log in").click()

    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator(".site-account")).to_contain_text("researcher")
    expect(page.locator(".stats")).to_contain_text("3 episodes")
    screenshot(page, "02-home")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Episodes").click()
    expect(page.get_by_role("heading", name="Episodes", level=1)).to_be_visible()
    rows = page.locator("table.episodes tbody tr")
    expect(rows).to_have_count(3)
    screenshot(page, "03-episodes")

    # Filtering swaps the results in place: a marker set on the window survives, a reload would not.
    page.evaluate("window.parleyMarker = 'no reload'")
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"):
        page.get_by_label("Barrier").select_option(label="Semantic vagueness")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("pilot-semantic-1")
    assert page.evaluate("window.parleyMarker") == "no reload"
    expect(page).to_have_url(re.compile(rf"barrier={episodes.barrier.pk}"))
    screenshot(page, "04-episodes-filtered")

    page.get_by_role("link", name="pilot-semantic-1").click()
    expect(page.get_by_role("heading", name="pilot-semantic-1")).to_be_visible()
    transcript = page.locator("ol.transcript")
    expect(transcript.locator("li")).to_have_count(5)
    expect(transcript).to_contain_text("Sorry, which thing? Do you mean the rent?")
    expect(transcript.locator(".turn--non-verbal")).to_contain_text("*shrugs and looks at the calendar*")
    expect(transcript.locator(".turn--action")).to_contain_text("[slides an envelope across the table]")
    expect(transcript.locator(".turn--leave")).to_contain_text("left the conversation")
    expect(page.get_by_text("scripted (offline)").first).to_be_visible()
    expect(page.locator("table caption")).to_contain_text("scripted (offline)")
    screenshot(page, "05-episode")

    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "06-episode-narrow")


def test_back_button_after_a_filter_restores_the_full_list(browser_page, episodes):
    page = browser_page
    researcher = make_user(staff=True)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(researcher.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.goto("/benchmark/")
    rows = page.locator("table.episodes tbody tr")
    expect(rows).to_have_count(3)
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"):
        page.get_by_label("Barrier").select_option(label="Emotional interference")
    expect(rows).to_have_count(1)

    page.go_back()

    expect(rows).to_have_count(3)
    expect(page.get_by_label("Barrier")).to_have_value("")


@pytest.mark.parametrize("form", ["annotator:study-create", "chat:study-create"])
def test_a_study_slug_follows_its_title_until_it_is_edited_by_hand(browser_page, form):
    from django.urls import reverse

    page = browser_page
    researcher = make_user(staff=True, username="slug-researcher")
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(researcher.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(reverse(form))

    page.locator("#id_title").press_sequentially("Pilot: Café chats!")
    expect(page.locator("#id_slug")).to_have_value("pilot-cafe-chats")

    page.locator("#id_slug").fill("my-own")
    page.locator("#id_title").press_sequentially(" Round 2")
    expect(page.locator("#id_slug")).to_have_value("my-own")


def test_the_results_page_draws_its_figures_once_it_is_shown(browser_page):
    judged_experiment()
    researcher = make_user(staff=True, username="researcher")
    page = browser_page
    page.goto("/accounts/login/?next=/benchmark/results/")
    page.get_by_label("Username").fill(researcher.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("heading", name="Scores per model and condition")).to_be_visible()
    figures = page.locator("figure.results-figure svg[role=img]")
    expect(figures).to_have_count(3, timeout=30_000)  # means, the model's signatures, the correlations
    expect(page.get_by_text("Drawing the figure")).to_have_count(0)
