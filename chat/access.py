"""Who may reach what in the chat app: participants their own pages, researchers their own studies.

Participants have no account, and their platform id is no secret: it travels in study links,
browser histories and Referer headers. So the id alone never opens a participant's pages; a
participant is **bound to one browser**:

- Each browser session carries a random token (``session["chat_browser"]``), and each participant
  the token of the one browser that may act as them (``Participant.browser_token``).
- The first browser that brings a new id (or an id nobody holds) takes it, by one conditional
  update, so two browsers racing for the same id cannot both win.
- Another browser bringing the same id is turned away (``claim`` says no) unless it gives the
  ``resume_code`` that only the participant was shown (``take_over``), or a researcher released
  the id (``release``): then the next browser that brings it takes it.
- The session also remembers, per study, which participant it is
  (``session["chat_participants"] = {str(study.pk): participant.pk}``); pages and the chat socket
  serve that participant only while their token matches, so a browser that lost the participant
  to another one loses their pages and their socket at once.

Researchers see the chat studies they created; a superuser sees all of them.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import MutableMapping
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from benchmark.models import Episode
from benchmark.recruiting import new_token, same_token

from .lifecycle import ENDED, end_if_idle, move_on, stage_after_end
from .models import ChatStudy, Participant, new_resume_code
from .protocol import announce_rebinding

SESSION_KEY = "chat_participants"
BROWSER_KEY = "chat_browser"

# The page each stage belongs on (url names in the ``chat`` namespace).
STAGE_PAGES: dict[str, str] = {
    Participant.Stage.CONSENT: "chat:consent",
    Participant.Stage.BRIEFING: "chat:briefing",
    Participant.Stage.CHAT: "chat:chat",
    Participant.Stage.QUESTIONNAIRE: "chat:questionnaire",
    Participant.Stage.DONE: "chat:done",
    Participant.Stage.SCREENED_OUT: "chat:screened-out",
    Participant.Stage.TECHNICAL_PROBLEM: "chat:technical-problem",
    Participant.Stage.DECLINED: "chat:declined",
}


def browser_token(session: MutableMapping[str, Any]) -> str:
    """This browser session's token, made on first use."""
    token = session.get(BROWSER_KEY)
    if not isinstance(token, str) or not token:
        token = new_token()
        session[BROWSER_KEY] = token
    return token


def is_bound_to(participant: Participant, session: Any) -> bool:
    """True when ``participant`` is bound to this browser session (a missing session is no browser)."""
    token = session.get(BROWSER_KEY) if session is not None else None
    return same_token(participant.browser_token, token)


def remember_participant(session: MutableMapping[str, Any], participant: Participant) -> None:
    """Note in the session that it is the participant's, for their study only (other studies keep theirs)."""
    known = dict(session.get(SESSION_KEY) or {})
    known[str(participant.study_id)] = participant.pk
    session[SESSION_KEY] = known  # reassigned so the session notices the change


def claim(session: MutableMapping[str, Any], participant: Participant) -> bool:
    """Bind the participant to this browser if it already is, or if no browser holds them.

    False when another browser holds the participant: the caller shows the "already taking part"
    page. The binding is one conditional update, so of two browsers racing for a free id one wins.
    """
    token = browser_token(session)
    if not is_bound_to(participant, session):
        Participant.objects.filter(pk=participant.pk, browser_token="").update(browser_token=token)
        participant.refresh_from_db(fields=["browser_token"])
        if not is_bound_to(participant, session):
            return False
    remember_participant(session, participant)
    return True


def normalise_code(code: str) -> str:
    """A resume code as typed (any case, spaces or hyphens) in the stored form."""
    return re.sub(r"[\s-]+", "", code or "").upper()


def resume_code_matches(participant: Participant, code: str) -> bool:
    """True when ``code`` is the participant's resume code (compared in constant time)."""
    return hmac.compare_digest(participant.resume_code.encode(), normalise_code(code).encode())


def take_over(session: MutableMapping[str, Any], participant: Participant) -> None:
    """Move the participant to this browser (they gave their resume code); the old one loses them.

    Open chat sockets of the old browser are told to check again and close (``announce_rebinding``).
    """
    token = browser_token(session)
    if not is_bound_to(participant, session):
        Participant.objects.filter(pk=participant.pk).update(browser_token=token)
        participant.browser_token = token
        _announce(participant)
    remember_participant(session, participant)


def release(participant: Participant) -> None:
    """Unbind the participant from their browser, for a researcher: the next browser that brings the
    id takes it over. The resume code changes too, so whoever saw the old one cannot use it."""
    participant.browser_token = ""
    participant.resume_code = new_resume_code()
    Participant.objects.filter(pk=participant.pk).update(
        browser_token=participant.browser_token, resume_code=participant.resume_code
    )
    _announce(participant)


def _announce(participant: Participant) -> None:
    if participant.episode_id is not None:
        async_to_sync(announce_rebinding)(participant.episode_id)


def remembered_participant(session: MutableMapping[str, Any], study: ChatStudy) -> Participant | None:
    """The participant this session says it is in ``study``, bound to it or not (None when it names none)."""
    participant_pk = (session.get(SESSION_KEY) or {}).get(str(study.pk))
    if participant_pk is None:
        return None
    participant = (
        Participant.objects.select_related("episode", "scenario").filter(pk=participant_pk, study=study).first()
    )
    if participant is not None:
        participant.study = study  # spare a query: pages use the study they already hold
    return participant


def participant_for(session: MutableMapping[str, Any], study: ChatStudy) -> Participant | None:
    """The participant this session belongs to in ``study`` and is bound to, or None."""
    participant = remembered_participant(session, study)
    if participant is None or not is_bound_to(participant, session):
        return None
    return participant


def page_for(participant: Participant) -> str:
    """The URL of the page where the participant belongs now."""
    return reverse(STAGE_PAGES[participant.stage], args=[participant.study.slug])


def settle_stage(participant: Participant) -> Participant:
    """Bring a chatting participant's stage up to date with their episode before routing them.

    A chat that has gone quiet past the study's timeout ends here (``end_if_idle``), and a chat
    whose episode has already ended without moving the participant on is moved on as an ending
    would have (the questions, or the screen-out page: ``chat.lifecycle.stage_after_end``).
    """
    if participant.stage != Participant.Stage.CHAT or participant.episode_id is None:
        return participant
    if end_if_idle(participant):
        return participant
    episode = Episode.objects.filter(pk=participant.episode_id).first()
    if episode is not None and episode.status in ENDED:
        move_on(participant, stage_after_end(participant, episode, episode.end_reason), timezone.now())
    return participant


def researcher_chat_studies(user: AbstractBaseUser) -> QuerySet[ChatStudy]:
    """The chat studies ``user`` manages: their teams' (every study for a superuser)."""
    return ChatStudy.objects.owned_by(user)
