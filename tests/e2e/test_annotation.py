"""An annotator's session in a real browser, and the researcher watching the dashboard.

The annotator reads the instructions, rates two SocialVeil items (the first with the keyboard
alone), marks a SHREC span across two turns with two attributes and a correction, reloads in the
middle and finds it all, submits, and goes back to edit a submitted item (version 2). Screenshots
of the key pages go to var/screenshots/annotation/.
"""

import re
import time

import pytest
from playwright.sync_api import expect

from annotator.models import Annotation, Assignment, Span
from benchmark.instruments.presets import install_preset
from benchmark.models import ActionType
from tests.annotator.builders import make_study
from tests.builders import PASSWORD, make_character, make_episode, make_scenario, make_user
from tests.e2e.conftest import SCREENSHOTS

# Transactional, because the live server reads the data from another thread; serialized
# rollback puts the seeded barriers and social attributes back for the tests that run after.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

RENT_TURNS = [
    (ActionType.SPEAK, "So about the thing from before... it's kind of like that, you know?"),
    (ActionType.SPEAK, "Sorry, which thing? Do you mean the rent for this month?"),
    (ActionType.NON_VERBAL, "shrugs and looks at the calendar"),
    (ActionType.SPEAK, "Yeah, that. Maybe the stuff can wait a bit, if that's all right."),
    (ActionType.ACTION, "slides an envelope across the table"),
    (ActionType.SPEAK, "Okay. Half now and half on Friday works for me."),
]
PARTY_TURNS = [
    (ActionType.SPEAK, "Hi! I'm throwing a party on Saturday and wanted to let you know first."),
    (ActionType.SPEAK, "Whatever. Just keep it down, I work early."),
    (ActionType.SPEAK, "Of course. Would it help if we ended the music at eleven?"),
    (ActionType.SPEAK, "Eleven would be great, thank you for asking."),
]


def scenario(context, first, second):
    return make_scenario(
        context=context,
        roles=[
            {"goal": first[1], "character": make_character(first_name=first[0], last_name="Okafor")},
            {"goal": second[1], "character": make_character(first_name=second[0], last_name="Reyes",
                                                           gender="man", pronouns="he/him")},
        ],
    )


@pytest.fixture
def studies():
    annotator = make_user(username="ana")
    researcher = make_user(username="rhea", staff=True)
    rent = scenario("Two flatmates meet in the kitchen to settle this month's rent.",
                    ("Maya", "Pay your half a week late without upsetting your flatmate."),
                    ("Tomás", "Get the whole rent paid by Friday."))
    party = scenario("A tenant tells the downstairs neighbour about a party on Saturday.",
                     ("Lena", "Get your neighbour's blessing for the party."),
                     ("Omar", "Make sure you can sleep before your early shift."))
    socialveil = make_study(
        instrument=install_preset("socialveil"), title="Barriers in rent talks", slug="barriers-pilot",
        items=[make_episode(scenario=rent, barrier="semantic", turns=RENT_TURNS),
               make_episode(scenario=rent, barrier="none", turns=RENT_TURNS[:2] + RENT_TURNS[5:])],
        overlap=2, annotators=[annotator], created_by=researcher,
        instructions="Read each conversation to the end.\nThen say which barrier, if any, shaped it.",
    )
    shrec = make_study(
        instrument=install_preset("shrec-spans"), title="Social errors at the door", slug="spans-pilot",
        items=[make_episode(scenario=party, turns=PARTY_TURNS)], overlap=1, annotators=[annotator],
        created_by=researcher, instructions="Mark the moments that show a social slip or a social skill.",
    )
    return {"annotator": annotator, "researcher": researcher, "socialveil": socialveil, "shrec": shrec}


def log_in(page, user):
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".site-account")).to_contain_text(user.username)


def wait_until_saved(page):
    expect(page.locator("#save-status")).to_have_attribute("data-state", "saved")


def window_shot(page, name, *, at=None):
    """What the annotator sees in the window, scrolled to ``at`` (a locator) or to the top.

    The item page keeps the transcript in view beside the form (sticky), which a full-page capture
    draws in the wrong place, so item pages are captured as the window shows them.
    """
    if at is None:
        page.evaluate("window.scrollTo(0, 0)")
    else:
        at.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "annotation" / f"{name}.png"))


