"""The human-validation numbers of ProMediate (PM-27) from annotations: κ of snippet directions against the
consensus trace, grouped accuracy of per-intervention scores against the J3 judge, quality means."""

import io

import pytest
from django.core.management import call_command

from annotator import drafts
from annotator.forms import create_study
from annotator.item_page import ItemPage
from annotator.models import Assignment, StudyItem
from annotator.reports.promediate_validation import (
    intervention_accuracy,
    overall_series,
    quality_means,
    snippet_agreement,
    team_validation,
    tracker_direction,
    validation_of_episodes,
)
from annotator.windows import INTERVENTION_PRESET
from benchmark.instruments.interventions import store_intervention_answers
from benchmark.instruments.presets import install_preset
from benchmark.models import Episode, PairAgreement, Respondent, Seat, Topic
from tests.annotator.builders import add_annotators, make_study
from tests.annotator.negotiation import make_negotiation
from tests.benchmark.promediate_world import negotiation_episode
from tests.builders import default_team

pytestmark = pytest.mark.django_db


def answer(study, annotator, item, data):
    """``annotator`` submits ``data`` (the posted form) for ``item`` through the item page, as the browser does."""
    assignment = Assignment.objects.create(
        item=item, annotator=annotator, claimed_at="2025-01-01T00:00:00Z", lease_expires_at="2999-01-01T00:00:00Z"
    )
    drafts.submit(assignment, ItemPage(assignment).parse(data, complete=True), revision=0, seconds=30)


def test_the_tracker_direction_is_the_sign_of_the_difference_of_window_means():
    overall = [0.0, 0.2, 0.2, 0.4, 0.6, 0.6, 0.6]  # point k + 1 follows turn k

    assert tracker_direction(overall, (0, 1), (3, 4)) == "increased"  # mean(0.2, 0.2) → mean(0.6, 0.6)
    assert tracker_direction(overall[::-1], (0, 1), (3, 4)) == "decreased"
    assert tracker_direction(overall, (3, 3), (4, 5)) is None  # 0.6 → 0.6: a tie


def scored(episode, point, value, judge="scripted"):
    """Every pair of parties scored ``value`` on the episode's one topic from ``point`` on."""
    topic = Topic.objects.get(scenario=episode.scenario)
    parties = list(Seat.objects.filter(episode=episode, position__gt=0).order_by("position"))
    for index, seat_a in enumerate(parties):
        for seat_b in parties[index + 1 :]:
            PairAgreement.objects.create(
                episode=episode,
                point=point,
                topic=topic,
                seat_a=seat_a,
                seat_b=seat_b,
                overall=value,
                judge=judge,
                prompt_version="v1",
            )


def test_snippet_kappa_per_pair_per_annotator_and_for_the_majority():
    episode = make_negotiation("MAJL" * 4)  # 16 turns; consensus 0 until turn 8, 1 after it, 0.5 after turn 13
    Topic.objects.create(scenario=episode.scenario, position=0, title="Price", options=[{"key": "a", "text": "A"}])
    scored(episode, 0, 0.0)
    scored(episode, 9, 1.0)
    scored(episode, 14, 0.5)
    study = make_study(instrument=install_preset("promediate-snippets"), items=[], overlap=2, annotators=2)
    windows = {"up": (0, 2, 10, 12), "down": (9, 10, 13, 15), "tie": (1, 2, 4, 5)}
    items = {
        name: StudyItem.objects.create(
            study=study,
            episode=episode,
            position=position,
            first_turn=first,
            last_turn=last,
            second_first_turn=second_first,
            second_last_turn=second_last,
        )
        for position, (name, (first, last, second_first, second_last)) in enumerate(windows.items())
    }
    first, second = study.annotators.order_by("pk")
    said = {"up": ("increased", "increased"), "down": ("decreased", "increased"), "tie": ("increased", "decreased")}
    for name, (one, other) in said.items():
        answer(study, first, items[name], {"answer-agreement_direction": one})
        answer(study, second, items[name], {"answer-agreement_direction": other})

    result = snippet_agreement([study])

    # (human, tracker): (inc, inc) ×2, (dec, dec), (inc, dec): p_o = 3/4, p_e = 3/4·1/2 + 1/4·1/2 = 1/2 → κ = 0.5
    assert (result["kappa"], result["n"], result["ties_excluded"], result["no_trace"]) == (0.5, 4, 2, 0)
    assert result["per_annotator"][f"a{first.pk}"]["kappa"] == 1.0
    assert result["per_annotator"][f"a{second.pk}"]["kappa"] == 0.0
    assert (result["majority"]["n"], result["majority"]["split"]) == (1, 1)  # "down" is split one to one
    assert result["majority"]["kappa"] is None  # one item: chance agreement is 1


