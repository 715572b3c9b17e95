"""A participant's whole way through a chat study, in Chromium against daphne (pages and websocket).

From a Prolific-style link: consent, briefing, a conversation with the offline agent (which types
one word every 0.25 s), a reload in the middle of the agent's reply, leaving after the study's
minimum of three messages, the questionnaire and the completion code. The database is checked at
the end: every turn stored once, in order. A second participant leaves at once and gets the
screen-out code instead.
"""

from __future__ import annotations

import re

import pytest

from benchmark.models import Episode, Relationship
from chat.models import ChatCondition, ChatStudy, Participant
from chat.questionnaire import default_instrument
from tests.builders import default_team, get_barrier, make_character, make_scenario, make_user
from tests.chat.builders import answers_of


@pytest.fixture
def study() -> ChatStudy:
    scenario = make_scenario(
        codename="shared-car",
        context="Two housemates share a car and need to agree on who uses it this weekend.",
        relationship=Relationship.STRANGER,
        roles=[
            {"goal": "Get the car on Saturday for your sister's move.",
             "character": make_character(first_name="Ana", last_name="Ruiz")},
            {"goal": "Keep the car on Saturday for a job interview out of town.",
             "character": make_character(first_name="Ben", last_name="Osei")},
        ],
    )
    study = ChatStudy.objects.create(
        team=default_team(),
        slug="car-talk",
        title="Sharing a car",
        created_by=make_user(staff=True),
        agent_model="scripted",
        completion_code="C0DE-E2E",
        screen_out_code="SCREEN-E2E",
        return_url="https://app.prolific.example/submissions/complete?cc={code}",
        instrument=default_instrument(),
    )
    study.scenarios.set([scenario])
    ChatCondition.objects.create(study=study, barrier=get_barrier("semantic"), target=1)
    return study


def test_participant_chats_with_the_offline_agent_from_a_study_link(asgi_page, study, screenshot):
    from playwright.sync_api import expect

    page = asgi_page
    page.goto("/s/car-talk/?PROLIFIC_PID=e2e-participant&STUDY_ID=prolific-study&SESSION_ID=session-1")
    page.get_by_role("button", name="I agree to take part").click()

    # Briefing: their own character and goal; the stranger's name stays hidden, the condition unsaid.
    expect(page.get_by_text("Keep the car on Saturday for a job interview out of town.")).to_be_visible()
    briefing = page.locator("main").inner_text()
    assert "Osei" in briefing and "Ruiz" not in briefing
    assert "semantic" not in briefing.lower() and "scripted" not in briefing.lower()
    screenshot(page, "chat-1-briefing")
    page.get_by_role("button", name="Start the conversation").click()

    # The human plays seat 1, so the agent opens; its reply streams, then lands as a turn.
    log = page.locator("[data-log] > li")
    expect(page.locator("[data-status]")).to_have_attribute("data-state", "connected")
    expect(log).to_have_count(1, timeout=20_000)
    expect(log.nth(0)).to_have_class(re.compile("chat-msg--partner"))

    message = page.locator("[data-message]")
    message.fill("Hi! <b>I</b> really need the car on Saturday.")
    message.press("Enter")
    expect(log.nth(1)).to_contain_text("<b>I</b> really need the car on Saturday.")  # shown as text
    expect(log.nth(1)).to_have_class(re.compile("chat-msg--you"))

    # Reload while the agent is typing: the page comes back with the history and the reply in progress.
    typing = page.locator("[data-typing]")
    expect(typing).to_be_visible()
    expect(page.locator("[data-typing-text]")).not_to_have_text("")
    page.reload()
    expect(page.locator("[data-status]")).to_have_attribute("data-state", "connected")
    expect(log.nth(1)).to_contain_text("really need the car on Saturday.")
    expect(typing.or_(log.nth(2))).to_be_visible()
    expect(log).to_have_count(3, timeout=20_000)
    expect(log.nth(2)).to_have_class(re.compile("chat-msg--partner"))
    screenshot(page, "chat-2-conversation")

    page.locator("[data-action]").select_option("non-verbal")
    message.fill("nods slowly")
    message.press("Enter")
    expect(log).to_have_count(5, timeout=20_000)

    page.locator("[data-action]").select_option("action")
    message.fill("hands over the spare key")
    message.press("Enter")
    expect(log).to_have_count(7, timeout=20_000)  # three messages: the study's minimum
    expect(page.locator(".resume-code summary")).to_contain_text("Your resume code")

    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("[data-leave]").click()
    ended = page.locator("[data-ended]")
    expect(ended).to_be_visible()
    expect(ended).to_contain_text("You left the conversation.")
    screenshot(page, "chat-3-ended")
    page.get_by_role("link", name="Continue to the questions").click()

    for name in ["goal", "unresolved_confusion", "mutual_understanding"]:
        page.locator(f"input[name='{name}'][value='4']").check()
    page.locator("textarea[name='comment']").fill("The other side was hard to follow.")
    page.get_by_role("button", name="Submit my answers").click()

    expect(page.get_by_text("C0DE-E2E")).to_be_visible()
    expect(page.get_by_role("link", name="Return to the study site")).to_have_attribute(
        "href", "https://app.prolific.example/submissions/complete?cc=C0DE-E2E"
    )
    screenshot(page, "chat-4-done")

    participant = Participant.objects.get(study=study, participant_id="e2e-participant")
    assert participant.stage == Participant.Stage.DONE
    assert participant.prolific_session_id == "session-1"
    assert answers_of(participant) == {"goal": "4", "unresolved_confusion": "4", "mutual_understanding": "4",
                                       "comment": "The other side was hard to follow."}
    assert participant.response.respondent.label == "e2e-participant"
    episode = participant.episode
    assert (episode.source, episode.status, episode.end_reason) == (
        Episode.Source.HUMAN_CHAT, Episode.Status.FINISHED, Episode.EndReason.LEAVE,
    )
    turns = list(episode.turns.order_by("index").values_list("index", "seat__position", "action_type"))
    assert [index for index, _, _ in turns] == list(range(8))
    assert [position for _, position, _ in turns] == [0, 1, 0, 1, 0, 1, 0, 1]
    assert turns[3][2] == "non-verbal" and turns[5][2] == "action" and turns[7][2] == "leave"


