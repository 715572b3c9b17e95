"""The participant's turns: what they may send, and storing each one exactly once.

A turn is stored before anyone is told about it, and the page's ``client_id`` makes storing
idempotent: the ``(episode, client_id)`` unique index means a message resent after a dropped
connection, to this process or another, returns the turn already stored and never adds a second.
The episode row is locked while a turn is written, so turn order and the rate limit are checked
against the committed transcript, not against what one process happens to remember.

What never changes during a chat (the seats, their characters and roles, the study's limits) is read
once per socket into a :class:`ChatSetup`. What does change is read after the episode row is locked:
the statement that takes the lock reads the status and the browser bound, the next one the transcript
(the last index, a turn already stored under the client id, the leaves, the rate window all come from
it). Storing a turn, the seen mark and the claim of the agent's turn it makes due take four statements
in one transaction (a turn that ends the chat writes the end there instead of the claim: five), and the
transcript read there is what the agent's turn is written from (``Submitted.transcript``), so it needs no
read of its own. A page's view that went stale (a leave it
has not heard of yet) costs a refusal at most, never a wrong write.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, F, FilteredRelation, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from benchmark.models import ActionType, BarrierCue, Episode, Goal, Probe, ScenarioBarrier, Seat, Turn

from .lifecycle import ENDED, Ending, ending_after, write_ending
from .models import Participant
from .protocol import Cast
from .statements import DATETIME, Insert, Param, Select, Update, prefetched

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

    ``ending``: the end the new turn brought (the participant left, or the turn cap), written with it.
    """

    turn: Turn
    created: bool
    cast: Cast
    ending: Ending | None = None
    owner: str = ""  # the agent lease claimed in the same transaction, when the turn made the agent's due
    transcript: tuple[Turn, ...] = ()  # every turn stored by then, read in that transaction (when ``created``)


@dataclass
class ChatSetup:
    """What a chat needs for its whole life, read once when a page connects (or an agent turn starts
    without one): the episode with its scenario and barrier, the seats with their characters, roles and
    goals, and the study's limits. None of it changes while the chat runs; the transcript, the leases and
    the episode's status do, and are read where they are used.
    """

    participant_pk: int
    episode: Episode  # ``scenario`` and ``barrier`` loaded; its ``settings`` as read (a negotiation re-reads)
    seats: list[Seat]  # by position, ``character`` and ``role`` (with its goals) loaded
    human_position: int
    max_chars: int
    messages_per_minute: int
    min_turns: int
    inactivity_timeout: int
    has_probes: bool
    cues: list[BarrierCue] | None = None  # the barrier's cues, when a seat carries a barrier
    scenario_barrier: ScenarioBarrier | None = None

    @classmethod
    def of(cls, participant: Participant) -> ChatSetup:
        """The setup of ``participant``'s episode, from a participant read by :func:`participants`."""
        episode = participant.episode
        seats = SEATS.fetch(episode=episode.pk)
        prefetched([seat.role for seat in seats], "goals", GOALS.fetch(episode=episode.pk))
        for seat in seats:
            seat.episode = episode
        cues, scenario_barrier = None, None
        if any(seat.carries_barrier for seat in seats) and not episode.barrier.is_baseline:
            cues = CUES.fetch(barrier=episode.barrier_id)
            # Django sets a filtered relation's attribute only when the row was found.
            scenario_barrier = getattr(participant, "scenario_prompt", None)
        study = participant.study
        return cls(
            participant_pk=participant.pk, episode=episode, seats=seats, human_position=study.human_position,
            max_chars=study.max_message_chars, messages_per_minute=study.messages_per_minute,
            min_turns=study.min_participant_turns, inactivity_timeout=study.inactivity_timeout,
            has_probes=participant.has_probes, cues=cues, scenario_barrier=scenario_barrier,
        )

    @classmethod
    def load(cls, participant_pk: int) -> ChatSetup:
        return cls.of(read_participant(participant_pk))

    @property
    def episode_pk(self) -> int:
        return self.episode.pk

    def cast(self, turns: list[Turn] | None = None) -> Cast:
        """The cast after ``turns`` (the whole transcript, read by the caller); without them, the leaves are read."""
        return Cast.for_episode(self.episode, self.seats, human_position=self.human_position, turns=turns)


