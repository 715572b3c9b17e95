"""The participant's turns: what they may send, and storing each one exactly once.

A turn is stored before anyone is told about it, and the page's ``client_id`` makes storing
idempotent: the ``(episode, client_id)`` unique index means a message resent after a dropped
connection, to this process or another, returns the turn already stored and never adds a second.
The episode row is locked while a turn is written, so turn order and the rate limit are checked
against the committed transcript, not against what one process happens to remember.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark.models import ActionType, Episode, Turn

from .lifecycle import ENDED
from .models import Participant
from .protocol import Cast

HUMAN_ACTION_TYPES: tuple[str, ...] = (
    ActionType.SPEAK.value,
    ActionType.NON_VERBAL.value,
    ActionType.ACTION.value,
    ActionType.LEAVE.value,
)
CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
RATE_WINDOW = timedelta(seconds=60)


class TurnRefused(Exception):
    """A participant's message that cannot be stored; ``message`` is shown to them as it is."""

    def __init__(self, code: str, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after

    def as_message(self, client_id: Any = None) -> dict[str, Any]:
        """The protocol's ``error`` message for this refusal."""
        payload: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        if isinstance(client_id, str):
            payload["client_id"] = client_id
        if self.retry_after is not None:
            payload["retry_after"] = self.retry_after
        return payload


@dataclass(frozen=True)
class Submitted:
    """A stored turn; ``created`` is False when it was already stored under the same client id.

    ``ends`` is the end reason the new turn brings (the participant left, or the turn cap).
    """

    turn: Turn
    created: bool
    cast: Cast
    ends: str | None = None


def load_cast(participant: Participant) -> Cast:
    """The participant's episode's seats in speaking order, with the names the participant may see."""
    episode = Episode.objects.select_related("scenario").get(pk=participant.episode_id)
    seats = list(episode.seats.select_related("character"))
    return Cast.for_episode(episode, seats, human_position=participant.study.human_position)


def clean_action(action_type: Any, content: Any, *, max_chars: int) -> tuple[str, str]:
    """Check a participant's action and its text; the text comes back trimmed."""
    if action_type not in HUMAN_ACTION_TYPES:
        raise TurnRefused(
            "unknown_action",
            f"Unknown action {action_type!r}: choose one of {', '.join(HUMAN_ACTION_TYPES)}.",
        )
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise TurnRefused("bad_message", "The message text must be a string.")
    # PostgreSQL cannot store NUL characters in text, and no keyboard types them.
    content = content.replace("\x00", "").strip()
    if not is_valid_text(content):
        raise TurnRefused(
            "bad_message",
            "The message contains a character that is not valid text (half of a UTF-16 surrogate pair); "
            "please type it again.",
        )
    if not content and action_type != ActionType.LEAVE:
        raise TurnRefused("empty", "Write something before sending.")
    if len(content) > max_chars:
        raise TurnRefused(
            "too_long",
            f"Your message is {len(content)} characters long; the limit is {max_chars} characters.",
        )
    return action_type, content


def is_valid_text(text: str) -> bool:
    """False when ``text`` holds a lone surrogate (JSON's ``"\\ud800"`` decodes to one): it is no
    Unicode character, cannot be encoded as UTF-8, and neither database would store it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def submit_human_turn(
    participant_pk: int,
    *,
    client_id: Any,
    action_type: Any,
    content: Any,
    now: datetime | None = None,
    cast: Cast | None = None,
    browser: str | None = None,
) -> Submitted:
    """Store the participant's next turn, or return the one already stored under ``client_id``.

    Raises :class:`TurnRefused` for a bad client id, an unknown action, empty or too long text, a
    turn that is not theirs, too many messages in the last minute (leaving is never rate limited),
    or an episode that has ended. Pass the episode's ``cast`` when known to save its queries, and
    the ``browser`` token of the socket's session: a browser the participant is no longer bound
    to (``chat.access``) is refused with code ``not_your_browser``.
    """
    if not isinstance(client_id, str) or not CLIENT_ID.fullmatch(client_id):
        raise TurnRefused("bad_client_id", "Each message needs a client_id of 8 to 64 letters, digits, - or _.")
    participant = Participant.objects.select_related("study").get(pk=participant_pk)
    if browser is not None and (not participant.browser_token or participant.browser_token != browser):
        raise TurnRefused(
            "not_your_browser",
            "This conversation has moved to another browser; nothing more can be sent from this one.",
        )
    cast = cast or load_cast(participant)
    study = participant.study
    action_type, content = clean_action(action_type, content, max_chars=study.max_message_chars)
    now = now or timezone.now()
    try:
        with transaction.atomic():
            episode = Episode.objects.select_for_update().get(pk=participant.episode_id)
            stored = _stored(episode.pk, client_id)
            if stored is not None:
                return Submitted(stored, False, cast)
            if episode.status in ENDED:
                raise TurnRefused("ended", "The conversation is over; nothing more can be sent.")
            last = episode.turns.order_by("-index").values_list("index", flat=True).first()
            index = 0 if last is None else last + 1  # indices are contiguous from 0
            if index >= episode.turn_cap:
                raise TurnRefused("ended", "The conversation is over; nothing more can be sent.")
            cast = cast.current()  # an agent may have left since the page read it
            if not cast.is_human_turn(index):
                raise TurnRefused("not_your_turn", "It is not your turn yet.")
            if action_type != ActionType.LEAVE:
                _check_rate(episode, cast.human_seat, study.messages_per_minute, now)
            turn = Turn.objects.create(
                episode=episode,
                index=index,
                seat_id=cast.human_seat,
                action_type=action_type,
                content=content,
                client_id=client_id,
                created_at=now,
            )
            Participant.objects.filter(pk=participant.pk).update(last_seen_at=now)
            if episode.status == Episode.Status.PENDING:
                Episode.objects.filter(pk=episode.pk).update(status=Episode.Status.RUNNING, started_at=now)
            if action_type == ActionType.LEAVE:
                cast = cast.with_leave(index, cast.human_seat)
            ends = cast.end_reason_after(index + 1)
    except IntegrityError:
        # Another process stored a turn at this index (or this very client id) first.
        stored = _stored(participant.episode_id, client_id)
        if stored is not None:
            return Submitted(stored, False, cast)
        raise TurnRefused("not_your_turn", "It is not your turn yet.") from None
    return Submitted(turn, True, cast, ends)


def _stored(episode_pk: int, client_id: str) -> Turn | None:
    return Turn.objects.filter(episode_id=episode_pk, client_id=client_id).first()


def _check_rate(episode: Episode, seat_pk: int, per_minute: int, now: datetime) -> None:
    """Refuse a message beyond ``per_minute`` in the last 60 s, counted from stored turns (0: no limit)."""
    if not per_minute:
        return
    recent = list(
        Turn.objects.filter(episode=episode, seat_id=seat_pk, created_at__gt=now - RATE_WINDOW)
        .order_by("created_at")
        .values_list("created_at", flat=True)
    )
    if len(recent) < per_minute:
        return
    frees_up = recent[len(recent) - per_minute] + RATE_WINDOW
    wait = max(1, math.ceil((frees_up - now).total_seconds()))
    raise TurnRefused(
        "rate_limited",
        f"You are sending messages too quickly (at most {per_minute} a minute). "
        f"Please wait {wait} second{'s' if wait != 1 else ''}.",
        retry_after=wait,
    )

