"""A run's plan: scenarios × casts × conditions × episodes per cell, then its episodes in the database.

Each planned episode has an external id made from the run's tag, the scenario, the cast (none for
the roles' default characters), the condition and its number in the cell, so planning the same run
again finds the same episodes: that is what makes a run resumable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils.text import slugify

from ..agents.negotiation import prompts as negotiation_prompts
from ..models import Barrier, Cast, Episode, Role, Scenario, ScenarioBarrier, Team, Topic, TurnTaking
from ..scenarios.turn_taking import check_greeter, turn_cap_for
from .negotiation import mode_of
from .options import ALL_CASTS, DEFAULT_CAST, PROMEDIATE, RunOptions, RunOptionsError
from .simulation import create_episode

EXTERNAL_ID_LENGTH = 100  # Episode.external_id
PREPARE_BATCH = 500


@dataclass(frozen=True)
class PlannedEpisode:
    external_id: str
    scenario: Scenario
    barrier: Barrier
    number: int  # within its cell, from 0
    seed: int
    cast: Cast | None = None  # None: the roles' default characters
    mediator: str = ""  # a ProMediate run's mediator condition: none, generic or social


@dataclass
class RunPlan:
    """The grid: scenarios × casts × conditions × episodes per cell, with one external id per episode."""

    tag: str
    options: RunOptions  # resolved
    team: Team
    scenarios: list[Scenario]
    barriers: list[Barrier]
    positions: dict[int, list[int]]  # scenario id -> its role positions
    labels: dict[int, dict[int, str]] = field(default_factory=dict)  # scenario id -> position -> sender/receiver
    casts: dict[int, list[Cast | None]] = field(default_factory=dict)  # scenario id -> its casts to play
    imported_seats: dict[int, tuple[int, ...]] = field(default_factory=dict)  # scenario id -> its prompts' seats

    @property
    def promediate(self) -> bool:
        return self.options.preset == PROMEDIATE

    @property
    def mediators(self) -> tuple[str, ...]:
        """The mediator conditions, each a cell (one unnamed one outside the ProMediate preset)."""
        return self.options.mediator_conditions if self.promediate else ("",)

    def mediator_position(self, scenario: Scenario) -> int | None:
        """A negotiation's mediator role: the scenario's greeter (the one who opens)."""
        return scenario.greeter_position if self.promediate else None

    def casts_of(self, scenario: Scenario) -> list[Cast | None]:
        return self.casts.get(scenario.pk, [None])

    def barrier_seats_for(self, scenario: Scenario) -> tuple[int, ...]:
        """The seats that speak under the barrier in every condition of ``scenario``: those its own barrier
        prompts name (``ScenarioBarrier``, as the file it came from says), else the run's ``barrier_seats``."""
        if self.promediate:  # a negotiation: every party, and the mediator only with persona_to_mediator
            mediator = self.mediator_position(scenario)
            return tuple(
                p for p in self.positions[scenario.pk] if p != mediator or self.options.persona_to_mediator
            )
        return self.imported_seats.get(scenario.pk, self.options.barrier_positions)

    def models_for(self, scenario: Scenario) -> dict[int, str]:
        """Each seat's model: its position's entry in ``seat_models``, else its role label's (sender or
        receiver), else the agent model for a barrier seat and the partner model for the others. In a
        negotiation: the mediator model for the mediator, the party model for the others."""
        if self.promediate:
            mediator = self.mediator_position(scenario)
            return {
                position: self.options.mediator_model if position == mediator else self.options.party_model
                for position in self.positions[scenario.pk]
            }
        agent, partner, seats = self.options.agent_model, self.options.partner_model, self.barrier_seats_for(scenario)
        chosen = self.options.seat_model_map()
        labels = self.labels.get(scenario.pk, {})
        return {
            position: chosen.get(str(position))
            or chosen.get(labels.get(position, ""))
            or (agent if position in seats else partner)
            for position in self.positions[scenario.pk]
        }

    @property
    def total(self) -> int:
        cells = sum(len(self.casts_of(scenario)) for scenario in self.scenarios)
        return cells * len(self.barriers) * len(self.mediators) * self.options.episodes_per_cell

    def episodes(self) -> list[PlannedEpisode]:
        """Scenario-major order, so a partly done run has whole scenarios compared across conditions."""
        per_cell = self.options.episodes_per_cell
        return [
            PlannedEpisode(
                episode_external_id(self.tag, scenario, barrier, number, cast, mediator),
                scenario,
                barrier,
                number,
                # the same seed in every condition: conditions are compared on paired episodes
                self.options.seed + number,
                cast,
                mediator,
            )
            for scenario in self.scenarios
            for cast in self.casts_of(scenario)
            for number in range(per_cell)
            for barrier in self.barriers
            for mediator in self.mediators
        ]

    def negotiation_settings(self, item: PlannedEpisode) -> dict[str, object]:
        """What a negotiation episode records of its condition (``Episode.settings["promediate"]``)."""
        options = self.options
        none = item.mediator == "none"
        return {
            "mediator": item.mediator,
            "mediator_model": "" if none else options.mediator_model,
            "party_model": options.party_model,
            "run_id": item.number + 1,
            "mode": mode_of(item.barrier.key),
            "mediator_position": None if none else self.mediator_position(item.scenario),
            "persona_to_mediator": options.persona_to_mediator,
            "strategies": 3,
            "articulation_model": "" if none else (options.articulation_model or options.mediator_model),
            "prompt_versions": negotiation_prompts.versions(),
        }


