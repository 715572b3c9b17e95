"""What every import format is parsed into before anything touches the database.

Importing has two steps. A format's parser reads the file into drafts, checking every value as it
reads it and remembering where it came from (an :class:`Origin`: file, place, field), so a problem
is named exactly where it is; ``checks`` then checks each record as a whole (roles, probes, seats,
turns). ``saving.save`` resolves references (a Sotopia environment pk, a barrier key) and inserts
the drafts. The checks mirror the model constraints, so a file that passes them does not trip a
database constraint halfway through.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.db import models

from ..models import ActionType, Character, Episode, Probe, Seat
from ..models.scenarios import goal_lines
from .problems import ImportProblem

if TYPE_CHECKING:
    from .responses import ResponseDraft

# Speech and a physical action say something; a non-verbal turn may be a gesture no one described
# (Sotopia logs hold "[non-verbal communication] " with nothing after it), so it may be empty.
ACTIONS_NEEDING_CONTENT = (ActionType.SPEAK, ActionType.ACTION)
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


def action_words(action_type: str) -> str:
    """An action type as messages name it, in words ("non-verbal communication"), not as a value or enum."""
    try:
        return str(ActionType(action_type).label)
    except ValueError:
        return str(action_type)


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
    found: Character | None = None  # a stored character a format's ``resolve`` already found


@dataclass
class GoalDraft:
    text: str
    tags: list[str] = field(default_factory=list)
    goal_type: str = ""  # one of GoalType's values, or "" for none


def goals_from_text(text: str) -> list[GoalDraft]:
    """Goals written as one text (a Sotopia goal with its hints, an older Parley ``goal``): one a line."""
    return [GoalDraft(line) for line in goal_lines(text)]


@dataclass
class TopicDraft:
    """One issue of a negotiation (``Topic``): its options as ``[{"key", "text"}]``."""

    title: str
    question: str = ""
    options: list[dict[str, str]] = field(default_factory=list)


@dataclass
class PreferenceDraft:
    """What a role wants on the topic at ``topic`` (its index in ``ScenarioDraft.topics``; ``Preference``)."""

    topic: int
    ranking: list[str] = field(default_factory=list)
    unacceptable: list[str] = field(default_factory=list)
    text: str = ""


@dataclass
class RoleDraft:
    position: int
    goals: list[GoalDraft]
    reason: str = ""
    private_knowledge: str = ""
    communication: str = ""  # Communication's sender or receiver, or ""
    character: CharacterRef | None = None
    slot: dict[str, Any] = field(default_factory=dict)  # SLOT_FIELDS that are set
    goals_field: str = "goal"  # how the file names the goals, for messages
    preferences: list[PreferenceDraft] = field(default_factory=list)


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
class BarrierDefinition:
    """A team barrier to create when the team has none with this key (SocialVeil's composite condition)."""

    key: str
    values: dict[str, Any]  # Barrier fields besides the key and team
    cues_from: tuple[str, ...] = ()  # barriers whose cues and exemplar templates it takes over


@dataclass
class BarrierPromptDraft:
    """How the scenario is played under one barrier (``ScenarioBarrier``); ``barrier`` is made if missing."""

    barrier_key: str
    style_directive: str
    origin: Origin
    trait_note: str = ""
    positions: list[int] = field(default_factory=lambda: [0])
    barrier: BarrierDefinition | None = None


@dataclass
class ScenarioCastDraft:
    """Another cast of the scenario a library record describes (``Cast``): who plays the roles it names."""

    external_id: str
    label: str
    members: dict[int, CharacterRef]  # role position -> character; a role left out keeps its default
    origin: Origin


@dataclass
class ScenarioDraft:
    external_id: str
    values: dict[str, Any]
    roles: list[RoleDraft]
    origin: Origin
    id_field: str = "external_id"
    probes: list[ProbeDraft] = field(default_factory=list)
    template: ScenarioDraft | None = None  # the template an instance was made from
    barrier_prompts: list[BarrierPromptDraft] = field(default_factory=list)
    casts: list[ScenarioCastDraft] = field(default_factory=list)  # created with a new scenario only
    topics: list[TopicDraft] = field(default_factory=list)  # a negotiation's issues, created with a new scenario
    ignored: list[str] = field(default_factory=list)  # fields of the record not kept (ImportResult.ignored)


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
    start_s: float | None = None  # seconds into the episode's recording (SHREC), with the words' times
    end_s: float | None = None
    words: list[list[Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # One kind of line break, as browsers show it: span offsets count characters on the page.
        self.content = self.content.replace("\r\n", "\n").replace("\r", "\n")


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
    responses: list[ResponseDraft] = field(default_factory=list)  # checked by ``responses.check_responses``
    id_field: str = "external_id"
    skipped: Counter[str] = field(default_factory=Counter)  # what the file holds but cannot be read, by kind


@dataclass
class CastDraft:
    """Another cast of a scenario: ``characters[i]`` plays its ``i``-th role (in position order).

    The scenario and the characters must be in Parley already; ``first`` says what to import first
    when they are not.
    """

    external_id: str
    scenario: ScenarioRef
    characters: list[CharacterRef]
    origin: Origin
    first: str = "import the scenario and its characters first"
    id_field: str = "external_id"
    characters_field: str = "characters"


@dataclass
class CheckedRecord:
    """A record that was validated and counted but has no place in Parley's schema."""

    kind: str


# External ids of scenarios known only by their text (Sotopia's early v1 lines carry no environment id):
# a file that names the environment of such an episode cannot be checked against it.
TEXT_SCENARIO_PREFIX = "sotopia-text:"


@dataclass
class Remark:
    """What a file held that Parley does not keep (``ignored``: field name -> records) and sentences a
    researcher must read (``notes``), added to the ``ImportResult`` as they are."""

    ignored: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


Draft = CharacterDraft | ScenarioDraft | EpisodeDraft | CastDraft | CheckedRecord | Remark


def unique(values: Iterable[str]) -> list[str]:
    """The values in first-seen order, without repeats."""
    return list(dict.fromkeys(values))
