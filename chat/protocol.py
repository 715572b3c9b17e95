"""The chat socket's messages: the group per episode, close codes, and what each message carries.

Every page a participant has open on their episode joins one channel-layer group; whatever
happens in the episode (a stored turn, the agent's typing, the end) is sent to that group, from
whichever server process notices it. The payloads are built here so the consumer, the agent's
turn and the documentation (``docs/chat-protocol.md``) agree on them. Nothing here names the
model or the barrier condition: the participant must never learn them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from channels.layers import get_channel_layer

from benchmark.models import ActionType, Episode, Seat, Turn, TurnTaking
from benchmark.scenarios.turn_taking import can_go_on, speaking_order

from .lifecycle import ENDED, QUESTIONS, end_message
from .negotiation import Floor, stored_floor

# Close codes (4000-4999 are free for applications). The page does not reconnect after the first three.
CLOSE_UNKNOWN_STUDY = 4404
CLOSE_NO_PARTICIPANT = 4401  # also: the participant is bound to another browser now
CLOSE_NOT_IN_CHAT = 4409
CLOSE_FLOOD = 4429
CLOSE_TOO_MANY_PAGES = 4413  # the participant already holds the most sockets allowed

YOU = "you"
PARTNER = "partner"
UPCOMING = 4  # turns of a group chat's order shown ahead
NOBODY = 0  # no seat has a pk 0: the turn is not given yet (a negotiation waiting on a choice)


def episode_group(episode_pk: int) -> str:
    """The channel-layer group every open page of one episode listens on."""
    return f"chat.episode.{episode_pk}"


@dataclass(frozen=True)
class Cast:
    """Who sits where, as the participant sees it: speaking order, their own seat, names shown.

    Who speaks at turn ``i`` follows the scenario's turn-taking policy
    (``benchmark.scenarios.turn_taking``, the same function agent-only runs use): round robin by seat
    position, or a greeting by one role and then random order drawn from the episode's seed, never
    the same seat twice in a row. An agent that leaves a group chat is stepped round from the next
    turn on, as in agent-only runs: ``leaves`` holds the (turn index, seat position) of each leave
    stored when the cast was read, and :meth:`current` reads them again. In a two-party chat the partner's name
    is shown only when the scenario's relationship lets the participant know it (strangers see
    "The other person"), as on the briefing page; in a chat of three or more every speaker is
    named, as every agent's prompt names them, or nobody could tell who said what.
    """

    order: tuple[int, ...]  # seat pks by seat position
    human_seat: int
    names: dict[int, str]
    positions: tuple[int, ...] = ()  # seat positions, aligned with ``order``
    policy: str = TurnTaking.ROUND_ROBIN
    seed: int = 0
    greeter: int | None = None
    turn_cap: int = 0  # the episode's; 0: unknown
    leaves: tuple[tuple[int, int], ...] = ()  # (turn index, seat position) of each leave, in turn order
    episode_pk: int | None = None
    # A negotiation (``chat.negotiation``) decides each turn as it comes: the seats of the stored turns, and
    # the seat given the next one (None while undecided).
    spoken: tuple[int, ...] = ()
    floor_seat: int | None = None

    @classmethod
    def of(
        cls, seats: list[Seat], *, relationship: int, human_position: int, policy: str = TurnTaking.ROUND_ROBIN,
        seed: int = 0, greeter: int | None = None, turn_cap: int = 0, leaves: tuple[tuple[int, int], ...] = (),
        episode_pk: int | None = None,
    ) -> Cast:
        """Build the cast from the episode's seats (role-less; ``character`` loaded)."""
        seats = sorted(seats, key=lambda s: s.position)
        human = next((s for s in seats if s.player == Seat.Player.HUMAN), None)
        if human is None:
            human = next(s for s in seats if s.position == human_position)
        names = {}
        for seat in seats:
            if seat.pk == human.pk or len(seats) > 2:
                names[seat.pk] = seat.character.name
            else:
                names[seat.pk] = seat.character.visible_to(relationship).get("name") or "The other person"
        return cls(
            order=tuple(s.pk for s in seats), human_seat=human.pk, names=names,
            positions=tuple(s.position for s in seats), policy=policy, seed=seed, greeter=greeter, turn_cap=turn_cap,
            leaves=leaves, episode_pk=episode_pk,
        )

    @classmethod
    def for_episode(
        cls, episode: Episode, seats: list[Seat], *, human_position: int, turns: list[Turn] | None = None
    ) -> Cast:
        """The cast of a chat episode (``scenario`` loaded): its policy, greeter and seed included.

        Pass the whole transcript as ``turns`` when it has been read anyway: the leaves are then taken from it
        instead of being read again.
        """
        scenario = episode.scenario
        if turns is None:
            leaves = stored_leaves(episode.pk)
        else:
            position = {seat.pk: seat.position for seat in seats}
            leaves = tuple((t.index, position[t.seat_id]) for t in turns if t.action_type == ActionType.LEAVE)
        cast = cls.of(
            seats, relationship=scenario.relationship, human_position=human_position, policy=scenario.turn_taking,
            seed=int(episode.settings.get("seed", episode.pk)), greeter=scenario.greeter_position,
            turn_cap=episode.turn_cap, leaves=leaves, episode_pk=episode.pk,
        )
        return cast.current() if cast.is_negotiation else cast

    def after_message(self, message: dict[str, Any]) -> Cast:
        """This cast once the page has been sent ``message`` (``chat.protocol`` payloads): a ``turn`` that is
        a leave steps its seat round from the next turn on. How a socket keeps its cast current without reading
        the leaves again; a negotiation's cast is read again where it is used (``current``)."""
        if message.get("type") != "turn" or message.get("action_type") != ActionType.LEAVE:
            return self
        index = message["index"]
        if any(left_at == index for left_at, _ in self.leaves):
            return self
        if "seat" in message:
            seat = message["seat"]
            seat_pk = self.order[self.positions.index(seat)] if self.positions else self.order[seat]
        elif message.get("side") == YOU:
            seat_pk = self.human_seat
        else:
            seat_pk = next(pk for pk in self.order if pk != self.human_seat)
        return self.with_leave(index, seat_pk)

    def current(self) -> Cast:
        """This cast with the leaves stored by now (a cast kept by a page may predate a leave)."""
        if self.episode_pk is None:
            return self
        if self.is_negotiation:
            spoken, floor_seat = stored_floor(Episode.objects.get(pk=self.episode_pk))
            return replace(self, leaves=stored_leaves(self.episode_pk), spoken=spoken, floor_seat=floor_seat)
        return replace(self, leaves=stored_leaves(self.episode_pk))

    @property
    def is_negotiation(self) -> bool:
        """Turns go to whoever gets the floor (``chat.negotiation``), not in an order known beforehand."""
        return self.policy == TurnTaking.PROMEDIATE

    def with_leave(self, index: int, seat_pk: int) -> Cast:
        """This cast after the seat ``seat_pk`` left at turn ``index``."""
        return replace(self, leaves=(*self.leaves, (index, self.position_of(seat_pk))))

    @property
    def left(self) -> frozenset[int]:
        """The seat positions that have left."""
        return frozenset(position for _, position in self.leaves)

    @property
    def human_position(self) -> int:
        return self.position_of(self.human_seat)

    @property
    def is_group(self) -> bool:
        """Three or more seats: the page names every speaker and shows the order of turns."""
        return len(self.order) > 2

    def seat_at(self, index: int) -> int:
        """The seat (pk) that speaks at turn ``index``, the seats that left so far stepped round.

        In a negotiation only the stored turns and the next one, once given, are known; else ``NOBODY``.
        """
        if self.is_negotiation:
            if index < len(self.spoken):
                return self.spoken[index]
            return self.floor_seat if index == len(self.spoken) and self.floor_seat is not None else NOBODY
        if not self.positions or (self.policy == TurnTaking.ROUND_ROBIN and not self.leaves):
            return self.order[index % len(self.order)]
        spoken = speaking_order(
            self.policy, self.positions, index + 1, seed=self.seed, greeter=self.greeter, leaves=self.leaves
        )
        return self.order[self.positions.index(spoken[index])]

    def end_reason_after(self, turns_stored: int) -> str | None:
        """Why the chat is over once ``turns_stored`` turns are in, or None while it goes on.

        A leave ends it when the participant left or fewer than two seats can still speak (the rule of
        agent-only runs, ``turn_taking.can_go_on``); otherwise the turn cap does. The cast must be current.
        """
        if self.leaves and self.leaves[-1][0] == turns_stored - 1:
            if self.leaves[-1][1] == self.human_position or not can_go_on(self.positions, self.left):
                return Episode.EndReason.LEAVE
        if turns_stored >= self.turn_cap:
            return Episode.EndReason.TURN_CAP
        return None

    def agent_due_after(self, turns_stored: int) -> bool:
        """Whether an agent's turn comes at once after ``turns_stored`` turns, so whoever stored the last one
        claims it in the same transaction. Not in a negotiation, whose floor decides turn by turn
        (``chat.state_machine.next_step``). The cast must be current."""
        return (
            self.end_reason_after(turns_stored) is None and not self.is_negotiation
            and not self.is_human_turn(turns_stored)
        )

    def participant_turns(self) -> int:
        """How many of the turns up to the cap are the participant's, nobody else leaving (the briefing says so).

        Unknown in a negotiation (0): who speaks is decided turn by turn.
        """
        if self.is_negotiation:
            return 0
        return sum(self.is_human_turn(index) for index in range(self.turn_cap))

    def position_of(self, seat_pk: int) -> int:
        return self.positions[self.order.index(seat_pk)] if self.positions else self.order.index(seat_pk)

    def side(self, seat_pk: int) -> str:
        return YOU if seat_pk == self.human_seat else PARTNER

    def side_at(self, index: int) -> str:
        return self.side(self.seat_at(index))

    def is_human_turn(self, index: int) -> bool:
        return self.seat_at(index) == self.human_seat

    def speaker(self, seat_pk: int) -> dict[str, Any]:
        """One speaker as a group chat's page lists them: seat position, name, and whether it is you."""
        you = seat_pk == self.human_seat
        return {"seat": self.position_of(seat_pk), "name": self.names.get(seat_pk, ""), "you": you}

    def upcoming(self, index: int, count: int = UPCOMING) -> list[dict[str, Any]]:
        """Who speaks at turn ``index`` and the ones after it, at most ``count``, none past the turn cap."""
        last = index + count if not self.turn_cap else min(index + count, self.turn_cap)
        if self.is_negotiation:  # only the next speaker, once given the floor
            return [self.speaker(self.seat_at(i)) for i in range(index, last) if self.seat_at(i) != NOBODY]
        return [self.speaker(self.seat_at(i)) for i in range(index, last)]