def participants() -> QuerySet[Participant]:
    """Participants with their study, episode, scenario and barrier, the scenario's own prompt for that barrier
    (``scenario_prompt``, a :class:`ScenarioBarrier` or None) and whether the scenario has probes: what
    :meth:`ChatSetup.of` needs but the seats and the barrier's cues, in one statement."""
    has_probes = Exists(Probe.objects.filter(scenario_id=OuterRef("episode__scenario_id")))
    scenario_prompt = FilteredRelation(
        "episode__scenario__barrier_prompts",
        condition=Q(episode__scenario__barrier_prompts__barrier=F("episode__barrier")),
    )
    return Participant.objects.annotate(has_probes=has_probes, scenario_prompt=scenario_prompt).select_related(
        "study", "episode__scenario", "episode__barrier", "scenario_prompt"
    )


def read_participant(participant_pk: int) -> Participant:
    return participants().get(pk=participant_pk)


# The statements of every message and every connect, compiled once (``chat.statements``).
SEATS = Select(
    lambda: Seat.objects.filter(episode_id=Param("episode")).select_related("role", "character").order_by("position")
)
GOALS = Select(lambda: Goal.objects.filter(role__in=Seat.objects.filter(episode_id=Param("episode")).values("role")))
CUES = Select(lambda: BarrierCue.objects.filter(barrier_id=Param("barrier")))
TRANSCRIPT = Select(lambda: Turn.objects.filter(episode_id=Param("episode")).order_by("index"))
LOCK_EPISODE = Select(  # the episode's row locked: its status, its turn cap, the browser the participant is bound to
    lambda: Episode.objects.select_for_update(no_key=True).filter(pk=Param("episode")).annotate(
        browser_token=Subquery(Participant.objects.filter(pk=Param("participant")).order_by().values("browser_token"))
    ).values("status", "turn_cap", "browser_token")
)
INSERT_TURN = Insert(Turn)  # no receiver listens to a Turn's saving
MARK_SEEN = Update(lambda: Participant.objects.filter(pk=Param("participant")), last_seen_at=Param("now", DATETIME))


def read_transcript(episode_pk: int) -> list[Turn]:
    """Every turn of the episode, in order."""
    return TRANSCRIPT.fetch(episode=episode_pk)


