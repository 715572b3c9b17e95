"""Saving a scenario written in the editor, all or nothing, and what may change once it was played.

A scenario's rows are read when an episode is played and read again whenever the episode is shown,
judged, annotated or reported: the episode keeps no copy of the context, the roles, the goals or
the probes its agents were told, and answers point at its goals (``Answer.goal``) and at its seats'
roles. So once any episode was played on a scenario, what its agents were told is frozen:

- the *labels* (``LABEL_FIELDS``: name, external id, source, difficulty, category) only describe the
  scenario to researchers and may change in place at any time;
- anything else (context, relationship, turn-taking, turn cap, roles and their characters, goals,
  probes, barrier prompts) is refused in place, naming how many episodes were played, and may be
  saved as a new scenario instead: a copy with the edits, which the old episodes never point to.

An unplayed scenario is rewritten in place: roles are kept by position (a cast's members stay with
their role), goals, probes and barrier prompts are written anew.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import transaction

from ..models import Episode, Goal, Probe, Role, Scenario, ScenarioBarrier, Team

LABEL_FIELDS = ("codename", "external_id", "source", "difficulty", "category")


@dataclass(frozen=True)
class RoleData:
    character_id: int
    reason: str
    private_knowledge: str
    communication: str


@dataclass(frozen=True)
class GoalData:
    position: int  # the role's position
    text: str
    goal_type: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class ProbeData:
    about: int  # the role's position
    topic: str
    text: str
    options: tuple[str, ...]
    correct: int  # index from 0
    asked_of: str


@dataclass(frozen=True)
class BarrierData:
    barrier_id: int
    style_directive: str
    trait_note: str
    positions: tuple[int, ...]


@dataclass
class ScenarioData:
    """A scenario as plain values: its fields, and its roles, goals, probes and barrier prompts in order."""

    fields: dict[str, Any]
    roles: list[RoleData] = field(default_factory=list)
    goals: list[GoalData] = field(default_factory=list)
    probes: list[ProbeData] = field(default_factory=list)
    barriers: list[BarrierData] = field(default_factory=list)

    def played_part(self) -> dict[str, Any]:
        """Everything but the labels: what a played episode's agents were told."""
        values = asdict(self)
        values["fields"] = {name: value for name, value in self.fields.items() if name not in LABEL_FIELDS}
        values["barriers"] = sorted(values["barriers"], key=lambda barrier: barrier["barrier_id"])
        return _normalised(values)


def _normalised(value: Any) -> Any:
    """Texts compared as read: line endings and the spaces around them do not count as an edit."""
    if isinstance(value, str):
        return value.replace("\r\n", "\n").strip()
    if isinstance(value, dict):
        return {key: _normalised(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalised(item) for item in value]
    return value


class EditRefused(Exception):
    """The edit would change what played episodes' agents were told; the message says so."""


def stored_data(scenario: Scenario) -> ScenarioData:
    """The stored scenario as the editor writes it."""
    roles = list(scenario.roles.order_by("position").prefetch_related("goals"))
    position = {role.pk: index for index, role in enumerate(roles)}
    return ScenarioData(
        fields={name: getattr(scenario, name) for name in (
            *LABEL_FIELDS, "context", "relationship", "turn_taking", "greeter_position", "turn_cap")},
        roles=[RoleData(role.character_id, role.reason, role.private_knowledge, role.communication) for role in roles],
        goals=[GoalData(position[role.pk], goal.text, goal.goal_type, tuple(goal.tags))
               for role in roles for goal in role.goals.all()],
        probes=[ProbeData(position[probe.about_id], probe.topic, probe.text, tuple(probe.options), probe.correct,
                          probe.asked_of) for probe in scenario.probes.order_by("position")],
        barriers=[BarrierData(prompt.barrier_id, prompt.style_directive, prompt.trait_note,
                              tuple(sorted(prompt.barrier_positions))) for prompt in scenario.barrier_prompts.all()],
    )


def played_count(scenario: Scenario) -> int:
    return Episode.objects.filter(scenario=scenario).count()


def external_id_taken(team: Team, external_id: str | None, scenario: Scenario | None) -> bool:
    if not external_id:
        return False
    others = Scenario.objects.filter(team=team, external_id=external_id)
    return others.exclude(pk=scenario.pk).exists() if scenario else others.exists()


def save_scenario(team: Team, data: ScenarioData, scenario: Scenario | None = None) -> Scenario:
    """Write ``data`` into ``scenario`` (a new one when None), all or nothing.

    Raises ``EditRefused`` when ``scenario`` was played and the edit goes beyond its labels.
    """
    with transaction.atomic():
        if scenario is not None:
            scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
            played = played_count(scenario)
            if played and stored_data(scenario).played_part() != data.played_part():
                raise EditRefused(
                    f"{played} episode{'s were' if played != 1 else ' was'} played on this scenario, and "
                    f"{'they' if played != 1 else 'it'} will be shown, judged and annotated with what its agents "
                    "were told; only its name, external id, source, difficulty and category can change in place. "
                    "Save your edits as a new scenario instead."
                )
            if played:  # the labels alone: the rest is as stored
                for name in LABEL_FIELDS:
                    setattr(scenario, name, data.fields[name])
                scenario.save(update_fields=list(LABEL_FIELDS))
                return scenario
        else:
            scenario = Scenario(team=team)
        for name, value in data.fields.items():
            setattr(scenario, name, value)
        scenario.save()
        _write_rows(scenario, data)
    return scenario


def _write_rows(scenario: Scenario, data: ScenarioData) -> None:
    roles: list[Role] = []
    existing = {role.position: role for role in scenario.roles.all()}
    for position, values in enumerate(data.roles):
        role = existing.pop(position, None) or Role(scenario=scenario, position=position)
        role.character_id, role.reason = values.character_id, values.reason
        role.private_knowledge, role.communication = values.private_knowledge, values.communication
        role.save()
        roles.append(role)
    Role.objects.filter(pk__in=[role.pk for role in existing.values()]).delete()
    Goal.objects.filter(role__scenario=scenario).delete()
    counts: dict[int, int] = {}
    for goal in data.goals:
        number = counts[goal.position] = counts.get(goal.position, -1) + 1
        Goal.objects.create(role=roles[goal.position], position=number, text=goal.text, goal_type=goal.goal_type,
                            tags=list(goal.tags))
    Probe.objects.filter(scenario=scenario).delete()
    for number, probe in enumerate(data.probes):
        Probe.objects.create(scenario=scenario, about=roles[probe.about], position=number, topic=probe.topic,
                             text=probe.text, options=list(probe.options), correct=probe.correct,
                             asked_of=probe.asked_of)
    ScenarioBarrier.objects.filter(scenario=scenario).delete()
    for barrier in data.barriers:
        ScenarioBarrier.objects.create(scenario=scenario, barrier_id=barrier.barrier_id,
                                       style_directive=barrier.style_directive, trait_note=barrier.trait_note,
                                       barrier_positions=list(barrier.positions))
