"""Balanced assignment: each consenting participant gets the design cell furthest below its target.

A chat study's design is a grid of cells, scenario × barrier condition, each wanting ``target``
participants. A participant counts towards their cell once they have finished chatting
(questionnaire or done), or while they are still on their way (briefing or chat) and have been
seen within the study's inactivity timeout; someone who wandered off stops holding a place, so
the cell is offered again, and so does someone screened out (they ended the chat before the
study's minimum of turns: ``chat.lifecycle``), whose chat does not count.

Assignment locks the study row (``select_for_update``) for the count-and-choose step, so two
participants arriving at the same moment are served one after the other and never overfill a
cell (SQLite has no row locks; there every transaction takes the database's write lock as it
begins, which serialises them the same way). Among cells equally far below target one is drawn
at random, so no scenario or condition is systematically filled first.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from benchmark.agents import llm
from benchmark.models import Barrier, Episode, Scenario, Seat
from benchmark.runs.simulation import create_episode
from benchmark.scenarios.turn_taking import turn_cap_for

from .models import DEFAULT_MEDIATOR, NO_MEDIATOR, ChatStudy, Participant
from .negotiation import HUMAN_POLICY, is_negotiation, mediator_position

FINISHED_STAGES = (Participant.Stage.QUESTIONNAIRE, Participant.Stage.DONE)
ON_THE_WAY_STAGES = (Participant.Stage.BRIEFING, Participant.Stage.CHAT)


class StudyFull(Exception):
    """Every cell of the design has reached its target."""


@dataclass
class Cell:
    """One scenario × condition cell of a design and how far it has come."""

    scenario: Scenario
    barrier: Barrier
    target: int
    finished: int = 0
    in_progress: int = 0
    stalled: int = 0
    screened_out: int = 0  # shown on the monitor; never counted

    @property
    def counted(self) -> int:
        """Participants holding a place in this cell."""
        return self.finished + self.in_progress

    @property
    def shortfall(self) -> int:
        return self.target - self.counted


def active_since(study: ChatStudy, now: datetime) -> datetime:
    """Participants on their way count only if seen after this moment."""
    return now - timedelta(seconds=study.inactivity_timeout)


def design_cells(study: ChatStudy, *, now: datetime | None = None) -> list[Cell]:
    """Every cell of the study's design (scenarios × conditions with a target above 0), with counts.

    One query for the design and one for the counts, however many participants. Participants in
    a cell that is no longer part of the design (a condition removed later) are not listed here.
    """
    now = now or timezone.now()
    scenarios = sorted(study.scenarios.all(), key=lambda s: (s.codename, s.pk))
    conditions = [c for c in study.conditions.select_related("barrier") if c.target > 0]
    conditions.sort(key=lambda c: (c.barrier.position, c.barrier.key))
    cells = {
        (scenario.pk, condition.barrier_id): Cell(scenario, condition.barrier, condition.target)
        for scenario in scenarios
        for condition in conditions
    }
    for row in _counts(study, now):
        cell = cells.get((row["scenario_id"], row["barrier_id"]))
        if cell is not None:
            cell.finished, cell.in_progress, cell.stalled = row["finished"], row["in_progress"], row["stalled"]
            cell.screened_out = row["screened_out"]
    return list(cells.values())


def _counts(study: ChatStudy, now: datetime) -> Iterable[dict]:
    since = active_since(study, now)
    on_the_way = Q(stage__in=ON_THE_WAY_STAGES)
    return (
        Participant.objects.filter(study=study, scenario__isnull=False)
        .values("scenario_id", "barrier_id")
        .annotate(
            finished=Count("pk", filter=Q(stage__in=FINISHED_STAGES)),
            in_progress=Count("pk", filter=on_the_way & Q(last_seen_at__gte=since)),
            stalled=Count("pk", filter=on_the_way & Q(last_seen_at__lt=since)),
            screened_out=Count("pk", filter=Q(stage=Participant.Stage.SCREENED_OUT)),
        )
        .order_by()
    )


def choose_cell(cells: list[Cell], rng: random.Random | None = None) -> Cell:
    """The cell furthest below its target (ties drawn at random); StudyFull when none is below."""
    open_cells = [cell for cell in cells if cell.shortfall > 0]
    if not open_cells:
        raise StudyFull
    widest = max(cell.shortfall for cell in open_cells)
    return (rng or random).choice([cell for cell in open_cells if cell.shortfall == widest])


def assign(participant: Participant, *, now: datetime | None = None, rng: random.Random | None = None) -> Participant:
    """Give a consenting participant their cell and episode, and move them on to the briefing.

    All or nothing, under a lock on the study row. A participant who already has a cell keeps it
    (pressing "I agree" twice changes nothing). Raises StudyFull, leaving the participant at the
    consent stage, when every cell has reached its target.
    """
    now = now or timezone.now()
    with transaction.atomic():
        study = ChatStudy.objects.select_for_update().get(pk=participant.study_id)
        current = Participant.objects.select_for_update().get(pk=participant.pk)
        if current.episode_id is None and current.stage == Participant.Stage.CONSENT:
            cell = choose_cell(design_cells(study, now=now), rng)
            current.scenario, current.barrier = cell.scenario, cell.barrier
            current.episode = create_chat_episode(study, cell.scenario, cell.barrier)
            current.stage = Participant.Stage.BRIEFING
            current.consented_at = now
            current.last_seen_at = now
            current.save(
                update_fields=["scenario", "barrier", "episode", "stage", "consented_at", "last_seen_at"]
            )
    current.study = study
    return current


def agent_positions(study: ChatStudy, scenario: Scenario) -> list[int]:
    """The seats agents play: every role of the scenario but the participant's (two roles or more)."""
    positions = sorted(scenario.roles.values_list("position", flat=True))
    if len(positions) < 2 or study.human_position not in positions:
        raise ValueError(
            f"Scenario {scenario} has roles {positions}; a chat needs at least two, one of them "
            f"at the participant's position {study.human_position}."
        )
    return [position for position in positions if position != study.human_position]


