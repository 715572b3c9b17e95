"""How a participant's chat episode ends: a side leaves, the turn cap, inactivity, or a model failure.

Pages and the socket both call these, so an episode ends the same way whoever notices first.
Ending is idempotent: an episode that has already ended keeps its first reason.

Where the participant goes next depends on who ended the chat and how long it was. A study sets a
minimum of participant turns (``ChatStudy.min_participant_turns``; speak, non-verbal and action
count, leaving does not), so that nobody collects the completion code by consenting and leaving at
once. When **the participant** ends the chat before that minimum, by leaving or by going quiet past
the inactivity timeout, they are **screened out**: no questions, the study's screen-out code instead
of the completion code, their design cell is offered again (``chat.assignment`` counts only chats
that went on to the questions), and the episode is marked ``abandoned`` so it is not annotated as a
finished conversation. A **model failure** before that minimum is not their doing, but the chat is too
short to count, and a participant could provoke it (a request the provider's content filter refuses
fails at once): it ends with a **technical problem**, no questions, the study's technical-problem code,
which the researcher reviews and approves (on Prolific, a code whose action is manual review), and a
freed place. Every other end sends them to the questions and the completion code, however short the
chat: the agent leaving, the turn cap, and a model failure after the minimum.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from benchmark.models import ActionType, Episode, Seat, Turn

from .models import ChatStudy, Participant

ENDED = frozenset({Episode.Status.FINISHED, Episode.Status.FAILED, Episode.Status.ABANDONED})

# Where a page goes once the chat is over: the questions, or the page of the code that ends the study.
QUESTIONS = "questions"
CODE_OUTCOMES = frozenset({Participant.Stage.SCREENED_OUT, Participant.Stage.TECHNICAL_PROBLEM})


def outcome_of(stage: str) -> str:
    """The ``outcome`` the socket's ``ended`` carries for a participant now at ``stage``."""
    return str(stage) if stage in CODE_OUTCOMES else QUESTIONS

END_MESSAGES = {
    Episode.EndReason.LEAVE: "Someone else left the conversation.",
    Episode.EndReason.TURN_CAP: "The conversation has reached its length limit.",
    Episode.EndReason.TIMEOUT: "The conversation ended after a long pause.",
    Episode.EndReason.MODEL_ERROR: (
        "The other side could not continue because of a technical problem. This is not your fault; "
        "please go on to the questions."
    ),
}


TECHNICAL_PROBLEM_MESSAGE = (
    "The other side could not continue because of a technical problem. This is not your fault. The "
    "conversation was too short to go on to the questions; the next page gives you a code, and the "
    "researchers will review your participation."
)

SCREENED_OUT_MESSAGES = {
    Episode.EndReason.LEAVE: "You left before the conversation was long enough for the study, so the study "
    "ends here, without the questions.",
    Episode.EndReason.TIMEOUT: "The conversation ended after a long pause, before it was long enough for the "
    "study, so the study ends here, without the questions.",
}


# The page's heading already says the conversation is over: the message gives the reason only.
YOU_LEFT = "You left the conversation."
EVERYONE_ELSE_LEFT = "Everyone else has left the conversation."


def end_message(
    end_reason: str, *, outcome: str = QUESTIONS, participant_left: bool = False, group: bool = False
) -> str:
    """What the participant is told when the conversation ends for this reason.

    A leave is told from the participant's side: they left, or the others did (``participant_left``
    says which; see ``ended_by_participant``). In a two-party chat the other side's leave ends it; in a
    ``group`` chat an agent's leave ends it only once no other agent is left to talk to
    (``chat.protocol.Cast.end_reason_after``), so the message says everyone else has gone.
    """
    if outcome == Participant.Stage.TECHNICAL_PROBLEM:
        return TECHNICAL_PROBLEM_MESSAGE
    if outcome == Participant.Stage.SCREENED_OUT:
        return SCREENED_OUT_MESSAGES.get(end_reason, "The study ends here, without the questions.")
    if end_reason == Episode.EndReason.LEAVE and participant_left:
        return YOU_LEFT
    if end_reason == Episode.EndReason.LEAVE and group:
        return EVERYONE_ELSE_LEFT
    return END_MESSAGES.get(end_reason, "The conversation has ended.")