def episode_external_id(
    tag: str, scenario: Scenario, barrier: Barrier, number: int, cast: Cast | None = None, mediator: str = ""
) -> str:
    """``<tag>-s<scenario id>[-c<cast id>]-<condition>[-<mediator>]-<n>``; a tag too long for that is shortened
    with a digest."""
    tail = f"-s{scenario.pk}{f'-c{cast.pk}' if cast else ''}-{barrier.key}{f'-{mediator}' if mediator else ''}-{number}"
    whole = f"{tag}{tail}"
    if len(whole) <= EXTERNAL_ID_LENGTH:
        return whole
    digest = hashlib.sha1(whole.encode()).hexdigest()[:12]
    return f"{tag[: EXTERNAL_ID_LENGTH - len(digest) - 1]}-{digest}"


def resolve_scenarios(team: Team, selectors: Sequence[str], difficulties: Sequence[str] = ()) -> list[Scenario]:
    """The team's scenarios by id, external id or codename (all but templates when none is given),
    narrowed to the difficulty tags.

    An external id is the id in the file a scenario came from (a SocialVeil ``episode_id``, a Sotopia
    environment pk). Another team's scenario is unknown here, exactly like an id that does not exist.
    A template cannot be played; naming one is refused.
    """
    scenarios = Scenario.objects.of_team(team).order_by("pk")
    if selectors:
        ids = {int(s) for s in selectors if s.isdigit()}
        names = {s for s in selectors if not s.isdigit()}
        scenarios = scenarios.filter(Q(pk__in=ids) | Q(codename__in=names) | Q(external_id__in=selectors))
        found = list(scenarios)
        unknown = [
            s for s in selectors
            if not any((s.isdigit() and x.pk == int(s)) or s in (x.codename, x.external_id) for x in found)
        ]
        if unknown:
            raise RunOptionsError(
                "scenarios", f"No scenario has the id, external id or codename {', '.join(map(repr, unknown))}."
            )
        templates = [str(x) for x in found if x.is_template]
        if templates:
            raise RunOptionsError(
                "scenarios", f"{', '.join(templates)}: a template cannot be played; choose scenarios instantiated "
                "from it (manage.py instantiate_template)."
            )
    else:
        scenarios = scenarios.filter(is_template=False)
    if difficulties:
        scenarios = scenarios.filter(difficulty__in=difficulties)
    chosen = list(scenarios)
    if not chosen:
        what = "with those ids or codenames" if selectors else "in the database"
        narrowed = f" tagged {', '.join(difficulties)}" if difficulties else ""
        raise RunOptionsError("scenarios" if selectors else "difficulties", f"No scenario {what}{narrowed}.")
    return chosen


def resolve_conditions(team: Team, keys: Sequence[str]) -> list[Barrier]:
    """Barriers by key (built-in or the team's), in the order given; an unknown key is refused
    with the known ones listed."""
    usable = Barrier.objects.of_team(team)
    barriers = {b.key: b for b in usable.filter(key__in=keys)}
    unknown = [key for key in keys if key not in barriers]
    if unknown:
        known = ", ".join(usable.order_by("position", "key").values_list("key", flat=True))
        raise RunOptionsError(
            "conditions", f"Unknown condition(s) {', '.join(map(repr, unknown))}; known barriers: {known}."
        )
    if len(set(keys)) != len(keys):
        raise RunOptionsError("conditions", "A condition is listed twice.")
    return [barriers[key] for key in keys]


