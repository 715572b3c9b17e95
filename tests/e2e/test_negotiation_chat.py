"""A participant in a live ProMediate negotiation, in Chromium against daphne, to the end (PM-19, PM-20).

The HMO case (Alex, Jamie, Lee and the Mediator) with a short cap; the agents are the offline model (one word
every 0.25 s). Windows are short (3 s) so the test waits little; their deadlines are the server's.
"""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from benchmark.models import Episode, MediatorDecision, PartyThought
from chat.models import Participant
from tests.chat.negotiation_builders import negotiation_study

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
WAIT = 60_000  # ms: an agent's line takes a few seconds to type


def ended_or(page, condition: str) -> None:
    """Wait until the chat has ended or ``condition`` (a JavaScript expression) holds."""
    page.wait_for_function(f"() => !document.querySelector('[data-ended]').hidden || ({condition})", timeout=WAIT)


def floor_open(choice: str) -> str:
    panel = "document.querySelector('[data-floor]')"
    return f"!{panel}.hidden && !document.querySelector('[data-floor-choice={choice}]').hidden"


def answer_questions(page) -> None:
    page.get_by_role("link", name="Continue to the questions").click()
    for goal in page.locator("input[name^='goal-'][value='yes']").all():
        goal.check()
    for name in ["goal", "unresolved_confusion", "mutual_understanding"]:
        page.locator(f"input[name='{name}'][value='4']").check()
    page.get_by_role("button", name="Submit my answers").click()


def test_participant_mediates_a_negotiation_to_the_end(asgi_page, screenshot):
    from playwright.sync_api import expect

    study = negotiation_study(
        mediating=True, turn_cap=8, intervene_window=3, slug="hmo-mediator", completion_code="C0DE-MEDIATE"
    )
    page = asgi_page
    page.goto("/s/hmo-mediator/?PROLIFIC_PID=e2e-mediator")
    page.get_by_role("button", name="I agree to take part").click()

    rules = page.locator("[data-negotiation-rules]")
    expect(rules).to_contain_text("You are the mediator")
    expect(rules).to_contain_text("3 seconds")
    expect(page.get_by_role("heading", name="You are Mediator")).to_be_visible()
    screenshot(page, "negotiation-mediator-1-briefing")
    page.get_by_role("button", name="Start the conversation").click()

    # The mediator opens the meeting.
    message = page.locator("[data-message]")
    expect(page.locator("[data-turn-state]")).to_have_text("Your turn.", timeout=WAIT)
    expect(message).to_be_enabled()
    message.fill("Welcome, everyone. Let's start with the market share tiers.")
    message.press("Enter")
    log = page.locator("[data-log] > li")
    expect(log).to_have_count(1)
    expect(message).to_be_disabled()

    # A party answers; then the choice: let them continue once.
    ended_or(page, floor_open("continue"))
    expect(page.locator("[data-floor-text]")).to_have_text("Do you want to step in now, or let the parties continue?")
    expect(page.locator("[data-floor-countdown]")).to_contain_text("s left")
    expect(page.get_by_role("button", name="I want to speak")).to_be_hidden()
    screenshot(page, "negotiation-mediator-2-window")
    page.get_by_role("button", name="Let them continue").click()
    expect(page.locator("[data-floor]")).to_be_hidden()

    # The next choice: intervene, then write.
    ended_or(page, floor_open("intervene"))
    page.get_by_role("button", name="Intervene").click()
    expect(message).to_be_enabled()
    message.fill("Let me step in: Lee, what would the HMO need on price?")
    message.press("Enter")
    expect(page.get_by_text("Let me step in: Lee")).to_be_visible()
    expect(message).to_be_disabled()

    # After that, silence: every window runs out and the parties go on to the cap.
    ended = page.locator("[data-ended]")
    expect(ended).to_be_visible(timeout=3 * WAIT)
    screenshot(page, "negotiation-mediator-3-ended")
    answer_questions(page)
    expect(page.get_by_text("C0DE-MEDIATE")).to_be_visible()

    participant = Participant.objects.get(study=study, participant_id="e2e-mediator")
    episode = participant.episode
    assert participant.stage == Participant.Stage.DONE and episode.status == Episode.Status.FINISHED
    mediator = episode.seats.get(player="human").pk
    speakers = list(episode.turns.order_by("index").values_list("seat_id", flat=True))
    assert len(speakers) == 8 and speakers[0] == mediator
    assert all(a != b for a, b in pairwise(speakers))
    decisions = list(MediatorDecision.objects.filter(episode=episode).order_by("after_index"))
    assert [d.after_index for d in decisions] == [i for i, seat in enumerate(speakers[:-1]) if seat != mediator]
    assert all(d.by == "human" and d.decided_ms is not None and d.decided_at for d in decisions)
    chosen = [d for d in decisions if d.reason != "window closed"]
    assert [d.engaged for d in chosen] == [False, True]
    assert all(d.decided_ms < 3000 for d in chosen)
    assert chosen[1].turn.content == "Let me step in: Lee, what would the HMO need on price?"
    assert {d.decided_ms for d in decisions if d.reason == "window closed"} == {3000}


