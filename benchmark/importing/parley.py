"""Parley's own format: JSON Lines, one whole episode per line (see ``docs/formats.md``).

A line carries everything needed to rebuild the episode in an empty database: the scenario with its
roles and their goals, its probes, turn-taking and the template it was made from, each seat's
character in full, the turns and every response (a judge's, an interviewed agent's, imported human
ratings) with its answers. ``benchmark.exporting`` writes the same shape, so export, import and
export again gives the same bytes. Older files still read: a role's ``goal`` as one text (one goal
a line), and ``evaluations`` (one score per evaluator, dimension and seat) from before instruments,
read as responses to the judge presets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..instruments import kinds
from ..models import ActionType, Character, Episode, Instrument, Probe, Question, Respondent, Role, Scenario, Seat
from ..models.scenarios import Category, Communication, Difficulty, GoalType, TurnTaking
from .checks import (
    check_character_values,
    check_episode,
    check_roles,
    check_scenario_shape,
    check_scenario_values,
)
from .reading import check_line_size, load_json
from .records import (
    CHARACTER_FIELDS,
    MAX_INTEGER,
    MAX_SMALL_INTEGER,
    MAX_TURN_CHARS,
    BarrierPromptDraft,
    CharacterDraft,
    CharacterRef,
    Draft,
    EpisodeDraft,
    Fields,
    GoalDraft,
    Origin,
    ProbeDraft,
    RoleDraft,
    ScenarioDraft,
    ScenarioRef,
    SeatDraft,
    TurnDraft,
    check_integer,
    goals_from_text,
    max_length,
    values_of,
)
from .responses import (
    AnswerDraft,
    InstrumentDraft,
    ResponseDraft,
    ScoreDraft,
    check_responses,
    scores_to_responses,
)

FORMAT_VERSION = 1


def json_lines(text: str, file: str) -> list[tuple[Origin, Any]]:
    """Each non-blank line decoded and checked (``reading``), with its origin (``line N``).

    Lines are split on ``\\n`` only: JSON text may hold other Unicode line separators inside strings.
    """
    records = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        origin = Origin(file, f"line {number}")
        check_line_size(line, origin)
        records.append((origin, load_json(line, origin)))
    return records


def recognises(first: object) -> bool:
    """A Parley episode line: ``format_version``, or ``scenario`` and ``seats``."""
    return isinstance(first, dict) and ("format_version" in first or {"seats", "scenario"} <= first.keys())


def parse(text: str, file: str) -> list[Draft]:
    return [episode(Fields(record, origin)) for origin, record in json_lines(text, file)]


def check_version(fields: Fields) -> None:
    """Refuse a line of a format version this Parley does not read (none given: this one)."""
    version = fields.integer("format_version", default=FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise fields.origin.at("format_version").problem(
            f"this Parley reads format version {FORMAT_VERSION}, not {version}"
        )


def episode(fields: Fields) -> EpisodeDraft:
    check_version(fields)
    scenario_fields = fields.nested("scenario")
    scenario_draft = scenario(scenario_fields)
    if scenario_draft.values["is_template"]:
        raise scenario_fields.origin.at("is_template").problem(
            "an episode cannot be played in a template; give the scenario instantiated from it"
        )
    end_reason = fields.text("end_reason")
    if end_reason and end_reason not in Episode.EndReason.values:
        raise fields.origin.at("end_reason").problem(
            f"{end_reason!r} is not one of {', '.join(values_of(Episode.EndReason))} (or empty)"
        )
    draft = EpisodeDraft(
        external_id=fields.text(
            "external_id", required=True, blank=False, max_length=max_length(Episode, "external_id")
        ),
        scenario=ScenarioRef(scenario_draft.external_id, scenario_fields.origin, draft=scenario_draft),
        origin=fields.origin,
        barrier_key=fields.text("barrier", required=True, blank=False),
        source=fields.choice("source", values_of(Episode.Source), required=True),
        status=fields.choice("status", values_of(Episode.Status), required=True),
        end_reason=end_reason,
        turn_cap=fields.integer("turn_cap", default=20, low=1, high=MAX_SMALL_INTEGER),
        tag=fields.text("tag", max_length=max_length(Episode, "tag")),
        settings=fields.mapping("settings"),
        created_at=fields.timestamp("created_at"),
        started_at=fields.timestamp("started_at"),
        finished_at=fields.timestamp("finished_at"),
        seats=[seat(item) for item in fields.objects("seats", required=True)],
        turns=[turn(item) for item in fields.objects("turns")],
    )
    check_episode(draft)
    scores = [score(item) for item in fields.objects("evaluations")]
    draft.responses = [
        *(response(item) for item in fields.objects("responses")),
        *scores_to_responses(scores, [seat.position for seat in draft.seats]),
    ]
    check_responses(draft)
    return draft


def character(fields: Fields) -> CharacterRef:
    external_id = fields.text(
        "external_id", required=True, blank=False, max_length=max_length(Character, "external_id")
    )
    values: dict[str, Any] = {name: fields.text(name) for name in CHARACTER_FIELDS if name != "age"}
    values["first_name"] = fields.text("first_name", required=True, blank=False)
    values["age"] = fields.integer("age", low=0, high=130)
    check_character_values(values, fields.origin)
    draft = CharacterDraft(external_id, values, fields.origin)
    return CharacterRef(fields.origin, external_id=external_id, draft=draft)


def character_reference(fields: Fields) -> CharacterRef:
    """A role's character named by external id: a character record of the file, or one the team has."""
    external_id = fields.text("character", blank=False, max_length=max_length(Character, "external_id"))
    return CharacterRef(fields.origin.at("character"), external_id=external_id)