def select_text(page, start_turn, start_offset, end_turn, end_offset):
    """Select transcript text the way a mouse drag would, from one turn's text into another's."""
    page.evaluate(
        """([startTurn, startOffset, endTurn, endOffset]) => {
            const text = (turn) => document.querySelector(`[data-turn="${turn}"] [data-turn-content]`).firstChild;
            window.getSelection().setBaseAndExtent(text(startTurn), startOffset, text(endTurn), endOffset);
        }""",
        [start_turn, start_offset, end_turn, end_offset],
    )


def test_an_annotator_works_through_two_studies_and_the_researcher_sees_it(browser_page, live_server, screenshot,
                                                                          studies):
    page = browser_page
    researcher = page.context.browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    try:
        dashboard = researcher.new_page()
        log_in(dashboard, studies["researcher"])
        dashboard.goto(f"/annotate/studies/{studies['socialveil'].slug}/")
        expect(dashboard.locator(".stats")).to_contain_text("(0 of 4)")
        rate_two_socialveil_items(page, screenshot, studies)
        mark_a_span_reload_and_submit(page, screenshot, studies)
        edit_a_submitted_item(page, screenshot, studies)

        dashboard.reload()
        expect(dashboard.locator(".stats")).to_contain_text("(2 of 4)")
        annotators = dashboard.get_by_role("region", name="Annotators", exact=True)
        row = annotators.get_by_role("row", name=re.compile(r"^ana\b"))
        expect(row).to_contain_text("2")
        screenshot(dashboard, "annotation/10-researcher-dashboard")
    finally:
        researcher.close()


def rate_two_socialveil_items(page, screenshot, studies):
    study = studies["socialveil"]
    log_in(page, studies["annotator"])
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Annotate").click()
    expect(page.get_by_role("heading", name=study.title)).to_be_visible()
    screenshot(page, "annotation/01-index")

    page.get_by_role("link", name="Read the instructions and start").first.click()
    expect(page.get_by_role("heading", name=f"{study.title}: instructions")).to_be_visible()
    expect(page.locator(".reference-panel")).to_contain_text("Semantic vagueness")
    screenshot(page, "annotation/02-instructions")
    page.get_by_role("button", name=re.compile("start")).click()

    # The first item with the keyboard alone: j to a question, a digit to answer, n to submit.
    expect(page).to_have_url(re.compile(r"/annotate/a/\d+/$"))
    first_item = page.url
    expect(page.locator(".transcript")).to_contain_text("Do you mean the rent for this month?")
    expect(page.locator(".speakers")).to_contain_text("Maya Okafor")
    expect(page.locator("body")).not_to_contain_text("Get the whole rent paid by Friday.")  # no question rates it
    expect(page.locator("body")).not_to_contain_text("semantic")  # blind to the condition's key
    for key, digit in [("barrier_type", "1"), ("unresolved_confusion", "2"), ("mutual_understanding", "3")]:
        page.keyboard.press("j")
        page.keyboard.press(digit)
        expect(page.locator(f"input[name='answer-{key}']:checked")).to_have_count(1)
    expect(page.locator("input[name='answer-barrier_type']:checked")).to_have_value("semantic")
    expect(page.locator("input[name='answer-mutual_understanding']:checked")).to_have_value("3")
    wait_until_saved(page)
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    window_shot(page, "03-shortcut-help")
    page.keyboard.press("Escape")
    window_shot(page, "04-socialveil-item")
    window_shot(page, "04b-socialveil-item-form-end", at=page.locator("[data-submit]"))
    page.keyboard.press("n")

    # The second item with the mouse, and a rationale typed in.
    expect(page).not_to_have_url(first_item)
    expect(page).to_have_url(re.compile(r"/annotate/a/\d+/$"))
    expect(page.locator(".progress__label").first).to_contain_text("1 of 2 submitted")
    expect(page.locator(".transcript")).to_contain_text("Half now and half on Friday works for me.")
    page.locator("input[name='answer-barrier_type'][value='none']").check()
    page.locator("#rationale-barrier_type").fill("Both say plainly what they want.")
    page.locator("input[name='answer-unresolved_confusion'][value='5']").check()
    page.locator("input[name='answer-mutual_understanding'][value='5']").check()
    wait_until_saved(page)
    page.get_by_role("button", name="Submit and go to the next item").click()

    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()
    screenshot(page, "annotation/05-done")
    submitted = Annotation.objects.filter(assignment__item__study=study, status="submitted")
    assert submitted.count() == 2
    answers = submitted.get(response__answers__value="none").response.answers
    rationale = answers.get(question__key="barrier_type").reasoning
    assert rationale == "Both say plainly what they want."