def test_participant_negotiates_as_a_party_to_the_end(asgi_page, screenshot):
    from playwright.sync_api import expect

    study = negotiation_study(
        mediating=False, turn_cap=8, claim_window=3, slug="hmo-party", completion_code="C0DE-PARTY"
    )
    page = asgi_page
    page.goto("/s/hmo-party/?PROLIFIC_PID=e2e-party")
    page.get_by_role("button", name="I agree to take part").click()

    rules = page.locator("[data-negotiation-rules]")
    expect(rules).to_contain_text("I want to speak")
    expect(page.get_by_role("heading", name="You are Alex")).to_be_visible()
    expect(page.get_by_text("Close the deal and secure market share for Profelice.", exact=True)).to_be_visible()
    expect(page.get_by_text("Opinions", exact=False).first).to_be_visible()  # their private brief, opinions included
    screenshot(page, "negotiation-party-1-briefing")
    page.get_by_role("button", name="Start the conversation").click()

    # The mediator (an agent) opens; then the floor opens to the participant, who claims it.
    log = page.locator("[data-log] > li")
    expect(log.first.locator(".chat-msg__speaker")).to_have_text("Mediator", timeout=WAIT)
    ended_or(page, floor_open("claim"))
    expect(page.locator("[data-floor-text]")).to_have_text("The floor is open. Do you want to speak next?")
    expect(page.get_by_role("button", name="Intervene")).to_be_hidden()
    screenshot(page, "negotiation-party-2-window")
    page.get_by_role("button", name="I want to speak").click()
    message = page.locator("[data-message]")
    expect(message).to_be_enabled()
    expect(page.locator("[data-turn-state]")).to_have_text("Your turn.")
    message.fill("Alex here: we can offer option (b) on the tiers.")
    message.press("Enter")
    expect(log.nth(1)).to_have_class(re.compile("chat-msg--you"))
    expect(message).to_be_disabled()

    # Later floors: let them pass; the others speak until the cap.
    ended = page.locator("[data-ended]")
    expect(ended).to_be_visible(timeout=3 * WAIT)
    screenshot(page, "negotiation-party-3-ended")
    answer_questions(page)
    expect(page.get_by_text("C0DE-PARTY")).to_be_visible()

    participant = Participant.objects.get(study=study, participant_id="e2e-party")
    episode = participant.episode
    assert participant.stage == Participant.Stage.DONE and episode.status == Episode.Status.FINISHED
    me = episode.seats.get(player="human")
    mediator = episode.seats.get(character__first_name="Mediator").pk
    speakers = list(episode.turns.order_by("index").values_list("seat_id", flat=True))
    assert len(speakers) == 8 and speakers[0] == mediator and speakers[1] == me.pk
    assert speakers.count(me.pk) == 1  # only the claimed floor
    assert all(a != b for a, b in pairwise(speakers))
    claim = PartyThought.objects.get(episode=episode, seat=me)
    assert (claim.after_index, claim.rating, claim.spoken) == (0, 5.0, True)
    decisions = MediatorDecision.objects.filter(episode=episode)
    assert sorted(decisions.values_list("after_index", flat=True)) == [
        i for i, seat in enumerate(speakers[:-1]) if seat != mediator
    ]
