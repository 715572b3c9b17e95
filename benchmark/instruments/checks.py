"""What a question needs, by kind, and the checks on a list of questions before it becomes an instrument.

What a question needs beyond its prompt lives in its ``options`` (JSON); each kind's class in
``benchmark.instruments.kinds`` says what its options must look like. For the kinds Parley ships:

- **categorical**: ``choices`` — at least two ``{"value", "label", "description"?}`` with distinct
  values (the value is what is stored and exported; the label is what a person sees).
- **likert**: ``anchors`` — at least three ``{"value": int, "label", "description"}`` whose values
  are consecutive whole numbers in rising order (1, 2, 3, 4, 5).
- **slider** (bounded numeric): ``min`` < ``max`` and ``step`` > 0, the range a whole number of
  steps; optional ``labels`` ``{"min": ..., "max": ...}`` saying what the two ends mean.
- **yes_no**: no options; the answer is ``yes`` or ``no``.
- **multiple_choice**: ``choices`` as for categorical and ``correct``, the value of the right one
  (for probes and quiz-like tasks scored for accuracy).
- **multi_label**: ``choices`` as for categorical; any number of them may be picked (one answer
  row per label), or between the optional ``min`` and ``max`` picks.
- **span**: ``labels`` — a non-empty subset of ``["error", "competency"]``; ``attributes`` — the keys
  of the ``SocialAttribute`` rows a span may be tagged with (all must exist).
- **text**: optional ``max_length`` (a whole number > 0; 2000 when absent).
- **pairwise**: ``choices`` as for categorical, e.g. A / B / tie for two episodes side by side.

Option names outside these are refused, so a typo cannot silently fall back to a default.
``check_options`` checks one question's options; ``check_questions`` checks a whole list (keys,
positions, dimensions, sources of truth) and, when it passes, sets each numeric question's
``low`` and ``high`` from its options (the first and last Likert anchor, the slider's ``min`` and
``max``; both empty for other kinds). Every path that saves questions (the admin, presets, new
versions) goes through it, so the bounds the database checks answers against always agree with
what the form offers.

A ``dimension`` names the construct a question measures, so answers to different instruments can
be compared. One of the judge's nine dimensions (``benchmark.instruments.rubrics``) must be asked
as the judge asks it (a bounded number; per seat or per episode alike); any other name is the
researcher's own (a probe's ``probe_goal``, say).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError

from benchmark.models import Barrier, Question

from .kinds import all_kinds, find_kind, get_kind
from .kinds.base import (  # noqa: F401 (kept for the callers that import them from here)
    CHOICE_VALUE_MAX_LENGTH,
    DEFAULT_TEXT_MAX_LENGTH,
    is_number,
    is_whole,
    on_grid,
)
from .kinds.span import SPAN_LABELS  # noqa: F401
from .rubrics import JUDGE_DIMENSIONS

Scope = Question.Scope

_KEY_PATTERN = re.compile(r"^[-a-zA-Z0-9_]+$")
_KEY_MAX_LENGTH = 50


def truth_sources() -> dict[str, list[str]]:
    """Where a question's true answer can come from, and the kinds of question that can use it."""
    sources: dict[str, list[str]] = {}
    for kind in all_kinds():
        for source in kind.truth_sources:
            sources.setdefault(source, []).append(kind.name)
    return sources


def check_options(kind: str, options: Any) -> None:
    """Refuse options that do not fit the question kind; each message names the option's path.

    Raises ``ValidationError`` listing every problem, e.g. ``options.anchors[2].value: expected 3
    (anchor values must be consecutive whole numbers, rising)``. Span attributes are checked
    against the ``SocialAttribute`` table.
    """
    problems = option_problems(kind, options)
    if problems:
        raise ValidationError([ValidationError(problem, code="invalid_options") for problem in problems])


def option_problems(kind: str, options: Any) -> list[str]:
    """What is wrong with ``options`` for a question of ``kind``, as messages (empty when fine)."""
    found = find_kind(kind)
    if found is None:
        return [f"kind: {kind!r} is not a question kind; use one of {', '.join(k.name for k in all_kinds())}"]
    if not isinstance(options, dict):
        return ["options: must be an object of named options"]
    allowed = found.option_names or ()
    takes = f"they take {', '.join(allowed)}" if allowed else "they take none"
    problems = [
        f"options.{name}: {kind} questions take no such option ({takes})" for name in options if name not in allowed
    ]
    return problems + found.option_problems(options)