def mark_a_span_reload_and_submit(page, screenshot, studies):
    study = studies["shrec"]
    page.goto("/annotate/")
    page.get_by_role("link", name="Read the instructions and start").click()
    expect(page.locator("body")).to_contain_text("The seven social attributes")
    page.get_by_role("button", name=re.compile("start")).click()
    expect(page.locator("[data-span-source] .turn")).to_have_count(4)
    page.wait_for_load_state()  # spans.js (a module, run after parsing) must listen before text is selected

    # Omar's curt reply and the start of Lena's answer: turn index 1 from "Whatever" to index 2's "Of course".
    select_text(page, 1, 0, 2, len("Of course"))
    editor = page.locator("[data-span-editor]")
    expect(editor.locator("[data-span-selection]")).to_contain_text("Marking turns 2–3")
    editor.get_by_label("social error").check()
    attribute = editor.get_by_label("Emotions")
    attribute.focus()
    expect(editor.locator("[data-attribute-help]")).to_contain_text("Emotions: Noticing and reading feelings")
    attribute.check()
    editor.get_by_label("Intention").check()
    editor.get_by_label("Why did you mark it?").fill("Omar brushes off a friendly heads-up.")
    editor.get_by_label("What should the agent have done instead?").fill("Thank her and mention the early shift.")
    editor.get_by_role("button", name="Add span").click()

    spans = page.locator("[data-span-list] .span-item")
    expect(spans).to_have_count(1)
    expect(spans.first).to_contain_text("E1")
    expect(spans.first).to_contain_text("Emotions, Intention")
    expect(page.locator("[data-turn='1'] .span-badge")).to_have_text("E1")
    expect(page.locator("[data-turn='2'] .span-badge")).to_have_text("E1")
    page.locator("#answer-overall_comment").fill("Lena repairs the moment well.")
    wait_until_saved(page)
    window_shot(page, "06-span-marked", at=spans.first)

    stored = Span.objects.get(annotation__assignment__item__study=study)
    assert (stored.label, stored.start_turn, stored.end_turn, stored.start_char, stored.end_char) == (
        "error", 1, 2, 0, len("Of course")
    )
    assert sorted(stored.attributes.values_list("key", flat=True)) == ["emotions", "intention"]

    # Reload in the middle: the span, its attributes and the comment are all back.
    page.reload()
    expect(spans).to_have_count(1)
    expect(spans.first).to_contain_text("Thank her and mention the early shift.")
    expect(spans.first).to_contain_text("Emotions, Intention")
    expect(page.locator("[data-turn='1'] .span-badge")).to_have_text("E1")
    expect(page.locator("#answer-overall_comment")).to_have_value("Lena repairs the moment well.")
    expect(page.locator("#save-status")).to_contain_text("Saved at")
    window_shot(page, "07-span-after-reload")
    page.set_viewport_size({"width": 390, "height": 844})
    window_shot(page, "07b-span-narrow", at=page.locator("[data-turn='1']"))
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_role("button", name="Submit and go to the next item").click()
    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()
    assert Annotation.objects.get(assignment__item__study=study).status == "submitted"


def edit_a_submitted_item(page, screenshot, studies):
    study = studies["socialveil"]
    page.goto("/annotate/")
    section = page.locator("section.study-card", has_text=study.title)
    submitted = section.locator("details.submitted-items")
    expect(submitted).to_have_attribute("open", "")  # opened by itself once nothing is left to do
    expect(submitted.locator("summary")).to_have_text("Your submitted items (2)")
    screenshot(page, "annotation/08-index-after")
    section.get_by_role("link", name="Open item 1").click()
    expect(page.get_by_text("You submitted this item")).to_be_visible()
    expect(page.locator("input[name='answer-barrier_type'][value='semantic']")).to_be_checked()
    expect(page.locator("input[name='answer-barrier_type'][value='semantic']")).to_be_disabled()
    window_shot(page, "08b-submitted-item")
    page.get_by_role("button", name="Edit these answers").click()

    expect(page.get_by_text("You are editing version 2")).to_be_visible()
    page.locator("input[name='answer-barrier_type'][value='sociocultural']").check()
    wait_until_saved(page)
    window_shot(page, "09-editing-version-2")
    page.get_by_role("button", name="Submit version 2").click()
    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()

    assignment = Assignment.objects.get(item__study=study, annotations__version=2)
    versions = assignment.annotations.order_by("version")
    assert [(a.version, a.status) for a in versions] == [(1, "submitted"), (2, "submitted")]
    assert [a.response.answers.get(question__key="barrier_type").value for a in versions] == [
        "semantic", "sociocultural"
    ]


