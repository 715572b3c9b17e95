"""What a participant is told before the chat: the situation, who they are, what they want.

The briefing mirrors what an agent in the same seat would know (Sotopia's information split):
the shared context, their own character in full, their own goal, reason and private knowledge,
and of the other side only what the scenario's relationship reveals (``Character.visible_to``).
It never names the barrier, the condition or the model: the participant must not learn which
conversation they are in. The same dict feeds the briefing page and the reminder panel on the
chat page (``templates/chat/partials/_briefing.html``).
"""

from __future__ import annotations

from typing import Any

from benchmark.models import PROFILE_LABELS, Relationship, Seat, TurnTaking

from .models import ChatStudy
from .negotiation import is_mediator, is_negotiation, seated_mediator
from .protocol import Cast

# How the participant is told they know the other person, by relationship.
RELATIONSHIP_SENTENCES = {
    Relationship.STRANGER: "You have never met the other person: you know nothing about them yet.",
    Relationship.KNOW_BY_NAME: "You know the other person by name, but nothing more about them.",
    Relationship.ACQUAINTANCE: "You are acquaintances: you know a little about each other.",
    Relationship.FRIEND: "You are friends: you know each other well.",
    Relationship.ROMANTIC: "You are romantic partners: you know each other well.",
    Relationship.FAMILY: "You are family: you know each other well.",
    None: "The study does not say how you know the other person: go by the situation described.",
}

REPAIR_ADVICE = (
    "The other person may be hard to follow at times. When something they say is unclear, ask "
    "them what they mean, and put what you understood in your own words so they can confirm or "
    "correct it before you move on."
)

ACTIONS = (
    ("Say something", "an ordinary message, as if you were speaking."),
    ("Non-verbal", "a gesture or expression, for example “nods slowly” or “frowns”."),
    ("Physical action", "something you do, for example “hands over the keys”."),
    ("Leave", "end the conversation for good; use it when you are done."),
)


def build_briefing(study: ChatStudy, human_seat: Seat, others: list[Seat]) -> dict[str, Any]:
    """The participant's briefing as a plain dict for templates.

    Keys: ``context`` (the scenario's public context); ``me`` (``name``, ``profile``, a list of
    ``(label, value)`` for the fields the character has, and ``secret``); ``goal``, ``reason``,
    ``private_knowledge``; ``partner`` (the first other seat: ``name``, the name the participant may
    use, ``display_name`` and ``profile``, only what the relationship reveals) and ``others`` (every
    other seat so, in seat order; a group chat of three or more names them all, as ``chat.protocol.Cast``
    does); ``group`` (three seats or more); ``human_test`` (whether the questions afterwards include
    ``chat.human_test``'s); ``relationship`` (a sentence); ``repair`` (advice text,
    or ""); ``rules`` (``turn_cap`` the episode's, ``my_turns`` how many of them are the participant's,
    ``min_turns`` the study's minimum, ``opens`` whether the participant speaks first, ``greets``
    whether they open with the scenario's greeting, ``random_order`` whether the speaking order is
    drawn at random, ``first_speaker``, ``actions``, and ``timeout_minutes``). Seats need ``role``,
    ``character`` and ``episode.scenario`` loaded.
    """
    episode = human_seat.episode
    scenario = episode.scenario
    relationship = None if scenario.relationship is None else Relationship(scenario.relationship)
    mine = human_seat.character
    others = sorted(others, key=lambda seat: seat.position)
    cast = Cast.for_episode(episode, [human_seat, *others], human_position=human_seat.position)
    group = cast.is_group
    seen = [_other(seat, relationship, named=group) for seat in others]
    negotiating = is_negotiation(scenario)
    first = cast.seat_at(0) if not negotiating else _opener(human_seat, others)
    opens = first == human_seat.pk
    return {
        "context": scenario.context,
        "me": {"name": mine.name, "profile": _labelled(mine.profile(), skip=("name", "secret")), "secret": mine.secret},
        "goal": human_seat.role.goal_text,
        "reason": human_seat.role.reason,
        "private_knowledge": human_seat.role.private_knowledge,
        "partner": seen[0],
        "others": seen,
        "group": group,
        "human_test": group or scenario.probes.exists(),
        "relationship": RELATIONSHIP_SENTENCES[relationship],
        "repair": REPAIR_ADVICE if human_seat.strategy == Seat.Strategy.REPAIR else "",
        "rules": {
            "turn_cap": episode.turn_cap,
            "my_turns": cast.participant_turns(),
            "min_turns": study.min_participant_turns,
            "opens": opens,
            "greets": opens and scenario.turn_taking == TurnTaking.RANDOM_AFTER_GREETING,
            "random_order": scenario.turn_taking == TurnTaking.RANDOM_AFTER_GREETING,
            "first_speaker": cast.names.get(first, ""),
            "actions": ACTIONS,
            "timeout_minutes": max(1, round(study.inactivity_timeout / 60)),
        },
        "negotiation": _negotiation(study, human_seat) if negotiating else None,
    }


def _opener(human_seat: Seat, others: list[Seat]) -> int | None:
    """Who opens a negotiation: the mediator (a negotiation without one opens with a party drawn at random)."""
    return next((seat.pk for seat in [human_seat, *others] if is_mediator(seat)), None)


def _negotiation(study: ChatStudy, human_seat: Seat) -> dict[str, Any]:
    """How a negotiation's floor works for the participant's role, and the party's conflict style if the
    condition sets one (a ``promediate-<mode>`` condition's directive, the same paragraph the agents get)."""
    barrier = human_seat.episode.barrier
    mediating = is_mediator(human_seat)
    persona = ""
    if not mediating and barrier is not None and barrier.key.startswith("promediate-"):
        persona = barrier.style_directive
    return {
        "mediating": mediating,
        "mediated": seated_mediator(human_seat.episode) is not None,  # the condition none leaves the chair empty
        "intervene_window": _seconds(study.intervene_window),
        "claim_window": _seconds(study.claim_window),
        "persona": persona,
    }


def _seconds(value: float) -> str:
    return f"{value:g}"


def _other(seat: Seat, relationship: Relationship | None, *, named: bool) -> dict[str, Any]:
    """What the participant knows of another seat: its name (always, in a group) and the visible profile."""
    theirs = seat.character.visible_to(relationship)
    name = seat.character.name if named else theirs.get("name", "")
    return {
        "name": name,
        "display_name": name or "the other person",
        "profile": _labelled(theirs, skip=("name",)),
    }


def _labelled(profile: dict[str, str], *, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Profile fields that have a value, in the usual order, with the participant-facing label."""
    return [(PROFILE_LABELS[key], value) for key, value in profile.items() if value and key not in skip]
