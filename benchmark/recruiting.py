"""People who arrive from a recruiting platform's link, with no account: the ids the link carries, and
binding each id to one browser.

Crowd platforms append the participant's id to the study link (Prolific: ``PROLIFIC_PID``, ``STUDY_ID``,
``SESSION_ID``); other recruiters can use ``participant_id``. ``ids_from_query`` reads them, and refuses an
id that is too long or has characters an id does not have (``ID_RULE``).

Chat participants and crowd annotators come from a recruiting platform's link whose participant id is
no secret (it travels in links, browser histories and Referer headers), so the id alone never opens
their pages. The first browser that brings an id gets a random token and the id is bound to it; a
later visit is served only when it brings the same token back. ``chat.access`` keeps the token in the
chat session and stores it as it is; ``annotator.crowd`` keeps it in a cookie of its own (the worker's
session is a signed-in account's, which signing out ends) and stores only its SHA-256, so a leaked
database row cannot be replayed as a cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

ID_PARAMETERS = ("PROLIFIC_PID", "participant_id", "PARTICIPANT_ID")
ID_PATTERN = re.compile(r"^[A-Za-z0-9._@:+-]{1,100}$")
ID_RULE = "Use up to 100 letters, digits and . _ @ : + - (no spaces)."


class InvalidId(ValueError):
    """The id in the link cannot be used; the message says why."""


@dataclass(frozen=True)
class ArrivalIds:
    """Who arrives, as the recruiting platform names them."""

    participant_id: str
    prolific_pid: str = ""
    prolific_study_id: str = ""
    prolific_session_id: str = ""


def ids_from_query(query: Mapping[str, str]) -> ArrivalIds | None:
    """The ids in a study link's query string; None when it carries no participant id at all."""
    name = next((name for name in ID_PARAMETERS if query.get(name, "").strip()), None)
    if name is None:
        return None
    participant_id = query[name].strip()
    if not ID_PATTERN.match(participant_id):
        raise InvalidId(f"The participant id in the link ({name}) cannot be used. {ID_RULE}")
    prolific = name == "PROLIFIC_PID"
    return ArrivalIds(
        participant_id=participant_id,
        prolific_pid=participant_id if prolific else "",
        prolific_study_id=_optional_id(query.get("STUDY_ID", "")),
        prolific_session_id=_optional_id(query.get("SESSION_ID", "")),
    )


def _optional_id(value: str) -> str:
    """A platform's study or session id, kept only when it looks like an id."""
    value = value.strip()
    return value if ID_PATTERN.match(value) else ""


# Binding to a browser

TOKEN_BYTES = 24
# What ``new_token`` makes (URL-safe base64 of TOKEN_BYTES bytes): anything else a browser sends is no token.
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")


def new_token() -> str:
    """A fresh random token for one browser."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def is_token(value: object) -> bool:
    """Whether ``value`` has the form of a token ``new_token`` made (a cookie may hold anything)."""
    return isinstance(value, str) and TOKEN_PATTERN.fullmatch(value) is not None


def digest(token: str) -> str:
    """The SHA-256 of ``token``, in hex: what is stored when the token itself must not be."""
    return hashlib.sha256(token.encode()).hexdigest()


def same_token(stored: str, token: object) -> bool:
    """True when ``token`` is the non-empty ``stored`` one (compared in constant time)."""
    return bool(stored) and isinstance(token, str) and hmac.compare_digest(stored.encode(), token.encode())


def matches_digest(stored_digest: str, token: object) -> bool:
    """True when ``token`` is a token whose SHA-256 is ``stored_digest``."""
    return is_token(token) and same_token(stored_digest, digest(token))
