"""What a run is asked to do: the options of ``manage.py simulate`` and of the launch form, checked.

Options are stored on ``SimulationRun.options`` as JSON, so a worker started later (or on another
machine) reads exactly what was asked. A bad value is refused with the option's name, which is
also the form field's name, so the page can show the message beside it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..agents import llm
from ..agents.allowed_models import ModelNotAllowed, check_models
from ..evaluation.judge import judge_models
from ..models import Communication, Seat
from ..models.scenarios import Difficulty

DEFAULT_CONDITIONS: tuple[str, ...] = ("none", "semantic", "sociocultural", "emotional")
NO_JUDGE = "none"  # judge_model value that leaves a run's episodes unscored
DEFAULT_CAST = "default"  # casts entry: the roles' default characters
ALL_CASTS = "all"  # casts entry: every cast of each chosen scenario
_LIMITS: dict[str, tuple[float, float]] = {
    "episodes_per_cell": (1, 1000),
    "turn_cap": (1, 1000),
    "temperature": (0.0, 2.0),
    "concurrency": (1, 4096),
    "seed": (0, 2**31 - 1),
}
# Options runs once had that no longer do anything; stored runs that have them still load.
RETIRED_OPTIONS = frozenset({"workers"})  # processes per run, before runs were chunks on the task queue
MAX_POSITION = 100  # the highest role position a run may name as a barrier seat
SEAT_LABELS = tuple(Communication.values)  # the role labels a seat model may name: sender, receiver
PROMEDIATE = "promediate"  # preset: ProMediate negotiations, one more grid axis (the mediator condition)
PRESETS = ("", PROMEDIATE)
MEDIATORS = ("none", "generic", "social")
# Options added for the ProMediate preset; left out of a run's derived name at their defaults, so runs
# named before them keep their names.
PROMEDIATE_OPTIONS = (
    "preset", "mediators", "party_model", "mediator_model", "articulation_model", "persona_to_mediator"
)


class RunOptionsError(ValueError):
    """Options that cannot make a run; ``option`` names the offending option (a form field name)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class RunOptions:
    """What ``manage.py simulate`` takes; stored as ``SimulationRun.options``.

    ``scenarios`` are ids or codenames (empty: every scenario), ``difficulties`` narrow them by
    difficulty tag, ``conditions`` are barrier keys. An empty model name means the configured
    one (``PARLEY_AGENT_MODEL`` / ``PARLEY_PARTNER_MODEL``, else the scripted model).
    ``concurrency`` changes how fast a run goes, never what it produces.
    ``judge_model`` scores the finished episodes at the end of the run (empty: the configured
    judge, else the offline scripted heuristics; several names separated by commas: each of them;
    ``"none"``: leave them unscored); the judge does not shape the episodes, so it is not part of
    the derived run name. Nor does ``interview``, which asks each agent seat of a finished episode
    about the goals and probes (``benchmark.evaluation.interviews``) and has the judges answer every
    goal (``benchmark.evaluation.goal_judge``). ``barrier_seats`` are the role
    positions that speak under the condition (the first role by default; ``barrier_seat``, one
    position, is the older spelling). ``casts`` says who plays the roles, each cast its own cell:
    ``default`` (the roles' default characters), ``all`` (every cast of each chosen scenario,
    ``benchmark.models.casts``), and cast ids or external ids; cast ids alone, with no scenarios
    named, choose the scenarios they belong to.

    ``preset`` ``promediate`` plays ProMediate negotiations (``benchmark.runs.negotiation``): the
    conditions are conflict modes (barriers ``promediate-<mode>``, the persona given to every party
    seat, and to the mediator too with ``persona_to_mediator``), ``mediators`` the mediator
    conditions (``none``, ``generic``, ``social``; all three by default), each a cell of its own;
    ``party_model`` plays the parties, ``mediator_model`` the mediator (both default to the agent
    model), ``articulation_model`` says the social mediator's chosen strategy (default: the mediator
    model); ``episodes_per_cell`` is the number of runs.
    """

    scenarios: tuple[str, ...] = ()
    difficulties: tuple[str, ...] = ()
    conditions: tuple[str, ...] = DEFAULT_CONDITIONS
    agent_model: str = ""
    partner_model: str = ""
    strategy: str = Seat.Strategy.DEFAULT.value
    episodes_per_cell: int = 1
    turn_cap: int = 20
    temperature: float = 0.7
    concurrency: int = 8
    seed: int = 0
    barrier_seats: tuple[str, ...] = ("0",)
    judge_model: str = ""
    interview: bool = False
    seat_models: tuple[str, ...] = ()
    casts: tuple[str, ...] = (DEFAULT_CAST,)
    preset: str = ""
    mediators: tuple[str, ...] = ()
    party_model: str = ""
    mediator_model: str = ""
    articulation_model: str = ""
    persona_to_mediator: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunOptions:
        """Options from stored JSON (or a form); unknown keys and wrong types are refused."""
        known = {f.name: f for f in fields(cls)}
        if "barrier_seat" in data and "barrier_seats" not in data:  # stored before a run could name several
            data = {**data, "barrier_seats": [data["barrier_seat"]]}
            del data["barrier_seat"]
        data = {key: value for key, value in data.items() if key not in RETIRED_OPTIONS}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise RunOptionsError(unknown[0], f"Unknown run option(s): {', '.join(unknown)}.")
        values: dict[str, Any] = {}
        for name, value in data.items():
            default = getattr(cls, name)
            try:
                if isinstance(default, tuple):
                    items = value.split(",") if isinstance(value, str) else list(value)
                    values[name] = tuple(str(item).strip() for item in items if str(item).strip())
                elif isinstance(default, bool):
                    if value not in (True, False, 0, 1, "true", "false", "on", ""):
                        raise ValueError(value)
                    values[name] = value in (True, 1, "true", "on")
                elif isinstance(default, int):
                    if isinstance(value, float) and not value.is_integer():
                        raise ValueError(value)
                    values[name] = int(value)
                elif isinstance(default, float):
                    values[name] = float(value)
                else:
                    values[name] = str(value).strip()
            except (TypeError, ValueError):
                raise RunOptionsError(name, f"{name.replace('_', ' ')}: {value!r} is not a valid value.") from None
        options = cls(**values)
        options.check()
        return options

    def as_dict(self) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}

    def check(self) -> None:
        """Refuse values no run can use, naming the option and the allowed range."""
        for name, (low, high) in _LIMITS.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise RunOptionsError(
                    name, f"{name.replace('_', ' ')} must be between {low:g} and {high:g}; got {value:g}."
                )
        if self.strategy not in Seat.Strategy.values:
            raise RunOptionsError(
                "strategy", f"Unknown strategy {self.strategy!r}; use one of {', '.join(Seat.Strategy.values)}."
            )
        if not self.conditions:
            raise RunOptionsError("conditions", "Choose at least one condition.")
        if not self.casts:
            raise RunOptionsError(
                "casts", f"Choose who plays the roles: '{DEFAULT_CAST}', '{ALL_CASTS}' or cast ids, comma-separated."
            )
        if len(set(self.casts)) != len(self.casts):
            raise RunOptionsError("casts", "A cast is listed twice.")
        if not self.barrier_seats:
            raise RunOptionsError("barrier_seats", "Name at least one barrier seat (a role position such as 0).")
        wrong = [s for s in self.barrier_seats if not s.isdigit() or int(s) > MAX_POSITION]
        if wrong:
            raise RunOptionsError(
                "barrier_seats",
                f"barrier seats are role positions from 0 to {MAX_POSITION}; got {', '.join(map(repr, wrong))}.",
            )
        if len(set(self.barrier_positions)) != len(self.barrier_seats):
            raise RunOptionsError("barrier_seats", "A barrier seat is listed twice.")
        unknown = [d for d in self.difficulties if d not in Difficulty.values]
        if unknown:
            raise RunOptionsError(
                "difficulties",
                f"Unknown difficulty tag(s) {', '.join(map(repr, unknown))}; known: {', '.join(Difficulty.values)}.",
            )
        self.seat_model_map()  # refuses a malformed entry, naming it
        self.check_preset()
        if self.judge_model and self.judge_model != NO_JUDGE:
            try:
                names = judge_models(self.judge_model)
            except ValueError:
                names = []
            if not names or NO_JUDGE in names:
                raise RunOptionsError(
                    "judge_model",
                    f"Judge: name a model, or several separated by commas, or '{NO_JUDGE}' alone to leave the "
                    f"episodes unscored; got {self.judge_model!r}.",
                )

    def check_preset(self) -> None:
        if self.preset not in PRESETS:
            raise RunOptionsError("preset", f"Unknown preset {self.preset!r}; the one preset is '{PROMEDIATE}'.")
        if self.preset != PROMEDIATE:
            for name in PROMEDIATE_OPTIONS[1:]:
                if getattr(self, name) != getattr(RunOptions, name):
                    raise RunOptionsError(name, f"{name.replace('_', ' ')} is an option of the '{PROMEDIATE}' preset.")
            return
        unknown = [mediator for mediator in self.mediators if mediator not in MEDIATORS]
        if unknown:
            raise RunOptionsError(
                "mediators",
                f"Unknown mediator condition(s) {', '.join(map(repr, unknown))}; use {', '.join(MEDIATORS)}.",
            )
        if len(set(self.mediators)) != len(self.mediators):
            raise RunOptionsError("mediators", "A mediator condition is listed twice.")

    @property
    def mediator_conditions(self) -> tuple[str, ...]:
        """The mediator conditions a ProMediate run plays (all three unless some are named)."""
        return self.mediators or MEDIATORS

    def check_models(self, team_slug: str) -> None:
        """Refuse a model the team may not call (``benchmark.agents.allowed_models``), naming its option."""
        named = {
            "agent_model": [self.agent_model],
            "partner_model": [self.partner_model],
            "seat_models": list(self.seat_model_map().values()),
            "judge_model": judge_models(self.judge_model) if self.judge_model else [],
            "party_model": [self.party_model],
            "mediator_model": [self.mediator_model],
            "articulation_model": [self.articulation_model],
        }
        for option, models in named.items():
            try:
                check_models(models, team_slug)
            except ModelNotAllowed as problem:
                raise RunOptionsError(option, str(problem)) from None

    def seat_model_map(self) -> dict[str, str]:
        """``seat_models`` as {"sender" | "receiver" | "<position>": model}; a bad entry is refused."""
        found: dict[str, str] = {}
        for entry in self.seat_models:
            seat, _, model = (part.strip() for part in entry.partition("="))
            seat = seat.lower()
            if not model or not (seat in SEAT_LABELS or (seat.isdigit() and int(seat) <= MAX_POSITION)):
                raise RunOptionsError(
                    "seat_models",
                    f"seat models: {entry!r} is not SEAT=MODEL, where SEAT is sender, receiver or a role position "
                    f"from 0 to {MAX_POSITION} (e.g. sender=openai/gpt-4o,receiver=scripted).",
                )
            seat = str(int(seat)) if seat.isdigit() else seat
            if seat in found:
                raise RunOptionsError("seat_models", f"seat models: {seat} is given a model twice.")
            found[seat] = model
        return found

    @property
    def barrier_positions(self) -> tuple[int, ...]:
        return tuple(int(seat) for seat in self.barrier_seats)

    def resolved(self) -> RunOptions:
        """The same options with the configured model names filled in for empty ones."""
        agent = self.agent_model or llm.model_for("agent")
        negotiation = (
            {
                "party_model": self.party_model or agent,
                "mediator_model": self.mediator_model or agent,
                "mediators": self.mediator_conditions,
            }
            if self.preset == PROMEDIATE
            else {}
        )
        return RunOptions(
            **{
                **asdict(self),
                "agent_model": agent,
                "partner_model": self.partner_model or llm.model_for("partner"),
                "judge_model": self.judge_model or llm.model_for("judge"),
                **negotiation,
            }
        )

    def default_tag(self) -> str:
        """A run name derived from everything that shapes the episodes, so the same command resumes."""
        speed_and_scoring = {"concurrency", "judge_model", "interview"}
        shaping = {k: v for k, v in self.resolved().as_dict().items() if k not in speed_and_scoring}
        if not self.seat_models:  # runs named before seats could have their own models keep their names
            del shaping["seat_models"]
        if self.casts == (DEFAULT_CAST,):  # and so do runs named before scenarios had other casts
            del shaping["casts"]
        defaults = RunOptions().as_dict()
        for name in PROMEDIATE_OPTIONS:  # nor do runs named before the ProMediate preset
            if shaping[name] == defaults[name]:
                del shaping[name]
        if len(self.barrier_seats) == 1:  # as named before a run could name several, so old names resume
            shaping["barrier_seat"] = self.barrier_positions[0]
            del shaping["barrier_seats"]
        digest = hashlib.sha1(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:10]
        return f"sim-{digest}"