def agent_models(study: ChatStudy, scenario: Scenario, agents: list[int]) -> dict[int, str]:
    """Each agent seat's model: its position's entry in the study's seat models, else its role label's
    (sender or receiver), else the study's agent model, else the configured agent model."""
    chosen = study.seat_model_map()
    labels = dict(scenario.roles.values_list("position", "communication"))
    default = study.agent_model or llm.model_for("agent")
    return {
        position: chosen.get(str(position)) or chosen.get(labels.get(position) or "") or default
        for position in agents
    }


def create_chat_episode(study: ChatStudy, scenario: Scenario, barrier: Barrier) -> Episode:
    """The participant's episode: every agent seat carries the condition, the human seat is theirs.

    The turn cap is the scenario's own when it has one, else the study's; the seed that draws a
    random speaking order is drawn here and kept in the episode's settings, so every process (and
    a reconnecting page) agrees on who speaks when. A negotiation records its mediator condition as a
    simulated one does (``settings["promediate"]``); under ``none`` the mediator's role gets no seat.
    """
    agents = agent_positions(study, scenario)
    settings = {"chat_study": study.slug, "temperature": 0.7, "seed": secrets.randbelow(2**31)}
    barrier_seats, empty_roles = agents, ()
    models = agent_models(study, scenario, agents)
    if is_negotiation(scenario):
        settings["promediate"] = negotiation_settings(study, scenario, models)
        mediator = mediator_position(scenario)
        if settings["promediate"]["mediator_position"] is None and mediator is not None:
            empty_roles = (mediator,)
            agents = [position for position in agents if position != mediator]
            models = {position: model for position, model in models.items() if position != mediator}
        barrier_seats = [position for position in agents if position != mediator]  # the persona is the parties'

    with transaction.atomic():
        episode = create_episode(
            scenario,
            barrier,
            barrier_seats=barrier_seats,
            models=models,
            source=Episode.Source.HUMAN_CHAT,
            turn_cap=turn_cap_for(scenario, study.turn_cap),
            tag=study.episode_tag,
            settings=settings,
            empty_roles=empty_roles,
        )
        episode.seats.filter(position=study.human_position).update(
            player=Seat.Player.HUMAN, model="", strategy=study.partner_strategy
        )
    return episode


def negotiation_settings(study: ChatStudy, scenario: Scenario, models: dict[int, str]) -> dict[str, Any]:
    """Who mediates the participant's negotiation, recorded as a simulation records it, so the ProMediate
    report groups chats with simulated episodes: the participant (``human``), or the study's agent mediator
    condition (``none``, ``generic``, ``social``; empty = generic) playing the mediator seat's model."""
    mediator = mediator_position(scenario)
    if mediator == study.human_position:
        return {"mediator": HUMAN_POLICY, "mediator_position": mediator, "mediator_model": "", "human": "mediator"}
    condition = study.mediator_condition or DEFAULT_MEDIATOR
    if condition == NO_MEDIATOR or mediator is None:
        return {"mediator": NO_MEDIATOR, "mediator_position": None, "mediator_model": "", "human": "party"}
    return {
        "mediator": condition,
        "mediator_position": mediator,
        "mediator_model": models[mediator],
        "human": "party",
    }
