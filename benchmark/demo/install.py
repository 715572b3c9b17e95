"""Install the demo content idempotently: every row is found again by its external id."""

from __future__ import annotations

from django.db import transaction

from ..models import Character, Goal, Probe, Role, Scenario, Team
from .content import DemoCharacter, DemoScenario

CHARACTER_ID = "demo-character-{key}"
SCENARIO_ID = "demo-scenario-{codename}"
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
            },
        )
        for number, goal in enumerate(role.goals):
            Goal.objects.update_or_create(
                role=roles[position], position=number, defaults={"text": goal.text, "tags": list(goal.tags)}
            )
        roles[position].goals.filter(position__gte=len(role.goals)).delete()
    for number, probe in enumerate(spec.probes):
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
    scenario.probes.filter(position__gte=len(spec.probes)).delete()
    return scenario


def beats_of(spec: DemoScenario) -> dict[int, tuple[str, ...]]:
    """The beats of each role, keyed by role position, as ``run_episode`` takes them."""
    return {position: role.beats for position, role in enumerate(spec.roles)}
