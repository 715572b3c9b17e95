"""A small ProMediate-shaped negotiation for tests: three parties and a mediator, three topics with
lettered options, each party's ranking, and the competing conflict mode as a team barrier."""

from __future__ import annotations

import itertools

from benchmark.models import Barrier, Preference, Scenario, Topic, TurnTaking
from tests.builders import default_team, make_character, make_scenario

PARTIES = ("Alex", "Jamie", "Lee")
TOPICS = {
    "Contract Term": ["one year", "two years", "three years"],
    "Marketing Support": ["no support", "shared campaign", "full campaign"],
    "Discount Pricing": ["five percent", "ten percent", "fifteen percent"],
}
RANKINGS = {
    "Alex": {"Contract Term": "cba", "Marketing Support": "abc", "Discount Pricing": "abc"},
    "Jamie": {"Contract Term": "bca", "Marketing Support": "bac", "Discount Pricing": "bac"},
    "Lee": {"Contract Term": "abc", "Marketing Support": "cba", "Discount Pricing": "cba"},
}
_numbers = itertools.count(1)
PERSONA = "Hold firm on what you want and argue for it; soften only when offered your second choice."


def make_negotiation(codename: str = "", turn_cap: int = 12) -> Scenario:
    """The scenario (turn-taking ``promediate``, the Mediator its greeter at position 3) with topics and preferences."""
    team = default_team()
    codename = codename or f"promediate-test-{next(_numbers)}"
    roles = [
        {"character": make_character(first_name=name, last_name="", team=team), "private_knowledge": f"{name}'s brief."}
        for name in PARTIES
    ]
    roles.append(
        {
            "character": make_character(first_name="Mediator", last_name="", team=team),
            "private_knowledge": "Guide the parties to an agreement.",
        }
    )
    scenario = make_scenario(
        roles=roles,
        codename=codename,
        external_id=codename,
        source="promediate",
        context="A supplier and a health plan negotiate a contract.",
        turn_taking=TurnTaking.PROMEDIATE,
        greeter_position=3,
        turn_cap=turn_cap,
    )
    topics = [
        Topic.objects.create(
            scenario=scenario,
            position=number,
            title=title,
            options=[{"key": chr(ord("a") + n), "text": text} for n, text in enumerate(options)],
        )
        for number, (title, options) in enumerate(TOPICS.items())
    ]
    for role in scenario.roles.select_related("character").exclude(position=3):
        for topic in topics:
            Preference.objects.create(
                role=role, topic=topic, ranking=list(RANKINGS[role.character.first_name][topic.title])
            )
    return scenario


def competing() -> Barrier:
    team = default_team()
    barrier, _ = Barrier.objects.get_or_create(
        team=team,
        key="promediate-competing",
        defaults={"name": "Competing", "definition": "A competing negotiator.", "style_directive": PERSONA},
    )
    return barrier
