"""The episode's recording on the item page, and what a span needs of the episode: its seats and turn times.

When the item's episode has a recording, the page plays it beside the transcript
(``static/annotator/player.js``): an uploaded file through ``annotator:recording``, a URL of the
assignment and never of the episode, so the page names nothing of the episode; a referenced
recording from its address as it is, and the page says it is external. Only plain values reach the
template (``annotator.item_page`` says why). A recording kept only as still frames has no player.

A span is about one seat (``Span.seat_position``): the annotator picks it from the episode's seats,
and the first language agent's seat is picked to begin with (SHREC's agent under study; position 0
when no seat is an agent's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from benchmark.models import Recording, Seat, Turn

from .models import Span


@dataclass(frozen=True)
class PlayerView:
    """The player as the page shows it."""

    kind: str  # audio or video
    src: str
    external: bool  # referenced by URL, loaded from elsewhere


@dataclass(frozen=True)
class SeatChoice:
    """A seat a span may be about, as the span editor offers it."""

    position: int
    name: str
    default: bool


def default_seat(seats: Sequence[Seat]) -> int | None:
    """The seat a span is about unless the annotator says otherwise: the first agent's, else the first."""
    agents = [seat.position for seat in seats if seat.player == Seat.Player.AGENT]
    return agents[0] if agents else (seats[0].position if seats else None)


def player(assignment_pk: int, episode: Any) -> PlayerView | None:
    """The recording of ``episode`` (read with it by ``own_assignment``) for the player, or None when it has none
    that plays."""
    try:
        recording = episode.recording
    except Recording.DoesNotExist:
        return None
    if recording.file:
        return PlayerView(recording.kind, reverse("annotator:recording", args=[assignment_pk]), external=False)
    if recording.url:
        return PlayerView(recording.kind, recording.url, external=True)
    return None


def plays_recording(item: Any) -> bool:
    """Whether the item's page may play its episode's recording: only an item that shows the whole episode.
    An item showing part of it (a window, a SHREC task item's excerpt, where a pre-condition's answer is the
    turn left out) or two compared episodes has no player, and its annotator cannot fetch the recording."""
    return not (item.compared_episode_id or item.first_turn is not None or item.task_item_id)


def page(assignment_pk: int, item: Any, seats: Sequence[Seat]) -> dict[str, Any]:
    """The item page's part of the context: the player (``plays_recording``) and the seats a span may be about."""
    chosen = default_seat(seats)
    return {
        "player": player(assignment_pk, item.episode) if plays_recording(item) else None,
        "span_seats": [SeatChoice(seat.position, seat.character.name, seat.position == chosen) for seat in seats],
        "span_channels": [(value, label) for value, label in Span.Channel.choices],
        "spans_need_rationale": item.study.spans_need_rationale,
    }


def span_rules(seats: Sequence[Seat], turns: Sequence[Turn], study: Any) -> dict[str, Any]:
    """``answer_forms.parse_form``'s arguments for spans: turn times, the default seat, the study's rule."""
    return {
        "turn_times": [(turn.index, turn.start_s, turn.end_s) for turn in turns],
        "default_seat": default_seat(seats),
        "spans_need_rationale": study.spans_need_rationale,
    }
