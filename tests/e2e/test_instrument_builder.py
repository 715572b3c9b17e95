"""A researcher builds an instrument in a real browser (issue 26): a Likert and a multiple-choice question, the live
preview as annotators, participants and the judge see it, then an annotation study that asks it.

Screenshots go to var/screenshots/instruments/.
"""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.models import Study
from benchmark.models import Instrument
from tests.builders import PASSWORD, make_episode, make_researcher, make_scenario
from tests.e2e.conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def shot(page, name):
    (SCREENSHOTS / "instruments").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "instruments" / f"{name}.png"), full_page=True)


def test_a_researcher_builds_an_instrument_previews_it_and_uses_it_in_a_study(browser_page):
    page = browser_page
    researcher = make_researcher(username="builder")
    scenario = make_scenario()
    for _ in range(2):
        make_episode(scenario=scenario, tag="pilot")
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(researcher.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Instruments").click()
    page.get_by_role("link", name="New instrument").click()
    page.get_by_label("Name").fill("Rapport pilot")
    page.get_by_role("button", name="Make the instrument").click()
    expect(page.get_by_role("heading", name="Rapport pilot")).to_be_visible()

    page.get_by_label("Add a question of kind").select_option("likert")
    page.get_by_role("button", name="Add the question").click()
    page.get_by_label("Key").fill("warmth")
    page.get_by_label("Prompt").fill("How warm was the agent?")
    page.get_by_label("Anchors").fill("1 | Cold | Distant\n2\n3 | Warm | Friendly")
    preview = page.locator("#previews")
    expect(preview.locator('[data-preview="annotator"]')).to_contain_text("How warm was the agent?")  # live, unsaved
    expect(preview.locator('[data-preview="judge"]')).to_contain_text("- warmth (1 to 3)")
    shot(page, "10-likert-live-preview")
    page.get_by_role("button", name="Save the question").click()
    expect(page.get_by_text("Question “warmth” saved.")).to_be_visible()

    page.get_by_label("Add a question of kind").select_option("multiple_choice")
    page.get_by_role("button", name="Add the question").click()
    page.get_by_label("Key").fill("gave_in")
    page.get_by_label("Prompt").fill("Who gave in?")
    page.get_by_label("Choices").fill("first | The first character\nsecond | The second character")
    page.get_by_label("Correct").fill("third")
    page.get_by_role("button", name="Save the question").click()
    expect(page.locator("#field-option_correct")).to_contain_text("'third' is not the value of one of the choices")
    page.get_by_label("Correct").fill("second")
    page.get_by_role("button", name="Save the question").click()

    questions = page.locator(".builder__question")
    expect(questions).to_have_count(2)
    page.get_by_role("button", name="Move up gave_in").click()  # htmx swaps the questions and previews
    expect(questions.first).to_contain_text("Who gave in?")
    annotator = page.locator('[data-preview="annotator"]')
    expect(annotator).to_contain_text("The second character")
    expect(annotator.locator('input[type="radio"]')).to_have_count(5)  # two choices, three points
    expect(page.locator('[data-preview="participant"]')).to_contain_text("Participants cannot be asked")
    expect(page.locator('[data-preview="judge"]')).to_contain_text("- gave_in")
    shot(page, "20-builder")

    made = Instrument.objects.get(name="Rapport pilot")
    assert list(made.questions.values_list("key", "position")) == [("gave_in", 0), ("warmth", 1)]
    page.goto(reverse("annotator:study-create"))
    page.get_by_label("Title").fill("Rapport pilot study")
    page.locator("#id_preset").select_option("")  # no preset: the instrument just built
    page.get_by_label("or an existing instrument").select_option(label=str(made))
    page.get_by_role("button", name="Create study").click()
    expect(page.get_by_role("heading", name="Rapport pilot study")).to_be_visible()
    assert Study.objects.get(title="Rapport pilot study").instrument == made
