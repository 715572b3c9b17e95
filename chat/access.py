"""Who may reach what in the chat app: participants their own pages, researchers their own studies.

Participants have no account. The browser session remembers, per study, the one participant it
belongs to (``request.session["chat_participants"] = {str(study.pk): participant.pk}``); pages and
the chat socket read that and nothing else, so another participant's pages cannot be named.
Researchers see the chat studies they created; a superuser sees all of them.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.urls import reverse

from benchmark.models import Episode

from .lifecycle import ENDED, end_if_idle
from .models import ChatStudy, Participant

SESSION_KEY = "chat_participants"

# The page each stage belongs on (url names in the ``chat`` namespace).
STAGE_PAGES: dict[str, str] = {
    Participant.Stage.CONSENT: "chat:consent",
    Participant.Stage.BRIEFING: "chat:briefing",
    Participant.Stage.CHAT: "chat:chat",
    Participant.Stage.QUESTIONNAIRE: "chat:questionnaire",
    Participant.Stage.DONE: "chat:done",
    Participant.Stage.DECLINED: "chat:declined",
}


def remember_participant(session: MutableMapping[str, Any], participant: Participant) -> None:
    """Make this browser session the participant's, for their study only (other studies keep theirs)."""
    known = dict(session.get(SESSION_KEY) or {})
    known[str(participant.study_id)] = participant.pk
    session[SESSION_KEY] = known  # reassigned so the session notices the change


def participant_for(session: MutableMapping[str, Any], study: ChatStudy) -> Participant | None:
    """The participant this session belongs to in ``study``, or None when it has none there."""
    participant_pk = (session.get(SESSION_KEY) or {}).get(str(study.pk))
    if participant_pk is None:
        return None
    participant = (
        Participant.objects.select_related("episode", "scenario").filter(pk=participant_pk, study=study).first()
    )
    if participant is not None:
        participant.study = study  # spare a query: pages use the study they already hold
    return participant


def page_for(participant: Participant) -> str:
    """The URL of the page where the participant belongs now."""
    return reverse(STAGE_PAGES[participant.stage], args=[participant.study.slug])


def settle_stage(participant: Participant) -> Participant:
    """Bring a chatting participant's stage up to date with their episode before routing them.

    A chat that has gone quiet past the study's timeout ends here (``end_if_idle``), and a chat
    whose episode has already ended without moving the participant on is moved to the questions.
    """
    if participant.stage != Participant.Stage.CHAT or participant.episode_id is None:
        return participant
    if end_if_idle(participant):
        return participant
    status = Episode.objects.filter(pk=participant.episode_id).values_list("status", flat=True).first()
    if status in ENDED:
        Participant.objects.filter(pk=participant.pk, stage=Participant.Stage.CHAT).update(
            stage=Participant.Stage.QUESTIONNAIRE
        )
        participant.refresh_from_db(fields=["stage"])
    return participant


def researcher_chat_studies(user: AbstractBaseUser) -> QuerySet[ChatStudy]:
    """The chat studies ``user`` manages: their teams' (every study for a superuser)."""
    return ChatStudy.objects.owned_by(user)
