"""ProMediate items that show a window of an episode (``annotator.windows``): one per mediator intervention,
or two snippets of the same episode; what the item page shows of them, and what their answers are about."""

import random

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils.html import escape

from annotator import drafts
from annotator.exports import records
from annotator.external_ratings import RatingsRefused, import_ratings_text
from annotator.forms import StudyForm, create_study
from annotator.item_page import ItemPage
from annotator.models import Annotation, Assignment, StudyItem
from annotator.reports import build_report
from annotator.windows import (
    INTERVENTION_PRESET,
    InterventionWindow,
    Window,
    intervention_windows,
    snippet_windows,
)
from benchmark.instruments.presets import install_preset
from benchmark.instruments.targets import Target
from benchmark.models import Episode
from tests.annotator.builders import add_annotators
from tests.annotator.negotiation import MEDIATOR_MODEL, competing_mode, make_negotiation
from tests.builders import default_team, make_researcher

DIMENSIONS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")

# ----- choosing windows (pure)


def test_one_window_per_intervention_from_the_previous_mediator_turn():
    windows = intervention_windows(range(11), [0, 4, 8], [4, 8])

    assert [(shown.window, shown.target) for shown in windows] == [(Window(0, 4), 4), (Window(4, 8), 8)]


def test_without_an_earlier_mediator_turn_the_window_starts_with_the_episode():
    assert intervention_windows(range(6), [3], [3]) == [InterventionWindow(Window(0, 3), 3)]
    assert intervention_windows(range(5), [], []) == []


def test_a_fixed_context_shows_that_many_turns_before_the_intervention():
    windows = intervention_windows(range(11), [0, 4, 8], [4, 8], context=2)

    assert [shown.window for shown in windows] == [Window(2, 4), Window(6, 8)]
    assert intervention_windows(range(11), [0, 2], [2], context=5)[0].window == Window(0, 2)  # cut at the start


def test_a_mediator_turn_outside_the_episode_is_refused():
    with pytest.raises(ValueError, match="mediator turn 12 is not a turn of the episode"):
        intervention_windows(range(11), [0, 12], [12])


def test_snippets_do_not_overlap_come_in_order_and_have_the_length_asked():
    pairs = snippet_windows(range(40), length=6, count=5, rng=random.Random(3))

    assert len(pairs) == 5 and pairs == sorted(pairs, key=lambda pair: (pair[0].first, pair[1].first))
    for first, second in pairs:
        assert first.length == second.length == 6
        assert first.last < second.first


def test_snippets_are_reproducible_from_the_seed_and_vary_with_it():
    draw = [snippet_windows(range(40), count=3, rng=random.Random(seed)) for seed in (7, 7, 8)]

    assert draw[0] == draw[1]
    assert draw[0] != draw[2]


def test_a_short_episode_gives_every_pair_or_none():
    assert snippet_windows(range(12), length=6, count=4, rng=random.Random(0)) == [(Window(0, 5), Window(6, 11))]
    assert snippet_windows(range(11), length=6, rng=random.Random(0)) == []


# ----- making and storing items


@pytest.fixture
def intervention_instrument(db):
    return install_preset(INTERVENTION_PRESET)


@pytest.mark.django_db
def test_a_per_intervention_study_has_one_item_per_intervention(intervention_instrument):
    episodes = [make_negotiation(), make_negotiation("MAJLAJ")]  # the second has no intervention

    study = create_study(
        team=default_team(),
        title="MI",
        slug="mi",
        preset=INTERVENTION_PRESET,
        episodes=episodes[0].__class__.objects.filter(pk__in=[e.pk for e in episodes]),
        seed=1,
    )

    items = list(study.items.order_by("position").values_list("episode_id", "first_turn", "last_turn", "target_turn"))
    assert items == [(episodes[0].pk, 0, 4, 4), (episodes[0].pk, 4, 8, 8)]


@pytest.mark.django_db
def test_a_snippet_study_draws_seeded_pairs_from_each_episode():
    episode = make_negotiation("MAJL" * 8)
    episodes = episode.__class__.objects.filter(pk=episode.pk)

    made = [
        create_study(
            team=default_team(),
            title=f"S{n}",
            slug=f"s{n}",
            preset="promediate-snippets",
            episodes=episodes,
            seed=5,
            snippet_length=4,
            snippets_per_episode=3,
        )
        for n in range(2)
    ]

    windows = [
        list(
            study.items.order_by("position").values_list(
                "first_turn", "last_turn", "second_first_turn", "second_last_turn"
            )
        )
        for study in made
    ]
    assert windows[0] == windows[1] and len(windows[0]) == 3
    assert all(last - first == 3 and second_first > last for first, last, second_first, _ in windows[0])


