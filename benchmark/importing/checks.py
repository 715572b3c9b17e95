"""The checks every import format runs on its drafts before anything is saved.

They mirror the model constraints, so a file that passes them does not trip a database constraint
halfway through, and each names the place in the file where the problem is (``drafts.Origin``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..models import Character, Episode, Relationship, Role, Scenario, Seat, Turn
from ..models.scenarios import Category, Difficulty, TurnTaking
from .records import (
    ACTIONS_NEEDING_CONTENT,
    MAX_TAG_LENGTH,
    MAX_TURNS,
    CharacterDraft,
    Draft,
    EpisodeDraft,
    Origin,
    RoleDraft,
    ScenarioDraft,
    SeatDraft,
    action_words,
    check_choice,
    check_integer,
    check_text,
    max_length,
    values_of,
)


def check_character_values(values: Mapping[str, Any], origin: Origin, names: Mapping[str, str] | None = None) -> None:
    """Lengths and the plausible age, as the Character constraints require.

    ``names`` maps our field names to the source's, so the message names the field in the file.
    """
    names = names or {}
    for name, value in values.items():
        where = origin.at(names.get(name, name))
        if name == "age":
            if value is not None:
                check_integer(value, where, low=0, high=130)
        else:
            check_text(value, where, blank=name != "first_name", max_length=max_length(Character, name))


def check_scenario_values(values: Mapping[str, Any], origin: Origin, names: Mapping[str, str] | None = None) -> None:
    names = names or {}
    for name, value in values.items():
        where = origin.at(names.get(name, name))
        if name == "relationship":
            if value is not None:  # None: unknown
                check_integer(value, where, low=min(Relationship.values), high=max(Relationship.values))
        elif name == "difficulty":
            check_choice(value, values_of(Difficulty), where)
        elif name == "category":
            if value:
                check_choice(value, values_of(Category), where)
        else:
            check_text(value, where, blank=name != "context", max_length=max_length(Scenario, name))


def check_roles(roles: Sequence[RoleDraft], origin: Origin) -> None:
    if len(roles) < 2:
        raise origin.problem(f"a scenario needs at least two roles, got {len(roles)}")
    seen: set[int] = set()
    for index, role in enumerate(roles):
        if role.position in seen:
            raise origin.at(index).at("position").problem(f"role position {role.position} appears twice")
        seen.add(role.position)
        if not role.goals:
            raise origin.at(index).at(role.goals_field).problem("a role needs a goal")
        for number, goal in enumerate(role.goals):
            where = origin.at(index).at(role.goals_field)
            where = where.at(number) if role.goals_field == "goals" else where
            if not goal.text.strip():
                raise where.at("text").problem("a goal needs a text")
            for place, tag in enumerate(goal.tags):
                check_text(tag, where.at("tags").at(place), blank=False, max_length=MAX_TAG_LENGTH)
        low, high = role.slot.get("min_age"), role.slot.get("max_age")
        if low is not None and high is not None and low > high:
            raise origin.at(index).at("slot").at("max_age").problem(f"{high} is below min_age {low}")
        for name in ("gender", "occupation"):
            if name in role.slot:
                check_text(role.slot[name], origin.at(index).at("slot").at(name), max_length=max_length(Role, name))


def check_scenario_shape(draft: ScenarioDraft) -> None:
    """Turn-taking, probes and the template link, which need the roles (checked before)."""
    origin = draft.origin
    positions = sorted(role.position for role in draft.roles)
    shown = ", ".join(map(str, positions))
    values = draft.values
    greeter = values.get("greeter_position")
    if greeter is not None:
        if values.get("turn_taking") not in (TurnTaking.RANDOM_AFTER_GREETING, TurnTaking.PROMEDIATE):
            raise origin.at("greeter").problem(
                f"only '{TurnTaking.RANDOM_AFTER_GREETING.value}' and '{TurnTaking.PROMEDIATE.value}' turn-taking "
                "have a greeter; set it to null"
            )
        if greeter not in positions:
            raise origin.at("greeter").problem(f"no role at position {greeter} (roles: {shown})")
    if values.get("is_template") and draft.template is not None:
        raise origin.at("template").problem("a template cannot itself be made from a template")
    if draft.template is not None and not draft.template.values.get("is_template"):
        raise origin.at("template").at("is_template").problem("the scenario named as template is not a template")
    for probe in draft.probes:
        if probe.about not in positions:
            raise probe.origin.at("about").problem(f"no role at position {probe.about} (roles: {shown})")
        if len(probe.options) < 2:
            raise probe.origin.at("options").problem(f"a probe needs at least two options, got {len(probe.options)}")
        for place, option in enumerate(probe.options):
            check_text(option, probe.origin.at("options").at(place), blank=False)
        if probe.correct >= len(probe.options):
            raise probe.origin.at("correct").problem(
                f"{probe.correct} is not an option's index (0 to {len(probe.options) - 1})"
            )


def check_unique_records(drafts: Sequence[Draft]) -> None:
    """Refuse a file that gives one episode, character or scenario record twice, naming both places.

    An external id already in the database is skipped as unchanged (importing twice changes
    nothing); the same id twice in one file is a mistake, since only one of the two could be kept.
    Characters and scenarios nested in an episode (Parley repeats them on every line) are not records.
    """
    kinds = {EpisodeDraft: "episode", CharacterDraft: "character", ScenarioDraft: "scenario"}
    seen: dict[tuple[str, str], Origin] = {}
    for draft in drafts:
        kind = kinds.get(type(draft))
        if kind is None:
            continue
        first = seen.setdefault((kind, draft.external_id), draft.origin)
        if first is not draft.origin:
            raise draft.origin.at(draft.id_field).problem(
                f"{kind} {draft.external_id!r} appears twice in this file (first at {first.place})"
            )


def check_episode(draft: EpisodeDraft) -> None:
    """Everything about one episode that does not need the database: seats and turns (its responses:
    ``responses.check_responses``). Any number of seats may carry the barrier: the condition names them."""
    origin = draft.origin
    if len(draft.turns) > MAX_TURNS:
        raise origin.problem(f"episode {draft.external_id!r} has {len(draft.turns)} turns; at most {MAX_TURNS} fit")
    check_text(draft.external_id, origin.at("external_id"), blank=False, max_length=max_length(Episode, "external_id"))
    check_text(draft.tag, origin.at("tag"), max_length=max_length(Episode, "tag"))
    seats: dict[int, SeatDraft] = {}
    for seat in draft.seats:
        if seat.position in seats:
            raise seat.origin.at("position").problem(f"seat position {seat.position} appears twice")
        seats[seat.position] = seat
        check_text(seat.model, seat.origin.at("model"), max_length=max_length(Seat, "model"))
    positions = ", ".join(str(position) for position in sorted(seats)) or "none"

    indexes: set[int] = set()
    client_ids: set[str] = set()
    for turn in draft.turns:
        if turn.index in indexes:
            raise turn.origin.at("index").problem(f"turn index {turn.index} appears twice in this episode")
        indexes.add(turn.index)
        if turn.seat_position not in seats:
            raise turn.origin.at("seat").problem(f"no seat at position {turn.seat_position} (seats: {positions})")
        if turn.action_type in ACTIONS_NEEDING_CONTENT and not turn.content.strip():
            raise turn.origin.at("content").problem(f"a {action_words(turn.action_type)} turn needs content")
        if turn.client_id is not None:
            if turn.client_id in client_ids:
                raise turn.origin.at("client_id").problem(f"client id {turn.client_id!r} appears twice")
            client_ids.add(turn.client_id)
            check_text(turn.client_id, turn.origin.at("client_id"), max_length=max_length(Turn, "client_id"))
        check_text(turn.model, turn.origin.at("model"), max_length=max_length(Turn, "model"))
