"""Agent–agent episodes: set one up from a scenario, then run it turn by turn.

An episode has one seat per role, two or more. Who speaks next follows the scenario's
turn-taking policy (``benchmark.turn_taking``: round robin, seat 0, 1, 2, 0, ... as in Sotopia,
or random order after a greeting as in AgentSense); a ProMediate negotiation (``promediate``) is
played by its own loop (:mod:`benchmark.runs.negotiation`), the mediator deciding first. Each turn
is stored the moment it is produced, so a crash loses at most the turn in flight and
:func:`run_episode` resumes from the next index. A seat that leaves speaks no more; an episode ends
when fewer than two seats can speak (with two seats, when one leaves) or at its turn cap (20 by
default, as in Sotopia and SocialVeil).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..agents import acting, llm, prompt
from ..models import ActionType, Barrier, Character, Episode, Scenario, ScenarioBarrier, Seat, Turn, TurnTaking
from ..scenarios import turn_taking
from .negotiation import run_negotiation


def create_episode(
    scenario: Scenario,
    barrier: Barrier,
    *,
    barrier_seats: Collection[int] = (0,),
    models: Mapping[int, str] | None = None,
    strategy: str = Seat.Strategy.DEFAULT,
    turn_cap: int = 20,
    source: str = Episode.Source.SIMULATED,
    tag: str = "",
    settings: dict[str, Any] | None = None,
    characters: Mapping[int, Character] | None = None,
    external_id: str | None = None,
    empty_roles: Collection[int] = (),
) -> Episode:
    """Create a pending episode with one agent seat per scenario role.

    Seat ``n`` plays role ``n`` with the role's default character (``characters`` overrides it
    by position). ``barrier_seats`` are the positions of the seats that speak under the barrier
    (the condition names them; they are marked for the ``none`` baseline too, so conditions stay
    comparable); ``strategy`` applies to the other seats. A seat without an entry in ``models``
    gets the configured model for its part: ``agent`` for a barrier seat, ``partner`` for the
    others (the scripted model if unset). ``empty_roles`` are role positions left without a seat (a
    negotiation played with no mediator). A template cannot be played: instantiate it first.
    """
    if scenario.is_template:
        raise ValueError(f"Scenario {scenario} is a template; instantiate it with a cast to play it.")
    roles = list(scenario.roles.select_related("character").order_by("position"))
    if len(roles) < 2:
        raise ValueError(f"Scenario {scenario} has {len(roles)} role(s); an episode needs at least two.")
    positions = [role.position for role in roles]
    barrier_seats = frozenset(barrier_seats)
    unknown = sorted(barrier_seats - set(positions))
    if unknown:
        raise ValueError(
            f"barrier seat(s) {', '.join(map(str, unknown))} are not role positions of {scenario} ({positions})."
        )
    greeter_problem = turn_taking.check_greeter(scenario, positions)
    if greeter_problem:
        raise ValueError(greeter_problem)
    if strategy not in Seat.Strategy.values:
        raise ValueError(f"Unknown strategy {strategy!r}; use one of {', '.join(Seat.Strategy.values)}.")
    if turn_cap < 1:
        raise ValueError("turn_cap must be at least 1.")
    models = dict(models or {})
    characters = dict(characters or {})
    for role in roles:
        if role.position not in characters and role.character is None:
            raise ValueError(f"Role {role.position} of {scenario} has no default character; cast one.")

    with transaction.atomic():
        episode = Episode.objects.create(
            team_id=scenario.team_id,  # an episode belongs to its scenario's team
            external_id=external_id,
            scenario=scenario,
            barrier=barrier,
            source=source,
            turn_cap=turn_cap,
            tag=tag,
            settings=dict(settings or {}),
        )
        Seat.objects.bulk_create(
            Seat(
                episode=episode,
                position=role.position,
                role=role,
                character=characters.get(role.position, role.character),
                player=Seat.Player.AGENT,
                model=models.get(role.position)
                or llm.model_for("agent" if role.position in barrier_seats else "partner"),
                strategy=Seat.Strategy.DEFAULT if role.position in barrier_seats else strategy,
                carries_barrier=role.position in barrier_seats,
            )
            for role in roles
            if role.position not in empty_roles
        )
    return episode


async def run_episode(
    episode: Episode,
    *,
    seed: int = 0,
    beats: Mapping[int, Sequence[str]] | None = None,
    save_turn: Callable[[Turn], Awaitable[Turn]] | None = None,
) -> Episode:
    """Play an episode to its end and return it refreshed; continue from the next turn if resumed.

    ``beats`` maps a role position to the lines its character would say in order; only the
    scripted model uses them. The sampling temperature comes from ``episode.settings``.
    ``save_turn`` stores each new turn and returns once it is stored (default: one INSERT); a
    runner with many episodes in flight passes a group-commit writer (``benchmark.runs.writer.TurnWriter``).
    A model failure (``llm.LLMError``) marks the episode failed, end reason ``model_error``, and
    is re-raised for the caller to report.
    """
    episode = await Episode.objects.select_related("scenario", "barrier").aget(pk=episode.pk)
    seats = [
        s
        async for s in episode.seats.select_related("role", "character")
        .prefetch_related("role__goals")
        .order_by("position")
    ]
    if not seats:
        raise ValueError(f"{episode} has no seats.")
    cues = [c async for c in episode.barrier.cues.all()]
    has_probes = await episode.scenario.probes.aexists()
    scenario_barrier = await ScenarioBarrier.objects.filter(
        scenario_id=episode.scenario_id, barrier_id=episode.barrier_id
    ).afirst()
    turns = [t async for t in episode.turns.order_by("index")]
    beats = beats or {}
    temperature = float(episode.settings.get("temperature", 0.7))

    now = timezone.now()
    episode.status = Episode.Status.RUNNING
    episode.started_at = episode.started_at or now
    episode.settings = {**episode.settings, "seed": seed}
    await episode.asave(update_fields=["status", "started_at", "settings"])

    if episode.scenario.turn_taking == TurnTaking.PROMEDIATE:
        try:
            end_reason = await run_negotiation(episode, seats, turns, seed=seed, save_turn=save_turn or _insert_turn)
        except llm.LLMError:
            await _finish(episode, Episode.Status.FAILED, Episode.EndReason.MODEL_ERROR)
            raise
        await _finish(episode, Episode.Status.FINISHED, end_reason)
        return episode

    by_position = {seat.position: seat for seat in seats}
    position_of = {seat.pk: seat.position for seat in seats}
    spoken = [position_of[turn.seat_id] for turn in turns]
    left = {position for position, turn in zip(spoken, turns, strict=True) if turn.action_type == ActionType.LEAVE}
    policy, greeter = episode.scenario.turn_taking, episode.scenario.greeter_position
    end_reason = _end_reason(episode, turns, by_position, left)
    while end_reason is None:
        position = turn_taking.next_speaker(policy, list(by_position), spoken, left, seed=seed, greeter=greeter)
        seat = by_position[position]
        context = prompt.AgentContext.for_seat(
            episode, seat, turns, seats=seats, cues=cues, has_probes=has_probes, scenario_barrier=scenario_barrier
        )
        try:
            action, usage = await acting.act(
                context, model=seat.model, temperature=temperature, seed=seed, beats=beats.get(seat.role.position)
            )
        except llm.LLMError:
            await _finish(episode, Episode.Status.FAILED, Episode.EndReason.MODEL_ERROR)
            raise
        turn = Turn(
            episode=episode,
            index=len(turns),
            seat=seat,
            action_type=action.action_type,
            content=action.content,
            model=usage.model,
            latency_ms=usage.latency_ms,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )
        await (save_turn or _insert_turn)(turn)
        turns.append(turn)
        spoken.append(seat.position)
        if action.action_type == ActionType.LEAVE:
            left.add(seat.position)
        end_reason = _end_reason(episode, turns, by_position, left)

    await _finish(episode, Episode.Status.FINISHED, end_reason)
    return episode


async def _insert_turn(turn: Turn) -> Turn:
    await turn.asave(force_insert=True)
    return turn


def _end_reason(episode: Episode, turns: Sequence[Turn], seats: Mapping[int, Seat], left: set[int]) -> str | None:
    if turns and turns[-1].action_type == ActionType.LEAVE and not turn_taking.can_go_on(seats, left):
        return Episode.EndReason.LEAVE
    if len(turns) >= episode.turn_cap:
        return Episode.EndReason.TURN_CAP
    return None


async def _finish(episode: Episode, status: str, end_reason: str) -> None:
    episode.status = status
    episode.end_reason = end_reason
    episode.finished_at = timezone.now()
    await episode.asave(update_fields=["status", "end_reason", "finished_at"])
