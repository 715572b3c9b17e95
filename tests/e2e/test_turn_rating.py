"""Rating single replies in a real browser (issue 22): the "Rate each reply" preset puts a rating beside each
agent turn; the annotator rates two turns, the autosave keeps them, and the submitted answers are stored with
their turn targets. Screenshots go to var/screenshots/annotation/.
"""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.models import Annotation
from benchmark.instruments.presets import TURN_RATING_PRESET, install_preset
from benchmark.instruments.targets import Target
from benchmark.models import ActionType
from tests.annotator.builders import make_study
from tests.builders import make_episode, make_user
from tests.e2e.test_annotation import RENT_TURNS, log_in, scenario, wait_until_saved, window_shot

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# Two replies to rate: the third turn does nothing, so it has no rating.
TURNS = [RENT_TURNS[0], RENT_TURNS[1], (ActionType.NONE, "")]


def test_an_annotator_rates_two_turns_and_submits(browser_page):
    page = browser_page
    annotator = make_user(username="rae")
    rent = scenario("Two flatmates meet in the kitchen to settle this month's rent.",
                    ("Maya", "Pay your half a week late without upsetting your flatmate."),
                    ("Tomás", "Get the whole rent paid by Friday."))
    study = make_study(instrument=install_preset(TURN_RATING_PRESET), title="Rate each reply",
                       items=[make_episode(scenario=rent, turns=TURNS)], overlap=1, annotators=[annotator])
    study.memberships.update(instructions_read_at="2025-01-01T00:00:00Z")
    log_in(page, annotator)
    page.goto(reverse("annotator:next", args=[study.slug]))

    expect(page.get_by_role("heading", name="Rate each reply", level=2)).to_be_visible()  # the guide, once
    window_shot(page, "19-turn-ratings-page")
    first, second = page.locator("[data-turn='0']"), page.locator("[data-turn='1']")
    expect(first.get_by_role("radiogroup")).to_be_visible()
    expect(second.get_by_role("radiogroup")).to_be_visible()
    expect(page.locator("[data-turn='2'] [data-turn-rating]")).to_have_count(0)  # "did nothing": no reply

    first.get_by_role("radio", name="4 Helpful").check()
    wait_until_saved(page)  # a rating beside the transcript autosaves like the form's own answers
    annotation = Annotation.objects.get(assignment__item__study=study)
    assert [(a.question.key, Target.of(a), a.value) for a in annotation.response.answers.all()] == [
        ("helpfulness", Target.of_turn(0), "4")]

    second.get_by_role("radio", name="2 Unhelpful").check()
    second.get_by_label("Anything about this reply worth noting? (turn 2)").fill("Answers a question with a question.")
    wait_until_saved(page)
    window_shot(page, "20-turn-ratings", at=second)

    page.get_by_role("button", name="Submit and go to the next item").click()
    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()

    submitted = Annotation.objects.get(assignment__item__study=study, status=Annotation.Status.SUBMITTED)
    stored = {(a.question.key, Target.of(a)): a.value for a in submitted.response.answers.all()}
    assert stored == {
        ("helpfulness", Target.of_turn(0)): "4",
        ("helpfulness", Target.of_turn(1)): "2",
        ("comment", Target.of_turn(1)): "Answers a question with a question.",
    }
