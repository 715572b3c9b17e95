"""Simulation runs: a grid of scenarios × conditions × episodes, planned, executed, resumed, cancelled.

A run is what SocialVeil's experiments are made of: every chosen scenario played under every
chosen barrier condition, ``episodes_per_cell`` times. This module turns options into that grid
and plays it, for the ``simulate`` command and for runs launched from the web alike.

Why it is built this way:

- **Resumable by construction.** Each planned episode has an external id made from the run's tag,
  the scenario, the condition and its number in the cell, so planning the same run again finds
  the same episodes. Finished ones are skipped; pending, interrupted (``running`` with no live
  worker) and failed ones are played again, and :func:`benchmark.simulation.run_episode` resumes
  each from its next turn, since every turn is stored the moment it is produced.
- **Concurrency is episodes in flight.** An episode has one model call in flight at a time, so
  ``concurrency`` is the number of concurrent model calls. Two things limit one process: Django's
  async ORM runs every query on one thread, and with dozens of episodes in flight the hop to that
  thread costs more than the insert, so turns are written by a :class:`TurnWriter` that commits
  the turns arriving together in one statement (each episode still waits until its turn is
  stored); and litellm costs a few milliseconds of CPU per call, so ``workers`` splits the
  episodes over several processes (forked, each with its own event loop and connection), which
  take the next episode from a shared counter so none idles while another has a backlog.
- **Supervised from the database.** The process that executes a run (``manage.py simulate``,
  started by hand or by the web page) writes its pid and a heartbeat, the counts, and reads
  ``cancel_requested`` once a second. The web page reads only the row, so it may be served by
  any process, and a run whose heartbeat is stale is known to have lost its worker.
- **Cancellation stops at once and loses nothing stored.** Episodes not yet started are not
  started; turns in flight are abandoned (their model calls are not stored) and their episodes
  are set back to ``pending``, to be resumed by a later run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.db import connections, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.text import slugify

from . import interviews, judge, llm
from .models import Barrier, Episode, Role, Scenario, Seat, SimulationRun, Team, Turn
from .models.scenarios import Difficulty
from .simulation import create_episode, run_episode
from .turn_taking import check_greeter, turn_cap_for

logger = logging.getLogger(__name__)

DEFAULT_CONDITIONS: tuple[str, ...] = ("none", "semantic", "sociocultural", "emotional")
NO_JUDGE = "none"  # judge_model value that leaves a run's episodes unscored
HEARTBEAT_SECONDS = 1.0
STALE_AFTER = timedelta(seconds=30)
MAX_ERRORS_KEPT = 5
EXTERNAL_ID_LENGTH = 100  # Episode.external_id
PREPARE_BATCH = 500

_LIMITS: dict[str, tuple[float, float]] = {
    "episodes_per_cell": (1, 1000),
    "turn_cap": (1, 1000),
    "temperature": (0.0, 2.0),
    "concurrency": (1, 4096),
    "seed": (0, 2**31 - 1),
    "workers": (1, 64),
}
MAX_POSITION = 100  # the highest role position a run may name as a barrier seat


class RunOptionsError(ValueError):
    """Options that cannot make a run; ``option`` names the offending option (a form field name)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


class RunBusy(RuntimeError):
    """Another live process is executing this run."""


class RunCancelled(RuntimeError):
    """The run was cancelled before this worker started; it must be resumed explicitly."""