def scenario(fields: Fields, *, templates: Mapping[str, ScenarioDraft] | None = None) -> ScenarioDraft:
    """A scenario in full; in a library file (``templates``: the templates read so far, by external id)
    the template and the roles' characters are named by external id, as records of their own."""
    values: dict[str, Any] = {
        "codename": fields.text("codename"),
        "source": fields.text("source"),
        "context": fields.text("context", required=True, blank=False),
        "original_context": fields.text("original_context"),
        "difficulty": fields.choice("difficulty", values_of(Difficulty), default=Difficulty.STANDARD),
        # Absent: strangers, as Parley's default; null: unknown, as an export writes a scenario without one.
        "relationship": fields.integer("relationship") if "relationship" in fields.data else 0,
        "category": fields.choice("category", values_of(Category)),
    }
    check_scenario_values(values, fields.origin)
    values.update(
        turn_taking=fields.choice("turn_taking", values_of(TurnTaking), default=TurnTaking.ROUND_ROBIN),
        greeter_position=fields.integer("greeter", low=0, high=MAX_SMALL_INTEGER),
        turn_cap=fields.integer("turn_cap", low=1, high=MAX_SMALL_INTEGER),
        is_template=fields.boolean("is_template"),
    )
    roles = [role(item, by_reference=templates is not None) for item in fields.objects("roles", required=True)]
    check_roles(roles, fields.origin.at("roles"))
    external_id = fields.text("external_id", required=True, blank=False, max_length=max_length(Scenario, "external_id"))
    draft = ScenarioDraft(
        external_id, values, roles, fields.origin,
        probes=[probe(item) for item in fields.objects("probes")],
        template=template(fields, templates) if fields.has("template") else None,
        barrier_prompts=[barrier_prompt(item) for item in fields.objects("barrier_prompts")],
    )
    check_scenario_shape(draft)
    return draft


def barrier_prompt(fields: Fields) -> BarrierPromptDraft:
    """The scenario's own prompt for a barrier of the team (``ScenarioBarrier``)."""
    origin = fields.origin.at("barrier_seats")
    positions = [
        check_integer(item, origin.at(index), low=0, high=MAX_SMALL_INTEGER)
        for index, item in enumerate(fields.sequence("barrier_seats", required=True))
    ]
    if not positions or len(set(positions)) != len(positions):
        raise origin.problem("give each barrier seat once, at least one")
    return BarrierPromptDraft(
        barrier_key=fields.text("barrier", required=True, blank=False),
        style_directive=fields.text("style_directive", required=True, blank=False),
        origin=fields.origin,
        trait_note=fields.text("trait_note"),
        positions=positions,
    )