def plan_run(options: RunOptions, team: Team, tag: str | None = None) -> RunPlan:
    """Check options against the team's data and lay out the grid; nothing is written."""
    options.check()
    options.check_models(team.slug)
    options = options.resolved()
    tag = tag or options.default_tag()
    if slugify(tag) != tag or len(tag) > 100:
        raise RunOptionsError("tag", f"Run name {tag!r} must be a slug (letters, digits, - and _), at most 100.")
    barriers = resolve_conditions(team, options.conditions)
    named = resolve_named_casts(team, options.casts)
    selectors = options.scenarios
    if named and not selectors and not {DEFAULT_CAST, ALL_CASTS} & set(options.casts):
        selectors = tuple(dict.fromkeys(str(cast.scenario_id) for cast in named))
    scenarios = resolve_scenarios(team, selectors, options.difficulties)
    if not selectors and options.preset != PROMEDIATE:
        # Every scenario, as with templates, means every one this run can play: a negotiation needs its
        # preset. Only negotiations left: the refusal below says why.
        scenarios = [s for s in scenarios if s.turn_taking != TurnTaking.PROMEDIATE] or scenarios
    casts = casts_to_play(scenarios, options.casts, named)
    positions: dict[int, list[int]] = {s.pk: [] for s in scenarios}
    labels: dict[int, dict[int, str]] = {s.pk: {} for s in scenarios}
    uncast: set[int] = set()
    for chunk in chunks([s.pk for s in scenarios]):
        for scenario_id, position, character_id, label in Role.objects.filter(scenario_id__in=chunk).values_list(
            "scenario_id", "position", "character_id", "communication"
        ):
            positions[scenario_id].append(position)
            if label:
                labels[scenario_id][position] = label
            if character_id is None:
                uncast.add(scenario_id)
    imported_seats = imported_barrier_seats(scenarios, barriers)
    for scenario in scenarios:
        if len(positions[scenario.pk]) < 2:
            raise RunOptionsError(
                "scenarios", f"Scenario {scenario} has {len(positions[scenario.pk])} role(s); an episode needs two."
            )
        if scenario.pk in uncast and None in casts[scenario.pk]:
            raise RunOptionsError(
                "scenarios", f"Scenario {scenario} has a role without a default character; cast the role, or play "
                f"the scenario's casts (casts: {ALL_CASTS}).",
            )
        for cast in filter(None, casts[scenario.pk]):
            open_roles = sorted(set(positions[scenario.pk]) - set(cast.characters()))
            if scenario.pk in uncast and open_roles:
                raise RunOptionsError(
                    "casts", f"Cast {cast} of scenario {scenario} leaves role {open_roles[0]} open, and the role "
                    "has no default character.",
                )
        missing = [seat for seat in imported_seats.get(scenario.pk, options.barrier_positions)
                   if seat not in positions[scenario.pk]]
        if missing:
            raise RunOptionsError(
                "barrier_seats",
                f"Scenario {scenario} has no role at position {', '.join(map(str, missing))} for the barrier.",
            )
        greeter_problem = check_greeter(scenario, positions[scenario.pk])
        if greeter_problem:
            raise RunOptionsError("scenarios", greeter_problem)
    check_seat_models(options, scenarios, positions, labels)
    if options.preset == PROMEDIATE:
        check_negotiations(options, scenarios)
    else:
        refuse_negotiations(scenarios)
    return RunPlan(
        tag, options, team, scenarios, barriers, {pk: sorted(p) for pk, p in positions.items()}, labels, casts,
        imported_seats,
    )


def check_negotiations(options: RunOptions, scenarios: Sequence[Scenario]) -> None:
    """Refuse scenarios a ProMediate run cannot play: not a negotiation, no topics, no mediator role."""
    with_topics = set(Topic.objects.filter(scenario__in=scenarios).values_list("scenario_id", flat=True))
    for scenario in scenarios:
        if scenario.turn_taking != TurnTaking.PROMEDIATE:
            raise RunOptionsError(
                "scenarios", f"Scenario {scenario} is not a negotiation (its turn-taking is "
                f"{scenario.get_turn_taking_display()}); the '{PROMEDIATE}' preset plays ProMediate cases "
                "(import them with manage.py import_scenarios).",
            )
        if scenario.pk not in with_topics:
            raise RunOptionsError("scenarios", f"Scenario {scenario} has no topics to negotiate; import it again.")
        if scenario.greeter_position is None and set(options.mediator_conditions) - {"none"}:
            raise RunOptionsError(
                "mediators", f"Scenario {scenario} has no mediator role; play it with the mediator condition none only."
            )


