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

from ..evaluation import rubrics
from ..evaluation.respondents import respondent_fields
from ..models import ActionType, Character, Episode, Relationship, Respondent, Scenario, Seat, Turn
from ..models.scenarios import Difficulty
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
class RoleDraft:
    position: int
    goal: str
    reason: str = ""
    private_knowledge: str = ""
    character: CharacterRef | None = None


@dataclass
class ScenarioDraft:
    external_id: str
    values: dict[str, Any]
    roles: list[RoleDraft]
    origin: Origin
    id_field: str = "external_id"


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
class ScoreDraft:
    """One score by a named evaluator on one of the judge presets' dimensions.

    The shape of Sotopia's rewards and of the ``evaluations`` of Parley files written before
    instruments: :func:`responses_from_scores` makes them responses to the judge presets.
    """

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
class AnswerDraft:
    """One answer of a response: to the question with key ``question``, for a seat or goal if asked so."""

    question: str
    origin: Origin
    seat_position: int | None = None
    goal: tuple[int, int] | None = None  # (role position, goal position)
    value: str = ""
    number: float | None = None
    reasoning: str = ""


@dataclass
class ResponseDraft:
    """One respondent's answers to one instrument (named by name and version) about the episode."""

    instrument: str
    version: int
    respondent: dict[str, Any]  # Respondent fields: kind, model, prompt_version, label (never a user)
    origin: Origin
    seat_position: int | None = None
    created_at: datetime | None = None
    latency_ms: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    answers: list[AnswerDraft] = field(default_factory=list)


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
    scores: list[ScoreDraft] = field(default_factory=list)
    responses: list[ResponseDraft] = field(default_factory=list)
    id_field: str = "external_id"

    def all_responses(self) -> list[ResponseDraft]:
        """The responses given as such, then those made of scores in the older shape."""
        return [*self.responses, *responses_from_scores(self.scores)]


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
        if not role.goal.strip():
            raise origin.at(index).at("goal").problem("a role needs a goal")


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
    """Everything about one episode that does not need the database: seats, turns, scores and responses."""
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
    barrier_seats = [seat for seat in draft.seats if seat.carries_barrier]
    if len(barrier_seats) > 1:
        raise barrier_seats[1].origin.at("carries_barrier").problem("only one seat can carry the barrier")
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

    check_scores(draft.scores, seats, positions)
    check_responses(draft.responses, seats, positions)


# The judge presets' questions by dimension, for scores in the older shape (plain data, no query).
JUDGE_QUESTIONS = rubrics.JUDGE_DIMENSIONS


def check_scores(scores: Sequence[ScoreDraft], seats: Mapping[int, Any], positions: str) -> None:
    """Each score names a dimension of the judge presets, lies in its range, is given for a seat exactly
    when the dimension is scored per seat, and comes once per evaluator, prompt version, seat and dimension."""
    scored: set[tuple[str, str, int | None, str]] = set()
    for score in scores:
        found = JUDGE_QUESTIONS.get(score.dimension)
        if found is None:
            raise score.origin.at("dimension").problem(
                f"{score.dimension!r} is not one of {', '.join(JUDGE_QUESTIONS)}"
            )
        question = found[1]
        if not question.low <= score.score <= question.high:
            raise score.origin.at("score").problem(
                f"{score.score:g} is outside [{question.low}, {question.high}] for {question.key}"
            )
        per_seat = question.scope == rubrics.SEAT
        if per_seat and score.seat_position is None:
            raise score.origin.at("seat").problem(f"{question.key} is scored per seat; give the seat position")
        if not per_seat and score.seat_position is not None:
            raise score.origin.at("seat").problem(f"{question.key} is scored per episode; the seat must be null")
        if score.seat_position is not None and score.seat_position not in seats:
            raise score.origin.at("seat").problem(f"no seat at position {score.seat_position} (seats: {positions})")
        key = (score.evaluator, score.prompt_version, score.seat_position, score.dimension)
        if key in scored:
            raise score.origin.at("dimension").problem(
                f"{score.evaluator} scored {score.dimension} twice for the same seat"
            )
        scored.add(key)
        name = respondent_fields(score.evaluator)
        field_name = "model" if name["model"] else "label"
        check_text(score.evaluator, score.origin.at("evaluator"), blank=False,
                   max_length=max_length(Respondent, field_name))
        check_text(score.prompt_version, score.origin.at("prompt_version"),
                   max_length=max_length(Respondent, "prompt_version"))