def template(fields: Fields, templates: Mapping[str, ScenarioDraft] | None) -> ScenarioDraft:
    """The template a scenario was made from: in full, or (a library) the external id of one given above."""
    if templates is None:
        return scenario(fields.nested("template"))
    external_id = fields.text("template", blank=False)
    if external_id not in templates:
        raise fields.origin.at("template").problem(
            f"{external_id!r} is not a template given above this line; a library gives each template before "
            "the scenarios made from it"
        )
    return templates[external_id]


def role(fields: Fields, *, by_reference: bool = False) -> RoleDraft:
    """A role; its goals are a list of ``{"text", "tags"}``, or (older files) one ``goal`` text.

    ``by_reference``: the character is named by its external id (a library's character record, or
    one the team has), not given in full."""
    if fields.has("goals") or not fields.has("goal"):
        goals = [
            GoalDraft(
                item.text("text", required=True, blank=False), item.texts("tags"),
                goal_type=item.choice("goal_type", values_of(GoalType)),
            )
            for item in fields.objects("goals", required=True)
        ]
        goals_field = "goals"
    else:
        goals, goals_field = goals_from_text(fields.text("goal", required=True, blank=False)), "goal"
    slot: dict[str, Any] = {}
    if fields.has("slot"):
        constraints = fields.nested("slot")
        slot = {
            "min_age": constraints.integer("min_age", low=0, high=130),
            "max_age": constraints.integer("max_age", low=0, high=130),
            "gender": constraints.text("gender", max_length=max_length(Role, "gender")),
            "occupation": constraints.text("occupation", max_length=max_length(Role, "occupation")),
        }
        slot = {name: value for name, value in slot.items() if value not in (None, "")}
    return RoleDraft(
        position=fields.integer("position", required=True, low=0, high=MAX_SMALL_INTEGER),
        goals=goals,
        reason=fields.text("reason"),
        private_knowledge=fields.text("private_knowledge"),
        communication=fields.choice("communication", values_of(Communication)),
        character=None if not fields.has("character") else (
            character_reference(fields) if by_reference else character(fields.nested("character"))
        ),
        slot=slot,
        goals_field=goals_field,
    )


def probe(fields: Fields) -> ProbeDraft:
    return ProbeDraft(
        about=fields.integer("about", required=True, low=0, high=MAX_SMALL_INTEGER),
        topic=fields.choice("topic", values_of(Probe.Topic), required=True),
        text=fields.text("text", required=True, blank=False),
        options=fields.texts("options", required=True),
        correct=fields.integer("correct", required=True, low=0, high=MAX_SMALL_INTEGER),
        origin=fields.origin,
        asked_of=fields.choice("asked_of", values_of(Probe.AskedOf), default=Probe.AskedOf.OTHERS),
    )


def seat(fields: Fields) -> SeatDraft:
    return SeatDraft(
        position=fields.integer("position", required=True, low=0, high=MAX_SMALL_INTEGER),
        role_position=fields.integer("role", required=True, low=0, high=MAX_SMALL_INTEGER),
        character=character(fields.nested("character")),
        origin=fields.origin,
        player=fields.choice("player", values_of(Seat.Player), default=Seat.Player.AGENT),
        model=fields.text("model"),
        strategy=fields.choice("strategy", values_of(Seat.Strategy), default=Seat.Strategy.DEFAULT),
        carries_barrier=fields.boolean("carries_barrier"),
    )


def turn(fields: Fields) -> TurnDraft:
    return TurnDraft(
        index=fields.integer("index", required=True, low=0, high=MAX_INTEGER),
        seat_position=fields.integer("seat", required=True),
        action_type=fields.choice("action_type", values_of(ActionType), required=True),
        origin=fields.origin,
        content=fields.text("content", max_length=MAX_TURN_CHARS),
        client_id=fields.optional_text("client_id"),
        model=fields.text("model"),
        latency_ms=fields.integer("latency_ms", low=0, high=MAX_INTEGER),
        prompt_tokens=fields.integer("prompt_tokens", low=0, high=MAX_INTEGER),
        completion_tokens=fields.integer("completion_tokens", low=0, high=MAX_INTEGER),
        created_at=fields.timestamp("created_at"),
    )