# --- options --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOptions:
    """What ``manage.py simulate`` takes; stored as ``SimulationRun.options``.

    ``scenarios`` are ids or codenames (empty: every scenario), ``difficulties`` narrow them by
    difficulty tag, ``conditions`` are barrier keys. An empty model name means the configured
    one (``PARLEY_AGENT_MODEL`` / ``PARLEY_PARTNER_MODEL``, else the scripted model).
    ``concurrency`` and ``workers`` change how fast a run goes, never what it produces.
    ``judge_model`` scores the finished episodes at the end of the run (empty: the configured
    judge, else the offline scripted heuristics; ``"none"``: leave them unscored); the judge does
    not shape the episodes, so it is not part of the derived run name. Nor does ``interview``,
    which asks each agent seat of a finished episode about the goals and probes
    (``benchmark.interviews``). ``barrier_seats`` are the role positions that speak under the
    condition (the first role by default; ``barrier_seat``, one position, is the older spelling).
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
    workers: int = 1
    judge_model: str = ""
    interview: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunOptions:
        """Options from stored JSON (or a form); unknown keys and wrong types are refused."""
        known = {f.name: f for f in fields(cls)}
        if "barrier_seat" in data and "barrier_seats" not in data:  # stored before a run could name several
            data = {**data, "barrier_seats": [data["barrier_seat"]]}
            del data["barrier_seat"]
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

    @property
    def barrier_positions(self) -> tuple[int, ...]:
        return tuple(int(seat) for seat in self.barrier_seats)

    def resolved(self) -> RunOptions:
        """The same options with the configured model names filled in for empty ones."""
        return RunOptions(
            **{
                **asdict(self),
                "agent_model": self.agent_model or llm.model_for("agent"),
                "partner_model": self.partner_model or llm.model_for("partner"),
                "judge_model": self.judge_model or llm.model_for("judge"),
            }
        )

    def default_tag(self) -> str:
        """A run name derived from everything that shapes the episodes, so the same command resumes."""
        speed_and_scoring = {"concurrency", "workers", "judge_model", "interview"}
        shaping = {k: v for k, v in self.resolved().as_dict().items() if k not in speed_and_scoring}
        if len(self.barrier_seats) == 1:  # as named before a run could name several, so old names resume
            shaping["barrier_seat"] = self.barrier_positions[0]
            del shaping["barrier_seats"]
        digest = hashlib.sha1(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:10]
        return f"sim-{digest}"


# --- the plan -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedEpisode:
    external_id: str
    scenario: Scenario
    barrier: Barrier
    number: int  # within its cell, from 0
    seed: int


@dataclass
class RunPlan:
    """The grid: scenarios × conditions × episodes per cell, with one external id per episode."""

    tag: str
    options: RunOptions  # resolved
    team: Team
    scenarios: list[Scenario]
    barriers: list[Barrier]
    positions: dict[int, list[int]]  # scenario id -> its role positions

    def models_for(self, scenario: Scenario) -> dict[int, str]:
        """The agent model for the barrier seats, the partner model for every other seat."""
        agent, partner, seats = self.options.agent_model, self.options.partner_model, self.options.barrier_positions
        return {position: agent if position in seats else partner for position in self.positions[scenario.pk]}

    @property
    def total(self) -> int:
        return len(self.scenarios) * len(self.barriers) * self.options.episodes_per_cell

    def episodes(self) -> list[PlannedEpisode]:
        """Scenario-major order, so a partly done run has whole scenarios compared across conditions."""
        per_cell = self.options.episodes_per_cell
        return [
            PlannedEpisode(
                episode_external_id(self.tag, scenario, barrier, number),
                scenario,
                barrier,
                number,
                # the same seed in every condition: conditions are compared on paired episodes
                self.options.seed + number,
            )
            for scenario in self.scenarios
            for number in range(per_cell)
            for barrier in self.barriers
        ]


def episode_external_id(tag: str, scenario: Scenario, barrier: Barrier, number: int) -> str:
    """``<tag>-s<scenario id>-<condition>-<n>``; a tag too long for that is shortened with a digest."""
    tail = f"-s{scenario.pk}-{barrier.key}-{number}"
    whole = f"{tag}{tail}"
    if len(whole) <= EXTERNAL_ID_LENGTH:
        return whole
    digest = hashlib.sha1(whole.encode()).hexdigest()[:12]
    return f"{tag[: EXTERNAL_ID_LENGTH - len(digest) - 1]}-{digest}"


def resolve_scenarios(team: Team, selectors: Sequence[str], difficulties: Sequence[str] = ()) -> list[Scenario]:
    """The team's scenarios by id or codename (all but templates when none is given), narrowed to the
    difficulty tags.

    Another team's scenario is unknown here, exactly like an id that does not exist. A template
    cannot be played; naming one is refused.
    """
    scenarios = Scenario.objects.of_team(team).order_by("pk")
    if selectors:
        ids = {int(s) for s in selectors if s.isdigit()}
        names = {s for s in selectors if not s.isdigit()}
        scenarios = scenarios.filter(Q(pk__in=ids) | Q(codename__in=names))
        found = list(scenarios)
        unknown = [
            s for s in selectors
            if not any((s.isdigit() and x.pk == int(s)) or x.codename == s for x in found)
        ]
        if unknown:
            raise RunOptionsError(
                "scenarios", f"No scenario has the id or codename {', '.join(map(repr, unknown))}."
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
    options = options.resolved()
    tag = tag or options.default_tag()
    if slugify(tag) != tag or len(tag) > 100:
        raise RunOptionsError("tag", f"Run name {tag!r} must be a slug (letters, digits, - and _), at most 100.")
    barriers = resolve_conditions(team, options.conditions)
    scenarios = resolve_scenarios(team, options.scenarios, options.difficulties)
    positions: dict[int, list[int]] = {s.pk: [] for s in scenarios}
    uncast: set[int] = set()
    for chunk in _chunks([s.pk for s in scenarios]):
        for scenario_id, position, character_id in Role.objects.filter(scenario_id__in=chunk).values_list(
            "scenario_id", "position", "character_id"
        ):
            positions[scenario_id].append(position)
            if character_id is None:
                uncast.add(scenario_id)
    for scenario in scenarios:
        if len(positions[scenario.pk]) < 2:
            raise RunOptionsError(
                "scenarios", f"Scenario {scenario} has {len(positions[scenario.pk])} role(s); an episode needs two."
            )
        if scenario.pk in uncast:
            raise RunOptionsError("scenarios", f"Scenario {scenario} has a role without a default character.")
        missing = [seat for seat in options.barrier_positions if seat not in positions[scenario.pk]]
        if missing:
            raise RunOptionsError(
                "barrier_seats",
                f"Scenario {scenario} has no role at position {', '.join(map(str, missing))} for the barrier.",
            )
        greeter_problem = check_greeter(scenario, positions[scenario.pk])
        if greeter_problem:
            raise RunOptionsError("scenarios", greeter_problem)
    return RunPlan(tag, options, team, scenarios, barriers, {pk: sorted(p) for pk, p in positions.items()})


def _chunks(items: Sequence[Any], size: int = 5000) -> Iterable[Sequence[Any]]:
    """Slices small enough for an IN (...) list on every database (SQLite caps its parameters)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- preparing the episodes ---------------------------------------------------------------------


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
        for chunk in _chunks([p.external_id for p in planned])
        for e in Episode.objects.of_team(plan.team)
        .filter(external_id__in=chunk)
        .only("pk", "external_id", "status", "settings")
    }
    missing = [item for item in planned if item.external_id not in existing]
    for batch in _chunks(missing, PREPARE_BATCH):
        with transaction.atomic():
            for item in batch:
                existing[item.external_id] = create_episode(
                    item.scenario,
                    item.barrier,
                    barrier_seats=options.barrier_positions,
                    models=plan.models_for(item.scenario),
                    strategy=options.strategy,
                    turn_cap=turn_cap_for(item.scenario, options.turn_cap),
                    tag=plan.tag,
                    settings={"temperature": options.temperature, "seed": item.seed, "run": plan.tag},
                    external_id=item.external_id,
                )
        if beat is not None:
            beat()
    episodes = [existing[item.external_id] for item in planned]
    unfinished = [e for e in episodes if e.status != Episode.Status.FINISHED]
    for chunk in _chunks([e.pk for e in unfinished if e.status != Episode.Status.PENDING]):
        Episode.objects.filter(pk__in=chunk).update(status=Episode.Status.PENDING, end_reason="", finished_at=None)
    seeds = {item.external_id: item.seed for item in planned}
    return Preparation(
        episode_ids=[e.pk for e in episodes],
        to_play=[(e.pk, int(e.settings.get("seed", seeds[e.external_id]))) for e in unfinished],
        created=len(missing),
        already_finished=len(episodes) - len(unfinished),
    )