def stored_leaves(episode_pk: int) -> tuple[tuple[int, int], ...]:
    """The (turn index, seat position) of each leave stored in the episode, in turn order."""
    leaves = Turn.objects.filter(episode_id=episode_pk, action_type=ActionType.LEAVE).order_by("index")
    return tuple(leaves.values_list("index", "seat__position"))


def turn_message(turn: Turn, cast: Cast, *, ended: bool = False) -> dict[str, Any]:
    """A stored turn as the page shows it; ``next`` says whose turn follows (None once over).

    In a group chat it also carries ``upcoming``: who speaks next and after, up to the turn cap.
    Pass the cast as it is after ``turn`` (``Cast.with_leave`` when the turn is an agent's leave).
    """
    message: dict[str, Any] = {"type": "turn", **turn_fields(turn, cast)}
    message["next"] = None if ended else cast.side_at(turn.index + 1)
    if cast.is_group:
        message["upcoming"] = [] if ended else cast.upcoming(turn.index + 1)
    return message


def turn_fields(turn: Turn, cast: Cast) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "index": turn.index,
        "side": cast.side(turn.seat_id),
        "speaker": cast.names.get(turn.seat_id, ""),
        "action_type": turn.action_type,
        "content": turn.content,
    }
    if turn.seat_id == cast.human_seat and turn.client_id:
        fields["client_id"] = turn.client_id
    if cast.is_group:
        fields["seat"] = cast.position_of(turn.seat_id)
    return fields