def score(fields: Fields) -> ScoreDraft:
    """A score of the older ``evaluations`` list."""
    return ScoreDraft(
        evaluator=fields.text("evaluator", required=True, blank=False),
        dimension=fields.text("dimension", required=True, blank=False),
        score=fields.number("score", required=True),
        origin=fields.origin,
        seat_position=fields.integer("seat"),
        prompt_version=fields.text("prompt_version"),
        reasoning=fields.text("reasoning"),
        latency_ms=fields.integer("latency_ms", low=0, high=MAX_INTEGER),
        prompt_tokens=fields.integer("prompt_tokens", low=0, high=MAX_INTEGER),
        completion_tokens=fields.integer("completion_tokens", low=0, high=MAX_INTEGER),
        created_at=fields.timestamp("created_at"),
    )


def response(fields: Fields) -> ResponseDraft:
    instrument = fields.nested("instrument")
    respondent = fields.nested("respondent")
    kind = respondent.choice("kind", values_of(Respondent.Kind), required=True)
    return ResponseDraft(
        instrument=instrument.text("name", required=True, blank=False, max_length=max_length(Instrument, "name")),
        version=instrument.integer("version", required=True, low=1, high=MAX_INTEGER),
        respondent={
            "kind": kind,
            "model": respondent.text("model"),
            "prompt_version": respondent.text("prompt_version"),
            "label": respondent.text("label"),
        },
        origin=fields.origin,
        seat_position=fields.integer("seat", low=0, high=MAX_SMALL_INTEGER),
        created_at=fields.timestamp("created_at"),
        latency_ms=fields.integer("latency_ms", low=0, high=MAX_INTEGER),
        prompt_tokens=fields.integer("prompt_tokens", low=0, high=MAX_INTEGER),
        completion_tokens=fields.integer("completion_tokens", low=0, high=MAX_INTEGER),
        answers=[answer(item) for item in fields.objects("answers")],
        definition=instrument_definition(instrument) if instrument.has("questions") else None,
    )


def instrument_definition(fields: Fields) -> InstrumentDraft:
    """A team's instrument in full: its questions, each as the Question model takes it."""
    questions = []
    keys: set[str] = set()
    for item in fields.objects("questions", required=True):
        question = {
            "key": item.text("key", required=True, blank=False, max_length=max_length(Question, "key")),
            "position": item.integer("position", required=True, low=0, high=MAX_SMALL_INTEGER),
            "kind": item.choice("kind", kinds.names(lambda kind: True), required=True),
            "prompt": item.text("prompt", required=True, blank=False),
            "label": item.text("label", max_length=max_length(Question, "label")),
            "help_text": item.text("help_text"),
            "required": item.boolean("required", default=True),
            "scope": item.choice("scope", values_of(Question.Scope), default=Question.Scope.EPISODE),
            "rationale": item.choice("rationale", ["none", "optional", "required"], default="none"),
            "options": item.mapping("options"),
            "low": item.number("low"),
            "high": item.number("high"),
            "dimension": item.text("dimension", max_length=max_length(Question, "dimension")),
            "truth": item.text("truth", max_length=max_length(Question, "truth")),
        }
        if question["key"] in keys:
            raise item.origin.at("key").problem(f"question {question['key']!r} appears twice in this instrument")
        keys.add(question["key"])
        if question["low"] is not None and question["high"] is not None and question["low"] > question["high"]:
            raise item.origin.at("high").problem(f"{question['high']:g} is below low {question['low']:g}")
        questions.append(question)
    if len({question["position"] for question in questions}) != len(questions):
        raise fields.origin.at("questions").problem("two questions have the same position")
    return InstrumentDraft(
        preset=fields.text("preset", max_length=max_length(Instrument, "preset")),
        description=fields.text("description"),
        questions=questions,
        origin=fields.origin,
    )


def answer(fields: Fields) -> AnswerDraft:
    goal = None
    if fields.has("goal"):
        where = fields.nested("goal")
        goal = (
            where.integer("role", required=True, low=0, high=MAX_SMALL_INTEGER),
            where.integer("position", required=True, low=0, high=MAX_SMALL_INTEGER),
        )
    return AnswerDraft(
        question=fields.text("question", required=True, blank=False),
        origin=fields.origin,
        seat_position=fields.integer("seat", low=0, high=MAX_SMALL_INTEGER),
        goal=goal,
        value=fields.text("value"),
        number=fields.number("number"),
        reasoning=fields.text("reasoning"),
    )