# --- the run row ------------------------------------------------------------------------------


def is_stale(run: SimulationRun, now: Any = None) -> bool:
    """A run that should have a live worker but has not heard from it for ``STALE_AFTER``."""
    if run.done:
        return False
    now = now or timezone.now()
    last = run.heartbeat_at or run.created_at
    return last < now - STALE_AFTER


def run_for_command(options: RunOptions, tag: str, team: Team) -> SimulationRun:
    """The team's latest run with ``tag``, or a new one. Running the command again is a request to
    resume, so a cancel is lifted and the options brought up to date."""
    run = SimulationRun.objects.of_team(team).filter(tag=tag).order_by("-created_at", "-pk").first()
    if run is None:
        return SimulationRun.objects.create(team=team, tag=tag, options=options.as_dict())
    SimulationRun.objects.filter(pk=run.pk).update(options=options.as_dict(), cancel_requested=False)
    run.options, run.cancel_requested = options.as_dict(), False
    return run


def claim(run_id: int, total: int | None = None) -> SimulationRun:
    """Mark the run as executed by this process, unless another live process executes it or it was
    cancelled before this worker got to it (a cancel is lifted only by resuming)."""
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run_id)
        if run.cancel_requested:
            if not run.done:
                _close(run.pk, SimulationRun.Status.CANCELLED, run.message or "Cancelled before a worker ran it.")
            raise RunCancelled(
                f"Run {run.tag} was cancelled; resume it from its page, or run the simulate command with "
                f"--tag {run.tag} again."
            )
        now = timezone.now()
        alive = run.status == SimulationRun.Status.RUNNING and not is_stale(run, now)
        if alive and run.worker_pid not in (None, os.getpid()):
            raise RunBusy(
                f"Run {run.tag} is being executed by process {run.worker_pid} "
                f"(last heartbeat {int((now - run.heartbeat_at).total_seconds())} s ago); "
                "cancel it or wait for it to finish."
            )
        run.status = SimulationRun.Status.RUNNING
        run.worker_pid = os.getpid()
        run.heartbeat_at = now
        run.started_at = run.started_at or now
        run.finished_at = None
        run.message = ""
        if total is not None:
            run.total = total
        run.save(
            update_fields=["status", "worker_pid", "heartbeat_at", "started_at", "finished_at", "message", "total"]
        )
    return run


# --- progress and summary -----------------------------------------------------------------


@dataclass
class Snapshot:
    """The run's episodes as the database has them now."""

    finished: int
    failed: int
    turns: int
    model_turns: int


