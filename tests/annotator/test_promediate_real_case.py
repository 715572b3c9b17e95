"""ProMediate's annotator side on a real case, played and judged offline: the HMO case imported from the shared
data, one scripted run with the generic mediator, the scripted evaluation pass, then a per-intervention and a
snippet study made from that episode, one item page of each, and the human-validation numbers over them."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator import drafts
from annotator.forms import create_study
from annotator.item_page import ItemPage
from annotator.models import Assignment
from annotator.reports.promediate_validation import validation_of_episodes
from annotator.windows import INTERVENTION_PRESET
from benchmark.instruments.interventions import intervention_turns, mediator_position
from benchmark.models import Episode
from benchmark.results.promediate.build import human_validation as results_human_validation
from tests.annotator.builders import add_annotators
from tests.benchmark.import_checks import import_file
from tests.builders import default_team

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

HMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "promediate" / "hmo.json"
DIMENSIONS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def claim(item, annotator):
    return Assignment.objects.create(
        item=item, annotator=annotator, claimed_at="2025-01-01T00:00:00Z", lease_expires_at="2999-01-01T00:00:00Z"
    )


def test_a_played_and_judged_hmo_negotiation_gives_intervention_and_snippet_items(client):
    import_file(HMO)
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command(
        "simulate",
        "--preset",
        "promediate",
        "--scenarios",
        "promediate-hmo",
        "--conditions",
        "promediate-competing",
        "--mediator",
        "generic",
        "--runs",
        "1",
        "--seed",
        "7",
        "--model",
        "scripted",
        "--run-name",
        "hmo-people",
        **quiet,
    )
    episode = Episode.objects.get(tag="hmo-people")
    call_command("evaluate", "--promediate", "--ids", str(episode.pk), "--judge-model", "scripted", **quiet)
    episodes = Episode.objects.filter(pk=episode.pk)
    interventions = [turn.index for turn in intervention_turns(episode)]
    assert interventions, "the scripted generic mediator intervenes every 8 party turns"

    mi = create_study(
        team=episode.team, title="MI", slug="mi", preset=INTERVENTION_PRESET, overlap=1, episodes=episodes
    )
    snippets = create_study(
        team=episode.team,
        title="S",
        slug="s",
        preset="promediate-snippets",
        overlap=1,
        episodes=episodes,
        snippets_per_episode=3,
        seed=11,
    )

    items = list(mi.items.order_by("position"))
    assert [item.target_turn for item in items] == interventions
    mediator = mediator_position(episode)
    spoken = list(episode.turns.filter(seat__position=mediator).values_list("index", flat=True))
    for item in items:
        assert item.first_turn == max(index for index in spoken if index < item.target_turn)
    assert snippets.items.count() == 3

    annotator = add_annotators(mi, 1)[0]
    add_annotators(snippets, [annotator])
    client.force_login(annotator)
    first = claim(items[0], annotator)
    page = client.get(reverse("annotator:item", args=[first.pk])).text
    assert page.count("turn--highlighted") == 1 and page.count("data-turn-rating") == 1
    assert "ProMediate: competing" not in page and "scripted" not in page.lower().split("</header>", 1)[-1]

    data = {f"answer-{key}-t{items[0].target_turn}": "3" for key in DIMENSIONS}
    drafts.submit(first, ItemPage(first).parse(data, complete=True), revision=0, seconds=30)
    for item in snippets.items.all():
        assignment = claim(item, annotator)
        page = client.get(reverse("annotator:item", args=[assignment.pk])).text
        assert "First excerpt" in page and "Second excerpt" in page
        parsed = ItemPage(assignment).parse({"answer-agreement_direction": "increased"}, complete=True)
        drafts.submit(assignment, parsed, revision=0, seconds=30)

    found = validation_of_episodes(episodes)

    assert found["snippets"]["no_trace"] == 0
    assert found["snippets"]["n"] + found["snippets"]["ties_excluded"] == 3
    assert found["interventions"]["judge"] == "scripted" and found["interventions"]["unjudged"] == 0
    assert found["interventions"]["n"] + found["interventions"]["not_applicable"] == 4
    assert found["studies"] == {"promediate-snippets": ["s"], INTERVENTION_PRESET: ["mi"], "promediate-quality": []}
    assert default_team() == episode.team
    assert results_human_validation(episodes) == found  # the results report's section reads these numbers