def floor_message(floor: Floor, cast: Cast, now: datetime) -> dict[str, Any]:
    """Where a negotiation's next turn stands (``chat.negotiation``): the participant's open ``window``
    (``intervene`` or ``claim``) with the seconds left on the server's clock, or who was given the floor.
    Pass the cast as it is now (``Cast.current``)."""
    seat = cast.seat_at(floor.index) if not floor.window else NOBODY
    message: dict[str, Any] = {
        "type": "floor",
        "index": floor.index,
        "window": floor.window or None,
        "seconds_left": round(floor.seconds_left(now), 2),
        "window_seconds": round(floor.window_seconds, 2),
        "next": None if seat == NOBODY else {"index": floor.index, "side": cast.side(seat)},
        "speaker": cast.names.get(seat, ""),
    }
    if cast.is_group:
        message["upcoming"] = cast.upcoming(floor.index)
    return message


def ended_fields(
    end_reason: str, *, outcome: str = QUESTIONS, participant_left: bool = False, group: bool = False
) -> dict[str, Any]:
    """How the conversation ended, as ``ended`` and ``history`` carry it; ``outcome`` is where the page goes
    next (``chat.lifecycle.outcome_of``)."""
    return {
        "reason": end_reason,
        "message": end_message(end_reason, outcome=outcome, participant_left=participant_left, group=group),
        "outcome": outcome,
    }