@dataclass
class RunSummary:
    """What one execution of a run did. ``model_turns`` counts turns a model played (one call each;
    the gateway's retries and JSON repairs are further calls it does not see)."""

    tag: str
    total: int
    skipped: int
    finished: int
    failed: int
    turns: int
    model_turns: int
    seconds: float
    status: str
    errors: list[str] = field(default_factory=list)
    judged: str = ""
    interviewed: str = ""

    @property
    def unfinished(self) -> int:
        return self.total - self.finished - self.failed

    def line(self) -> str:
        rate = self.turns / self.seconds if self.seconds else 0.0
        parts = [
            f"Run {self.tag} {self.status}: {self.finished}/{self.total} episodes finished "
            f"({self.skipped} skipped, finished before), {self.failed} failed",
        ]
        if self.unfinished:
            parts.append(f"{self.unfinished} left to resume")
        parts.append(
            f"{self.turns} turns, {self.model_turns} model calls, {self.seconds:.1f} s wall time ({rate:.1f} turns/s)"
        )
        text = "; ".join(parts) + "."
        if self.judged:
            text += " " + self.judged
        if self.interviewed:
            text += " " + self.interviewed
        if self.errors:
            text += " First error: " + self.errors[0]
        return text


class ProgressBar:
    """A plain-text progress bar on a stream: redrawn with \\r on a terminal, a line every 10 s elsewhere."""

    WIDTH = 30
    LOG_EVERY = 10.0

    def __init__(self, stream: TextIO, total: int, skipped: int) -> None:
        self.stream = stream
        self.total = total
        self.skipped = skipped
        self.interactive = bool(getattr(stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self._last_log = 0.0

    def update(self, snapshot: Snapshot, turns_at_start: int, *, final: bool = False) -> None:
        now = time.monotonic()
        if not self.interactive and not final and now - self._last_log < self.LOG_EVERY:
            return
        self._last_log = now
        done = snapshot.finished + snapshot.failed
        share = done / self.total if self.total else 1.0
        filled = round(share * self.WIDTH)
        elapsed = now - self.started
        played = snapshot.turns - turns_at_start
        newly_done = done - self.skipped
        remaining = self.total - done
        eta = f" · ETA {_clock(elapsed / newly_done * remaining)}" if newly_done > 0 and remaining else ""
        text = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.total} episodes"
            f" ({snapshot.failed} failed) · {played} turns · {played / elapsed if elapsed else 0:.1f} turns/s"
            f" · {_clock(elapsed)}{eta}"
        )
        if self.interactive:
            self.stream.write("\r" + text.ljust(100))
            if final:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def snapshot(episode_ids: Sequence[int]) -> Snapshot:
    """Counts over the run's own episodes (a tag may also carry episodes an earlier plan made)."""
    total = Snapshot(0, 0, 0, 0)
    for chunk in _chunks(episode_ids):
        counts = Episode.objects.filter(pk__in=chunk).aggregate(
            finished=Count("pk", filter=Q(status=Episode.Status.FINISHED)),
            failed=Count("pk", filter=Q(status=Episode.Status.FAILED)),
        )
        turns = Turn.objects.filter(episode_id__in=chunk).aggregate(
            all=Count("pk"), model=Count("pk", filter=~Q(model=llm.SCRIPTED))
        )
        total.finished += counts["finished"]
        total.failed += counts["failed"]
        total.turns += turns["all"]
        total.model_turns += turns["model"]
    return total


# --- execution ----------------------------------------------------------------------------------


class EpisodeQueue:
    """The episodes to play, handed out one at a time through a counter shared by worker processes."""

    def __init__(self, items: Sequence[tuple[int, int]], counter: Any) -> None:
        self.items = list(items)
        self._counter = counter

    def next(self) -> tuple[int, int] | None:
        with self._counter.get_lock():
            index = self._counter.value
            if index >= len(self.items):
                return None
            self._counter.value = index + 1
        return self.items[index]


class ErrorLog:
    """The first few episode errors of every process, sent through a pipe to the supervisor.

    The supervisor drains it once a second, and each process sends at most ``limit`` messages,
    so a writer never blocks on a full pipe.
    """

    def __init__(self, context: Any, limit: int = MAX_ERRORS_KEPT) -> None:
        self._pipe = context.SimpleQueue()
        self._limit = limit
        self._sent = 0  # per process: a forked copy counts its own
        self.kept: list[str] = []

    def add(self, message: str) -> None:
        logger.warning("%s", message)
        if self._sent < self._limit:
            self._sent += 1
            self._pipe.put(message[:500])

    def drain(self) -> list[str]:
        while not self._pipe.empty():
            self.kept.append(self._pipe.get())
        return self.kept


@dataclass
class Shared:
    """What the supervisor and its worker processes share: the episodes, the stop signal, the errors."""

    episodes: EpisodeQueue
    stop: Any  # a multiprocessing Event
    errors: ErrorLog