def test_snippets_of_an_episode_without_a_trace_are_counted_not_compared():
    episode = make_negotiation("MAJL" * 4)
    study = make_study(instrument=install_preset("promediate-snippets"), items=[], overlap=1, annotators=1)
    item = StudyItem.objects.create(
        study=study, episode=episode, position=0, first_turn=0, last_turn=2, second_first_turn=5, second_last_turn=7
    )
    answer(study, study.annotators.get(), item, {"answer-agreement_direction": "increased"})

    result = snippet_agreement([study])

    assert (result["kappa"], result["n"], result["no_trace"]) == (None, 0, 1)


MI = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")


def form(turn, scores):
    return {
        f"answer-{key}-t{turn}": "na" if score is None else str(score) for key, score in zip(MI, scores, strict=True)
    }


def test_intervention_accuracy_exact_and_grouped_against_the_judge_with_not_applicable_left_out():
    episode = make_negotiation()  # interventions at turns 4 and 8
    study = create_study(
        team=default_team(),
        title="MI",
        slug="mi",
        preset=INTERVENTION_PRESET,
        overlap=1,
        episodes=Episode.objects.filter(pk=episode.pk),
    )
    annotator = add_annotators(study, 1)[0]
    answer(study, annotator, study.items.get(target_turn=4), form(4, (4, None, 3, 2)))
    answer(study, annotator, study.items.get(target_turn=8), form(8, (5, 5, 1, 3)))
    judge = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="scripted", prompt_version="v1")
    store_intervention_answers(episode, 4, judge, dict(zip(MI, (5, 3, 3, None), strict=True)))
    store_intervention_answers(episode, 8, judge, dict(zip(MI, (3, 5, 2, 4), strict=True)))

    result = intervention_accuracy([study])

    # pairs (human, judge): (4,5) (3,3) (5,3) (5,5) (1,2) (3,4); two pairs had "not applicable" on one side
    assert (result["n"], result["not_applicable"], result["unjudged"]) == (6, 2, 0)
    assert result["exact"] == pytest.approx(2 / 6)
    assert result["three_groups"] == pytest.approx(4 / 6)
    assert result["two_groups"] == 1.0
    assert result["per_dimension"]["perception_alignment"] == {
        "exact": 0.0,
        "three_groups": 0.5,
        "two_groups": 1.0,
        "n": 2,
    }
    assert (result["judge"], result["prompt_version"]) == ("scripted", "v1")


def test_quality_means_overall_and_per_conflict_mode():
    episodes = [make_negotiation(), make_negotiation()]
    study = create_study(
        team=default_team(),
        title="Q",
        slug="q",
        preset="promediate-quality",
        overlap=2,
        episodes=Episode.objects.filter(pk__in=[episode.pk for episode in episodes]),
    )
    first, second = add_annotators(study, 2)
    for item in study.items.all():
        answer(study, first, item, {"answer-naturalness": "4", "answer-mode_expression": "3"})
    answer(study, second, study.items.first(), {"answer-naturalness": "5", "answer-mode_expression": "5"})

    result = quality_means([study])

    assert result["naturalness"]["mean"] == pytest.approx(13 / 3) and result["naturalness"]["n"] == 3
    assert result["mode_expression"]["by_mode"] == {"promediate-competing": {"mean": pytest.approx(11 / 3), "n": 3}}
    assert team_validation(default_team())["quality"] == result
    assert validation_of_episodes(Episode.objects.filter(pk=episodes[1].pk))["quality"]["naturalness"] == {
        "mean": 4.0,
        "n": 1,
        "by_mode": {"promediate-competing": {"mean": 4.0, "n": 1}},
    }
    assert validation_of_episodes(Episode.objects.none()) is None


def test_the_checks_read_the_trace_and_the_judge_answers_the_scripted_pass_stored():
    episode = negotiation_episode()  # six turns; one intervention, at turn 3
    call_command(
        "evaluate", "--promediate", "--ids", str(episode.pk), "--judge-model", "scripted", stdout=io.StringIO()
    )
    episodes = Episode.objects.filter(pk=episode.pk)
    snippets = create_study(
        team=default_team(),
        title="S",
        slug="s",
        preset="promediate-snippets",
        overlap=1,
        episodes=episodes,
        snippet_length=3,
        seed=2,
    )
    mi = create_study(
        team=default_team(), title="MI", slug="mi", preset=INTERVENTION_PRESET, overlap=1, episodes=episodes
    )
    annotator = add_annotators(snippets, 1)[0]
    add_annotators(mi, [annotator])
    answer(snippets, annotator, snippets.items.get(), {"answer-agreement_direction": "increased"})
    answer(mi, annotator, mi.items.get(target_turn=3), form(3, (4, 4, 4, 4)))

    found = validation_of_episodes(episodes)

    overall = overall_series(episode)
    assert len(overall) == 7 and found["snippets"]["no_trace"] == 0  # windows 0–2 and 3–5: points 1–3 and 4–6
    expected = tracker_direction(overall, (0, 2), (3, 5))
    assert (found["snippets"]["n"], found["snippets"]["ties_excluded"]) == ((1, 0) if expected else (0, 1))
    judged = found["interventions"]
    assert judged["judge"] == "scripted" and judged["unjudged"] == 0
    assert judged["n"] + judged["not_applicable"] == 4