@pytest.mark.django_db
def test_the_database_allows_many_windows_of_an_episode_but_one_item_per_intervention(intervention_instrument):
    episode = make_negotiation()
    study = create_study(
        team=default_team(),
        title="MI",
        slug="mi",
        preset=INTERVENTION_PRESET,
        episodes=episode.__class__.objects.filter(pk=episode.pk),
    )

    with pytest.raises(IntegrityError), transaction.atomic():
        StudyItem.objects.create(study=study, episode=episode, position=9, first_turn=2, last_turn=4, target_turn=4)
    with pytest.raises(IntegrityError), transaction.atomic():  # the target must be inside the window
        StudyItem.objects.create(study=study, episode=episode, position=9, first_turn=0, last_turn=3, target_turn=10)
    with pytest.raises(IntegrityError), transaction.atomic():  # the second snippet must come after the first
        StudyItem.objects.create(
            study=study, episode=episode, position=9, first_turn=3, last_turn=6, second_first_turn=5, second_last_turn=8
        )
    StudyItem.objects.create(study=study, episode=episode, position=9)  # the whole episode, as before
    with pytest.raises(IntegrityError), transaction.atomic():
        StudyItem.objects.create(study=study, episode=episode, position=10)


@pytest.mark.django_db
def test_the_study_form_refuses_episodes_without_an_intervention(intervention_instrument):
    make_negotiation("MAJLAJL")
    researcher = make_researcher()
    form = StudyForm(
        data={
            "team": default_team().pk,
            "title": "MI",
            "slug": "mi",
            "preset": INTERVENTION_PRESET,
            "overlap": 1,
            "lease_minutes": 60,
            "min_seconds_per_item": 0,
            "status": "finished",
            "gold_items": 0,
            "attention_items": 0,
            "snippet_length": 6,
            "snippets_per_episode": 1,
        },
        user=researcher,
    )

    assert not form.is_valid()
    assert "has a mediator intervention after the welcome" in str(form.errors)


# ----- the item page


@pytest.fixture
def intervention_study(intervention_instrument):
    episode = make_negotiation(mediator_name="Dr Planted Persona")
    study = create_study(
        team=default_team(),
        title="MI",
        slug="mi",
        preset=INTERVENTION_PRESET,
        episodes=episode.__class__.objects.filter(pk=episode.pk),
        overlap=1,
    )
    add_annotators(study, 1)
    return study


def claim(study, position=0):
    item = study.items.get(position=position)
    return Assignment.objects.create(
        item=item,
        annotator=study.annotators.first(),
        claimed_at="2025-01-01T00:00:00Z",
        lease_expires_at="2999-01-01T00:00:00Z",
    )


def test_the_page_shows_the_window_highlights_the_intervention_and_hides_the_condition(client, intervention_study):
    assignment = claim(intervention_study, position=1)  # turns 4..8, the intervention at 8
    client.force_login(assignment.annotator)

    page = client.get(reverse("annotator:item", args=[assignment.pk])).text

    transcript = page[page.index('class="transcript') : page.index("</ol>")]
    assert [f"line {index}." in transcript for index in range(11)] == [index in range(4, 9) for index in range(11)]
    highlighted = transcript[transcript.index("turn--highlighted") :]
    assert "Mediator says line 8." in highlighted and "The message you rate" in highlighted
    assert 'name="answer-perception_alignment-t8"' in page
    assert "-t4" not in page  # the earlier mediator turn is context, not rated
    assert "Dr Planted Persona" not in page  # the mediator is "Mediator", whoever plays it
    mode = competing_mode()
    for hidden in (escape(mode.name), mode.key, escape(mode.definition), MEDIATOR_MODEL, "planted-party-model"):
        assert hidden not in page


def test_submitted_answers_are_about_the_intervention_and_not_applicable_has_no_number(intervention_study):
    assignment = claim(intervention_study, position=0)
    page = ItemPage(assignment)
    data = {
        "answer-perception_alignment-t4": "4",
        "answer-emotional_dynamics-t4": "na",
        "answer-cognitive_challenges-t4": "3",
        "answer-communication_breakdowns-t4": "5",
    }

    drafts.submit(assignment, page.parse(data, complete=True), revision=0, seconds=30)

    annotation = Annotation.objects.get(assignment=assignment, status=Annotation.Status.SUBMITTED)
    stored = {
        (answer.question.key, Target.of(answer)): (answer.value, answer.number)
        for answer in annotation.response.answers.all()
    }
    assert stored == {
        ("perception_alignment", Target.of_turn(4)): ("4", 4),
        ("emotional_dynamics", Target.of_turn(4)): ("na", None),
        ("cognitive_challenges", Target.of_turn(4)): ("3", 3),
        ("communication_breakdowns", Target.of_turn(4)): ("5", 5),
    }


