"""An annotator of an AgentSense study opens an item in Chromium: a character's private fact, reason and
secret are nowhere in the page's text, and their goal only beside the question that rates it.

The same planted scenario as ``tests/annotator/test_blinding.py``, which opens every URL of the site;
here the page is read as the browser renders it, profile panels opened.
"""

import re

import pytest
from playwright.sync_api import expect

from benchmark.instruments.presets import install_preset
from tests.annotator.builders import make_study
from tests.annotator.test_blinding import GOAL, GOAL_PROBE, PRIVATE, PRIVATE_PROBE, REASON, SECRET, planted_scenario
from tests.builders import make_episode, make_user
from tests.e2e.test_annotation import log_in

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_the_agentsense_item_page_shows_no_private_fact_in_the_browser(browser_page):
    annotator = make_user(username="wren-reader")
    study = make_study(instrument=install_preset("agentsense"), items=[make_episode(scenario=planted_scenario(),
                       turns=4)], overlap=1, annotators=[annotator], slug="blind-agentsense")
    page = browser_page
    log_in(page, annotator)

    page.goto(f"/annotate/s/{study.slug}/")
    page.get_by_role("button", name=re.compile("start", re.IGNORECASE)).click()
    expect(page).to_have_url(re.compile(r"/annotate/a/\d+/$"))
    for summary in page.locator("details > summary").all():
        summary.click()  # every profile open: nothing is hidden in a closed panel either

    text = page.locator("body").inner_text()
    assert "Wren Adler" in text and PRIVATE_PROBE in text
    for planted in (PRIVATE, REASON, SECRET, GOAL_PROBE):
        assert planted not in text
    assert text.count(GOAL) == 1
    expect(page.locator(".speakers")).not_to_contain_text(GOAL)
    expect(page.locator(".question__goal").first).to_have_text(f"Wren Adler’s goal: {GOAL}")
