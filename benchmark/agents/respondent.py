"""Asking a model an instrument: the one loop every model respondent answers through.

The judge (``benchmark.evaluation.judge``), the goal judges (``goal_judge``), the interviews and the
blind test (``evaluation.interviews``) all ask a language model the questions of an instrument
about targets of an episode (the episode, a seat, a goal, ...). Each caller builds its own prompt
and lists what it asks: one :class:`Asked` per question and target, saying where the reply holds
its entry and what a valid answer is. :func:`ask_instrument` does the rest, the same way for all:

- it calls the gateway (``benchmark.agents.llm``), at temperature 0 unless told otherwise;
- it checks the reply question by question (:func:`check_reply`): every entry present, an object
  with its value and its reasoning, the value valid for its question; every problem is named by
  its target and question, all at once;
- on a problem it sends the gateway's one repair request (``llm.complete_json``: the model's own
  reply and the problems found in it); a reply still unusable after its repair is asked for afresh,
  up to ``retries`` more times (``PARLEY_JUDGE_RETRIES``, :func:`default_retries`), and then
  ``llm.LLMOutputError`` says after how many attempts. A model that cannot be reached is not asked
  again here (the gateway has retried it already): its ``llm.LLMError`` passes through;
- it returns the checked answers (:class:`Answered`, one per asked item, in the order asked) and
  the usage of the request that gave them, so the caller stores them whole or not at all.

A question that is not an instrument's, whose free-text reply the caller reads itself (a SHREC task
item, ``benchmark.shrec.running``), goes through :func:`ask_free_text`: the same gateway and
temperature, no repair.

A model's value is read in one place, :func:`read_value`. An :class:`Asked` that carries its
question (bound to the episode by ``kind.for_item``) is read by the question's kind: its
``parse_reply`` (a ranking's JSON list, an item's own choices, a category, yes/no, a number...) and,
on a problem, its ``repair_message``, so every kind is checked by its kind. An :class:`Asked`
without a question keeps the two shapes the callers spell out themselves: a number inside
``low``..``high`` for numeric kinds, else one of ``choices`` (as the prompt shows them, e.g. a
probe's letters, matched without regard to case or a closing full stop, stored as the question
stores them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from ..instruments.kinds import get_kind
from ..instruments.targets import Target
from ..instruments.values import format_number
from . import llm

DEFAULT_RETRIES = 2


@dataclass(frozen=True)
class Asked:
    """One question asked about one target, as the model's reply must answer it.

    ``path`` is the keys leading to its entry in the reply (``("seats", "seat_1", "goal")``,
    ``("g1",)``); the entry is an object holding the value under ``field`` and the reasoning.
    ``choices`` pairs each choice as the model writes it with the value stored for it.
    ``question``, when given, is the question bound to the episode (``kind.for_item``): its kind
    then reads the value (``parse_reply``) and words the repair (``repair_message``), and
    ``low``/``high``/``choices`` are not used.
    """

    path: tuple[str, ...]
    question_id: int
    target: Target
    kind: str
    low: float | None = None
    high: float | None = None
    choices: tuple[tuple[str, str], ...] = ()
    field: str = "answer"
    reasoning_required: bool = True
    instrument_id: int | None = None
    question: Any = None

    @property
    def key(self) -> str:
        return self.path[-1]


@dataclass(frozen=True)
class Answered:
    """A checked answer to one :class:`Asked`: the value as stored, its number if numeric, the reasoning."""

    asked: Asked
    value: str
    number: float | None
    reasoning: str

    @property
    def target_columns(self) -> dict[str, int]:
        """The target's columns that are set, for ``Answer(**answered.target_columns, ...)``."""
        return {column: value for column, value in self.asked.target.columns().items() if value is not None}


@dataclass(frozen=True)
class Answers:
    """What :func:`ask_instrument` returns: every asked item answered, the usage, how many requests."""

    answers: list[Answered]
    usage: llm.Usage
    attempts: int


def default_retries() -> int:
    """Whole requests asked afresh after a reply that stays unusable even after its repair."""
    return int(getattr(settings, "PARLEY_JUDGE_RETRIES", DEFAULT_RETRIES))


async def ask_instrument(
    messages: list[dict[str, Any]],
    asked: Sequence[Asked],
    *,
    model: str,
    names: Mapping[str, str] | None = None,
    retries: int | None = None,
    temperature: float = 0,
) -> Answers:
    """Ask ``model`` the ``asked`` questions with ``messages``; every answer checked, or ``LLMOutputError``.

    ``names`` gives how a problem names a key of the reply (``{"seat_1": "seat_1 (Aisha)"}``).
    """
    retries = default_retries() if retries is None else retries

    def validate(data: dict[str, Any]) -> list[Answered]:
        return check_reply(data, asked, names)

    for attempt in range(1, retries + 2):
        try:
            data, usage = await llm.complete_json(messages, model=model, temperature=temperature, validate=validate)
        except llm.LLMOutputError as error:
            last = error
            continue
        return Answers(validate(data), usage, attempt)
    attempts = retries + 1
    raise llm.LLMOutputError(f"{last} (after {attempts} attempt{'s' if attempts > 1 else ''})", last.text, attempts)