def participant_turn_count(episode: Episode) -> int:
    """The participant's turns that count towards the study's minimum: all but leaving."""
    return Turn.objects.filter(episode=episode, seat__player=Seat.Player.HUMAN).exclude(
        action_type=ActionType.LEAVE
    ).count()


def ended_by_participant(episode: Episode, end_reason: str) -> bool:
    """True when the participant ended the chat: they went quiet, or the last turn is their leave."""
    if end_reason == Episode.EndReason.TIMEOUT:
        return True
    if end_reason != Episode.EndReason.LEAVE:
        return False
    last = episode.turns.order_by("-index").values_list("seat__player", "action_type").first()
    return last == (Seat.Player.HUMAN, ActionType.LEAVE)


def stage_after_end(participant: Participant, episode: Episode, end_reason: str) -> str:
    """Where a chatting participant goes once their episode ends for ``end_reason`` (:func:`stage_after`),
    read from the stored transcript."""
    by_participant = ended_by_participant(episode, end_reason)
    minimum = participant.study.min_participant_turns
    return stage_after(end_reason, by_participant, lambda: participant_turn_count(episode), minimum)


def stage_after(end_reason: str, by_participant: bool, counted_turns: Callable[[], int], minimum: int) -> str:
    """Where a chatting participant goes once their episode ends: the questions; the screen-out page when
    they ended it themselves (``by_participant``) short of the study's ``minimum`` of turns; the
    technical-problem page when the model failed short of it. ``counted_turns``: a function giving the
    participant's turns that count (all but leaving), called only when the minimum matters."""
    failed = end_reason == Episode.EndReason.MODEL_ERROR
    if not failed and not by_participant:
        return Participant.Stage.QUESTIONNAIRE
    if minimum and counted_turns() < minimum:
        return Participant.Stage.TECHNICAL_PROBLEM if failed else Participant.Stage.SCREENED_OUT
    return Participant.Stage.QUESTIONNAIRE


@dataclass(frozen=True)
class Ending:
    """How a turn just stored ends the chat, decided from the transcript in the transaction that stored it
    (:func:`ending_after`) and written there too (:func:`write_ending`)."""

    reason: str
    stage: str  # where the participant goes next
    participant_left: bool  # the last turn is the participant's own leave

    @property
    def outcome(self) -> str:
        return outcome_of(self.stage)

    @property
    def status(self) -> str:
        return Episode.Status.ABANDONED if self.stage == Participant.Stage.SCREENED_OUT else Episode.Status.FINISHED


def ending_after(end_reason: str, transcript: Sequence[Turn], human_seat: int, minimum: int) -> Ending:
    """The end ``end_reason`` brings, from the whole ``transcript`` (the turn that ends it last): the rule of
    :func:`stage_after_end` without reading anything."""
    last = transcript[-1] if transcript else None
    left = last is not None and last.seat_id == human_seat and last.action_type == ActionType.LEAVE
    by_participant = end_reason == Episode.EndReason.TIMEOUT or (end_reason == Episode.EndReason.LEAVE and left)

    def counted() -> int:
        return sum(turn.seat_id == human_seat and turn.action_type != ActionType.LEAVE for turn in transcript)

    stage = stage_after(end_reason, by_participant, counted, minimum)
    return Ending(end_reason, stage, end_reason == Episode.EndReason.LEAVE and left)


def write_ending(participant_pk: int, episode_pk: int, ending: Ending, now: datetime) -> None:
    """End the episode and move the participant on, in the transaction that stored the participant's last
    turn and holds the episode's lock (which every end takes first, :func:`end_episode` too); two
    statements. The participant was just here, so the move marks them seen as well."""
    Episode.objects.filter(pk=episode_pk).update(status=ending.status, end_reason=ending.reason, finished_at=now)
    Participant.objects.filter(pk=participant_pk, stage=Participant.Stage.CHAT).update(
        **moved_fields(ending.stage, now), last_seen_at=now
    )


def move_on(participant: Participant, stage: str, now: datetime) -> None:
    """Move a participant whose chat ended to ``stage`` (only from the chat; a code that ends the study
    finishes them)."""
    Participant.objects.filter(pk=participant.pk, stage=Participant.Stage.CHAT).update(**moved_fields(stage, now))
    participant.refresh_from_db(fields=["stage", "agent_lease_until", "agent_lease_owner", "finished_at"])