def check_responses(responses: Sequence[ResponseDraft], seats: Mapping[int, Any], positions: str) -> None:
    """What a response needs without the database: known seats, one answer per question, seat, goal and
    value, and a respondent named as its kind requires. The questions themselves are checked on saving."""
    for response in responses:
        respondent = response.respondent
        if respondent["kind"] in (Respondent.Kind.JUDGE, Respondent.Kind.AGENT) and not respondent["model"]:
            raise response.origin.at("respondent").at("model").problem(
                f"a respondent of kind {respondent['kind']!r} needs its model's name"
            )
        if not respondent["model"] and not respondent["label"]:
            raise response.origin.at("respondent").problem("a respondent needs a model or a label")
        for name in ("model", "prompt_version", "label"):
            check_text(respondent[name], response.origin.at("respondent").at(name),
                       max_length=max_length(Respondent, name))
        if response.seat_position is not None and response.seat_position not in seats:
            raise response.origin.at("seat").problem(
                f"no seat at position {response.seat_position} (seats: {positions})"
            )
        given: set[tuple[str, int | None, tuple[int, int] | None, str]] = set()
        for answer in response.answers:
            if answer.seat_position is not None and answer.seat_position not in seats:
                raise answer.origin.at("seat").problem(
                    f"no seat at position {answer.seat_position} (seats: {positions})"
                )
            key = (answer.question, answer.seat_position, answer.goal, answer.value)
            if key in given:
                raise answer.origin.at("question").problem(
                    f"{answer.question!r} is answered twice with the same value for the same seat and goal"
                )
            given.add(key)


def _number_text(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def responses_from_scores(scores: Sequence[ScoreDraft]) -> list[ResponseDraft]:
    """Scores grouped into responses: one per (evaluator, prompt version, judge preset), in first-seen order.

    The evaluator becomes the respondent (``benchmark.evaluation.respondents``); the response takes the
    earliest time of its scores and the usage of its first score that has one (a judge call writes the
    same usage on every score).
    """
    grouped: dict[tuple[str, str, str], list[ScoreDraft]] = {}
    for score in scores:
        rubric, _ = JUDGE_QUESTIONS[score.dimension]
        grouped.setdefault((score.evaluator, score.prompt_version, rubric.preset), []).append(score)
    responses = []
    for (evaluator, prompt_version, preset), members in grouped.items():
        rubric = next(r for r in rubrics.JUDGE_RUBRICS if r.preset == preset)
        fields = respondent_fields(evaluator, prompt_version)
        fields.pop("user")
        times = [score.created_at for score in members if score.created_at is not None]
        usage = next((s for s in members if (s.latency_ms, s.prompt_tokens, s.completion_tokens) != (None,) * 3),
                     members[0])
        responses.append(ResponseDraft(
            instrument=rubric.name, version=rubric.version, respondent=fields, origin=members[0].origin,
            created_at=min(times) if times else None, latency_ms=usage.latency_ms,
            prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
            answers=[
                AnswerDraft(score.dimension, score.origin, seat_position=score.seat_position,
                            value=_number_text(score.score), number=score.score, reasoning=score.reasoning)
                for score in members
            ],
        ))
    return responses


def unique(values: Iterable[str]) -> list[str]:
    """The values in first-seen order, without repeats."""
    return list(dict.fromkeys(values))