class TurnWriter:
    """Group commit for the turns of the episodes one process plays at once.

    Each turn is still stored before its episode goes on (the episode awaits :meth:`save`), but
    the turns that arrive while one insert is under way go to the database together in the next.
    Django runs every async ORM call on one thread per process, and with dozens of episodes in
    flight the hop to that thread, not the insert itself, is what costs: batching makes it one hop
    per batch instead of one per turn. If a batch fails (say, a turn index taken by another
    worker), its turns are stored one by one, so only the offending episode sees the error.
    """

    def __init__(self) -> None:
        self._waiting: list[tuple[Turn, asyncio.Future[Turn]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.batches = 0

    async def save(self, turn: Turn) -> Turn:
        future: asyncio.Future[Turn] = asyncio.get_running_loop().create_future()
        self._waiting.append((turn, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def close(self) -> None:
        """Wait for the last batch (cancelled episodes may have left one under way)."""
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)

    async def _flush(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            self.batches += 1
            outcomes = await sync_to_async(_insert_turns)([turn for turn, _ in batch])
            for (turn, future), outcome in zip(batch, outcomes, strict=True):
                if future.cancelled():
                    continue
                if isinstance(outcome, BaseException):
                    future.set_exception(outcome)
                else:
                    future.set_result(turn)


def _insert_turns(turns: list[Turn]) -> list[Turn | Exception]:
    """Insert ``turns`` in one statement, or one by one if that fails; an error per turn that failed."""
    try:
        with transaction.atomic():
            Turn.objects.bulk_create(turns)
        return list(turns)
    except Exception:  # a batch shares one statement; find the turn that broke it
        for turn in turns:
            turn.pk = None
    outcomes: list[Turn | Exception] = []
    for turn in turns:
        try:
            with transaction.atomic():
                turn.save(force_insert=True)
            outcomes.append(turn)
        except Exception as error:  # handed to the episode that made this turn
            outcomes.append(error)
    return outcomes


async def play_episodes(shared: Shared, concurrency: int) -> None:
    """Play episodes, ``concurrency`` at a time, until none is left or ``shared.stop`` is set.

    A failed episode is recorded (``run_episode`` marks a model failure; any other error is
    marked here) and the others go on. On stop the episodes in flight are cancelled.
    """
    writer = TurnWriter()

    async def player() -> None:
        while not shared.stop.is_set():
            item = shared.episodes.next()
            if item is None:
                return
            await _play_one(*item, errors=shared.errors, writer=writer)

    tasks = [asyncio.create_task(player()) for _ in range(concurrency)]
    pending = set(tasks)
    while pending:
        _, pending = await asyncio.wait(pending, timeout=0.25)
        if shared.stop.is_set():
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            break
    await writer.close()
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()


async def _play_one(episode_id: int, seed: int, *, errors: ErrorLog, writer: TurnWriter) -> None:
    try:
        await run_episode(Episode(pk=episode_id), seed=seed, save_turn=writer.save)
    except llm.LLMError as error:
        errors.add(f"episode {episode_id}: {error}")
    except Exception as error:  # one broken episode must not stop the run; logged with its traceback
        logger.exception("Episode %s failed", episode_id)
        errors.add(f"episode {episode_id}: {unexpected(error)}")
        await Episode.objects.filter(pk=episode_id).aupdate(status=Episode.Status.FAILED, finished_at=timezone.now())


@dataclass
class Supervisor:
    """The process that executes a run: it beats, counts, draws progress and relays a cancel."""

    run_id: int
    episode_ids: list[int]
    shared: Shared
    bar: ProgressBar | None
    turns_at_start: int
    signalled: bool = False  # set by a SIGINT/SIGTERM handler
    cancelled: bool = False

    def beat(self) -> Snapshot:
        """Write the heartbeat and counts, and pass on a requested cancel to the workers."""
        counts = snapshot(self.episode_ids)
        SimulationRun.objects.filter(pk=self.run_id).update(
            heartbeat_at=timezone.now(), finished=counts.finished, failed=counts.failed
        )
        requested = SimulationRun.objects.filter(pk=self.run_id, cancel_requested=True).exists()
        if (requested or self.signalled) and not self.shared.stop.is_set():
            self.cancelled = True
            self.shared.stop.set()
        return counts

    async def watch(self, done: Callable[[], bool]) -> None:
        """Beat once a second until ``done()``."""
        beat = sync_to_async(self.beat)
        while not done():
            counts = await beat()
            self.shared.errors.drain()
            if self.bar is not None:
                self.bar.update(counts, self.turns_at_start)
            for _ in range(round(HEARTBEAT_SECONDS / 0.1)):
                if done():
                    break
                await asyncio.sleep(0.1)
        self.shared.errors.drain()

    async def in_process(self, concurrency: int) -> None:
        players = asyncio.create_task(play_episodes(self.shared, concurrency))
        try:
            await self.watch(players.done)
        except BaseException:
            self.shared.stop.set()
            raise
        finally:
            await asyncio.gather(players, return_exceptions=True)
        players.result()

    def in_processes(self, concurrency: int, workers: int, context: Any) -> None:
        """Fork ``workers`` processes that share the episodes, and watch them from this one."""
        shares = [concurrency // workers + (1 if n < concurrency % workers else 0) for n in range(workers)]
        connections.close_all()  # a forked child must open its own connection, never share ours
        processes = [
            context.Process(target=_worker_process, args=(self.shared, max(1, share), os.getpid()), daemon=True)
            for share in shares
        ]
        for process in processes:
            process.start()
        try:
            async_to_sync(self.watch)(lambda: not any(p.is_alive() for p in processes))
        except BaseException:
            self.shared.stop.set()
            raise
        finally:
            for process in processes:
                process.join()
            self.shared.errors.drain()
        crashed = [p.exitcode for p in processes if p.exitcode]
        if crashed:
            self.shared.errors.kept.append(f"{len(crashed)} worker process(es) exited with code(s) {crashed}")


def _worker_process(shared: Shared, concurrency: int, supervisor_pid: int) -> None:
    """A forked worker: its own connection and event loop; Ctrl-C is the supervisor's to handle.

    It stops when its supervisor dies (killed, say), so a later resume never plays an episode
    that an orphaned worker is still playing.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connections.close_all()

    async def play_while_supervised() -> None:
        async def watch_supervisor() -> None:
            while os.getppid() == supervisor_pid:
                await asyncio.sleep(0.5)
            shared.stop.set()

        watchdog = asyncio.create_task(watch_supervisor())
        try:
            await play_episodes(shared, concurrency)
        finally:
            watchdog.cancel()

    try:
        async_to_sync(play_while_supervised)()
    finally:
        connections.close_all()


def execute_run(run_id: int, *, progress: TextIO | None = None, stop_on_signals: bool = False) -> RunSummary:
    """Execute a run to its end (or until it is cancelled) and record the outcome on its row.

    ``progress`` receives the progress bar. ``stop_on_signals`` makes the first SIGINT or
    SIGTERM stop the run as a cancel would, leaving its episodes resumable (for the command line
    and the detached worker).
    """
    started = time.monotonic()
    run = SimulationRun.objects.select_related("team").get(pk=run_id)
    try:
        plan = plan_run(RunOptions.from_dict(run.options), run.team, run.tag)
    except RunOptionsError as error:
        _close(run.pk, SimulationRun.Status.FAILED, f"Bad options: {error}")
        raise
    claim(run.pk, total=plan.total)
    try:
        preparation = prepare_episodes(plan, beat=lambda: _heartbeat(run.pk))
        return _execute(plan, run.pk, preparation, started, progress, stop_on_signals)
    except BaseException as error:  # re-raised: the traceback goes to the worker's log
        _close(run.pk, SimulationRun.Status.FAILED, f"The worker stopped: {unexpected(error)}")
        raise


def _execute(
    plan: RunPlan, run_id: int, preparation: Preparation, started: float, progress: TextIO | None, on_signals: bool
) -> RunSummary:
    episode_ids = preparation.episode_ids
    before = snapshot(episode_ids)
    workers = max(1, min(plan.options.workers, len(preparation.to_play)))
    context = multiprocessing.get_context("fork" if workers > 1 else None)
    shared = Shared(EpisodeQueue(preparation.to_play, context.Value("l", 0)), context.Event(), ErrorLog(context))
    bar = ProgressBar(progress, plan.total, preparation.already_finished) if progress is not None else None
    supervisor = Supervisor(run_id, episode_ids, shared, bar, before.turns)
    _load_gateway(plan.options)
    previous = _install_signal_handlers(supervisor) if on_signals else {}
    try:
        if workers == 1:
            async_to_sync(supervisor.in_process)(plan.options.concurrency)
        else:
            supervisor.in_processes(plan.options.concurrency, workers, context)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    # what was in flight when the run stopped goes back to pending, to be resumed
    for chunk in _chunks(episode_ids):
        Episode.objects.filter(pk__in=chunk, status=Episode.Status.RUNNING).update(status=Episode.Status.PENDING)
    after = snapshot(episode_ids)
    if bar is not None:
        bar.update(after, before.turns, final=True)
    if supervisor.cancelled:
        status = SimulationRun.Status.CANCELLED
    elif after.finished == plan.total:
        status = SimulationRun.Status.FINISHED
    else:
        status = SimulationRun.Status.FAILED
    summary = RunSummary(
        tag=plan.tag,
        total=plan.total,
        skipped=preparation.already_finished,
        finished=after.finished,
        failed=after.failed,
        turns=after.turns - before.turns,
        model_turns=after.model_turns - before.model_turns,
        seconds=time.monotonic() - started,
        status=status,
        errors=list(shared.errors.kept),
    )
    if status != SimulationRun.Status.CANCELLED and plan.options.judge_model != NO_JUDGE:
        summary.judged = score_episodes(run_id, episode_ids, plan.options)
    if status != SimulationRun.Status.CANCELLED and plan.options.interview:
        SimulationRun.objects.filter(pk=run_id).update(message="Episodes played; the agents are being interviewed.")
        summary.interviewed = interviews.interview_finished(
            episode_ids, concurrency=plan.options.concurrency, beat=lambda: _heartbeat(run_id)
        )
    _close(run_id, status, summary.line(), after)
    return summary


def score_episodes(run_id: int, episode_ids: Sequence[int], options: RunOptions) -> str:
    """Have the run's judge score its finished episodes (cached ones are skipped); a one-line outcome.

    The run stays ``running`` meanwhile and its message says so, so the page keeps polling.
    """
    model = options.judge_model or llm.model_for("judge")
    finished = [
        pk for chunk in _chunks(episode_ids)
        for pk in Episode.objects.filter(pk__in=chunk, status=Episode.Status.FINISHED).values_list("pk", flat=True)
    ]
    SimulationRun.objects.filter(pk=run_id).update(
        message=f"Episodes played; the judge {model} is scoring {len(finished)} of them.", heartbeat_at=timezone.now()
    )
    results: list[judge.EvaluationResult] = []
    batch = max(1, options.concurrency) * 2  # a heartbeat between batches keeps the run from looking lost
    for start in range(0, len(finished), batch):
        chunk = finished[start : start + batch]
        results += async_to_sync(judge.evaluate_episodes)(chunk, model=model, concurrency=options.concurrency)
        _heartbeat(run_id)
    outcomes = Counter(result.outcome for result in results)
    line = (
        f"Judge {model}: {outcomes[judge.SCORED]} scored, {outcomes[judge.CACHED]} already scored, "
        f"{outcomes[judge.FAILED]} failed."
    )
    failures = [result for result in results if not result.ok]
    if failures:
        line += f" First judge error (episode {failures[0].episode_id}): {failures[0].error}"
    return line


def _load_gateway(options: RunOptions) -> None:
    """Import litellm here, once, rather than inside the event loop of every worker.

    The import costs seconds of CPU; done before the workers fork, they share it, and no
    worker's event loop stalls on it while its first episodes wait.
    """
    if not (llm.is_scripted(options.agent_model) and llm.is_scripted(options.partner_model)):
        llm.preload()


def _install_signal_handlers(supervisor: Supervisor) -> dict[int, Any]:
    """The first SIGINT/SIGTERM asks the run to stop cleanly; a second one acts as it usually does."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}

    def handler(number: int, frame: Any) -> None:
        if supervisor.signalled:
            signal.signal(number, previous.get(number, signal.SIG_DFL))
            signal.raise_signal(number)
            return
        supervisor.signalled = True

    for number in (signal.SIGINT, signal.SIGTERM):
        previous[number] = signal.signal(number, handler)
    return previous


def unexpected(error: BaseException) -> str:
    """How a run's message names an error nobody planned for: its kind only.

    A run's message is shown on the run page, and an unexpected exception's text may name files on
    the server (an OSError always does); the whole traceback is in the worker's log instead.
    """
    return f"{type(error).__name__} (the server log has the details)"


def _heartbeat(run_id: int) -> None:
    SimulationRun.objects.filter(pk=run_id).update(heartbeat_at=timezone.now())


def _close(run_id: int, status: str, message: str, counts: Snapshot | None = None) -> None:
    values: dict[str, Any] = {"status": status, "message": message, "finished_at": timezone.now()}
    if counts is not None:
        values.update(finished=counts.finished, failed=counts.failed)
    SimulationRun.objects.filter(pk=run_id).update(**values)


# --- launching from the web ---------------------------------------------------------------------


def create_run(options: RunOptions, tag: str, team: Team, user: Any = None) -> SimulationRun:
    """A queued run of ``team`` for ``options``, checked against the team's data, stored with the
    model names resolved."""
    plan = plan_run(options, team, tag)
    return SimulationRun.objects.create(
        team=team, tag=plan.tag, options=plan.options.as_dict(), created_by=user, total=plan.total
    )


def launch_run(options: RunOptions, tag: str, team: Team, user: Any = None) -> SimulationRun:
    """Store a queued run and start its worker once the row is committed (so the worker finds it)."""
    with transaction.atomic():
        run = create_run(options, tag, team, user)
        transaction.on_commit(partial(start_worker, run))
    return run


def resume_run(run: SimulationRun) -> bool:
    """Queue a stopped run again and start a new worker for it; False when it cannot be resumed now.

    The row is locked while deciding, so two clicks start one worker.
    """
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run.pk)
        if not can_resume(run):
            return False
        SimulationRun.objects.filter(pk=run.pk).update(
            status=SimulationRun.Status.QUEUED, cancel_requested=False, heartbeat_at=timezone.now(),
            worker_pid=None, finished_at=None, message="",
        )
        transaction.on_commit(partial(start_worker, run))
    return True


def unused_tag(base: str, team: Team) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever no run of the team has yet."""
    taken = set(SimulationRun.objects.of_team(team).filter(tag__startswith=base).values_list("tag", flat=True))
    if base not in taken:
        return base
    number = 2
    while f"{base}-{number}" in taken:
        number += 1
    return f"{base}-{number}"


def worker_log_path(run: SimulationRun) -> Path:
    return Path(settings.VAR_DIR) / "runs" / f"run-{run.pk}.log"


def worker_command(run: SimulationRun) -> list[str]:
    return [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "simulate", "--run", str(run.pk)]


def start_worker(run: SimulationRun) -> int | None:
    """Start ``manage.py simulate --run <id>`` detached from this process; returns its pid.

    The worker gets its own session, so it outlives the request, a page reload and a restart of
    the web server; its output goes to ``var/runs/run-<id>.log``. If the process cannot be
    started, the run is marked failed with the reason (it can be resumed later).
    """
    log = worker_log_path(run)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        pid = spawn_process(worker_command(run), cwd=Path(settings.BASE_DIR), log=log)
    except OSError as error:
        logger.exception("Could not start the worker of run %s", run.pk)
        reason = error.strerror or type(error).__name__  # not str(error), which names the file
        message = f"Could not start the worker process ({reason}); the server log has the details."
        _close(run.pk, SimulationRun.Status.FAILED, message)
        return None
    SimulationRun.objects.filter(pk=run.pk).update(worker_pid=pid, heartbeat_at=timezone.now())
    return pid


def spawn_process(command: list[str], *, cwd: Path, log: Path) -> int:
    """Start ``command`` in a new session with output appended to ``log``, and reap it when it exits."""
    with log.open("ab") as output:
        process = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )
    threading.Thread(target=process.wait, name=f"reap-{process.pid}", daemon=True).start()
    return process.pid


def request_cancel(run: SimulationRun) -> None:
    """Ask the worker to stop; a run with no live worker is marked cancelled at once."""
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run.pk)
        if run.done:
            return
        if run.status == SimulationRun.Status.RUNNING and not is_stale(run):
            run.cancel_requested = True
            run.save(update_fields=["cancel_requested"])
            return
        run.cancel_requested = True
        run.status = SimulationRun.Status.CANCELLED
        run.finished_at = timezone.now()
        run.message = run.message or "Cancelled before a worker ran it."
        run.save(update_fields=["cancel_requested", "status", "finished_at", "message"])


def can_resume(run: SimulationRun) -> bool:
    """A run that ended without finishing everything, or whose worker died, may get a new worker."""
    if run.status == SimulationRun.Status.FINISHED:
        return False
    return run.done or is_stale(run)


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
    "workers": ("Worker processes", ""),
    "seed": ("Seed", ""),
    "barrier_seats": ("Barrier seats (role positions)", ""),
    "barrier_seat": ("Barrier seat (role position)", ""),
    "interview": ("Interview the agents", ""),
}


def describe_options(options: dict[str, Any]) -> list[tuple[str, str]]:
    """A run's stored options as (label, text) pairs, in a fixed order, empty values spelled out."""
    rows = []
    for key, (label, empty) in _OPTION_LABELS.items():
        if key not in options:
            continue
        value = options[key]
        text = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        rows.append((label, text or empty))
    return rows


def may_control(user: Any, run: SimulationRun) -> bool:
    """Cancel and resume belong to whoever launched the run; a command-line run to any researcher
    of its team. ``run`` comes from ``SimulationRun.objects.owned_by(user)``: the team is checked there."""
    return bool(user.is_superuser or run.created_by_id is None or run.created_by_id == user.pk)


@dataclass
class RunProgress:
    """A run as its page shows it: counts, rates, and whether its worker is alive."""

    run: SimulationRun
    percent: int
    stale: bool
    turns: int
    elapsed_seconds: int | None
    episodes_per_minute: float | None
    turns_per_second: float | None
    heartbeat_age: int | None
    can_cancel: bool
    can_resume: bool

    @property
    def polling(self) -> bool:
        """The page keeps asking while a live worker may still change the numbers."""
        return not self.run.done and not self.stale


def run_progress(run: SimulationRun, user: Any = None, *, turns: int | None = None) -> RunProgress:
    """What the run page shows; ``turns`` may be passed in (the list page does not count them)."""
    now = timezone.now()
    stale = is_stale(run, now)
    done = run.finished + run.failed
    end = run.finished_at if run.done and run.finished_at else now
    elapsed = int((end - run.started_at).total_seconds()) if run.started_at else None
    if turns is None:
        turns = Turn.objects.filter(episode__team=run.team_id, episode__tag=run.tag).count()
    control = user is not None and may_control(user, run)
    return RunProgress(
        run=run,
        percent=round(100 * done / run.total) if run.total else 0,
        stale=stale,
        turns=turns,
        elapsed_seconds=elapsed,
        episodes_per_minute=round(60 * done / elapsed, 1) if elapsed else None,
        turns_per_second=round(turns / elapsed, 1) if elapsed else None,
        heartbeat_age=int((now - run.heartbeat_at).total_seconds()) if run.heartbeat_at else None,
        can_cancel=control and not run.done and not run.cancel_requested,
        can_resume=control and can_resume(run),
    )