def moved_fields(stage: str, now: datetime) -> dict:
    """A participant's fields once their chat ended and they move on to ``stage``: the agent lease let go,
    and a code that ends the study finishes them."""
    fields: dict = {"stage": stage, "agent_lease_until": None, "agent_lease_owner": ""}
    if stage in CODE_OUTCOMES:
        fields["finished_at"] = now
    return fields


def end_episode(participant: Participant, end_reason: str, *, status: str = Episode.Status.FINISHED) -> bool:
    """End the participant's episode and move them on: to the questions, or screened out.

    Returns False when the episode had already ended (its first reason stands). A model failure
    is recorded as status ``failed`` with end reason ``model_error``; the participant still goes on.
    A screened-out participant's episode is recorded as ``abandoned`` (see the module docstring);
    ``participant.stage`` says which way they went.
    """
    now = timezone.now()
    with transaction.atomic():
        episode = Episode.objects.select_for_update(no_key=True).get(pk=participant.episode_id)
        if episode.status in ENDED:
            return False
        stage = stage_after_end(participant, episode, end_reason)
        episode.status = Episode.Status.ABANDONED if stage == Participant.Stage.SCREENED_OUT else status
        episode.end_reason = end_reason
        episode.finished_at = now
        episode.save(update_fields=["status", "end_reason", "finished_at"])
        move_on(participant, stage, now)
    return True


def is_idle(participant: Participant, now: datetime | None = None) -> bool:
    """True when the participant has not acted for longer than the study's inactivity timeout."""
    now = now or timezone.now()
    return now - participant.last_seen_at > timedelta(seconds=participant.study.inactivity_timeout)


def seconds_until_idle(participant: Participant, now: datetime) -> float:
    """Seconds until :func:`is_idle` turns true for the participant, and a little more (at least 0.1 s)."""
    timeout = timedelta(seconds=participant.study.inactivity_timeout)
    return max(0.1, (participant.last_seen_at + timeout - now).total_seconds() + 0.05)


SEEN_LATELY = timedelta(seconds=10)


def seen_lately(participant: Participant, now: datetime) -> bool:
    """True when the participant's seen mark is so fresh that marking them again would move their idle deadline
    by less than ``SEEN_LATELY`` (or a twentieth of the timeout, when that is shorter): a page reconnecting right
    after a message, or opening right after the flow's start, needs no mark of its own."""
    fresh = min(SEEN_LATELY, timedelta(seconds=participant.study.inactivity_timeout) / 20)
    return now - participant.last_seen_at < fresh


def end_idle_chats(study: ChatStudy | None = None, *, now: datetime | None = None) -> list[Participant]:
    """End every chat (of ``study``, or of every study) quiet past its study's timeout; the participants whose
    chat this call ended.

    A participant's own page and socket end their idle chat when they come back; this is for the
    ones who never do, run every minute by the consumer's upkeep (``chat.tasks``; by hand: ``manage.py
    end_idle_chats``) so that stalled cells are offered again and the monitor's counts settle.
    """
    now = now or timezone.now()
    chatting = Participant.objects.filter(stage=Participant.Stage.CHAT, episode__isnull=False).select_related("study")
    if study is not None:
        chatting = chatting.filter(study=study)
    # Each chat is checked against its own study's timeout (and again under its episode's lock).
    return [participant for participant in chatting.order_by("pk") if end_if_idle(participant, now)]


def end_if_idle(participant: Participant, now: datetime | None = None) -> bool:
    """End a chat that has gone quiet past the timeout; True if this call ended it.

    ``participant`` may have been read a while ago: a chat that looks idle is checked again with
    its episode locked, the lock a turn being stored holds while it marks the participant seen,
    so a message arriving at that moment keeps the chat going.
    """
    if participant.stage != Participant.Stage.CHAT or participant.episode_id is None:
        return False
    if not is_idle(participant, now):
        return False
    with transaction.atomic():
        Episode.objects.select_for_update(no_key=True).get(pk=participant.episode_id)
        participant.refresh_from_db(fields=["stage", "last_seen_at"])
        if participant.stage != Participant.Stage.CHAT or not is_idle(participant, now):
            return False
        return end_episode(participant, Episode.EndReason.TIMEOUT)
