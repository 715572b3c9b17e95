"""What a question needs, by kind, and the checks on a list of questions before it becomes an instrument.

What a question needs beyond its prompt lives in its ``options`` (JSON), by kind:

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

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from django.core.exceptions import ValidationError

from benchmark.models import Barrier, Question, SocialAttribute

from .rubrics import JUDGE_DIMENSIONS

Kind = Question.Kind
Scope = Question.Scope

DEFAULT_TEXT_MAX_LENGTH = 2000
SPAN_LABELS = ("error", "competency")
YES_NO = ("yes", "no")
CHOICE_VALUE_MAX_LENGTH = 200  # a known answer (annotator.ItemKey.value) is a CharField of this size
NUMERIC_KINDS = (Kind.LIKERT, Kind.SLIDER)
CHOICE_KINDS = (Kind.CATEGORICAL, Kind.PAIRWISE, Kind.MULTIPLE_CHOICE, Kind.MULTI_LABEL)
SINGLE_CHOICE_KINDS = (Kind.CATEGORICAL, Kind.PAIRWISE, Kind.MULTIPLE_CHOICE, Kind.YES_NO)

# Where a question's true answer can come from, and which kind of question can use it.
TRUTH_SOURCES: dict[str, tuple[str, ...]] = {"episode.barrier": (Kind.CATEGORICAL,)}

_OPTION_NAMES: dict[str, tuple[str, ...]] = {
    Kind.CATEGORICAL: ("choices",),
    Kind.LIKERT: ("anchors",),
    Kind.SLIDER: ("min", "max", "step", "labels"),
    Kind.YES_NO: (),
    Kind.MULTIPLE_CHOICE: ("choices", "correct"),
    Kind.MULTI_LABEL: ("choices", "min", "max"),
    Kind.SPAN: ("labels", "attributes"),
    Kind.TEXT: ("max_length",),
    Kind.PAIRWISE: ("choices",),
}
_KEY_PATTERN = re.compile(r"^[-a-zA-Z0-9_]+$")
_KEY_MAX_LENGTH = 50


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
    if kind not in _OPTION_NAMES:
        return [f"kind: {kind!r} is not a question kind; use one of {', '.join(_OPTION_NAMES)}"]
    if not isinstance(options, dict):
        return ["options: must be an object of named options"]
    allowed = _OPTION_NAMES[kind]
    takes = f"they take {', '.join(allowed)}" if allowed else "they take none"
    problems = [
        f"options.{name}: {kind} questions take no such option ({takes})" for name in options if name not in allowed
    ]
    return problems + _KIND_CHECKS[kind](options)


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
    if question.kind == Kind.SPAN:
        if question.scope != Scope.EPISODE:
            problems.append("scope: span questions cover the whole transcript; ask them once per episode")
        if question.rationale != "none":
            problems.append("rationale: span questions ask for a rationale on every span; set it to 'none'")
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
    if kind == Kind.LIKERT:
        values = [anchor["value"] for anchor in options["anchors"]]
        return float(min(values)), float(max(values))
    if kind == Kind.SLIDER:
        return float(options["min"]), float(options["max"])
    return None


def set_bounds(question: Question) -> None:
    """Copy the numeric range from the question's options into ``low`` and ``high`` (both None otherwise)."""
    bounds = numeric_bounds(question.kind, question.options)
    question.low, question.high = bounds if bounds else (None, None)


def choices_of(question: Question) -> list[dict[str, Any]]:
    """A choice question's choices (well-formed ones only), in order; empty for other kinds."""
    options = question.options if isinstance(question.options, dict) else {}
    if question.kind == Kind.YES_NO:
        return [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]
    choices = options.get("choices")
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


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
    if question.kind not in NUMERIC_KINDS:
        problems.append("dimension: only Likert and slider questions can measure a dimension")
    if question.per_seat != dimension.per_seat or question.scope == Scope.GOAL:
        asked = "per seat" if dimension.per_seat else "once per episode"
        problems.append(f"scope: {dimension.key} is scored {asked}, so the question must be asked the same way")
    return problems