def mark_seen(participant_pk: int, now: datetime) -> None:
    MARK_SEEN.run(participant=participant_pk, now=now)


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
    setup: ChatSetup | None = None,
) -> Submitted:
    """Store the participant's next turn, or return the one already stored under ``client_id``.

    Raises :class:`TurnRefused` for a bad client id, an unknown action, empty or too long text, a
    turn that is not theirs, too many messages in the last minute (leaving is never rate limited),
    or an episode that has ended. Pass the socket's ``setup`` and ``cast`` to save reading them, and
    the ``browser`` token of the socket's session: a browser the participant is no longer bound
    to (``chat.access``) is refused with code ``not_your_browser``.

    When the new turn makes an agent's turn due, the agent lease is claimed in the same transaction
    (``Submitted.owner``; ``chat.agent_turn``), so the caller starts it without looking again. A
    negotiation's next turn waits on the floor (``chat.state_machine.next_step``), and so is not claimed here.
    """
    if not isinstance(client_id, str) or not CLIENT_ID.fullmatch(client_id):
        raise TurnRefused("bad_client_id", "Each message needs a client_id of 8 to 64 letters, digits, - or _.")
    setup = setup or ChatSetup.load(participant_pk)
    cast = cast or setup.cast()
    now = now or timezone.now()
    try:
        with transaction.atomic():
            locked = _lock_episode(setup)
            if browser is not None and (not locked["browser_token"] or locked["browser_token"] != browser):
                raise TurnRefused(
                    "not_your_browser",
                    "This conversation has moved to another browser; nothing more can be sent from this one.",
                )
            action_type, content = clean_action(action_type, content, max_chars=setup.max_chars)
            turns = read_transcript(setup.episode_pk)
            stored = next((turn for turn in turns if turn.client_id == client_id), None)
            if stored is not None:
                return Submitted(stored, False, cast)
            if locked["status"] in ENDED:
                raise TurnRefused("ended", "The conversation is over; nothing more can be sent.")
            index = turns[-1].index + 1 if turns else 0  # indices are contiguous from 0
            if index >= locked["turn_cap"]:
                raise TurnRefused("ended", "The conversation is over; nothing more can be sent.")
            if cast.is_negotiation:
                cast = cast.current()  # the floor moves with every turn
            elif sum(turn.action_type == ActionType.LEAVE for turn in turns) != len(cast.leaves):
                cast = setup.cast(turns)  # an agent left since the page heard of it
            if not cast.is_human_turn(index):
                raise TurnRefused("not_your_turn", "It is not your turn yet.")
            if action_type != ActionType.LEAVE:
                _check_rate(turns, cast.human_seat, setup.messages_per_minute, now)
            turn = INSERT_TURN.create(
                episode_id=setup.episode_pk,
                index=index,
                seat_id=cast.human_seat,
                action_type=action_type,
                content=content,
                client_id=client_id,
                created_at=now,
            )
            if locked["status"] == Episode.Status.PENDING:
                Episode.objects.filter(pk=setup.episode_pk).update(status=Episode.Status.RUNNING, started_at=now)
            if action_type == ActionType.LEAVE:
                cast = cast.with_leave(index, cast.human_seat)
            ends = cast.end_reason_after(index + 1)
            ending = ending_after(ends, (*turns, turn), cast.human_seat, setup.min_turns) if ends else None
            owner = ""
            if ending is not None:
                write_ending(participant_pk, setup.episode_pk, ending, now)
            elif cast.agent_due_after(index + 1):
                from .agent_turn import claim_lease, new_owner  # the agent's turn imports this module

                owner = new_owner()
                if not claim_lease(participant_pk, owner, now, seen=True):
                    owner = ""  # another process holds a live lease on it
            if ending is None and not owner:
                mark_seen(participant_pk, now)
    except IntegrityError:
        # Another process stored a turn at this index (or this very client id) first.
        stored = _stored(setup.episode_pk, client_id)
        if stored is not None:
            return Submitted(stored, False, cast)
        raise TurnRefused("not_your_turn", "It is not your turn yet.") from None
    return Submitted(turn, True, cast, ending, owner, (*turns, turn))


def _lock_episode(setup: ChatSetup) -> dict[str, Any]:
    """Lock the episode's row (the lock every end of the chat takes first) and read its status, its turn
    cap and the browser the participant is bound to.

    What else storing a turn checks (the last index, a turn stored under the client id, the leaves, the rate
    window) is read from the transcript by the next statement, which on PostgreSQL takes a snapshot after the
    lock was granted: it sees every turn committed by a writer this one waited for.
    """
    for locked in LOCK_EPISODE.fetch(episode=setup.episode_pk, participant=setup.participant_pk):
        return locked
    raise Episode.DoesNotExist(f"No episode {setup.episode_pk}.")


def _stored(episode_pk: int, client_id: str) -> Turn | None:
    return Turn.objects.filter(episode_id=episode_pk, client_id=client_id).first()


def _check_rate(turns: list[Turn], seat_pk: int, per_minute: int, now: datetime) -> None:
    """Refuse a message beyond ``per_minute`` of the participant's (``seat_pk``) in the last 60 s (0: no
    limit); the next message is allowed once the ``per_minute``-th latest of them leaves the window."""
    if not per_minute:
        return
    recent = sorted(
        (turn.created_at for turn in turns if turn.seat_id == seat_pk and turn.created_at > now - RATE_WINDOW),
        reverse=True,
    )
    if len(recent) < per_minute:
        return
    wait = max(1, math.ceil((recent[per_minute - 1] + RATE_WINDOW - now).total_seconds()))
    raise TurnRefused(
        "rate_limited",
        f"You are sending messages too quickly (at most {per_minute} a minute). "
        f"Please wait {wait} second{'s' if wait != 1 else ''}.",
        retry_after=wait,
    )
