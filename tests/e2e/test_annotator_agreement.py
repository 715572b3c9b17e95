"""The researcher's dashboard loads each annotator's agreement and MACE competence after the page, in a real browser.

The figures come through htmx under the site's Content-Security-Policy; the study is the adjudicated one of
``tests/annotator/test_annotator_agreement.py``. The screenshot goes to var/screenshots/quality/.
"""

import pytest
from playwright.sync_api import expect

from tests.annotator.test_annotator_agreement import adjudicated_study
from tests.builders import make_researcher
from tests.e2e.test_annotation import log_in

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_the_dashboard_shows_each_annotators_agreement_and_competence(browser_page, screenshot):
    study, _, _ = adjudicated_study()
    researcher = make_researcher(study.team)
    page = browser_page
    log_in(page, researcher)
    page.goto(f"/annotate/studies/{study.slug}/")
    section = page.locator("#annotator-agreement")
    expect(section.get_by_role("heading", name="Agreement of each annotator")).to_be_visible()
    table = section.get_by_role("table").first
    expect(table).to_contain_text("MACE competence")
    expect(table.get_by_role("row", name="rater-C")).to_contain_text("0.500")  # agreement with the others
    expect(section).to_contain_text("1 item adjudicated so far")
    section.get_by_text("Question by question").click()
    expect(section.get_by_role("row").filter(has_text="rater-A").filter(has_text="barrier")).to_contain_text("0.625")
    screenshot(page, "quality/dashboard-annotator-agreement")
