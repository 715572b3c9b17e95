"""A participant in a three-party chat, in Chromium against daphne: names, the order of turns, waiting for
their turn, speaking, then AgentSense's human test (their own goal, the probes about the others) and the code.

The two other seats are the offline agent (one word every 0.25 s). The episode's seed is set right
after consent so the order is known: Ana greets, Cleo answers, then it is the participant's turn.
"""

from __future__ import annotations

import re

import pytest

from benchmark.models import Episode, Probe, Relationship, Response, TurnTaking
from benchmark.scenarios.turn_taking import next_speaker
from chat.models import ChatCondition, ChatStudy, Participant
from chat.questionnaire import default_instrument
from tests.builders import default_team, get_barrier, make_character, make_scenario, make_user

OPENING = [0, 2, 1]  # Ana's greeting, Cleo, the participant


def order(seed: int, length: int) -> list[int]:
    spoken: list[int] = []
    for _ in range(length):
        spoken.append(next_speaker(TurnTaking.RANDOM_AFTER_GREETING, [0, 1, 2], spoken, seed=seed, greeter=0))
    return spoken


@pytest.fixture
def study() -> ChatStudy:
    scenario = make_scenario(
        codename="summer-party",
        context="Three neighbours meet in the courtyard to plan the building's summer party.",
        relationship=Relationship.STRANGER,
        turn_taking=TurnTaking.RANDOM_AFTER_GREETING,
        greeter_position=0,
        turn_cap=9,
        roles=[
            {"goal": goal, "character": make_character(first_name=first, last_name=last)}
            for goal, first, last in [
                ("Hold the party on the roof terrace.", "Ana", "Ruiz"),
                ("Make sure the party ends before ten.", "Ben", "Osei"),
                ("Get the band booked.", "Cleo", "Park"),
            ]
        ],
    )
    roles = {role.position: role for role in scenario.roles.all()}
    Probe.objects.create(scenario=scenario, about=roles[0], position=0, topic=Probe.Topic.PRIVATE_INFO,
                         text="Why does Ana want the roof terrace?", options=["The view", "Her key to it", "Shade"],
                         correct=1)
    Probe.objects.create(scenario=scenario, about=roles[2], position=1, topic=Probe.Topic.GOAL,
                         text="What is Cleo after?", options=["A band", "A barbecue"], correct=0)
    study = ChatStudy.objects.create(
        team=default_team(), slug="summer-party", title="Planning a party", created_by=make_user(staff=True),
        agent_model="scripted", completion_code="C0DE-GROUP", human_position=1, min_participant_turns=1,
        instrument=default_instrument(),
    )
    study.scenarios.set([scenario])
    ChatCondition.objects.create(study=study, barrier=get_barrier("none"), target=1)
    return study


def test_participant_completes_a_three_party_chat(asgi_page, study, screenshot):
    from playwright.sync_api import expect

    page = asgi_page
    page.goto("/s/summer-party/?PROLIFIC_PID=e2e-group")
    page.get_by_role("button", name="I agree to take part").click()

    # Briefing: the others by name (a group chat names everyone), who opens.
    expect(page.get_by_text("Make sure the party ends before ten.")).to_be_visible()
    briefing = page.locator("main").inner_text()
    assert "Ana Ruiz" in briefing and "Cleo Park" in briefing
    assert "Ana Ruiz speaks first" in briefing
    assert "Hold the party on the roof terrace." not in briefing  # the others' goals stay theirs
    episode = Participant.objects.get(participant_id="e2e-group").episode
    seed = next(s for s in range(10_000) if order(s, 3) == OPENING)
    episode.settings = {**episode.settings, "seed": seed}
    episode.save(update_fields=["settings"])
    page.get_by_role("button", name="Start the conversation").click()

    # The agents speak first, one after the other; the box stays shut until it is the participant's turn.
    expect(page.locator("[data-order]")).to_be_visible()
    message = page.locator("[data-message]")
    expect(message).to_be_disabled()
    log = page.locator("[data-log] > li")
    expect(log).to_have_count(2, timeout=30_000)
    expect(log.nth(0).locator(".chat-msg__speaker")).to_have_text("Ana Ruiz")
    expect(log.nth(1).locator(".chat-msg__speaker")).to_have_text("Cleo Park")
    expect(log.nth(0)).to_have_class(re.compile("chat-voice-1"))
    expect(log.nth(1)).to_have_class(re.compile("chat-voice-2"))
    turn_state = page.locator("[data-turn-state]")
    expect(turn_state).to_have_text("Your turn.")
    expect(message).to_be_enabled()
    expect(page.locator("[data-order-list] > li").first).to_have_text("You (Ben Osei)")

    message.fill("Hello both! Could we keep it early, say until ten?")
    message.press("Enter")
    expect(log.nth(2)).to_have_class(re.compile("chat-msg--you"))
    expect(message).to_be_disabled()
    expect(turn_state).to_have_text(re.compile(r"(Ana Ruiz|Cleo Park) is typing…"))
    screenshot(page, "group-chat-1-waiting")

    # Speak whenever it is the participant's turn until the chat ends (an agent leaves or the cap).
    ended = page.locator("[data-ended]")
    for line in ["Ten works for me.", "Let's agree then.", "Great, see you there."]:
        page.wait_for_function(
            "() => !document.querySelector('[data-ended]').hidden"
            " || document.querySelector('[data-turn-state]').dataset.mine === 'true'",
            timeout=60_000,
        )
        if ended.is_visible():
            break
        message.fill(line)
        message.press("Enter")
        expect(page.get_by_text(line)).to_be_visible()
        page.wait_for_function("() => document.querySelector('[data-turn-state]').dataset.mine !== 'true'")
    expect(ended).to_be_visible(timeout=60_000)
    screenshot(page, "group-chat-2-ended")
    page.get_by_role("link", name="Continue to the questions").click()

    # The human test: their own goal, then the probes about the others (no option marked correct).
    expect(page.get_by_role("heading", name="Your goals")).to_be_visible()
    expect(page.get_by_text("Make sure the party ends before ten.")).to_be_visible()
    expect(page.get_by_text("Why does Ana want the roof terrace?")).to_be_visible()
    goal = Participant.objects.get(participant_id="e2e-group").episode.seats.get(position=1).role.goals.get()
    page.locator(f"input[name='goal-{goal.pk}'][value='yes']").check()
    page.locator("input[name='probe-probe_1'][value='1']").check()
    page.locator("input[name='probe-probe_2'][value='0']").check()
    for name in ["goal", "unresolved_confusion", "mutual_understanding"]:
        page.locator(f"input[name='{name}'][value='4']").check()
    screenshot(page, "group-chat-3-questions")
    page.get_by_role("button", name="Submit my answers").click()
    expect(page.get_by_text("C0DE-GROUP")).to_be_visible()

    participant = Participant.objects.get(participant_id="e2e-group")
    assert participant.stage == Participant.Stage.DONE
    episode = participant.episode
    assert episode.status == Episode.Status.FINISHED
    positions = list(episode.turns.order_by("index").values_list("seat__position", flat=True))
    assert positions == order(seed, len(positions))  # the policy's order, turn by turn
    assert positions.count(1) >= 2 and len(positions) <= 9
    responses = Response.objects.filter(episode=episode, seat_position=1).select_related("instrument")
    answers = {r.instrument.preset: sorted(r.answers.values_list("value", flat=True)) for r in responses}
    assert answers == {"agentsense-goals": ["yes"], "scenario-probes": ["0", "1"]}
