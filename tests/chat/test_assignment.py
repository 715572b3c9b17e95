"""Balanced assignment: the cell furthest below target, ties at random, no overfilling, episodes as agreed."""

import random
from collections import Counter
from datetime import timedelta
from functools import partial

import pytest
from django.utils import timezone

from benchmark.agents import llm
from benchmark.models import Episode, Seat
from chat.assignment import Cell, StudyFull, assign, choose_cell, design_cells
from chat.models import ChatCondition, Participant
from tests.builders import get_barrier, make_scenario
from tests.chat.builders import make_chat_study, make_participant
from tests.concurrency import at_once

STAGE = Participant.Stage


def cell(target, finished=0, in_progress=0, name="x"):
    return Cell(scenario=name, barrier=name, target=target, finished=finished, in_progress=in_progress)


def arrive(study, participant_id):
    return assign(Participant.objects.create(study=study, participant_id=participant_id))


def cell_counts(study):
    assigned = Participant.objects.filter(study=study, scenario__isnull=False)
    return Counter((p.scenario_id, p.barrier_id) for p in assigned)


# Choosing


def test_the_cell_furthest_below_its_target_is_chosen():
    cells = [cell(3, finished=2, name="a"), cell(3, finished=0, name="b"), cell(3, in_progress=1, name="c")]

    assert choose_cell(cells).scenario == "b"


def test_ties_are_broken_at_random():
    cells = [cell(2, name=name) for name in "abcd"]

    chosen = {choose_cell(cells, random.Random(seed)).scenario for seed in range(40)}

    assert chosen == set("abcd")


def test_a_design_with_every_cell_at_target_is_full():
    with pytest.raises(StudyFull):
        choose_cell([cell(1, finished=1), cell(2, finished=1, in_progress=1)])


# Counting


@pytest.mark.django_db
def test_finished_and_active_participants_hold_their_place_but_idle_ones_do_not():
    study = make_chat_study(scenarios=1, conditions=["none"], target=5)
    make_participant(study, stage=STAGE.DONE)
    make_participant(study, stage=STAGE.QUESTIONNAIRE)
    make_participant(study, stage=STAGE.CHAT)
    make_participant(study, stage=STAGE.BRIEFING)
    make_participant(
        study, stage=STAGE.CHAT, last_seen_at=timezone.now() - timedelta(seconds=study.inactivity_timeout + 1)
    )

    (only,) = design_cells(study)

    assert (only.finished, only.in_progress, only.stalled, only.target) == (2, 2, 1, 5)
    assert only.shortfall == 1


@pytest.mark.django_db
def test_declined_and_unconsented_participants_hold_no_place():
    study = make_chat_study(scenarios=1, conditions=["none"], target=1)
    make_participant(study, stage=STAGE.DECLINED)
    make_participant(study, stage=STAGE.CONSENT)

    assert design_cells(study)[0].counted == 0


@pytest.mark.django_db
def test_conditions_with_target_zero_are_not_part_of_the_design():
    study = make_chat_study(scenarios=2, conditions=["none"], target=1)
    ChatCondition.objects.create(study=study, barrier=get_barrier("semantic"), target=0)

    assert {c.barrier.key for c in design_cells(study)} == {"none"}
    assert len(design_cells(study)) == 2


# Filling the design


@pytest.mark.django_db
def test_cells_fill_evenly_over_many_arrivals():
    study = make_chat_study(scenarios=3, conditions=["none", "semantic"], target=3)

    for round_number in range(1, 4):
        for number in range(6):
            arrive(study, f"r{round_number}-{number}")
        assert sorted(cell_counts(study).values()) == [round_number] * 6

    with pytest.raises(StudyFull):
        arrive(study, "one-too-many")


@pytest.mark.django_db
def test_unequal_targets_are_each_met_exactly():
    study = make_chat_study(scenarios=1, conditions=["none"], target=4)
    ChatCondition.objects.create(study=study, barrier=get_barrier("emotional"), target=1)

    for number in range(5):
        arrive(study, f"p{number}")

    assert Counter(p.barrier.key for p in Participant.objects.select_related("barrier")) == {"none": 4, "emotional": 1}


@pytest.mark.django_db
def test_a_place_left_by_an_idle_participant_is_offered_again():
    study = make_chat_study(scenarios=1, conditions=["none"], target=1)
    make_participant(study, stage=STAGE.BRIEFING, last_seen_at=timezone.now() - timedelta(hours=2))

    newcomer = arrive(study, "newcomer")

    assert newcomer.stage == STAGE.BRIEFING


@pytest.mark.django_db
def test_a_full_study_leaves_the_participant_at_consent_with_no_episode():
    study = make_chat_study(scenarios=1, conditions=["none"], target=1)
    make_participant(study, stage=STAGE.DONE)
    participant = Participant.objects.create(study=study, participant_id="late")

    with pytest.raises(StudyFull):
        assign(participant)

    participant.refresh_from_db()
    assert (participant.stage, participant.episode_id, participant.scenario_id) == (STAGE.CONSENT, None, None)
    assert Episode.objects.count() == 1


