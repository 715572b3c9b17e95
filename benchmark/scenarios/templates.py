"""Scenario templates: a scenario whose roles are character slots, filled with casts (AgentSense §3.2).

A template is a ``Scenario`` with ``is_template=True``. Each of its roles may constrain who fills
its slot: an age range (``min_age``, ``max_age``), a gender, an occupation. Instantiating the
template picks casts (one character per role, all different) among the team's characters that
fit every slot, and makes one scenario per cast: the template's context, relationship, category,
turn-taking, turn cap, goals (with their goal types), roles' sender/receiver labels and probes,
with the cast as the roles' default characters, each pointing back at the template
(``Scenario.template``) so results can be grouped by it.

The rules:

- **Fitting a slot**: the character's age lies in the range (a character without an age fits no
  age constraint); the gender is the same, ignoring case; the slot's occupation appears in the
  character's, ignoring case ("teacher" fits "primary school teacher"). An empty constraint
  lets anyone in.
- **Deterministic for a seed**: the same template, characters and seed give the same casts in
  the same order (candidates are ordered by name before the seeded draws).
- **Idempotent**: an instance that already has a cast is found again, not made twice, so running
  the same instantiation twice changes nothing.
- **Names in the text**: ``{role0}``, ``{role1}``, ... in the template's context, goals, reasons,
  private knowledge and probes become the first name of the character cast in that role.
- **All or nothing**: a slot no character fits, or fewer different casts than asked for, is
  refused with a message naming the slot and its constraints, and nothing is created.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db import transaction

from ..models import Character, Goal, Probe, Role, Scenario, Team

MAX_ENUMERATED = 200_000  # casts listed one by one when random draws find too few
_NAME = re.compile(r"\{role(\d+)\}")


class TemplateProblem(ValueError):
    """A template that cannot be instantiated as asked; the message says why and where."""


@dataclass
class Instantiation:
    """The instances of one instantiation, in cast order: those made now and those already there."""

    template: Scenario
    created: list[Scenario] = field(default_factory=list)
    found: list[Scenario] = field(default_factory=list)

    @property
    def scenarios(self) -> list[Scenario]:
        return sorted([*self.created, *self.found], key=lambda scenario: scenario.pk)


def find_template(team: Team, selector: str) -> Scenario:
    """The team's template with this id or codename; anything else is a ``TemplateProblem``."""
    scenarios = Scenario.objects.of_team(team)
    found = list(scenarios.filter(pk=int(selector)) if selector.isdigit() else scenarios.filter(codename=selector))
    if not found:
        raise TemplateProblem(f"the team has no scenario with the id or codename {selector!r}")
    templates = [scenario for scenario in found if scenario.is_template]
    if not templates:
        raise TemplateProblem(f"scenario {selector!r} is not a template (mark it as one, with its slots, first)")
    if len(templates) > 1:
        raise TemplateProblem(f"{len(templates)} templates are called {selector!r}; give the id instead")
    return templates[0]


def fits(role: Role, character: Character) -> bool:
    """Whether ``character`` satisfies every constraint of the slot ``role``."""
    if role.min_age is not None and (character.age is None or character.age < role.min_age):
        return False
    if role.max_age is not None and (character.age is None or character.age > role.max_age):
        return False
    if role.gender and role.gender.strip().casefold() != character.gender.strip().casefold():
        return False
    return not role.occupation or role.occupation.strip().casefold() in character.occupation.casefold()


def describe_slot(role: Role) -> str:
    """A slot and its constraints as a reader would name them: 'role 2 (age 30-45, gender woman)'."""
    parts = []
    if role.min_age is not None and role.max_age is not None:
        parts.append(f"age {role.min_age}-{role.max_age}")
    elif role.min_age is not None:
        parts.append(f"age {role.min_age} or over")
    elif role.max_age is not None:
        parts.append(f"age {role.max_age} or under")
    if role.gender:
        parts.append(f"gender {role.gender!r}")
    if role.occupation:
        parts.append(f"occupation {role.occupation!r}")
    return f"role {role.position}" + (f" ({', '.join(parts)})" if parts else " (no constraints)")