def refuse_negotiations(scenarios: Sequence[Scenario]) -> None:
    """Refuse a ProMediate negotiation outside its preset. Without it the run has no mediator condition:
    its episodes carry no ProMediate settings (the loop falls back to a social mediator in the greeter's
    seat), its grid, episode names and results have no mediator axis, and the seat's role there is guessed."""
    for scenario in scenarios:
        if scenario.turn_taking == TurnTaking.PROMEDIATE:
            raise RunOptionsError(
                "scenarios", f"Scenario {scenario} is a ProMediate negotiation: run it with the '{PROMEDIATE}' "
                f"preset (simulate --preset {PROMEDIATE}, and --mediator none,generic,social to choose the "
                "mediator conditions).",
            )


def resolve_named_casts(team: Team, entries: Sequence[str]) -> list[Cast]:
    """The team's casts that ``entries`` name by id or external id (``default`` and ``all`` name none);
    one that names nothing is refused, as is another team's cast."""
    wanted = [entry for entry in entries if entry not in (DEFAULT_CAST, ALL_CASTS)]
    if not wanted:
        return []
    ids = {int(entry) for entry in wanted if entry.isdigit()}
    found = list(
        Cast.objects.of_team(team)
        .filter(Q(pk__in=ids) | Q(external_id__in=wanted))
        .select_related("scenario")
        .prefetch_related("members__role", "members__character")
        .order_by("scenario", "pk")
    )
    unknown = [
        entry for entry in wanted if not any(entry == cast.external_id or entry == str(cast.pk) for cast in found)
    ]
    if unknown:
        raise RunOptionsError(
            "casts", f"No cast of the team has the id or external id {', '.join(map(repr, unknown))}."
        )
    return found


def casts_to_play(scenarios: Sequence[Scenario], entries: Sequence[str], named: Sequence[Cast]) -> dict[
    int, list[Cast | None]
]:
    """Each scenario's cells, in order: its default characters (``default``), its casts (``all``) and the
    casts named. A named cast of a scenario not chosen, and a scenario left with nothing to play, are refused."""
    chosen = {scenario.pk for scenario in scenarios}
    stray = [cast for cast in named if cast.scenario_id not in chosen]
    if stray:
        raise RunOptionsError(
            "casts", f"Cast {stray[0]} is of scenario {stray[0].scenario}, which is not among the chosen scenarios."
        )
    every: dict[int, list[Cast]] = {pk: [] for pk in chosen}
    if ALL_CASTS in entries:
        for chunk in chunks(sorted(chosen)):
            for cast in Cast.objects.filter(scenario_id__in=chunk).prefetch_related(
                "members__role", "members__character"
            ).order_by("pk"):
                every[cast.scenario_id].append(cast)
    cells: dict[int, list[Cast | None]] = {}
    for scenario in scenarios:
        found = {cast.pk: cast for cast in every[scenario.pk]}
        found.update((cast.pk, cast) for cast in named if cast.scenario_id == scenario.pk)
        cells[scenario.pk] = ([None] if DEFAULT_CAST in entries else []) + list(found.values())
        if not cells[scenario.pk]:
            what = "has no casts" if ALL_CASTS in entries else "has none of the casts named"
            raise RunOptionsError(
                "casts", f"Scenario {scenario} {what}; add '{DEFAULT_CAST}' to play its default characters, or "
                "choose other scenarios.",
            )
    return cells


def imported_barrier_seats(scenarios: Sequence[Scenario], barriers: Sequence[Barrier]) -> dict[int, tuple[int, ...]]:
    """Scenario id -> the seats its own prompts for the run's barriers name, for scenarios that have any.

    Every condition of a scenario is played with the same barrier seats (the baseline marks them too),
    so a scenario whose prompts name different seats cannot be played in one run and is refused.
    """
    found: dict[int, tuple[int, ...]] = {}
    for chunk in chunks([s.pk for s in scenarios]):
        prompts = ScenarioBarrier.objects.filter(scenario_id__in=chunk, barrier__in=barriers).order_by("barrier__key")
        for scenario_id, key, seats in prompts.values_list("scenario_id", "barrier__key", "barrier_positions"):
            seats = tuple(sorted(seats))
            if found.setdefault(scenario_id, seats) != seats:
                scenario = next(s for s in scenarios if s.pk == scenario_id)
                raise RunOptionsError(
                    "scenarios",
                    f"Scenario {scenario}'s barrier prompts name different barrier seats ({key}: "
                    f"{', '.join(map(str, seats))}); choose one of these conditions per run.",
                )
    return found


