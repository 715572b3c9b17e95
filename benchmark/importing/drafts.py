"""What every import format is parsed into before anything touches the database.

Importing has two steps. A format's parser reads the file into drafts, checking every value as it
reads it and remembering where it came from (an :class:`Origin`: file, place, field), so a problem
is named exactly where it is. ``saving.save`` then resolves references (a Sotopia environment pk, a
barrier key) and inserts the drafts. The checks here mirror the model constraints, so a file that
passes them does not trip a database constraint halfway through.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import models

from ..dimensions import DIMENSIONS
from ..models import ActionType, Character, Episode, Evaluation, Probe, Relationship, Role, Scenario, Seat, Turn
from ..models.scenarios import Difficulty, TurnTaking, goal_lines
from . import ImportProblem

SPEAKING_ACTIONS = (ActionType.SPEAK, ActionType.NON_VERBAL, ActionType.ACTION)
MAX_SMALL_INTEGER = 32_767  # PositiveSmallIntegerField: positions, turn_cap
MAX_INTEGER = 2_147_483_647  # PositiveIntegerField: turn index, latency, token counts
MAX_TURNS = MAX_SMALL_INTEGER  # an episode's turn_cap holds its number of turns
# About 15,000 words: far beyond any real utterance, small enough that a transcript page, a judge
# prompt and a span offset stay sane (docs/formats.md, "Limits").
MAX_TURN_CHARS = 100_000


@dataclass(frozen=True)
class Origin:
    """Where a value was read: the file, the place in it (``line 3``) and the field path."""

    file: str
    place: str | None = None
    field: str | None = None

    def at(self, name: str | int) -> Origin:
        """The origin of a field (``name``) or list item (an ``int``) inside this one."""
        if isinstance(name, int):
            path = f"{self.field or ''}[{name}]"
        else:
            path = f"{self.field}.{name}" if self.field else name
        return Origin(self.file, self.place, path)

    def problem(self, message: str) -> ImportProblem:
        return ImportProblem(message, file=self.file, place=self.place, field=self.field)


def describe(value: Any) -> str:
    """A value as a reader of the file would name it: ``string '3'``, ``number 2.5``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def parse_timestamp(value: str, origin: Origin) -> datetime:
    """An ISO 8601 timestamp as an aware datetime; one without an offset is taken as UTC.

    Databases store timestamps in UTC, and Python's dates end at years 1 and 9999, so a moment
    whose UTC time falls outside those years (``9999-12-31T23:00:00-05:00``) is refused here
    rather than overflowing when it is saved.
    """
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise origin.problem(f"{describe(value)} is not an ISO 8601 timestamp") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise origin.problem(f"{describe(value)} is outside years 1 to 9999 in UTC") from None
    return moment


