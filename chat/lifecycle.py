"""How a participant's chat episode ends: a side leaves, the turn cap, inactivity, or a model failure.

Pages and the socket both call these, so an episode ends the same way whoever notices first.
Ending is idempotent: an episode that has already ended keeps its first reason.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from benchmark.models import Episode

from .models import Participant

ENDED = frozenset({Episode.Status.FINISHED, Episode.Status.FAILED, Episode.Status.ABANDONED})

END_MESSAGES = {
    Episode.EndReason.LEAVE: "The conversation is over: one side left.",
    Episode.EndReason.TURN_CAP: "The conversation has reached its length limit.",
    Episode.EndReason.TIMEOUT: "The conversation ended after a long pause.",
    Episode.EndReason.MODEL_ERROR: (
        "The other side could not continue because of a technical problem. This is not your fault; "
        "please go on to the questions."
    ),
}


def end_message(end_reason: str) -> str:
    """What the participant is told when the conversation ends for this reason."""
    return END_MESSAGES.get(end_reason, "The conversation is over.")


def end_episode(participant: Participant, end_reason: str, *, status: str = Episode.Status.FINISHED) -> bool:
    """End the participant's episode and move them on to the questionnaire.

    Returns False when the episode had already ended (its first reason stands). A model failure
    is recorded as status ``failed`` with end reason ``model_error``; the participant still goes on.
    """
    with transaction.atomic():
        episode = Episode.objects.select_for_update().get(pk=participant.episode_id)
        if episode.status in ENDED:
            return False
        episode.status = status
        episode.end_reason = end_reason
        episode.finished_at = timezone.now()
        episode.save(update_fields=["status", "end_reason", "finished_at"])
        Participant.objects.filter(pk=participant.pk, stage=Participant.Stage.CHAT).update(
            stage=Participant.Stage.QUESTIONNAIRE, agent_lease_until=None, agent_lease_owner=""
        )
    participant.refresh_from_db(fields=["stage", "agent_lease_until", "agent_lease_owner"])
    return True


def is_idle(participant: Participant, now: datetime | None = None) -> bool:
    """True when the participant has not acted for longer than the study's inactivity timeout."""
    now = now or timezone.now()
    return now - participant.last_seen_at > timedelta(seconds=participant.study.inactivity_timeout)


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
        Episode.objects.select_for_update().get(pk=participant.episode_id)
        participant.refresh_from_db(fields=["stage", "last_seen_at"])
        if participant.stage != Participant.Stage.CHAT or not is_idle(participant, now):
            return False
        return end_episode(participant, Episode.EndReason.TIMEOUT)
