"""Training with feedback in a real browser: an annotator answers a training item, reads the correct answer and
the researcher's explanation beside theirs, passes the qualification item, and gets a regular item.

Screenshots go to var/screenshots/training/.
"""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment, Membership, StudyItem
from tests.annotator.builders import add_items, make_study
from tests.builders import make_user
from tests.e2e.test_annotation import log_in

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

EXPLANATION = "Both characters speak plainly and answer each other directly: no barrier shaped this talk."


@pytest.fixture
def study():
    annotator = make_user(username="tess")
    study = make_study(items=1, overlap=1, annotators=[annotator], title="Barriers with training",
                       slug="training-pilot", qualification_pass_mark=80)
    (training,) = add_items(study, 1, kind=StudyItem.Kind.TRAINING)
    StudyItem.objects.filter(pk=training.pk).update(explanation=EXPLANATION)
    add_items(study, 1, kind=StudyItem.Kind.QUALIFICATION)
    return study, annotator


def answer_and_submit(page, value):
    page.locator(f"input[name='answer-barrier'][value='{value}']").check()
    page.get_by_role("button", name=re.compile("Submit")).click()


def test_an_annotator_is_trained_with_feedback_qualifies_and_gets_a_regular_item(browser_page, screenshot, study):
    study, annotator = study
    page = browser_page
    log_in(page, annotator)
    page.goto(f"/annotate/s/{study.slug}/")
    page.get_by_role("button", name=re.compile("start")).click()

    expect(page).to_have_url(re.compile(r"/annotate/a/\d+/$"))
    answer_and_submit(page, "semantic")  # wrong: the known answer is "none"

    feedback = page.locator(".training-feedback")
    expect(feedback).to_contain_text("Training: the correct answers")
    expect(feedback).to_contain_text("You matched 0 of 1")
    expect(feedback.get_by_role("row").nth(1)).to_contain_text("Semantic")
    expect(feedback.get_by_role("row").nth(1)).to_contain_text("None")
    expect(feedback.locator(".training-explanation")).to_have_text(EXPLANATION)
    expect(page.get_by_role("button", name="Edit these answers")).to_have_count(0)
    screenshot(page, "training/01-feedback")

    feedback.get_by_role("link", name="Next").click()
    expect(page).to_have_url(re.compile(r"/annotate/a/\d+/$"))
    expect(page.locator(".training-feedback")).to_have_count(0)
    qualification_page = page.url
    answer_and_submit(page, "none")  # the qualification item, right: 100 % ≥ 80 %

    expect(page).not_to_have_url(qualification_page)
    expect(page).to_have_url(re.compile(r"/annotate/a/\d+/$"))
    expect(page.locator(".message--success")).to_contain_text("Submitted")
    expect(page.locator("#annotation-form")).to_be_visible()
    screenshot(page, "training/02-regular-item")
    current = Assignment.objects.get(pk=int(page.url.rstrip("/").split("/")[-1]))
    assert current.item.kind == StudyItem.Kind.REGULAR
    assert Membership.objects.get(study=study, annotator=annotator).qualified_at is not None
