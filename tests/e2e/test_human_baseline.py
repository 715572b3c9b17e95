"""An annotator answers a SHREC task item of a human-baseline study in a real browser (SH-13).

The item shows the task's text, the excerpt (the item's turns) and the item's own options in their stored
order, none marked; the annotator picks one and submits. The stored answer is the option's position, and the
Human row's source reads it as the 1-based option number. Screenshots go to var/screenshots/annotation/.
"""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.human_baseline.study import create_human_baseline_study
from annotator.models import Annotation
from benchmark.results.shrec.human import human_answers
from tests.annotator.builders import add_annotators
from tests.annotator.shrec_items import ITEMS, LINES, make_task_set
from tests.builders import make_user
from tests.e2e.test_annotation import log_in, wait_until_saved, window_shot

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_an_annotator_answers_a_rationale_item_and_the_answer_is_stored(browser_page):
    page = browser_page
    annotator = make_user(username="hana")
    task_set = make_task_set()
    study = create_human_baseline_study(task_set=task_set, tasks=["rationale"], overlap=1, title="SHREC people")
    add_annotators(study, [annotator])
    log_in(page, annotator)

    page.goto(reverse("annotator:instructions", args=[study.slug]))
    page.get_by_role("button", name="Start").click()
    expect(page.get_by_role("heading", name="Your task: Rationale")).to_be_visible()
    expect(page.locator("[data-task-instructions]")).to_contain_text("marked as a Social Error of the agent")
    transcript = page.locator("ol.transcript")
    expect(transcript.locator("li.turn")).to_have_count(3)  # the item's turns 3–5
    expect(transcript).to_contain_text(LINES[4])
    expect(transcript).not_to_contain_text(LINES[2])
    options = page.locator("label.choice")
    expect(options).to_have_count(5)
    for position, text in enumerate(ITEMS["rationale"][4]):  # the stored order, as the model's prompt lists them
        expect(options.nth(position)).to_contain_text(text)
    expect(page.locator("input[type=radio]:checked")).to_have_count(0)
    window_shot(page, "40-shrec-human-baseline")

    page.get_by_role("radio", name="Robot ignored that the user said not yet.").check()
    wait_until_saved(page)
    page.get_by_role("button", name="Submit and go to the next item").click()
    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()

    submitted = Annotation.objects.get(assignment__item__study=study, status=Annotation.Status.SUBMITTED)
    assert [(a.question.key, a.value) for a in submitted.response.answers.all()] == [("rationale", "2")]
    assert [(answer.person, answer.answer) for answer in human_answers(task_set.pk)] == [(f"a{annotator.pk}", 3)]
