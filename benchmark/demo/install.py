"""Install the demo content idempotently: every row is found again by its external id.

A demo template is installed as a template scenario (``demo-template-<codename>``) and filled with
its casts by ``benchmark.scenarios.templates``, which finds instances it made before by their
cast, so installing twice makes nothing new.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from ..models import Character, Goal, Probe, Role, Scenario, Team
from ..scenarios.templates import fill_names, instantiate
from .content import DemoCharacter, DemoGoal, DemoProbe, DemoScenario
from .group_templates import CASTS_PER_TEMPLATE, DemoTemplate

CHARACTER_ID = "demo-character-{key}"
SCENARIO_ID = "demo-scenario-{codename}"
TEMPLATE_ID = "demo-template-{codename}"
EPISODE_ID = "demo-episode-{codename}-{condition}"


def install_character(spec: DemoCharacter, team: Team) -> Character:
    character, _ = Character.objects.update_or_create(
        team=team,
        external_id=CHARACTER_ID.format(key=spec.key),
        defaults={
            "first_name": spec.first_name,
            "last_name": spec.last_name,
            "age": spec.age,
            "gender": spec.gender,
            "pronouns": spec.pronouns,
            "occupation": spec.occupation,
            "big_five": spec.big_five,
            "mbti": spec.mbti,
            "moral_values": spec.moral_values,
            "personal_values": spec.personal_values,
            "personality": spec.personality,
            "decision_style": spec.decision_style,
            "public_info": spec.public_info,
            "secret": spec.secret,
        },
    )
    return character


@transaction.atomic
def install_scenario(spec: DemoScenario, team: Team) -> Scenario:
    """Create or update a demo scenario of ``team`` with its roles, their goals and default characters, and its probes.

    Goals and probes are updated in place by position, so answers given about them stay attached.
    """
    scenario, _ = Scenario.objects.update_or_create(
        team=team,
        external_id=SCENARIO_ID.format(codename=spec.codename),
        defaults={
            "codename": spec.codename,
            "source": "parley-demo",
            "context": spec.context,
            "original_context": spec.original_context,
            "difficulty": spec.difficulty,
            "relationship": spec.relationship,
            "turn_taking": spec.turn_taking,
            "greeter_position": spec.greeter,
            "turn_cap": spec.turn_cap,
            "category": spec.category,
        },
    )
    roles = {}
    for position, role in enumerate(spec.roles):
        roles[position], _ = Role.objects.update_or_create(
            scenario=scenario,
            position=position,
            defaults={
                "character": install_character(role.character, team),
                "reason": role.reason,
                "private_knowledge": role.private_knowledge,
                "communication": role.communication,
            },
        )
    _install_goals_and_probes(scenario, roles, [role.goals for role in spec.roles], spec.probes)
    return scenario


def _install_goals_and_probes(
    scenario: Scenario, roles: dict[int, Role], goals: Sequence[Sequence[DemoGoal]], probes: Sequence[DemoProbe]
) -> None:
    """Each role's goals and the scenario's probes, updated in place by position (answers stay attached)."""
    for position, role_goals in enumerate(goals):
        for number, goal in enumerate(role_goals):
            Goal.objects.update_or_create(
                role=roles[position],
                position=number,
                defaults={"text": goal.text, "tags": list(goal.tags), "goal_type": goal.goal_type},
            )
        roles[position].goals.filter(position__gte=len(role_goals)).delete()
    for number, probe in enumerate(probes):
        Probe.objects.update_or_create(
            scenario=scenario,
            position=number,
            defaults={
                "about": roles[probe.about],
                "topic": probe.topic,
                "text": probe.text,
                "options": list(probe.options),
                "correct": probe.correct,
                "asked_of": probe.asked_of,
            },
        )
    scenario.probes.filter(position__gte=len(probes)).delete()


def beats_of(spec: DemoScenario) -> dict[int, tuple[str, ...]]:
    """The beats of each role, keyed by role position, as ``run_episode`` takes them."""
    return {position: role.beats for position, role in enumerate(spec.roles)}


@dataclass(frozen=True)
class DemoInstance:
    """One scenario made from a demo template, with the beats its cast says (names filled in)."""

    scenario: Scenario
    beats: dict[int, tuple[str, ...]]


@transaction.atomic
def install_template(spec: DemoTemplate, team: Team) -> Scenario:
    """Create or update a demo template of ``team``: a template scenario whose roles are slots."""
    template, _ = Scenario.objects.update_or_create(
        team=team,
        external_id=TEMPLATE_ID.format(codename=spec.codename),
        defaults={
            "codename": spec.codename,
            "source": "parley-demo",
            "context": spec.context,
            "original_context": spec.original_context,
            "relationship": spec.relationship,
            "category": spec.category,
            "turn_taking": spec.turn_taking,
            "greeter_position": spec.greeter,
            "turn_cap": spec.turn_cap,
            "is_template": True,
        },
    )
    roles = {}
    for position, slot in enumerate(spec.slots):
        roles[position], _ = Role.objects.update_or_create(
            scenario=template,
            position=position,
            defaults={
                "character": None,
                "reason": slot.reason,
                "private_knowledge": slot.private_knowledge,
                "communication": slot.communication,
                "min_age": slot.min_age,
                "max_age": slot.max_age,
            },
        )
    _install_goals_and_probes(template, roles, [slot.goals for slot in spec.slots], spec.probes)
    return template


@transaction.atomic
def install_template_instances(spec: DemoTemplate, team: Team, *, seed: int = 0) -> list[DemoInstance]:
    """The template and its ``CASTS_PER_TEMPLATE`` instances (made once, found after), each with its beats.

    The casts are drawn from the template's own characters only, so the demo's casts do not move
    when a researcher adds characters to the team.
    """
    template = install_template(spec, team)
    pool = [install_character(character, team) for character in spec.characters]
    instances = instantiate(template, count=CASTS_PER_TEMPLATE, seed=seed, characters=pool).scenarios
    made = []
    for scenario in instances:
        cast = {role.position: role.character for role in scenario.roles.select_related("character")}
        beats = {
            position: tuple(fill_names(beat, cast) for beat in slot.beats) for position, slot in enumerate(spec.slots)
        }
        made.append(DemoInstance(scenario, beats))
    return made