_OPTION_LABELS = {
    "scenarios": ("Scenarios", "every scenario"),
    "difficulties": ("Difficulty tags", "any"),
    "conditions": ("Conditions", ""),
    "agent_model": ("Barrier seat's model", "configured"),
    "partner_model": ("Partner's model", "configured"),
    "judge_model": ("Judge", "configured"),
    "strategy": ("Partner strategy", ""),
    "episodes_per_cell": ("Episodes per cell", ""),
    "turn_cap": ("Turn cap", ""),
    "temperature": ("Temperature", ""),
    "concurrency": ("Concurrency", ""),
    "seed": ("Seed", ""),
    "barrier_seats": ("Barrier seats (role positions)", ""),
    "barrier_seat": ("Barrier seat (role position)", ""),
    "interview": ("Interview the agents", ""),
    "seat_models": ("Models by seat", "none"),
    "casts": ("Casts", DEFAULT_CAST),
    "preset": ("Preset", ""),
    "mediators": ("Mediator conditions", ""),
    "party_model": ("Parties' model", ""),
    "mediator_model": ("Mediator's model", ""),
    "articulation_model": ("Social mediator's articulation model", "the mediator's"),
    "persona_to_mediator": ("Persona to the mediator too", ""),
}


def describe_options(options: dict[str, Any]) -> list[tuple[str, str]]:
    """A run's stored options as (label, text) pairs, in a fixed order, empty values spelled out; the ProMediate
    preset's options only for a run of that preset."""
    rows = []
    for key, (label, empty) in _OPTION_LABELS.items():
        if key not in options or (key in PROMEDIATE_OPTIONS and options.get("preset") != PROMEDIATE):
            continue
        value = options[key]
        text = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        rows.append((label, text or empty))
    return rows
