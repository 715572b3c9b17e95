"""Which language models a team may call, and what a failed call may tell the people who see it.

Every model field (the run form, a chat study, ``simulate``, ``evaluate``, ``neutralise``) takes a
litellm name, and litellm sends the request wherever the name points: to any hosted provider on the
operator's account, or to a provider's default address on the server itself (``ollama/`` on
localhost:11434, ``llamafile/`` on 8080, ``lm_studio/`` on 1234, …). So the operator says which
names may be called, in ``PARLEY_ALLOWED_MODELS``: entries separated by commas, each a model name
(``openai/gpt-4o-mini``) or a provider prefix ending in ``/`` (``anthropic/``), for every team, or
``TEAM=ENTRY`` for the team with that slug only. Whatever the list, the models configured for the
roles (``PARLEY_AGENT_MODEL`` and the others) and the offline scripted model are allowed; with no
list, they are the only ones.

Each path that takes a name checks it against the asking team (:func:`check_model`); the gateway
itself refuses a name no team may call (:func:`check_callable`), so a run stored before the list
changed fails with this message rather than calling the model.

A failed call is shown to researchers (the episode page, the run page, command output). The
provider's reply may be anything the far end sent, such as a web page from whatever listens on a
port, or a stack trace with server paths; :func:`describe_failure` keeps the error's class, its
HTTP status and a short first line of its message with paths, markup and long runs removed.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from typing import Any

from django.conf import settings

SCRIPTED = "scripted"
NO_MODEL = "none"  # a judge field's "leave unscored"


class ModelNotAllowed(ValueError):
    """A model name this server does not let the team call; the message says which names it allows."""


def configured_models() -> list[str]:
    """The models the operator configured for the roles (a role may list several, separated by commas)."""
    names = []
    for value in settings.PARLEY_MODELS.values():
        names.extend(name.strip() for name in (value or "").split(",") if name.strip())
    return names


def allowed_entries(team_slug: str | None) -> list[str]:
    """The names and provider prefixes ``team_slug``'s researchers may call (None: the entries for every team)."""
    entries = [SCRIPTED, *configured_models()]
    for entry in settings.PARLEY_ALLOWED_MODELS:
        team, separator, name = entry.partition("=")
        if not separator:
            entries.append(entry.strip())
        elif team_slug is not None and team.strip() == team_slug and name.strip():
            entries.append(name.strip())
    return list(dict.fromkeys(entries))


def _matches(model: str, entries: Iterable[str]) -> bool:
    return any(model == entry or (entry.endswith("/") and model.startswith(entry)) for entry in entries)


def check_model(model: str, team_slug: str | None) -> None:
    """Refuse ``model`` unless the team may call it; an empty name (the configured model) and ``none`` pass."""
    model = model.strip()
    if not model or model == NO_MODEL:
        return
    entries = allowed_entries(team_slug)
    if not _matches(model, entries):
        raise ModelNotAllowed(
            f"Model {model!r} is not one this server lets your team call; allowed: {', '.join(entries)} "
            "(a name ending in / allows that provider's models). The operator sets the list in PARLEY_ALLOWED_MODELS."
        )


def check_models(models: Iterable[str], team_slug: str | None) -> None:
    """:func:`check_model` for each name."""
    for model in models:
        check_model(model, team_slug)


def check_callable(model: str) -> None:
    """Refuse a name that no team may call (the gateway's last check before a request leaves)."""
    team_entries = [entry.partition("=")[2].strip() for entry in settings.PARLEY_ALLOWED_MODELS if "=" in entry]
    if not _matches(model, [*allowed_entries(None), *team_entries]):
        raise ModelNotAllowed(f"Model {model!r} is not allowed on this server (PARLEY_ALLOWED_MODELS).")


MAX_MESSAGE = 160
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.\-~]+){2,}[\\/]?")
_MARKUP = re.compile(r"<[^>]{0,200}>")
_URL = re.compile(r"\b\w+://\S+")
_PREFIX = re.compile(r"^(?:litellm\.)?\w+(?:Error|Exception):\s*")


def describe_failure(error: BaseException) -> str:
    """A failed model call as researchers may see it: ``Class (HTTP status): short message``.

    Only the message's first line is kept, without "Traceback" and what follows, file paths, URLs
    or markup, cut to ``MAX_MESSAGE`` characters; a reply that was a web page says only that.
    """
    name = type(error).__name__
    status = getattr(error, "status_code", None)
    label = f"{name} (HTTP {status})" if isinstance(status, int) else name
    text = str(getattr(error, "message", None) or error)
    text = text.split("Traceback", 1)[0]
    if re.search(r"<\s*(?:html|!doctype|body|head)\b", text, re.IGNORECASE):
        return f"{label}: the server answered with a web page, not a model's reply."
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if (brace := line.find("{")) >= 0:  # a reply body: keep only the message it carries, if any
        line = f"{line[:brace].rstrip(' -:')} - {_body_message(line[brace:])}"
    for _ in range(3):  # "litellm.AuthenticationError: AuthenticationError: OpenAIException - ..."
        line = _PREFIX.sub("", line).strip()
    line = _URL.sub("[address]", _PATH.sub("[path]", _MARKUP.sub("", line)))
    line = re.sub(r"\s+", " ", line).strip(" -:")
    if len(line) > MAX_MESSAGE:
        line = line[: MAX_MESSAGE - 1].rstrip() + "…"
    return f"{label}: {line}" if line else label


def _body_message(body: str) -> str:
    """The ``message`` an error body (JSON, or the Python repr litellm sometimes prints) carries, or ""."""
    for parse in (json.loads, ast.literal_eval):
        try:
            value: Any = parse(body)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        while isinstance(value, dict):
            found = value.get("error", value.get("message"))
            if isinstance(found, str):
                return found
            value = found
        return ""
    return ""