class Fields:
    """One JSON object being read, with typed getters that raise a located :class:`ImportProblem`."""

    def __init__(self, data: Any, origin: Origin) -> None:
        if not isinstance(data, dict):
            raise origin.problem(f"expected an object, got {describe(data)}")
        self.data = data
        self.origin = origin

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def _value(self, name: str, required: bool) -> Any:
        if name not in self.data:
            if required:
                raise self.origin.at(name).problem("required field is missing")
            return None
        value = self.data[name]
        if value is None and required:
            raise self.origin.at(name).problem("required field is null")
        return value

    def text(self, name: str, *, required: bool = False, blank: bool = True, max_length: int | None = None) -> str:
        value = self._value(name, required)
        if value is None:
            value = ""
        return check_text(value, self.origin.at(name), blank=blank, max_length=max_length)

    def optional_text(self, name: str, *, max_length: int | None = None) -> str | None:
        value = self._value(name, False)
        return None if value is None else check_text(value, self.origin.at(name), max_length=max_length)

    def integer(
        self, name: str, *, required: bool = False, default: int | None = None,
        low: int | None = None, high: int | None = None,
    ) -> int | None:
        value = self._value(name, required)
        if value is None:
            return default
        return check_integer(value, self.origin.at(name), low=low, high=high)

    def number(self, name: str, *, required: bool = False) -> float | None:
        value = self._value(name, required)
        if value is None:
            return None
        return check_number(value, self.origin.at(name))

    def boolean(self, name: str, *, default: bool = False) -> bool:
        value = self._value(name, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.origin.at(name).problem(f"expected true or false, got {describe(value)}")
        return value

    def choice(self, name: str, choices: Sequence[str], *, required: bool = False, default: str = "") -> str:
        value = self._value(name, required)
        if value is None:
            return default
        return check_choice(value, choices, self.origin.at(name))

    def timestamp(self, name: str) -> datetime | None:
        value = self._value(name, False)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.origin.at(name).problem(f"expected an ISO 8601 timestamp, got {describe(value)}")
        return parse_timestamp(value, self.origin.at(name))

    def mapping(self, name: str) -> dict[str, Any]:
        value = self._value(name, False)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.origin.at(name).problem(f"expected an object, got {describe(value)}")
        return value

    def nested(self, name: str) -> Fields:
        """A required object inside this one."""
        return Fields(self._value(name, True), self.origin.at(name))

    def sequence(self, name: str, *, required: bool = False) -> list[Any]:
        value = self._value(name, required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.origin.at(name).problem(f"expected a list, got {describe(value)}")
        return value

    def texts(self, name: str, *, required: bool = False, max_length: int | None = None) -> list[str]:
        """A list of non-empty strings (absent and not required: an empty list)."""
        origin = self.origin.at(name)
        return [
            check_text(item, origin.at(index), blank=False, max_length=max_length)
            for index, item in enumerate(self.sequence(name, required=required))
        ]

    def objects(self, name: str, *, required: bool = False) -> list[Fields]:
        origin = self.origin.at(name)
        return [Fields(item, origin.at(index)) for index, item in enumerate(self.sequence(name, required=required))]


def check_text(value: Any, origin: Origin, *, blank: bool = True, max_length: int | None = None) -> str:
    if not isinstance(value, str):
        raise origin.problem(f"expected a string, got {describe(value)}")
    if not blank and not value.strip():
        raise origin.problem("must not be empty")
    if max_length is not None and len(value) > max_length:
        raise origin.problem(f"is {len(value)} characters long; at most {max_length} fit")
    return value


def check_integer(value: Any, origin: Origin, *, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise origin.problem(f"expected an integer, got {describe(value)}")
    if low is not None and value < low:
        raise origin.problem(f"{value} is below the minimum {low}")
    if high is not None and value > high:
        raise origin.problem(f"{value} is above the maximum {high}")
    return value


def check_number(value: Any, origin: Origin) -> float:
    """A JSON number as a float; an integer too long for one is refused, not overflowed."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise origin.problem(f"expected a number, got {describe(value)}")
    try:
        return float(value)
    except OverflowError:
        raise origin.problem(f"a {len(str(abs(value)))}-digit integer is too large for a number") from None


def check_choice(value: Any, choices: Sequence[str], origin: Origin) -> str:
    if value not in choices:
        shown = repr(value) if isinstance(value, str) else describe(value)
        raise origin.problem(f"{shown} is not one of {', '.join(choices)}")
    return value


def max_length(model: type[models.Model], name: str) -> int | None:
    return model._meta.get_field(name).max_length


def values_of(choices: type[models.Choices]) -> list[str]:
    return [str(value) for value in choices.values]


# --- drafts -------------------------------------------------------------------------------------

CHARACTER_FIELDS = (
    "first_name", "last_name", "age", "gender", "pronouns", "occupation", "big_five", "mbti",
    "moral_values", "personal_values", "personality", "decision_style", "public_info", "secret",
)
SCENARIO_FIELDS = ("codename", "source", "context", "original_context", "difficulty", "relationship")
SLOT_FIELDS = ("min_age", "max_age", "gender", "occupation")  # a template role's constraints on who fills it
MAX_TAG_LENGTH = 50


@dataclass
class CharacterDraft:
    """A character to create unless one with ``external_id`` exists (the existing one wins).

    ``id_field`` names the external id in the file, for messages (``pk`` in a Sotopia profile).
    """

    external_id: str
    values: dict[str, Any]
    origin: Origin
    id_field: str = "external_id"


@dataclass
class CharacterRef:
    """A character wanted by a role or a seat: found by external id, else by name, else ``draft``."""

    origin: Origin
    external_id: str | None = None
    draft: CharacterDraft | None = None
    name: str | None = None
    noun: str = "character"


@dataclass
class GoalDraft:
    text: str
    tags: list[str] = field(default_factory=list)


def goals_from_text(text: str) -> list[GoalDraft]:
    """Goals written as one text (a Sotopia goal with its hints, an older Parley ``goal``): one a line."""
    return [GoalDraft(line) for line in goal_lines(text)]


@dataclass
class RoleDraft:
    position: int
    goals: list[GoalDraft]
    reason: str = ""
    private_knowledge: str = ""
    character: CharacterRef | None = None
    slot: dict[str, Any] = field(default_factory=dict)  # SLOT_FIELDS that are set
    goals_field: str = "goal"  # how the file names the goals, for messages


@dataclass
class ProbeDraft:
    about: int  # a role position
    topic: str
    text: str
    options: list[str]
    correct: int
    origin: Origin
    asked_of: str = Probe.AskedOf.OTHERS


@dataclass
class ScenarioDraft:
    external_id: str
    values: dict[str, Any]
    roles: list[RoleDraft]
    origin: Origin
    id_field: str = "external_id"
    probes: list[ProbeDraft] = field(default_factory=list)
    template: ScenarioDraft | None = None  # the template an instance was made from


@dataclass
class ScenarioRef:
    """A scenario an episode plays: found by external id, else created from ``draft`` if given."""

    external_id: str
    origin: Origin
    draft: ScenarioDraft | None = None
    noun: str = "scenario"


@dataclass
class SeatDraft:
    position: int
    role_position: int
    character: CharacterRef
    origin: Origin
    player: str = Seat.Player.AGENT
    model: str = ""
    strategy: str = Seat.Strategy.DEFAULT
    carries_barrier: bool = False


@dataclass
class TurnDraft:
    index: int
    seat_position: int
    action_type: str
    origin: Origin
    content: str = ""
    client_id: str | None = None
    model: str = ""
    latency_ms: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    created_at: datetime | None = None

    def __post_init__(self) -> None:
        # One kind of line break, as browsers show it: span offsets count characters on the page.
        self.content = self.content.replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class EvaluationDraft:
    evaluator: str
    dimension: str
    score: float
    origin: Origin
    seat_position: int | None = None
    prompt_version: str = ""
    reasoning: str = ""
    latency_ms: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    created_at: datetime | None = None


@dataclass
class EpisodeDraft:
    external_id: str
    scenario: ScenarioRef
    origin: Origin
    barrier_key: str = "none"
    source: str = Episode.Source.IMPORTED
    status: str = Episode.Status.FINISHED
    end_reason: str = Episode.EndReason.IMPORTED
    turn_cap: int = 20
    tag: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    seats: list[SeatDraft] = field(default_factory=list)
    turns: list[TurnDraft] = field(default_factory=list)
    evaluations: list[EvaluationDraft] = field(default_factory=list)
    id_field: str = "external_id"


@dataclass
class CheckedRecord:
    """A record that was validated and counted but has no place in Parley's schema."""

    kind: str


Draft = CharacterDraft | ScenarioDraft | EpisodeDraft | CheckedRecord


# --- checks shared by every format ----------------------------------------------------------------

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
            check_integer(value, where, low=min(Relationship.values), high=max(Relationship.values))
        elif name == "difficulty":
            check_choice(value, values_of(Difficulty), where)
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
        if values.get("turn_taking") != TurnTaking.RANDOM_AFTER_GREETING:
            raise origin.at("greeter").problem(
                f"only {TurnTaking.RANDOM_AFTER_GREETING!r} turn-taking has a greeter; set it to null"
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
    """Everything about one episode that does not need the database: seats, turns, evaluations."""
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
        if turn.action_type in SPEAKING_ACTIONS and not turn.content.strip():
            raise turn.origin.at("content").problem(f"a {turn.action_type!r} turn needs content")
        if turn.client_id is not None:
            if turn.client_id in client_ids:
                raise turn.origin.at("client_id").problem(f"client id {turn.client_id!r} appears twice")
            client_ids.add(turn.client_id)
            check_text(turn.client_id, turn.origin.at("client_id"), max_length=max_length(Turn, "client_id"))
        check_text(turn.model, turn.origin.at("model"), max_length=max_length(Turn, "model"))

    scored: set[tuple[str, str, int | None, str]] = set()
    for evaluation in draft.evaluations:
        dimension = DIMENSIONS.get(evaluation.dimension)
        if dimension is None:
            raise evaluation.origin.at("dimension").problem(
                f"{evaluation.dimension!r} is not one of {', '.join(DIMENSIONS)}"
            )
        if not dimension.contains(evaluation.score):
            raise evaluation.origin.at("score").problem(
                f"{evaluation.score:g} is outside [{dimension.low}, {dimension.high}] for {dimension.key}"
            )
        if dimension.per_seat and evaluation.seat_position is None:
            raise evaluation.origin.at("seat").problem(f"{dimension.key} is scored per seat; give the seat position")
        if not dimension.per_seat and evaluation.seat_position is not None:
            raise evaluation.origin.at("seat").problem(f"{dimension.key} is scored per episode; the seat must be null")
        if evaluation.seat_position is not None and evaluation.seat_position not in seats:
            raise evaluation.origin.at("seat").problem(
                f"no seat at position {evaluation.seat_position} (seats: {positions})"
            )
        key = (evaluation.evaluator, evaluation.prompt_version, evaluation.seat_position, evaluation.dimension)
        if key in scored:
            raise evaluation.origin.at("dimension").problem(
                f"{evaluation.evaluator} scored {evaluation.dimension} twice for the same seat"
            )
        scored.add(key)
        check_text(evaluation.evaluator, evaluation.origin.at("evaluator"), blank=False,
                   max_length=max_length(Evaluation, "evaluator"))
        check_text(evaluation.prompt_version, evaluation.origin.at("prompt_version"),
                   max_length=max_length(Evaluation, "prompt_version"))


def unique(values: Iterable[str]) -> list[str]:
    """The values in first-seen order, without repeats."""
    return list(dict.fromkeys(values))
