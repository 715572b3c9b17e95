"""An annotator rating a mediator's intervention in a real browser (ProMediate, PM-16): the item shows the turns
since the mediator last spoke and then its message, highlighted; the four questions sit under that message,
each with "not applicable"; the annotator answers one dimension "not applicable" and submits. The stored answers
are about that turn, and the "not applicable" one has no number. Screenshots go to var/screenshots/annotation/.
"""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.forms import create_study
from annotator.models import Annotation
from annotator.windows import INTERVENTION_PRESET
from benchmark.instruments.targets import Target
from benchmark.models import Episode
from tests.annotator.builders import add_annotators
from tests.annotator.negotiation import MEDIATOR_MODEL, competing_mode, make_negotiation
from tests.builders import default_team, make_user
from tests.e2e.test_annotation import log_in, wait_until_saved, window_shot

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

DIMENSIONS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")


def test_an_annotator_rates_an_intervention_with_one_dimension_not_applicable(browser_page):
    page = browser_page
    annotator = make_user(username="mina")
    episode = make_negotiation(mediator_name="Planted Mediator Persona")
    study = create_study(
        team=default_team(),
        title="Rate the mediator",
        slug="rate-the-mediator",
        preset=INTERVENTION_PRESET,
        episodes=Episode.objects.filter(pk=episode.pk),
        context_turns=None,
        overlap=1,
        seed=3,
    )
    study.items.exclude(target_turn=8).delete()  # one item: the intervention at turn 8, after turns 4–7
    add_annotators(study, [annotator])
    study.memberships.update(instructions_read_at="2025-01-01T00:00:00Z")
    log_in(page, annotator)
    page.goto(reverse("annotator:next", args=[study.slug]))

    transcript = page.locator("ol.transcript")
    expect(transcript.locator("li.turn")).to_have_count(5)  # the previous mediator turn (4) up to the message (8)
    expect(transcript).to_contain_text("Mediator says line 4.")
    expect(transcript).not_to_contain_text("line 3.")
    message = page.locator("[data-turn='8']")
    expect(message).to_have_class("turn turn--speak turn--highlighted")
    expect(message).to_contain_text("The message you rate")
    expect(message.locator(".turn__speaker")).to_have_text("Mediator")
    expect(page.locator("[data-turn-rating]")).to_have_count(1)  # only the intervention is rated
    expect(page.get_by_role("heading", name="Rate the highlighted message", level=2)).to_be_visible()
    for hidden in ("Planted Mediator Persona", competing_mode().name, MEDIATOR_MODEL):
        expect(page.locator("body")).not_to_contain_text(hidden)
    window_shot(page, "31-promediate-intervention", at=message)

    groups = message.get_by_role("radiogroup")
    expect(groups).to_have_count(4)
    groups.nth(0).get_by_role("radio", name="4", exact=True).check()
    groups.nth(1).get_by_role("radio", name="Not applicable").check()
    groups.nth(2).get_by_role("radio", name="3", exact=False).first.check()
    groups.nth(3).get_by_role("radio", name="5", exact=False).first.check()
    message.get_by_role("textbox").fill("Named the stalled issue and asked Lee directly.")
    wait_until_saved(page)
    window_shot(page, "32-promediate-intervention-answered", at=message)

    page.get_by_role("button", name="Submit and go to the next item").click()
    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()

    submitted = Annotation.objects.get(assignment__item__study=study, status=Annotation.Status.SUBMITTED)
    stored = {
        (answer.question.key, Target.of(answer)): (answer.value, answer.number)
        for answer in submitted.response.answers.all()
    }
    assert stored == {
        ("perception_alignment", Target.of_turn(8)): ("4", 4),
        ("emotional_dynamics", Target.of_turn(8)): ("na", None),
        ("cognitive_challenges", Target.of_turn(8)): ("3", 3),
        ("communication_breakdowns", Target.of_turn(8)): ("5", 5),
        ("comment", Target.of_turn(8)): ("Named the stalled issue and asked Lee directly.", None),
    }


def test_an_annotator_compares_two_snippets_and_rates_quality_seeing_the_mode(browser_page):
    page = browser_page
    annotator = make_user(username="otto")
    episode = make_negotiation("MAJL" * 4)
    episodes = Episode.objects.filter(pk=episode.pk)
    snippets = create_study(
        team=default_team(),
        title="Snippets",
        slug="snippets",
        preset="promediate-snippets",
        episodes=episodes,
        snippet_length=4,
        overlap=1,
        seed=4,
    )
    quality = create_study(
        team=default_team(),
        title="Quality",
        slug="quality",
        preset="promediate-quality",
        episodes=episodes,
        overlap=1,
    )
    for study in (snippets, quality):
        add_annotators(study, [annotator])
        study.memberships.update(instructions_read_at="2025-01-01T00:00:00Z")
    log_in(page, annotator)

    page.goto(reverse("annotator:next", args=[snippets.slug]))
    item = snippets.items.get()
    expect(page.get_by_role("heading", name="First excerpt")).to_be_visible()
    expect(page.get_by_role("heading", name="Second excerpt")).to_be_visible()
    expect(page.locator("ol.transcript").first.locator("li.turn")).to_have_count(4)
    expect(page.locator(f"[data-turn='{item.second_first_turn}']")).to_have_count(1)
    expect(page.locator("body")).not_to_contain_text(competing_mode().name)
    window_shot(page, "33-promediate-snippets")
    page.get_by_role("radio", name="Agreement grew").check()
    wait_until_saved(page)
    page.get_by_role("button", name="Submit and go to the next item").click()
    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()

    page.goto(reverse("annotator:next", args=[quality.slug]))
    expect(page.get_by_role("heading", name=f"Conflict style: {competing_mode().name}")).to_be_visible()
    window_shot(page, "34-promediate-quality")

    answered = Annotation.objects.get(assignment__item__study=snippets, status=Annotation.Status.SUBMITTED)
    assert [(a.question.key, a.value) for a in answered.response.answers.all()] == [
        ("agreement_direction", "increased")
    ]