def ended_message(
    end_reason: str, *, outcome: str = QUESTIONS, participant_left: bool = False, group: bool = False
) -> dict[str, Any]:
    fields = ended_fields(end_reason, outcome=outcome, participant_left=participant_left, group=group)
    return {"type": "ended", **fields}


def typing_message(index: int, cast: Cast, *, text: str = "", action_type: str | None = None) -> dict[str, Any]:
    message = {
        "type": "typing",
        "index": index,
        "speaker": cast.names.get(cast.seat_at(index), ""),
        "action_type": action_type,
        "text": text,
    }
    if cast.is_group:
        message["seat"] = cast.position_of(cast.seat_at(index))
    return message


def history_message(
    episode: Episode,
    turns: list[Turn],
    cast: Cast,
    *,
    limits: dict[str, int],
    typing: dict[str, Any] | None,
    outcome: str = QUESTIONS,
    floor: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything a page needs after (re)connecting: the whole transcript and the episode's state."""
    over = episode.status in ENDED
    next_index = len(turns)
    left = bool(turns) and turns[-1].seat_id == cast.human_seat and turns[-1].action_type == ActionType.LEAVE
    history = {
        "type": "history",
        "you": cast.names[cast.human_seat],
        "partner": next((name for pk, name in cast.names.items() if pk != cast.human_seat), ""),
        "turns": [turn_fields(turn, cast) for turn in turns],
        "next": None if over else {"index": next_index, "side": cast.side_at(next_index)},
        "typing": None if over else typing,
        "ended": ended_fields(
            episode.end_reason, outcome=outcome, participant_left=left, group=cast.is_group
        ) if over else None,
        "limits": limits,
    }
    if cast.is_negotiation:
        history["floor"] = None if over else floor
    if cast.is_group:
        gone = cast.left
        history["speakers"] = [
            {**cast.speaker(seat_pk), "left": cast.position_of(seat_pk) in gone} for seat_pk in cast.order
        ]
        history["upcoming"] = [] if over else cast.upcoming(next_index)
    return history


async def broadcast(episode_pk: int, message: dict[str, Any]) -> None:
    """Send a protocol message to every open page of the episode, in whichever process they are.

    The consumer's handler for type ``chat.forward`` passes ``message`` on unchanged.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    await layer.group_send(episode_group(episode_pk), {"type": "chat.forward", "message": message})


async def announce_rebinding(episode_pk: int) -> None:
    """Tell every open page of the episode that the participant's browser changed (a resume code was
    used, or a researcher released the id): each socket checks again and closes if it lost them.

    The consumer's handler for type ``chat.rebound`` does the check; nothing reaches the page.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    await layer.group_send(episode_group(episode_pk), {"type": "chat.rebound"})