def check_questions(questions: Iterable[Question]) -> None:
    """Refuse a list of questions that cannot form an instrument; usable on unsaved rows (e.g. in a formset).

    Checks at least one question, keys that are unique slugs and cannot collide as form fields,
    positions 0..n-1, and each question on its own (see ``question_problems``). Raises one
    ``ValidationError`` listing every problem. When all pass, sets each question's ``low`` and
    ``high`` from its options (``set_bounds``), ready to be saved.
    """
    questions = list(questions)
    problems = []
    if not questions:
        problems.append("questions: add at least one question")
    keys = [q.key for q in questions]
    for key in sorted({k for k in keys if keys.count(k) > 1}):
        problems.append(f"{key}: more than one question uses this key")
    positions = sorted(q.position for q in questions)
    if questions and positions != list(range(len(questions))):
        problems.append(
            f"positions: number the questions 0 to {len(questions) - 1} without gaps or repeats "
            f"(found {', '.join(str(p) for p in positions)})"
        )
    per_seat_keys = {q.key for q in questions if q.per_seat}
    for key in keys:
        base, _, seat = key.rpartition("-")
        if seat.isdigit() and base in per_seat_keys:
            problems.append(f"{key}: clashes with the per-seat fields of question {base!r}; choose another key")
    for question in questions:
        problems.extend(question_problems(question))
    if problems:
        raise ValidationError([ValidationError(problem, code="invalid_instrument") for problem in problems])
    for question in questions:
        set_bounds(question)


def question_problems(question: Question) -> list[str]:
    """What is wrong with one question on its own, each message starting with its key."""
    key = question.key or "(no key)"
    problems = []
    if not question.key or not _KEY_PATTERN.match(question.key) or len(question.key) > _KEY_MAX_LENGTH:
        problems.append(f"key: use up to {_KEY_MAX_LENGTH} letters, digits, hyphens or underscores")
    if not (question.prompt or "").strip():
        problems.append("prompt: write the question the respondent answers")
    if question.scope not in Scope.values:
        problems.append(f"scope: {question.scope!r} is not a scope; use one of {', '.join(Scope.values)}")
    problems.extend(option_problems(question.kind, question.options))
    kind = find_kind(question.kind)
    if kind is not None:
        problems.extend(kind.question_problems(question))
    if question.dimension:
        problems.extend(_dimension_problems(question))
    if question.truth:
        problems.extend(_truth_problems(question))
    return [f"{key}: {problem}" for problem in problems]


def numeric_bounds(kind: str, options: dict[str, Any]) -> tuple[float, float] | None:
    """The inclusive range of a numeric answer as the options give it; None for other kinds.

    Likert: the first and last anchor's values; slider: ``min`` and ``max``. The options must
    already pass ``option_problems``.
    """
    found = find_kind(kind)
    return found.bounds(options) if found is not None else None


def set_bounds(question: Question) -> None:
    """Copy the numeric range from the question's options into ``low`` and ``high`` (both None otherwise)."""
    bounds = numeric_bounds(question.kind, question.options)
    question.low, question.high = bounds if bounds else (None, None)


def choices_of(question: Question) -> list[dict[str, Any]]:
    """A choice question's choices (well-formed ones only), in order; empty for other kinds."""
    found = find_kind(question.kind)
    return found.choices(question) if found is not None else []


# Dimensions and sources of truth


def _dimension_problems(question: Question) -> list[str]:
    """A dimension is a construct's name; one of the judge's dimensions must also be asked its way."""
    found = JUDGE_DIMENSIONS.get(question.dimension)
    if found is None:
        if not _KEY_PATTERN.match(question.dimension) or len(question.dimension) > 30:
            return [f"dimension: {question.dimension!r} is not a name; use up to 30 letters, digits, hyphens or "
                    f"underscores (the judge's dimensions: {', '.join(JUDGE_DIMENSIONS)})"]
        return []
    dimension = found[1]
    problems = []
    if not get_kind(question.kind).numeric:
        problems.append("dimension: only Likert and slider questions can measure a dimension")
    if question.per_seat != dimension.per_seat or question.scope == Scope.GOAL:
        asked = "per seat" if dimension.per_seat else "once per episode"
        problems.append(f"scope: {dimension.key} is scored {asked}, so the question must be asked the same way")
    return problems


def _truth_problems(question: Question) -> list[str]:
    sources = truth_sources()
    kinds = sources.get(question.truth)
    if kinds is None:
        return [f"truth: {question.truth!r} is not a known source; use one of {', '.join(sources)}"]
    if question.kind not in kinds or question.scope != Scope.EPISODE:
        return [f"truth: {question.truth} can only check a {' or '.join(kinds)} question asked once per episode"]
    if question.truth == "episode.barrier":
        values = {c.get("value") for c in choices_of(question)}
        unknown = sorted(str(v) for v in values - set(Barrier.objects.values_list("key", flat=True)))
        if unknown:
            return [f"options.choices: no barrier has the key {', '.join(unknown)}, so it could never match the truth"]
    return []
