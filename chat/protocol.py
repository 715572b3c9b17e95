"""The chat socket's messages: the group per episode, close codes, and what each message carries.

Every page a participant has open on their episode joins one channel-layer group; whatever
happens in the episode (a stored turn, the agent's typing, the end) is sent to that group, from
whichever server process notices it. The payloads are built here so the consumer, the agent's
turn and the documentation (``docs/chat-protocol.md``) agree on them. Nothing here names the
model or the barrier condition: the participant must never learn them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from channels.layers import get_channel_layer

from benchmark.models import ActionType, Episode, Seat, Turn

from .lifecycle import ENDED, end_message

# Close codes (4000-4999 are free for applications). The page does not reconnect after the first three.
CLOSE_UNKNOWN_STUDY = 4404
CLOSE_NO_PARTICIPANT = 4401  # also: the participant is bound to another browser now
CLOSE_NOT_IN_CHAT = 4409
CLOSE_FLOOD = 4429
CLOSE_TOO_MANY_PAGES = 4413  # the participant already holds the most sockets allowed

# What the page does after the end: go on to the questions, or to the screen-out page.
QUESTIONS = "questions"
SCREENED_OUT = "screened_out"

YOU = "you"
PARTNER = "partner"


def episode_group(episode_pk: int) -> str:
    """The channel-layer group every open page of one episode listens on."""
    return f"chat.episode.{episode_pk}"


@dataclass(frozen=True)
class Cast:
    """Who sits where, as the participant sees it: speaking order, their own seat, names shown.

    Turns go round-robin by seat position, so the seat of turn ``i`` is ``order[i % len(order)]``.
    The partner's name is shown only when the scenario's relationship lets the participant know
    it (strangers see "The other person"), as on the briefing page.
    """

    order: tuple[int, ...]
    human_seat: int
    names: dict[int, str]

    @classmethod
    def of(cls, seats: list[Seat], *, relationship: int, human_position: int) -> Cast:
        """Build the cast from the episode's seats (role-less; ``character`` loaded)."""
        seats = sorted(seats, key=lambda s: s.position)
        human = next((s for s in seats if s.player == Seat.Player.HUMAN), None)
        if human is None:
            human = next(s for s in seats if s.position == human_position)
        names = {}
        for seat in seats:
            if seat.pk == human.pk:
                names[seat.pk] = seat.character.name
            else:
                names[seat.pk] = seat.character.visible_to(relationship).get("name") or "The other person"
        return cls(order=tuple(s.pk for s in seats), human_seat=human.pk, names=names)

    def seat_at(self, index: int) -> int:
        return self.order[index % len(self.order)]

    def side(self, seat_pk: int) -> str:
        return YOU if seat_pk == self.human_seat else PARTNER

    def side_at(self, index: int) -> str:
        return self.side(self.seat_at(index))

    def is_human_turn(self, index: int) -> bool:
        return self.seat_at(index) == self.human_seat


def turn_message(turn: Turn, cast: Cast, *, ended: bool = False) -> dict[str, Any]:
    """A stored turn as the page shows it; ``next`` says whose turn follows (None once over)."""
    message: dict[str, Any] = {"type": "turn", **turn_fields(turn, cast)}
    message["next"] = None if ended else cast.side_at(turn.index + 1)
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
    return fields


def ended_fields(end_reason: str, *, screened_out: bool = False, participant_left: bool = False) -> dict[str, Any]:
    """How the conversation ended, as ``ended`` and ``history`` carry it."""
    return {
        "reason": end_reason,
        "message": end_message(end_reason, screened_out=screened_out, participant_left=participant_left),
        "outcome": SCREENED_OUT if screened_out else QUESTIONS,
    }


def ended_message(end_reason: str, *, screened_out: bool = False, participant_left: bool = False) -> dict[str, Any]:
    fields = ended_fields(end_reason, screened_out=screened_out, participant_left=participant_left)
    return {"type": "ended", **fields}


def typing_message(index: int, cast: Cast, *, text: str = "", action_type: str | None = None) -> dict[str, Any]:
    return {
        "type": "typing",
        "index": index,
        "speaker": cast.names.get(cast.seat_at(index), ""),
        "action_type": action_type,
        "text": text,
    }


def history_message(
    episode: Episode,
    turns: list[Turn],
    cast: Cast,
    *,
    limits: dict[str, int],
    typing: dict[str, Any] | None,
    screened_out: bool = False,
) -> dict[str, Any]:
    """Everything a page needs after (re)connecting: the whole transcript and the episode's state."""
    over = episode.status in ENDED
    next_index = len(turns)
    left = bool(turns) and turns[-1].seat_id == cast.human_seat and turns[-1].action_type == ActionType.LEAVE
    return {
        "type": "history",
        "you": cast.names[cast.human_seat],
        "partner": next((name for pk, name in cast.names.items() if pk != cast.human_seat), ""),
        "turns": [turn_fields(turn, cast) for turn in turns],
        "next": None if over else {"index": next_index, "side": cast.side_at(next_index)},
        "typing": None if over else typing,
        "ended": ended_fields(episode.end_reason, screened_out=screened_out, participant_left=left) if over else None,
        "limits": limits,
    }


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