def test_sotopia_sliders_start_unset_and_are_saved_once_moved(browser_page):
    page = browser_page
    annotator = make_user(username="sam")
    rent = scenario("Two flatmates meet in the kitchen to settle this month's rent.",
                    ("Maya", "Pay your half a week late without upsetting your flatmate."),
                    ("Tomás", "Get the whole rent paid by Friday."))
    study = make_study(instrument=install_preset("sotopia-eval"), items=[make_episode(scenario=rent, turns=RENT_TURNS)],
                       annotators=[annotator])
    study.memberships.update(instructions_read_at="2025-01-01T00:00:00Z")
    log_in(page, annotator)
    page.goto(f"/annotate/s/{study.slug}/next/")

    expect(page.get_by_role("group", name="About Maya Okafor")).to_be_visible()
    goal = page.locator("#answer-goal-0-range")
    expect(page.locator("#answer-goal-0-value")).to_have_text("not set yet")
    goal.focus()
    page.keyboard.press("ArrowRight")  # 5 → 6
    page.keyboard.press("ArrowRight")
    expect(page.locator("#answer-goal-0-value")).to_have_text("7")
    page.locator("#rationale-goal-0").fill("She gets the week she asked for.")
    wait_until_saved(page)
    window_shot(page, "11-sotopia-sliders", at=page.locator("#rationale-goal-0"))

    annotation = Annotation.objects.get(assignment__item__study=study)
    answers = {(a.question.key, a.seat_position): (a.number, a.reasoning) for a in annotation.response.answers.all()}
    assert answers == {("goal", 0): (7, "She gets the week she asked for.")}

    page.reload()
    expect(page.locator("#answer-goal-0-value")).to_have_text("7")
    expect(page.locator("#answer-goal-1-value")).to_have_text("not set yet")

    # Leaving the page before the autosave's pause is over: the beacon still saves the last words.
    page.locator("#rationale-goal-1").fill("He is paid on time after all.")
    page.goto("/annotate/")
    expect(page.get_by_role("heading", name="Annotate", level=1)).to_be_visible()
    for _ in range(50):
        if annotation.response.answers.filter(question__key="goal", seat_position=1).exists():
            break
        time.sleep(0.1)
    assert annotation.response.answers.get(question__key="goal", seat_position=1).reasoning == (
        "He is paid on time after all."
    )


def test_a_slider_can_be_set_at_its_starting_value(browser_page):
    page = browser_page
    annotator = make_user(username="sam")
    rent = scenario("Two flatmates meet in the kitchen to settle this month's rent.",
                    ("Maya", "Pay your half a week late without upsetting your flatmate."),
                    ("Tomás", "Get the whole rent paid by Friday."))
    study = make_study(instrument=install_preset("sotopia-eval"), items=[make_episode(scenario=rent, turns=RENT_TURNS)],
                       annotators=[annotator])
    study.memberships.update(instructions_read_at="2025-01-01T00:00:00Z")
    log_in(page, annotator)
    page.goto(f"/annotate/s/{study.slug}/next/")

    # Relationship runs from -5 to 5 and starts at 0, the most common answer: clicking the thumb
    # where it sits changes nothing, so the explicit button is what sets it.
    page.locator("#answer-relationship-0-range").click()
    expect(page.locator("#answer-relationship-0-value")).to_have_text("not set yet")
    set_button = page.locator("#q-answer-relationship-0").get_by_role("button", name="Set to 0")
    set_button.click()
    expect(page.locator("#answer-relationship-0-value")).to_have_text("0")
    expect(set_button).to_be_hidden()
    wait_until_saved(page)

    annotation = Annotation.objects.get(assignment__item__study=study)
    answers = annotation.response.answers.all()
    assert [(a.question.key, a.seat_position, a.number) for a in answers] == [("relationship", 0, 0)]
    page.reload()
    expect(page.locator("#answer-relationship-0-value")).to_have_text("0")