async def ask_free_text(
    messages: list[dict[str, Any]], *, model: str, temperature: float = 0, max_tokens: int | None = None
) -> llm.Completion:
    """Ask ``model`` for a reply the caller reads itself (a SHREC task item), through the gateway.

    The entry point for questions that are not an instrument's: one completion at ``temperature``
    (0 unless told), the gateway's retries for a model that cannot be reached (its ``llm.LLMError``
    passes through), and no repair or second request for a reply the caller cannot read: the
    benchmark stores it as given and counts it as unparsed, as the paper scores it.
    """
    return await llm.complete(messages, model=model, temperature=temperature, max_tokens=max_tokens)


def check_reply(data: Any, asked: Sequence[Asked], names: Mapping[str, str] | None = None) -> list[Answered]:
    """The answers in a model's reply, one per asked item; ``ValueError`` naming every problem.

    The message is written for the model (the gateway shows it in its repair request): each
    problem names where it is, the target (``seat_1 (Aisha)``, ``episode``) and the question's key.
    """
    names = names or {}
    if not isinstance(data, dict):
        wanted = list(dict.fromkeys(f"'{item.path[0]}'" for item in asked))
        listed = wanted[0] if len(wanted) == 1 else f"{', '.join(wanted[:-1])} and {wanted[-1]}"
        raise ValueError(f"expected a JSON object with {listed}")
    problems: list[str] = []
    answers: list[Answered] = []
    blocks: dict[tuple[str, ...], dict[str, Any] | None] = {(): data}

    def block(path: tuple[str, ...]) -> dict[str, Any] | None:
        """The object at ``path``, or None after naming once why it is not there."""
        if path not in blocks:
            parent = block(path[:-1])
            value = None if parent is None else parent.get(path[-1])
            if parent is not None:
                where = " → ".join([f"'{path[0]}'", *(names.get(key, key) for key in path[1:])])
                if value is None:
                    problems.append(f"{where} is missing")
                elif not isinstance(value, dict):
                    problems.append(f"{where} must be a JSON object")
            blocks[path] = value if isinstance(value, dict) else None
        return blocks[path]

    for item in asked:
        parent = block(item.path[:-1])
        if parent is None:
            continue
        owner = item.path[-2] if len(item.path) > 1 else ""
        label = f"{names.get(owner, owner)}: '{item.key}'" if owner else f"'{item.key}'"
        entry = parent.get(item.key)
        if entry is None:
            problems.append(f"{label} is missing")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{label} must be an object with 'reasoning' and '{item.field}'")
            continue
        reasoning = entry.get("reasoning", "")
        if not isinstance(reasoning, str) or (item.reasoning_required and not reasoning.strip()):
            problems.append(
                f"{label} needs a non-empty 'reasoning' text" if item.reasoning_required
                else f"{label}: 'reasoning' must be a text"
            )
        value, number, problem = read_value(item, entry.get(item.field))
        if problem and item.question is not None:
            # The kind words it: "Your answer to 'key' was not accepted: ...", named by its target.
            problems.append(f"{names.get(owner, owner)}: {problem}" if owner else problem)
        elif problem:
            problems.append(f"{label} {problem}")
        elif isinstance(reasoning, str) and (reasoning.strip() or not item.reasoning_required):
            answers.append(Answered(item, value, number, reasoning.strip()))
    if problems:
        raise ValueError("; ".join(problems))
    return answers


def read_value(asked: Asked, raw: Any) -> tuple[str, float | None, str]:
    """(value to store, number, problem) for the value a model gave; problem is "" when fine.

    The one place a model's value is checked against its question. With ``asked.question`` its
    kind reads it (``parse_reply``) and the problem is the kind's ``repair_message``, a sentence of
    its own; without, a JSON number inside the bounds for a numeric kind, else one of the choices,
    and the problem reads after the question's key.
    """
    field = asked.field
    if asked.question is not None:
        kind = get_kind(asked.question.kind)
        if raw is None:
            return "", None, kind.repair_message(asked.question, f"there is no '{field}'.")
        reply = kind.parse_reply(asked.question, raw)
        if reply.problem:
            return "", None, kind.repair_message(asked.question, _sentence(reply.problem))
        return reply.value, reply.number, ""
    if get_kind(asked.kind).numeric:
        bounds = f"between {asked.low:g} and {asked.high:g}"
        if raw is None:
            return "", None, f"has no '{field}'"
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            return "", None, f"{field} must be a number, got {raw!r}"
        if not math.isfinite(raw):
            # Python's JSON reader takes 1e999 for infinity, and NaN and Infinity for numbers.
            return "", None, f"{field} is not a finite number (it reads as {raw!r}); it must be {bounds}"
        if not asked.low <= raw <= asked.high:  # type: ignore[operator]
            return "", None, f"{field} {raw:g} is out of range; it must be {bounds}"
        return format_number(raw), float(raw), ""
    text = raw.strip().rstrip(".").strip().lower() if isinstance(raw, str) else None
    stored = next((value for shown, value in asked.choices if text is not None and shown.lower() == text), None)
    if stored is None:
        return "", None, f"{field} {raw!r} is not one of {', '.join(repr(shown) for shown, _ in asked.choices)}"
    return stored, None, ""


def _sentence(problem: str) -> str:
    """A kind's problem as a sentence (the repair message follows it with another)."""
    problem = problem.strip()
    return problem if problem.endswith((".", "!", "?")) else f"{problem}."