def _truth_problems(question: Question) -> list[str]:
    kinds = TRUTH_SOURCES.get(question.truth)
    if kinds is None:
        return [f"truth: {question.truth!r} is not a known source; use one of {', '.join(TRUTH_SOURCES)}"]
    if question.kind not in kinds or question.scope != Scope.EPISODE:
        return [f"truth: {question.truth} can only check a categorical question asked once per episode"]
    if question.truth == "episode.barrier":
        values = {c.get("value") for c in choices_of(question)}
        unknown = sorted(str(v) for v in values - set(Barrier.objects.values_list("key", flat=True)))
        if unknown:
            return [f"options.choices: no barrier has the key {', '.join(unknown)}, so it could never match the truth"]
    return []


# Options, kind by kind


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def on_grid(number: float, low: float, step: float) -> bool:
    """Whether ``number`` is a whole number of ``step``s from ``low`` (up to rounding)."""
    steps = (number - low) / step
    return abs(steps - round(steps)) < 1e-9 * max(1.0, abs(steps))


def _text_problems(path: str, value: Any, *, required: bool) -> list[str]:
    if value is None:
        return [f"{path}: is missing"] if required else []
    if not isinstance(value, str):
        return [f"{path}: must be text"]
    if required and not value.strip():
        return [f"{path}: must not be empty"]
    return []


def _unknown_key_problems(path: str, item: dict[str, Any], allowed: Sequence[str]) -> list[str]:
    return [f"{path}.{name}: not a field here (use {', '.join(allowed)})" for name in item if name not in allowed]


def _choice_problems(options: dict[str, Any]) -> list[str]:
    choices = options.get("choices")
    if not isinstance(choices, list):
        return ["options.choices: give a list of choices, each {value, label}"]
    problems = []
    if len(choices) < 2:
        problems.append("options.choices: give at least two choices")
    seen: set[str] = set()
    for index, choice in enumerate(choices):
        path = f"options.choices[{index}]"
        if not isinstance(choice, dict):
            problems.append(f"{path}: must be an object with a value and a label")
            continue
        problems.extend(_unknown_key_problems(path, choice, ("value", "label", "description")))
        value = choice.get("value")
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{path}.value: must be non-empty text")
        elif value != value.strip() or len(value) > CHOICE_VALUE_MAX_LENGTH:
            problems.append(f"{path}.value: use at most {CHOICE_VALUE_MAX_LENGTH} characters, no outer spaces")
        elif value in seen:
            problems.append(f"{path}.value: {value!r} is already the value of an earlier choice")
        else:
            seen.add(value)
        problems.extend(_text_problems(f"{path}.label", choice.get("label"), required=True))
        if "description" in choice:
            problems.extend(_text_problems(f"{path}.description", choice["description"], required=False))
    return problems


