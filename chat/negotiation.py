"""The floor of a live ProMediate negotiation with a participant in it (spec PM-19, PM-20): who speaks next.

In a negotiation nobody's turn is known in advance. After every utterance the mediator decides first
whether to intervene; if it does not, the parties who did not just speak want the floor, and the most
motivated one takes it (spec §1.2). A participant takes part in that decision:

- **as the mediator**, after every party's utterance a window opens (``ChatStudy.intervene_window``,
  15 s by default) in which they choose *Intervene* (and then write) or *Let them continue*; silence is
  *continue*. Every chance is stored as a ``MediatorDecision`` by a person, with the time they took, so
  the mediator metrics (response latency in turns and seconds, frequency, effectiveness) read a human
  mediator exactly as a model's. The mediator never follows itself: after its own turn the parties go on.
- **as a party**, each time the floor opens to them (they did not just speak, and the agent mediator did
  not step in) a window opens (``ChatStudy.claim_window``, 20 s) in which "I want to speak" claims it: a
  claim counts as motivation 5.0 and pre-empts the agents' thoughts. Otherwise the agents' most motivated
  thought wins.

The state of the floor is ``episode.settings["floor"]`` (a :class:`Floor`), written under the episode's
row lock, and every deadline is the server's clock: a page cannot open, extend or close a window, only
make the participant's choice while it is open. Whoever looks first after a deadline (the timer of the
process that opened it, or any page's watch) closes it; closing is idempotent.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from benchmark.importing.promediate import MEDIATOR
from benchmark.models import ActionType, Episode, MediatorDecision, PartyThought, Scenario, Seat, TurnTaking

from . import negotiation_agents as agents
from .models import ChatConnection, Participant

INTERVENE_WINDOW = "intervene"  # the participant mediator's window
CLAIM_WINDOW = "claim"  # the participant party's window
INTERVENE, CONTINUE, CLAIM = "intervene", "continue", "claim"
CHOICES = {INTERVENE: INTERVENE_WINDOW, CONTINUE: INTERVENE_WINDOW, CLAIM: CLAIM_WINDOW}
MEDIATOR_DELIBERATES, PARTIES_DELIBERATE = "mediator", "parties"
CLAIM_RATING = 5.0
CLAIM_THOUGHT = "Asked for the floor."
HUMAN_POLICY = "human"
LIVE = (Episode.Status.PENDING, Episode.Status.RUNNING)
MAX_STEPS = 4  # looks per call: a window closes, the mediator declines, the parties decide, and one spare


def is_negotiation(scenario: Scenario) -> bool:
    """True when the scenario's turns go by motivation with a mediator's priority (ProMediate)."""
    return scenario.turn_taking == TurnTaking.PROMEDIATE


def mediator_position(scenario: Scenario) -> int | None:
    """The position of the negotiation's mediator role: its opener (``greeter_position``, as the importer sets
    it), else the role whose character is the case's Mediator; None when it has none."""
    if is_negotiation(scenario) and scenario.greeter_position is not None:
        return scenario.greeter_position
    for role in scenario.roles.select_related("character"):
        if role.character is not None and role.character.name.strip().lower() == MEDIATOR.lower():
            return role.position
    return None


def seated_mediator(episode: Episode) -> int | None:
    """The position of the episode's mediator seat: as recorded at creation (None under the condition
    ``none``, whose mediator role has no seat), else the scenario's mediator role."""
    recorded = episode.settings.get("promediate") or {}
    if "mediator_position" in recorded:
        return recorded["mediator_position"]
    return mediator_position(episode.scenario)


def is_mediator(seat: Seat) -> bool:
    """Whether ``seat`` is its negotiation's mediator (``episode.scenario`` loaded)."""
    return seat.position == seated_mediator(seat.episode)


@dataclass(frozen=True)
class Floor:
    """Who has turn ``index``: ``seat`` once decided; while a participant's ``window`` is open, nobody yet."""

    index: int
    seat: int | None = None
    window: str = ""
    opened_at: datetime | None = None
    closes_at: datetime | None = None
    needs: str = ""  # MEDIATOR or PARTIES: the agents must deliberate before the turn is given
    text: str = ""  # what the agent given the floor says (the agents decided it with the floor)

    @classmethod
    def read(cls, settings: dict[str, Any]) -> Floor | None:
        stored = settings.get("floor")
        if not isinstance(stored, dict):
            return None
        return cls(
            index=int(stored["index"]),
            seat=stored.get("seat"),
            window=stored.get("window", ""),
            opened_at=parse_datetime(stored["opened_at"]) if stored.get("opened_at") else None,
            closes_at=parse_datetime(stored["closes_at"]) if stored.get("closes_at") else None,
            needs=stored.get("needs", ""),
            text=stored.get("text", ""),
        )

    def as_settings(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "seat": self.seat,
            "window": self.window,
            "opened_at": self.opened_at.isoformat() if self.opened_at else None,
            "closes_at": self.closes_at.isoformat() if self.closes_at else None,
            "needs": self.needs,
            "text": self.text,
        }

    def seconds_left(self, now: datetime) -> float:
        if not self.window or self.closes_at is None:
            return 0.0
        return max(0.0, (self.closes_at - now).total_seconds())

    @property
    def window_seconds(self) -> float:
        if self.opened_at is None or self.closes_at is None:
            return 0.0
        return (self.closes_at - self.opened_at).total_seconds()


