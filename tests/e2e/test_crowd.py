"""A crowd worker in a real browser: the platform's link, the comprehension check (wrong once, then right), an item,
and the completion code; a second browser with the same id is refused. Screenshots go to var/screenshots/crowd/."""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import Annotation, CrowdWorker, Membership
from benchmark.models import Instrument
from tests.annotator.builders import make_question, make_study
from tests.builders import make_episode
from tests.e2e.conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

PID = "60f1a2b3c4d5e6f708192a3b"


@pytest.fixture
def study():
    check = Instrument.objects.create(name="Before you start")
    make_question(
        instrument=check, key="task", position=0, kind="multiple_choice",
        prompt="What will you say of each conversation?",
        options={"choices": [{"value": "length", "label": "How long it is"},
                             {"value": "barrier", "label": "Which barrier, if any, shaped it"}],
                 "correct": "barrier"},
    )
    return make_study(
        items=[make_episode(turns=2)], overlap=1, title="Barriers from the crowd", slug="crowd-pilot", crowd_link=True,
        completion_code="C7H2K9QX", screen_out_code="NOPE1234", comprehension_instrument=check,
        instructions="Read the conversation, then say which barrier shaped it.",
    )


def shoot(page, name):
    (SCREENSHOTS / "crowd").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "crowd" / f"{name}.png"), full_page=True)


def test_a_crowd_worker_goes_from_the_link_through_the_check_to_the_completion_code(browser_page, study):
    page = browser_page
    page.goto(f"/annotate/crowd/{study.invite_token}/?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x1")
    expect(page.get_by_role("heading", name=f"{study.title}: instructions")).to_be_visible()
    page.get_by_role("button", name=re.compile("start")).click()

    expect(page.get_by_role("heading", name=re.compile("a few questions first"))).to_be_visible()
    shoot(page, "01-comprehension")
    page.get_by_label("How long it is").check()
    page.get_by_role("button", name="Check my answers").click()
    expect(page.get_by_role("alert")).to_contain_text("This is your last attempt")
    shoot(page, "02-second-attempt")
    page.get_by_label("Which barrier, if any, shaped it").check()
    page.get_by_role("button", name="Check my answers").click()

    expect(page.get_by_role("button", name="Submit and go to the next item")).to_be_visible()
    page.locator("input[name='answer-barrier'][value='none']").check()
    page.get_by_role("button", name="Submit and go to the next item").click()

    expect(page.get_by_text("Your completion code is")).to_be_visible()
    expect(page.locator(".completion-code")).to_have_text("C7H2K9QX")
    shoot(page, "03-completion-code")
    worker = CrowdWorker.objects.get(study=study, participant_id=PID)
    assert worker.finished_at is not None and worker.screened_out_at is None
    membership = Membership.objects.get(study=study, annotator=worker.user)
    assert membership.comprehension_failures == 1 and membership.comprehension_passed_at is not None
    assert Annotation.objects.filter(assignment__annotator=worker.user, status="submitted").count() == 1

    # Another browser bringing the same id is refused; this one, coming back, sees its code again.
    other = page.context.browser.new_context(base_url=page.url.split("/annotate/")[0]).new_page()
    other.goto(f"/annotate/crowd/{study.invite_token}/?PROLIFIC_PID={PID}")
    expect(other.get_by_role("alert")).to_contain_text("already annotating for this study in another browser")
    shoot(other, "04-other-browser-refused")
    other.context.close()
    page.goto(f"/annotate/crowd/{study.invite_token}/?PROLIFIC_PID={PID}")
    expect(page.locator(".completion-code")).to_have_text("C7H2K9QX")