@pytest.mark.django_db
def test_assigning_an_assigned_participant_again_changes_nothing():
    study = make_chat_study(scenarios=2, conditions=["none", "semantic"], target=2)
    participant = arrive(study, "double-click")

    again = assign(Participant.objects.get(pk=participant.pk))

    assert again.episode_id == participant.episode_id
    assert Episode.objects.count() == 1


# The episode


@pytest.mark.django_db
def test_the_episode_follows_the_chat_contract():
    study = make_chat_study(
        slug="contract", scenarios=1, conditions=["semantic"], human_position=1, turn_cap=14,
        partner_strategy=Seat.Strategy.REPAIR, agent_model="openai/some-model",
    )

    episode = arrive(study, "p").episode

    assert (episode.source, episode.status, episode.turn_cap) == (Episode.Source.HUMAN_CHAT, Episode.Status.PENDING, 14)
    assert episode.tag == "chat:contract"
    seed = episode.settings.pop("seed")  # drawn per episode: it draws a random speaking order
    assert isinstance(seed, int) and 0 <= seed < 2**31
    assert episode.settings == {"chat_study": "contract", "temperature": 0.7}
    assert episode.barrier.key == "semantic"
    agent, human = episode.seats.order_by("position")
    assert (agent.position, agent.player, agent.model, agent.carries_barrier) == (
        0, Seat.Player.AGENT, "openai/some-model", True
    )
    assert (human.position, human.player, human.model, human.carries_barrier, human.strategy) == (
        1, Seat.Player.HUMAN, "", False, Seat.Strategy.REPAIR
    )


@pytest.mark.django_db
def test_the_participant_can_take_the_first_seat():
    study = make_chat_study(scenarios=1, conditions=["none"], human_position=0)

    human, agent = arrive(study, "p").episode.seats.order_by("position")

    assert human.player == Seat.Player.HUMAN and not human.carries_barrier
    assert agent.player == Seat.Player.AGENT and agent.carries_barrier


@pytest.mark.django_db
def test_a_blank_agent_model_uses_the_configured_one(settings):
    settings.PARLEY_MODELS = {**settings.PARLEY_MODELS, "agent": "openai/configured"}
    study = make_chat_study(scenarios=1, conditions=["none"], agent_model="")

    agent = arrive(study, "p").episode.seats.get(player=Seat.Player.AGENT)

    assert agent.model == "openai/configured"


@pytest.mark.django_db
def test_without_any_configuration_the_agent_is_the_scripted_model(settings):
    settings.PARLEY_MODELS = {**settings.PARLEY_MODELS, "agent": ""}
    study = make_chat_study(scenarios=1, conditions=["none"], agent_model="")

    assert arrive(study, "p").episode.seats.get(player=Seat.Player.AGENT).model == llm.SCRIPTED


@pytest.mark.django_db
def test_a_scenario_with_three_roles_puts_agents_in_both_other_seats():
    scenario = make_scenario(roles=3, turn_cap=9)
    study = make_chat_study(scenarios=[scenario], conditions=["none"], human_position=2, agent_model="scripted")

    episode = arrive(study, "p").episode

    seats = list(episode.seats.order_by("position"))
    assert [(s.position, s.player, s.model) for s in seats] == [
        (0, Seat.Player.AGENT, "scripted"), (1, Seat.Player.AGENT, "scripted"), (2, Seat.Player.HUMAN, ""),
    ]
    assert episode.turn_cap == 9  # the scenario's own cap wins over the study's


@pytest.mark.django_db
def test_a_scenario_without_the_participants_role_cannot_be_chatted():
    study = make_chat_study(scenarios=[make_scenario(roles=2)], conditions=["none"], human_position=2)

    with pytest.raises(ValueError, match="at least two, one of them at the participant's position 2"):
        arrive(study, "p")
    assert not Episode.objects.exists()


# Concurrent arrivals


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_concurrent_arrivals_never_overfill_a_cell():
    study = make_chat_study(scenarios=2, conditions=["none", "semantic"], target=2)  # 8 places
    participants = [Participant.objects.create(study=study, participant_id=f"rush-{n}") for n in range(12)]

    outcomes = at_once(*(partial(assign_or_full, participant) for participant in participants))

    assert Counter(outcomes) == {"assigned": 8, "full": 4}
    assert sorted(cell_counts(study).values()) == [2, 2, 2, 2]
    assert Episode.objects.count() == 8


def assign_or_full(participant):
    try:
        assign(participant)
    except StudyFull:
        return "full"
    return "assigned"


@pytest.mark.django_db
def test_each_agent_seat_gets_the_model_the_study_names_for_it():
    scenario = make_scenario(roles=[{"communication": "sender"}, {}, {}])
    study = make_chat_study(
        scenarios=[scenario], conditions=["none"], human_position=1, agent_model="scripted",
        seat_models="sender=openai/strong-model",
    )

    episode = arrive(study, "p").episode

    assert list(episode.seats.order_by("position").values_list("position", "model")) == [
        (0, "openai/strong-model"), (1, ""), (2, "scripted")
    ]