def check_seat_models(
    options: RunOptions, scenarios: Sequence[Scenario], positions: dict[int, list[int]],
    labels: dict[int, dict[int, str]],
) -> None:
    """Refuse seat models no seat would take: a position some scenario lacks, a label no role carries."""
    named = options.seat_model_map()
    for seat in (key for key in named if key.isdigit()):
        lacking = [str(scenario) for scenario in scenarios if int(seat) not in positions[scenario.pk]]
        if lacking:
            raise RunOptionsError(
                "seat_models", f"seat models: scenario {lacking[0]} has no role at position {seat}."
            )
    for label in (key for key in named if not key.isdigit()):
        if not any(label in found.values() for found in labels.values()):
            raise RunOptionsError(
                "seat_models",
                f"seat models: no role of the chosen scenarios is labelled {label}; label roles sender or receiver "
                "in the scenario, or name seats by position.",
            )


def chunks(items: Sequence[Any], size: int = 5000) -> Iterable[Sequence[Any]]:
    """Slices small enough for an IN (...) list on every database (SQLite caps its parameters)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class Preparation:
    """The run's episodes in the database: which to play, and how many were already done."""

    episode_ids: list[int]
    to_play: list[tuple[int, int]]  # (episode id, seed)
    created: int
    already_finished: int


def prepare_episodes(plan: RunPlan, *, beat: Callable[[], None] | None = None) -> Preparation:
    """Create the missing episodes and ready the unfinished ones for another go.

    The plan was checked against the database first, so creation does not fail on bad input; it
    goes in transactions of ``PREPARE_BATCH`` episodes, calling ``beat`` after each, so a worker
    creating thousands of episodes keeps its heartbeat. Creation is idempotent by external id: a
    worker that dies halfway leaves episodes the next one finds. An existing episode keeps the
    seats and models it was created with; a failed or interrupted one is set back to ``pending``
    (its stored turns stay, and it resumes after them).
    """
    planned = plan.episodes()
    options = plan.options
    existing = {
        e.external_id: e
        for chunk in chunks([p.external_id for p in planned])
        for e in Episode.objects.of_team(plan.team)
        .filter(external_id__in=chunk)
        .only("pk", "external_id", "status", "settings")
    }
    missing = [item for item in planned if item.external_id not in existing]
    for batch in chunks(missing, PREPARE_BATCH):
        with transaction.atomic():
            for item in batch:
                cap = turn_cap_for(item.scenario, options.turn_cap)
                mediator = plan.mediator_position(item.scenario)
                existing[item.external_id] = create_episode(
                    item.scenario,
                    item.barrier,
                    barrier_seats=plan.barrier_seats_for(item.scenario),
                    models=plan.models_for(item.scenario),
                    strategy=options.strategy,
                    # a negotiation: the opening line, then T turns
                    turn_cap=cap + 1 if plan.promediate else cap,
                    tag=plan.tag,
                    settings={
                        "temperature": options.temperature, "seed": item.seed, "run": plan.tag,
                        **({"cast": item.cast.key} if item.cast else {}),
                        **({"promediate": plan.negotiation_settings(item)} if plan.promediate else {}),
                    },
                    characters=item.cast.characters() if item.cast else None,
                    external_id=item.external_id,
                    empty_roles=(mediator,) if item.mediator == "none" and mediator is not None else (),
                )
        if beat is not None:
            beat()
    episodes = [existing[item.external_id] for item in planned]
    unfinished = [e for e in episodes if e.status != Episode.Status.FINISHED]
    for chunk in chunks([e.pk for e in unfinished if e.status != Episode.Status.PENDING]):
        Episode.objects.filter(pk__in=chunk).update(status=Episode.Status.PENDING, end_reason="", finished_at=None)
    seeds = {item.external_id: item.seed for item in planned}
    return Preparation(
        episode_ids=[e.pk for e in episodes],
        to_play=[(e.pk, int(e.settings.get("seed", seeds[e.external_id]))) for e in unfinished],
        created=len(missing),
        already_finished=len(episodes) - len(unfinished),
    )
