"""Asking the negotiating agents' models for JSON, and checking what comes back.

One request through the gateway (``benchmark.agents.llm.complete_json``), which repairs an unusable
reply once; when the repair fails too, the caller gets ``None`` and the last reply's text, to keep
as a failed decision or to fall back on, never an exception that would stop the negotiation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from .. import llm

logger = logging.getLogger(__name__)

MAX_TOKENS = 1024  # as the ProMediate code asks of every call
Check = Callable[[dict[str, Any]], None]


async def ask_json(
    messages: list[dict[str, str]], model: str, temperature: float, validate: Check
) -> tuple[dict[str, Any] | None, str, llm.Usage | None]:
    """The reply's JSON object and usage, or ``(None, the unusable reply, None)``."""
    try:
        data, usage = await llm.complete_json(
            messages, model=model, temperature=temperature, max_tokens=MAX_TOKENS, validate=validate
        )
    except llm.LLMOutputError as error:
        logger.info("%s gave no usable JSON: %s", model, error)
        return None, error.text, None
    return data, "", usage


def check_rating(data: dict[str, Any]) -> None:
    rating = data.get("rating")
    if isinstance(rating, bool) or not isinstance(rating, int | float) or not 1 <= rating <= 5:
        raise ValueError('"rating" must be a number from 1 to 5')


def check_text(key: str) -> Check:
    def check(data: dict[str, Any]) -> None:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f'"{key}" must be a non-empty string')

    return check


def check_list_of(key: str, field: str, *, non_empty: bool = False) -> Check:
    def check(data: dict[str, Any]) -> None:
        items = data.get(key)
        if (
            not isinstance(items, list)
            or (non_empty and not items)
            or not all(isinstance(item, dict) and isinstance(item.get(field), str) for item in items)
        ):
            raise ValueError(f'"{key}" must be a list of objects, each with a "{field}" string')

    return check


def as_text(value: object) -> str:
    """A free-form field (a string, or an object of reasons) as one text."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def total_usage(*usages: llm.Usage | None) -> llm.Usage | None:
    found = [usage for usage in usages if usage is not None]
    if not found:
        return None
    total = found[0]
    for usage in found[1:]:
        total = total + usage
    return total
