"""A hand-built ProMediate negotiation for the evaluation tests: a mediator and three parties on two topics.

Topics "Budget" (options a–d) and "Staffing plan" (a–c). Starting preferences (first choice, second):
Alice Budget a>b, Staffing a>c; Bob Budget b>a, Staffing a>b; Carol Budget b>c, Staffing b>a.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmark.models import ActionType, Episode, Preference, Scenario, Seat, Topic, Turn
from tests.builders import get_barrier, make_character, make_scenario

PARTIES = ("Alice", "Bob", "Carol")
TOPICS = (
    ("Budget", [("a", "Ten million"), ("b", "Twelve million"), ("c", "Fifteen million"), ("d", "Twenty million")]),
    ("Staffing plan", [("a", "Hire two"), ("b", "Hire four"), ("c", "Hire none")]),
)
RANKINGS = {
    "Alice": (["a", "b"], ["a", "c"]),
    "Bob": (["b", "a"], ["a", "b"]),
    "Carol": (["b", "c"], ["b", "a"]),
}
# (speaker, text): seat 0 is the mediator.
LINES: tuple[tuple[str, str], ...] = (
    ("Mediator", "Welcome everyone! Let's discuss!"),
    ("Alice", "On the budget I could live with (b) if we settle it today."),
    ("Carol", "For the staffing plan I now want (c), nothing else."),
    ("Mediator", "Thank you both. Carol, can you say more about why the staffing plan matters so much to you?"),
    ("Bob", "I am angry about this. Budget (c) is fine by me and staffing plan (b) as well."),
    ("Carol", "I stay with staffing plan (b) after all."),
)


def negotiation_scenario() -> Scenario:
    names = ("Mediator", *PARTIES)
    scenario = make_scenario(
        roles=[{"character": make_character(first_name=name, last_name="", occupation="negotiator")} for name in names],
        codename="promediate-test",
        context="A committee settles a budget and a staffing plan.",
    )
    roles = list(scenario.roles.order_by("position"))
    for position, (title, options) in enumerate(TOPICS):
        topic = Topic.objects.create(
            scenario=scenario,
            position=position,
            title=title,
            question=f"What {title.lower()}?",
            options=[{"key": key, "text": text} for key, text in options],
        )
        for role in roles[1:]:
            ranking = RANKINGS[role.character.first_name][position]
            Preference.objects.create(
                role=role,
                topic=topic,
                ranking=ranking,
                text=f"First choice: ({ranking[0]}). Second choice: ({ranking[1]}).",
            )
    return scenario


def negotiation_episode(
    scenario: Scenario | None = None, lines: Sequence[tuple[str, str]] = LINES, **fields
) -> Episode:
    scenario = scenario or negotiation_scenario()
    episode = Episode.objects.create(
        scenario=scenario,
        barrier=get_barrier("none"),
        team=scenario.team,
        source=Episode.Source.SIMULATED,
        status=Episode.Status.FINISHED,
        turn_cap=60,
        **fields,
    )
    seats = {
        role.character.first_name: Seat.objects.create(
            episode=episode, position=role.position, role=role, character=role.character
        )
        for role in scenario.roles.select_related("character")
    }
    Turn.objects.bulk_create(
        Turn(episode=episode, index=index, seat=seats[speaker], action_type=ActionType.SPEAK, content=text)
        for index, (speaker, text) in enumerate(lines)
    )
    return episode
