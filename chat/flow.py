"""A participant's way through a chat study: arriving with an id, declining, starting the chat.

Crowd platforms append the participant's id to the study link (Prolific: ``PROLIFIC_PID``,
``STUDY_ID``, ``SESSION_ID``); other recruiters can use ``participant_id`` (``benchmark.recruiting`` reads
them). The id is unique per study, so arriving again with the same id finds the same participant, never a second episode
(and only in the browser they are bound to: ``chat.access``).
Each step is one conditional update, so a double click or two open tabs cannot move anyone twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark.models import Episode
from benchmark.recruiting import ArrivalIds

from .models import ChatStudy, Participant


class StudyClosed(Exception):
    """The study takes no new participants."""


class NotAdmitted(Exception):
    """A new participant was not let in; ``verdict`` is what ``admit`` answered (e.g. a throttle's)."""

    def __init__(self, verdict: Any) -> None:
        super().__init__(verdict)
        self.verdict = verdict


def arrive(study: ChatStudy, ids: ArrivalIds, *, admit: Callable[[], Any] | None = None) -> Participant:
    """The participant with this id in ``study``: found again, or created at the consent stage.

    Raises StudyClosed for a new id when the study is closed; people who have started may finish.
    ``admit`` is asked before a new participant is created, never for a returning one; when its
    answer is falsy, NotAdmitted carries it. Whether this browser may act as the participant is
    ``chat.access``'s question, not this one's.
    """
    participant = Participant.objects.filter(study=study, participant_id=ids.participant_id).first()
    if participant is not None:
        return participant
    if not study.is_open:
        raise StudyClosed
    if admit is not None and not (verdict := admit()):
        raise NotAdmitted(verdict)
    try:
        with transaction.atomic():
            participant = Participant.objects.create(
                study=study,
                participant_id=ids.participant_id,
                prolific_pid=ids.prolific_pid,
                prolific_study_id=ids.prolific_study_id,
                prolific_session_id=ids.prolific_session_id,
            )
    except IntegrityError:  # the same id arrived twice at once; the first one stands
        participant = Participant.objects.get(study=study, participant_id=ids.participant_id)
    return participant


def decline(participant: Participant) -> None:
    """Record that the participant did not consent; only possible before they have a cell."""
    Participant.objects.filter(pk=participant.pk, stage=Participant.Stage.CONSENT).update(
        stage=Participant.Stage.DECLINED, last_seen_at=timezone.now()
    )
    participant.refresh_from_db(fields=["stage", "last_seen_at"])


def touch(participant: Participant) -> None:
    """Note that the participant is here now (it keeps their place in the design and the chat alive)."""
    participant.last_seen_at = timezone.now()
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=participant.last_seen_at)


def start_conversation(participant: Participant) -> None:
    """Move a briefed participant into the chat; their episode starts running now."""
    now = timezone.now()
    with transaction.atomic():
        moved = Participant.objects.filter(pk=participant.pk, stage=Participant.Stage.BRIEFING).update(
            stage=Participant.Stage.CHAT, last_seen_at=now
        )
        if moved:
            Episode.objects.filter(pk=participant.episode_id, status=Episode.Status.PENDING).update(
                status=Episode.Status.RUNNING, started_at=now
            )
    participant.refresh_from_db(fields=["stage", "last_seen_at"])