def casts(
    roles: Sequence[Role], characters: Iterable[Character], count: int, seed: int = 0
) -> list[dict[int, Character]]:
    """``count`` different casts (role position -> character, no character twice in a cast).

    Drawn at random for ``seed`` (most constrained slot first), then, if the draws find too few,
    listed exhaustively, so a shortfall means there really are fewer casts.
    """
    if count < 1:
        raise TemplateProblem("ask for at least one cast")
    pool = sorted(characters, key=lambda c: (c.name.casefold(), c.pk))
    candidates = {role.position: [c for c in pool if fits(role, c)] for role in roles}
    for role in roles:
        if not candidates[role.position]:
            raise TemplateProblem(f"no character of the team fits {describe_slot(role)}")
    positions = sorted(candidates, key=lambda position: (len(candidates[position]), position))
    rng = random.Random(f"parley-casts|{seed}")
    chosen: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()

    def keep(picks: Sequence[Character]) -> None:
        key = tuple(c.pk for c in picks)
        if len(set(key)) == len(key) and key not in seen:
            seen.add(key)
            chosen.append(key)

    for _ in range(max(200, 50 * count)):
        if len(chosen) == count:
            break
        picks: list[Character] = []
        for position in positions:
            options = [c for c in candidates[position] if c not in picks]
            if not options:
                break
            picks.append(rng.choice(options))
        else:
            keep(picks)
    if len(chosen) < count:
        total = 1
        for position in positions:
            total *= len(candidates[position])
        if total <= MAX_ENUMERATED:
            rest = list(itertools.product(*(candidates[position] for position in positions)))
            rng.shuffle(rest)
            for picks in rest:
                if len(chosen) == count:
                    break
                keep(picks)
    if len(chosen) < count:
        slots = "; ".join(describe_slot(role) for role in roles)
        found = "no cast" if not chosen else f"only {len(chosen)} different cast(s)"
        raise TemplateProblem(
            f"{found} of different characters fit the slots ({slots}); {count} asked for. Add characters "
            "that fit, loosen a constraint, or ask for fewer."
        )
    by_pk = {c.pk: c for c in pool}
    return [{position: by_pk[pk] for position, pk in zip(positions, key, strict=True)} for key in chosen]


def fill_names(text: str, cast: dict[int, Character]) -> str:
    """``{role0}``, ``{role1}``, ... become the first names of the cast; other braces stay as written."""
    return _NAME.sub(lambda m: cast[int(m.group(1))].first_name if int(m.group(1)) in cast else m.group(0), text)


def instantiate(
    template: Scenario, *, count: int = 1, seed: int = 0, characters: Iterable[Character] | None = None
) -> Instantiation:
    """Make (or find) ``count`` scenarios from ``template``, one per cast, all or nothing.

    ``characters`` are the candidates (default: every character of the template's team).
    """
    if not template.is_template:
        raise TemplateProblem(f"scenario {template} is not a template")
    roles = list(template.roles.prefetch_related("goals").order_by("position"))
    if len(roles) < 2:
        raise TemplateProblem(f"template {template} has {len(roles)} role(s); a scenario needs at least two")
    pool = Character.objects.of_team(template.team) if characters is None else characters
    wanted = casts(roles, pool, count, seed)
    result = Instantiation(template)
    with transaction.atomic():
        existing = {
            _cast_key({role.position: role.character_id for role in instance.roles.all()}): instance
            for instance in template.instances.prefetch_related("roles")
        }
        number = len(existing)
        for cast in wanted:
            key = _cast_key({position: character.pk for position, character in cast.items()})
            if key in existing:
                result.found.append(existing[key])
                continue
            number += 1
            result.created.append(_instance(template, roles, cast, number))
    return result


def _cast_key(cast: dict[int, int | None]) -> tuple[tuple[int, int | None], ...]:
    return tuple(sorted(cast.items()))


def _instance(template: Scenario, roles: Sequence[Role], cast: dict[int, Character], number: int) -> Scenario:
    def fill(text: str) -> str:
        return fill_names(text, cast)

    scenario = Scenario.objects.create(
        team=template.team,
        codename=f"{template.codename or 'template'}-{number}",
        source=template.source,
        context=fill(template.context),
        original_context=fill(template.original_context),
        difficulty=template.difficulty,
        relationship=template.relationship,
        category=template.category,
        turn_taking=template.turn_taking,
        greeter_position=template.greeter_position,
        turn_cap=template.turn_cap,
        template=template,
    )
    made = {
        role.position: Role.objects.create(
            scenario=scenario,
            position=role.position,
            character=cast[role.position],
            reason=fill(role.reason),
            private_knowledge=fill(role.private_knowledge),
            communication=role.communication,
        )
        for role in roles
    }
    Goal.objects.bulk_create(
        Goal(
            role=made[role.position], position=goal.position, text=fill(goal.text), goal_type=goal.goal_type,
            tags=list(goal.tags),
        )
        for role in roles
        for goal in role.goals.all()
    )
    Probe.objects.bulk_create(
        Probe(
            scenario=scenario, about=made[probe.about.position], position=probe.position, topic=probe.topic,
            text=fill(probe.text), options=[fill(option) for option in probe.options], correct=probe.correct,
            asked_of=probe.asked_of,
        )
        for probe in template.probes.select_related("about")
    )
    return scenario
