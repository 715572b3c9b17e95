"""What a researcher's live monitor shows: who is in a chat study right now, and how far each got.

The monitor is polled every few seconds, so each piece is a fixed, small number of queries
whatever the number of participants. It only reads: a GET changes no row. A chat gone quiet past
the study's timeout is shown as idle (and its cell as stalled) until something ends it — the
participant's own page or socket when they come back, or the consumer's minutely upkeep
(``chat.tasks.end_idle_chats``, calling ``chat.lifecycle.end_idle_chats``, as ``manage.py end_idle_chats`` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Concat
from django.utils import timezone

from benchmark.models import Turn

from .assignment import active_since
from .models import ChatStudy, Participant

SNIPPET_CHARS = 80


@dataclass
class SessionRow:
    """One participant as the monitor lists them."""

    participant: Participant
    turn_count: int
    last_turn_at: datetime | None
    snippet: str
    idle: bool
    speaker: str = ""  # who said the last words (a group chat has several agents)


def with_turn_summary(participants: QuerySet[Participant]) -> QuerySet[Participant]:
    """Add each participant's turn count, last turn time, text and speaker, in the same query."""
    turns = Turn.objects.filter(episode_id=OuterRef("episode_id"))
    last_turn = turns.order_by("-index")
    counted = turns.order_by().values("episode_id").annotate(count=Count("pk")).values("count")
    return participants.select_related("scenario", "barrier", "episode").annotate(
        turn_count=Coalesce(Subquery(counted), 0),
        last_turn_at=Subquery(last_turn.values("created_at")[:1]),
        last_turn_text=Subquery(last_turn.values("content")[:1]),
        last_turn_speaker=Subquery(
            last_turn.annotate(
                who=Concat("seat__character__first_name", Value(" "), "seat__character__last_name")
            ).values("who")[:1]
        ),
    )


def active_sessions(study: ChatStudy, *, now: datetime | None = None) -> list[SessionRow]:
    """Participants reading their briefing, chatting, or answering the questions, latest first.

    Chatting participants are listed until their chat ends; those on the briefing or the
    questions while they were seen (or their chat ended) within the inactivity timeout.
    """
    now = now or timezone.now()
    since = active_since(study, now)
    participants = with_turn_summary(
        Participant.objects.filter(study=study).filter(
            Q(stage=Participant.Stage.CHAT)
            | Q(stage=Participant.Stage.BRIEFING, last_seen_at__gte=since)
            | Q(stage=Participant.Stage.QUESTIONNAIRE, episode__finished_at__gte=since)
        )
    ).order_by("-last_seen_at", "-pk")
    return [
        SessionRow(
            participant=participant,
            turn_count=participant.turn_count,
            last_turn_at=participant.last_turn_at,
            snippet=snippet(participant.last_turn_text or ""),
            speaker=(participant.last_turn_speaker or "").strip(),
            idle=participant.last_seen_at < since,
        )
        for participant in participants
    ]


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The start of a turn on one line, cut at a word where possible."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + "…"
