"""A researcher adjudicates an item with two disagreeing ratings, in a real browser.

From the study's dashboard the researcher opens item 1, sees both annotators' answers side by side with the
disagreement marked (and, the study blinding its curators, no condition), picks one annotator's barrier with a
note and saves a draft, then writes their own warmth score with a note and finalises; the queue then shows the
item done.
Screenshots go to var/screenshots/adjudication-*.png.
"""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.gold import gold_values
from annotator.models import CuratedDecision, Curation
from benchmark.instruments.targets import Target
from tests.annotator.adjudication_world import CONDITION, build_world
from tests.builders import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_researcher_adjudicates_two_disagreeing_ratings_into_gold(browser_page, screenshot):
    world = build_world()
    study, first = world["study"], world["first"]
    page = browser_page
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(world["researcher"].username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.goto(reverse("annotator:dashboard", args=[study.slug]))
    page.get_by_title("Open the item's ratings").first.click()
    expect(page.get_by_role("heading", name="Item 1", level=1)).to_be_visible()
    table = page.locator("table.review-table")
    expect(table).to_contain_text(f"a{world['ann'].pk}")
    expect(table).to_contain_text(f"a{world['bob'].pk}")
    expect(table).to_contain_text("semantic")
    expect(table.locator("tr.item--short")).to_have_count(2)  # both questions in disagreement
    assert CONDITION not in page.content()
    screenshot(page, "adjudication-01-review")

    barrier = page.locator("#decide-barrier")
    barrier.get_by_label(f"a{world['bob'].pk}: semantic").check()
    barrier.get_by_label("Note").fill("Bob caught the vague references.")
    page.get_by_role("button", name="Save as draft").click()
    expect(page.get_by_text("saved as a draft")).to_be_visible()
    assert Curation.objects.get(item=first).status == Curation.Status.DRAFT

    warmth = page.locator("#decide-warmth")
    warmth.get_by_label("My own answer").check()
    warmth.get_by_label("Your own answer to warmth").select_option("3")
    warmth.get_by_label("Note").fill("Between the two readings.")
    page.get_by_role("button", name="Finalise gold").click()
    expect(page.get_by_text("Gold of item 1 finalised.")).to_be_visible()
    screenshot(page, "adjudication-02-finalised")

    curation = Curation.objects.get(item=first)
    assert curation.status == Curation.Status.FINAL
    notes = dict(CuratedDecision.objects.filter(curation=curation).values_list("question__key", "note"))
    assert notes == {"barrier": "Bob caught the vague references.", "warmth": "Between the two readings."}
    assert gold_values(study) == {(first.pk, "barrier", Target.episode()): ["semantic"],
                                  (first.pk, "warmth", Target.episode()): ["3"]}

    page.get_by_role("link", name="Adjudication queue").click()
    expect(page.get_by_role("heading", name="Adjudication", level=1)).to_be_visible()
    expect(page.locator("table")).to_contain_text("final")
    expect(page.get_by_text("1 / 1")).to_be_visible()
    screenshot(page, "adjudication-03-queue")