def _choice_values(options: dict[str, Any]) -> list[str]:
    choices = options.get("choices")
    return [c.get("value") for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _multiple_choice_problems(options: dict[str, Any]) -> list[str]:
    problems = _choice_problems(options)
    correct = options.get("correct")
    if correct is None:
        problems.append("options.correct: give the value of the correct choice")
    elif correct not in _choice_values(options):
        problems.append(f"options.correct: {correct!r} is not the value of one of the choices")
    return problems


def _multi_label_problems(options: dict[str, Any]) -> list[str]:
    problems = _choice_problems(options)
    count = len(_choice_values(options))
    low, high = options.get("min"), options.get("max")
    for name, value in (("min", low), ("max", high)):
        if value is not None and not (is_whole(value) and 0 <= value <= count):
            problems.append(f"options.{name}: must be a whole number from 0 to the number of choices ({count})")
    if is_whole(high) and high < 1:
        problems.append("options.max: must allow at least one pick")
    elif is_whole(low) and is_whole(high) and low > high:
        problems.append(f"options.max: must not be less than min ({low})")
    return problems


def _likert_problems(options: dict[str, Any]) -> list[str]:
    anchors = options.get("anchors")
    if not isinstance(anchors, list):
        return ["options.anchors: give a list of anchors, each {value, label, description}"]
    problems = []
    if len(anchors) < 3:
        problems.append("options.anchors: give at least three anchors")
    previous: int | None = None
    for index, anchor in enumerate(anchors):
        path = f"options.anchors[{index}]"
        if not isinstance(anchor, dict):
            problems.append(f"{path}: must be an object with a value, a label and a description")
            previous = None
            continue
        problems.extend(_unknown_key_problems(path, anchor, ("value", "label", "description")))
        value = anchor.get("value")
        if not is_whole(value):
            problems.append(f"{path}.value: must be a whole number")
            value = None
        elif previous is not None and value != previous + 1:
            problems.append(
                f"{path}.value: expected {previous + 1} (anchor values must be consecutive whole numbers, rising)"
            )
        previous = value
        problems.extend(_text_problems(f"{path}.label", anchor.get("label"), required=True))
        problems.extend(_text_problems(f"{path}.description", anchor.get("description"), required=True))
    return problems


def _slider_problems(options: dict[str, Any]) -> list[str]:
    problems = [
        f"options.{name}: must be a number" for name in ("min", "max", "step") if not is_number(options.get(name))
    ]
    if not problems:
        low, high, step = options["min"], options["max"], options["step"]
        if low >= high:
            problems.append(f"options.max: must be greater than min ({low})")
        if step <= 0:
            problems.append("options.step: must be greater than 0")
        elif low < high and not on_grid(high, low, step):
            problems.append(f"options.step: the range {low} to {high} must be a whole number of steps of {step}")
    if "labels" in options:
        labels = options["labels"]
        if not isinstance(labels, dict):
            problems.append('options.labels: must be an object {"min": ..., "max": ...}')
        else:
            problems.extend(_unknown_key_problems("options.labels", labels, ("min", "max")))
            for end in ("min", "max"):
                if end in labels:
                    problems.extend(_text_problems(f"options.labels.{end}", labels[end], required=True))
    return problems


def _no_problems(options: dict[str, Any]) -> list[str]:
    return []


def _span_problems(options: dict[str, Any]) -> list[str]:
    problems = []
    labels = options.get("labels")
    if not isinstance(labels, list) or not labels:
        problems.append(f"options.labels: give a non-empty list drawn from {', '.join(SPAN_LABELS)}")
    else:
        for index, label in enumerate(labels):
            if label not in SPAN_LABELS:
                problems.append(f"options.labels[{index}]: {label!r} is not a span label; use {', '.join(SPAN_LABELS)}")
            elif labels.index(label) != index:
                problems.append(f"options.labels[{index}]: {label!r} is listed twice")
    attributes = options.get("attributes")
    if not isinstance(attributes, list) or not attributes:
        problems.append("options.attributes: give a non-empty list of social attribute keys")
    else:
        known = set(SocialAttribute.objects.values_list("key", flat=True))
        for index, key in enumerate(attributes):
            if not isinstance(key, str) or key not in known:
                problems.append(
                    f"options.attributes[{index}]: {key!r} is not a social attribute; "
                    f"use one of {', '.join(sorted(known)) or '(none defined)'}"
                )
            elif attributes.index(key) != index:
                problems.append(f"options.attributes[{index}]: {key!r} is listed twice")
    return problems


def _text_option_problems(options: dict[str, Any]) -> list[str]:
    if "max_length" in options and not (is_whole(options["max_length"]) and options["max_length"] > 0):
        return ["options.max_length: must be a whole number greater than 0"]
    return []


_KIND_CHECKS = {
    Kind.CATEGORICAL: _choice_problems,
    Kind.LIKERT: _likert_problems,
    Kind.SLIDER: _slider_problems,
    Kind.YES_NO: _no_problems,
    Kind.MULTIPLE_CHOICE: _multiple_choice_problems,
    Kind.MULTI_LABEL: _multi_label_problems,
    Kind.SPAN: _span_problems,
    Kind.TEXT: _text_option_problems,
    Kind.PAIRWISE: _choice_problems,
}