@pytest.mark.django_db
def test_only_the_quality_instrument_names_the_conflict_mode(client):
    episode = make_negotiation()
    quality = create_study(
        team=default_team(),
        title="Q",
        slug="q",
        preset="promediate-quality",
        overlap=1,
        episodes=episode.__class__.objects.filter(pk=episode.pk),
    )
    snippets = create_study(
        team=default_team(),
        title="S",
        slug="s",
        preset="promediate-snippets",
        overlap=1,
        episodes=episode.__class__.objects.filter(pk=episode.pk),
        snippet_length=3,
    )
    annotator = add_annotators(quality, 1)[0]
    add_annotators(snippets, [annotator])
    client.force_login(annotator)

    pages = {
        study.slug: client.get(reverse("annotator:item", args=[claim(study).pk])).text for study in (quality, snippets)
    }

    mode = competing_mode()
    assert f"Conflict style: {escape(mode.name)}" in pages["q"] and escape(mode.definition) in pages["q"]
    assert escape(mode.name) not in pages["s"] and escape(mode.definition) not in pages["s"]
    assert "First excerpt" in pages["s"] and "Second excerpt" in pages["s"]


def test_the_agreement_report_rates_each_intervention_as_its_own_unit(intervention_study):
    intervention_study.overlap = 2
    intervention_study.save()
    annotators = [intervention_study.annotators.first(), *add_annotators(intervention_study, 1)]
    for annotator in annotators:
        for item in intervention_study.items.all():
            assignment = Assignment.objects.create(
                item=item,
                annotator=annotator,
                claimed_at="2025-01-01T00:00:00Z",
                lease_expires_at="2999-01-01T00:00:00Z",
            )
            turn = item.target_turn
            data = {f"answer-{key}-t{turn}": "na" if key == "emotional_dynamics" else "4" for key in DIMENSIONS}
            drafts.submit(assignment, ItemPage(assignment).parse(data, complete=True), revision=0, seconds=30)

    report = build_report(intervention_study, resamples=20)

    rated = report["questions"]["perception_alignment"]
    assert rated["question"]["unit"] == "item:turn"
    assert (rated["n_items"], rated["n_ratings"], rated["percent_agreement"]) == (2, 4, 1.0)
    assert report["questions"]["emotional_dynamics"]["n_ratings"] == 0  # "not applicable" has no number to agree on


@pytest.mark.django_db
def test_the_dashboard_names_the_turns_each_item_shows(client, intervention_instrument):
    episode = make_negotiation()
    researcher = make_researcher()
    study = create_study(
        team=default_team(),
        title="MI",
        slug="mi",
        preset=INTERVENTION_PRESET,
        episodes=Episode.objects.filter(pk=episode.pk),
    )
    client.force_login(researcher)

    page = client.get(reverse("annotator:dashboard", args=[study.slug])).text

    assert "(turns 1–5, rating turn 5)" in page and "(turns 5–9, rating turn 9)" in page


@pytest.mark.django_db
def test_a_ratings_file_cannot_name_one_of_several_excerpts_of_an_episode(intervention_study):
    episode = intervention_study.items.first().episode
    text = f"episode_id,annotator_id,question,value\n{episode.external_id},r1,perception_alignment,4\n"

    with pytest.raises(RatingsRefused) as refused:
        import_ratings_text(text, file="ratings.csv", study=intervention_study)

    assert "is in 2 items of study 'mi'" in str(refused.value)


def test_the_export_says_which_turns_each_item_showed(intervention_study):
    for item in intervention_study.items.all():
        assignment = claim(intervention_study, position=item.position)
        data = {f"answer-{key}-t{item.target_turn}": "3" for key in DIMENSIONS}
        drafts.submit(assignment, ItemPage(assignment).parse(data, complete=True), revision=0, seconds=30)

    rows = list(records(intervention_study))

    assert {(row["item"], row["excerpt"]) for row in rows} == {(1, "0-4"), (2, "4-8")}


@pytest.mark.django_db
def test_the_study_form_makes_items_with_a_fixed_context(intervention_instrument):
    make_negotiation()
    data = {
        "team": default_team().pk,
        "title": "MI",
        "slug": "mi",
        "preset": INTERVENTION_PRESET,
        "overlap": 1,
        "lease_minutes": 60,
        "min_seconds_per_item": 0,
        "status": "finished",
        "gold_items": 0,
        "attention_items": 0,
        "context_turns": 2,
        "snippet_length": 6,
        "snippets_per_episode": 1,
        "instructions": "",
    }
    form = StudyForm(data=data, user=make_researcher())
    assert form.is_valid(), form.errors

    study = form.save()

    assert list(study.items.values_list("first_turn", "last_turn", "target_turn")) == [(2, 4, 4), (6, 8, 8)]
    assert "highlighted" in study.instructions  # the preset's own instructions