def test_participant_who_leaves_at_once_gets_the_screen_out_code(asgi_page, study):
    from playwright.sync_api import expect

    page = asgi_page
    page.goto("/s/car-talk/?PROLIFIC_PID=e2e-quitter")
    page.get_by_role("button", name="I agree to take part").click()
    page.get_by_role("button", name="Start the conversation").click()
    expect(page.locator("[data-log] > li")).to_have_count(1, timeout=20_000)

    warnings: list[str] = []
    page.once("dialog", lambda dialog: (warnings.append(dialog.message), dialog.accept()))
    page.locator("[data-leave]").click()
    ended = page.locator("[data-ended]")
    expect(ended).to_contain_text("before the conversation was long enough")
    assert "screen-out code" in warnings[0]
    page.get_by_role("link", name="Continue").click()

    expect(page.get_by_text("SCREEN-E2E")).to_be_visible()
    assert "C0DE-E2E" not in page.content()
    expect(page.get_by_role("link", name="Return to the study site")).to_have_attribute(
        "href", "https://app.prolific.example/submissions/complete?cc=SCREEN-E2E"
    )
    participant = Participant.objects.get(study=study, participant_id="e2e-quitter")
    assert participant.stage == Participant.Stage.SCREENED_OUT
    assert participant.episode.status == Episode.Status.ABANDONED


def test_a_message_typed_but_not_sent_comes_back_after_a_reload(asgi_page, study):
    from playwright.sync_api import expect

    page = asgi_page
    page.goto("/s/car-talk/?PROLIFIC_PID=e2e-reloader")
    page.get_by_role("button", name="I agree to take part").click()
    page.get_by_role("button", name="Start the conversation").click()
    expect(page.locator("[data-log] > li")).to_have_count(1, timeout=20_000)
    message = page.locator("[data-message]")

    message.fill("I was halfway through writing this")
    page.reload()

    expect(page.locator("[data-message]")).to_have_value("I was halfway through writing this")
    expect(page.locator("[data-status]")).to_have_attribute("data-state", "connected")
    expect(page.locator("[data-log] > li")).to_have_count(1, timeout=20_000)
    page.locator("[data-message]").press("Enter")
    expect(page.locator("[data-log] > li").nth(1)).to_contain_text("I was halfway through writing this")
    page.reload()
    expect(page.locator("[data-status]")).to_have_attribute("data-state", "connected")
    expect(page.locator("[data-message]")).to_have_value("")  # sent: nothing to give back


def test_a_two_party_chat_says_each_thing_once_and_drops_a_stale_notice(asgi_page, study, screenshot):
    from playwright.sync_api import expect

    study.max_message_chars, study.min_participant_turns = 40, 0
    study.save(update_fields=["max_message_chars", "min_participant_turns"])
    page = asgi_page
    page.goto("/s/car-talk/?PROLIFIC_PID=e2e-notices")
    page.get_by_role("button", name="I agree to take part").click()
    page.get_by_role("button", name="Start the conversation").click()
    expect(page.locator("[data-log] > li")).to_have_count(1, timeout=20_000)
    expect(page.locator("[data-status]")).to_have_attribute("data-state", "connected")

    # Two people take turns: there is no order of turns to show, and no empty box for it.
    expect(page.locator("[data-order]")).to_be_hidden()

    message, notice, hint = page.locator("[data-message]"), page.locator("[data-notice]"), page.locator("[data-hint]")
    page.locator("[data-composer]").evaluate("form => form.requestSubmit()")  # the Send button is off while empty
    expect(notice).to_have_text("Write something before sending.")
    message.fill("x" * 45)
    expect(hint).to_have_text("Too long by 5 characters.")
    expect(notice).to_be_hidden()  # the text is no longer empty: the notice about it has gone
    screenshot(page, "chat-notice-too-long")

    message.fill("")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("[data-leave]").click()
    expect(page.locator("[data-ended]")).to_be_visible()
    expect(page.locator("[data-ended-message]")).to_have_text("You left the conversation.")
    screenshot(page, "chat-ended-once")
    assert page.locator("main").inner_text().count("The conversation is over") == 1