@dataclass(frozen=True)
class FloorChange:
    """The floor after a look at it, and whether this look changed it (then the pages must be told)."""

    floor: Floor | None
    changed: bool = False


class FloorRefused(Exception):
    """A participant's choice that cannot be taken; ``message`` is shown to them as it is."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def as_message(self) -> dict[str, Any]:
        return {"type": "error", "code": self.code, "message": self.message}


@dataclass(frozen=True)
class Table:
    """The seats of a negotiation as the floor needs them."""

    seats: list[Seat]
    human: Seat
    mediator: Seat | None
    study_windows: tuple[float, float]  # (intervene, claim) seconds
    seed: int = 0

    @property
    def parties(self) -> list[Seat]:
        return [seat for seat in self.seats if seat is not self.mediator]

    @property
    def human_is_mediator(self) -> bool:
        return self.mediator is not None and self.human.pk == self.mediator.pk


def stored_floor(episode: Episode) -> tuple[tuple[int, ...], int | None]:
    """The seats of the stored turns in order, and the seat given the next turn (None while undecided)."""
    spoken = tuple(episode.turns.order_by("index").values_list("seat_id", flat=True))
    floor = Floor.read(episode.settings)
    seat = floor.seat if floor is not None and floor.index == len(spoken) else None
    return spoken, seat


def settle_floor(participant_pk: int, now: datetime | None = None) -> FloorChange:
    """Decide what the next turn of the participant's negotiation waits for, from the stored transcript.

    Gives the floor (the opening to the mediator; the agent mediator when it steps in; an agent party when
    nobody claimed), opens the participant's window when their choice is due, or closes a window whose
    deadline passed. Does nothing for a turn already given, a window still open, or an episode over.
    When the agents must deliberate, they do so outside the episode's lock (a model may take seconds); what
    they decided is stored only if the transcript and the floor are still as they read them.
    """
    now = now or timezone.now()
    participant = Participant.objects.select_related("study").get(pk=participant_pk)
    if participant.stage != Participant.Stage.CHAT or participant.episode_id is None:
        return FloorChange(None)
    changed, floor = False, None
    for _ in range(MAX_STEPS):
        with transaction.atomic():
            episode = _locked(participant.episode_id)
            floor = Floor.read(episode.settings)
            if not is_negotiation(episode.scenario) or episode.status not in LIVE:
                return FloorChange(floor, changed)
            table = _table(episode, participant)
            turns = _turns(episode)
            _link_intervention(episode, turns, table)
            if len(turns) >= episode.turn_cap:
                return FloorChange(floor, changed)
            if floor is None or floor.index != len(turns):
                floor, changed = _next_floor(table, turns, now), True
            elif floor.window and floor.closes_at is not None and now >= floor.closes_at:
                floor, changed = _close_window(episode, floor, table, turns), True
                _silence_is_a_choice(participant, now)
            _save(episode, floor)
            if not floor.needs:
                return FloorChange(floor, changed)
            asked = floor
        decided = _deliberate(participant.episode_id, table, turns, asked)
        with transaction.atomic():
            episode = _locked(participant.episode_id)
            if Floor.read(episode.settings) != asked or episode.turns.count() != asked.index:
                continue  # someone else moved on meanwhile: look again
            floor, changed = _commit(episode, table, turns, asked, decided, now), True
            _save(episode, floor)
            if not floor.needs:
                return FloorChange(floor, changed)
    return FloorChange(floor, changed)


def choose(participant_pk: int, choice: Any, index: Any, now: datetime | None = None) -> FloorChange:
    """Take the participant's choice in their open window: ``intervene``, ``continue`` or ``claim``.

    Raises :class:`FloorRefused` when the choice is unknown, is not the one their role makes, the window
    is for another turn or has closed (on the server's clock), or no window is open.
    """
    now = now or timezone.now()
    if choice not in CHOICES:
        raise FloorRefused("bad_choice", f"Unknown choice {choice!r}: choose one of {', '.join(CHOICES)}.")
    participant = Participant.objects.select_related("study").get(pk=participant_pk)
    if participant.stage != Participant.Stage.CHAT or participant.episode_id is None:
        raise FloorRefused("ended", "The conversation is over.")
    with transaction.atomic():
        locked = Episode.objects.select_for_update(no_key=True).select_related("scenario")
        episode = locked.get(pk=participant.episode_id)
        if not is_negotiation(episode.scenario):
            raise FloorRefused("not_a_negotiation", "This conversation takes turns in a fixed order.")
        floor = Floor.read(episode.settings)
        if floor is None or not floor.window or floor.index != index:
            raise FloorRefused("no_window", "That choice is no longer open.")
        if floor.window != CHOICES[choice]:
            raise FloorRefused("not_your_choice", "That choice is not yours to make in this conversation.")
        if floor.closes_at is not None and now >= floor.closes_at:
            raise FloorRefused("window_closed", "The time to choose has run out.")
        table = _table(episode, participant)
        took_ms = max(0, round((now - floor.opened_at).total_seconds() * 1000)) if floor.opened_at else None
        if choice == CLAIM:
            PartyThought.objects.create(
                episode=episode,
                after_index=floor.index - 1,
                seat=table.human,
                content=CLAIM_THOUGHT,
                raw_rating=CLAIM_RATING,
                rating=CLAIM_RATING,
                selected=True,
                spoken=True,
            )
            floor = replace(floor, seat=table.human.pk, window="")
        else:
            engaged = choice == INTERVENE
            MediatorDecision.objects.create(
                episode=episode,
                after_index=floor.index - 1,
                by=MediatorDecision.By.HUMAN,
                policy=HUMAN_POLICY,
                engaged=engaged,
                decided_ms=took_ms,
                decided_at=now,
                reason="The participant chose to intervene." if engaged else "The participant let them continue.",
            )
            floor = (
                replace(floor, seat=table.human.pk, window="")
                if engaged
                else Floor(floor.index, needs=PARTIES_DELIBERATE)
            )
        _save(episode, floor)
        Participant.objects.filter(pk=participant.pk).update(last_seen_at=now)
    return FloorChange(floor, changed=True)


# --- deciding ---------------------------------------------------------------------------------------


def _table(episode: Episode, participant: Participant) -> Table:
    seats = list(episode.seats.select_related("character").order_by("position"))
    human = next((seat for seat in seats if seat.player == Seat.Player.HUMAN), None)
    if human is None:
        human = next(seat for seat in seats if seat.position == participant.study.human_position)
    position = seated_mediator(episode)
    mediator = next((seat for seat in seats if seat.position == position), None)
    study = participant.study
    seed = int(episode.settings.get("seed", episode.pk))
    return Table(seats, human, mediator, (study.intervene_window, study.claim_window), seed)


def _save(episode: Episode, floor: Floor) -> None:
    episode.settings = {**episode.settings, "floor": floor.as_settings()}
    episode.save(update_fields=["settings"])


def _open(floor_index: int, window: str, seconds: float, now: datetime) -> Floor:
    return Floor(floor_index, window=window, opened_at=now, closes_at=now + timedelta(seconds=seconds))


def _locked(episode_pk: int) -> Episode:
    return Episode.objects.select_for_update(no_key=True).select_related("scenario", "barrier").get(pk=episode_pk)


def _turns(episode: Episode) -> list[tuple[int, int, str]]:
    return list(episode.turns.order_by("index").values_list("index", "seat_id", "action_type"))


def _next_floor(table: Table, turns: list[tuple[int, int, str]], now: datetime) -> Floor:
    """The floor for the turn after ``turns``: given at once, the participant's window, or the agents' to decide."""
    index = len(turns)
    if index == 0:  # the opening: the mediator's welcome, or, with none, an agent party's drawn from the seed
        speakers = [seat for seat in table.parties if seat.player == Seat.Player.AGENT] or table.parties
        opener = table.mediator or random.Random(f"promediate-opening|{table.seed}").choice(speakers)
        return Floor(0, seat=opener.pk, text="" if opener.pk == table.human.pk else agents.OPENING_LINE)
    mediator_spoke = table.mediator is not None and turns[-1][1] == table.mediator.pk
    if table.human_is_mediator:
        if mediator_spoke:  # the mediator never speaks twice in a row
            return Floor(index, needs=PARTIES_DELIBERATE)
        return _open(index, INTERVENE_WINDOW, table.study_windows[0], now)
    if table.mediator is not None and not mediator_spoke:
        return Floor(index, needs=MEDIATOR_DELIBERATES)
    return _floor_to_parties(table, turns, now)


def _floor_to_parties(table: Table, turns: list[tuple[int, int, str]], now: datetime) -> Floor:
    """The floor open to the parties: the participant's window when they may take it, else the agents'."""
    index = len(turns)
    if not table.human_is_mediator and table.human.pk != turns[-1][1] and table.human.pk not in _left(turns):
        return _open(index, CLAIM_WINDOW, table.study_windows[1], now)
    return Floor(index, needs=PARTIES_DELIBERATE)


def _close_window(episode: Episode, floor: Floor, table: Table, turns: list[tuple[int, int, str]]) -> Floor:
    """The window ran out: a silent mediator lets the parties continue; an unclaimed floor goes to the agents."""
    if floor.window == INTERVENE_WINDOW:
        MediatorDecision.objects.create(
            episode=episode,
            after_index=floor.index - 1,
            by=MediatorDecision.By.HUMAN,
            policy=HUMAN_POLICY,
            engaged=False,
            reason="window closed",
            decided_ms=round(floor.window_seconds * 1000),
            decided_at=floor.closes_at,
        )
    return Floor(floor.index, needs=PARTIES_DELIBERATE)


def _silence_is_a_choice(participant: Participant, now: datetime) -> None:
    """A window left to run out with the chat page open is the participant's choice, not their absence: it
    keeps the chat from ending for inactivity (a mediator may rightly let the parties talk for long)."""
    if ChatConnection.objects.filter(participant_id=participant.pk, expires_at__gt=now).exists():
        Participant.objects.filter(pk=participant.pk, last_seen_at__lt=now).update(last_seen_at=now)


def _eligible(table: Table, turns: list[tuple[int, int, str]]) -> list[Seat]:
    """The agent parties who may take the floor: not the last speaker, not gone, not the participant."""
    gone, last = _left(turns), turns[-1][1] if turns else None
    return [
        seat for seat in table.parties if seat.player == Seat.Player.AGENT and seat.pk != last and seat.pk not in gone
    ]


def _deliberate(
    episode_pk: int, table: Table, turns: list[tuple[int, int, str]], asked: Floor
) -> agents.MediatorOutcome | agents.PartiesOutcome:
    """What the agents decide at ``asked`` (no lock held: a model may take its time)."""
    episode = Episode.objects.select_related("scenario", "barrier").get(pk=episode_pk)
    context = agents.table_of(episode)
    if asked.needs == MEDIATOR_DELIBERATES:
        return agents.mediator_decides(episode, context)
    return agents.parties_decide(episode, context, _eligible(table, turns))


def _commit(
    episode: Episode,
    table: Table,
    turns: list[tuple[int, int, str]],
    asked: Floor,
    decided: agents.MediatorOutcome | agents.PartiesOutcome,
    now: datetime,
) -> Floor:
    """Store what the agents decided and give the floor accordingly (under the episode's lock)."""
    after = asked.index - 1
    if isinstance(decided, agents.MediatorOutcome):
        MediatorDecision.objects.create(episode=episode, after_index=after, decided_at=now, **decided.fields)
        if decided.engaged:
            return Floor(asked.index, seat=table.mediator.pk, text=decided.text)
        return _floor_to_parties(table, turns, now)
    PartyThought.objects.bulk_create(
        [
            PartyThought(
                episode=episode,
                after_index=after,
                seat_id=row.seat_pk,
                content=row.content,
                raw_rating=row.raw_rating,
                rating=row.rating,
                selected=row.selected,
                spoken=row.spoken,
            )
            for row in decided.thoughts
        ]
    )
    if decided.seat_pk is None:  # no agent has anything to say: the participant has the floor
        return Floor(asked.index, seat=table.human.pk)
    return Floor(asked.index, seat=decided.seat_pk, text=decided.text)


def _left(turns: list[tuple[int, int, str]]) -> set[int]:
    return {seat_pk for _, seat_pk, action_type in turns if action_type == ActionType.LEAVE}


def _link_intervention(episode: Episode, turns: list[tuple[int, int, str]], table: Table) -> None:
    """Tie each engaged mediator decision to the mediator's turn that followed it (once that turn is stored)."""
    if table.mediator is None:
        return
    spoken = {index for index, seat_pk, _ in turns if seat_pk == table.mediator.pk}
    for decision in MediatorDecision.objects.filter(episode=episode, engaged=True, turn__isnull=True):
        if decision.after_index + 1 in spoken:
            decision.turn = episode.turns.get(index=decision.after_index + 1)
            decision.save(update_fields=["turn"])
