"""One answer checked against its question: the rule a form, a judge's output and an import all follow.

``check_value`` takes the answer as text (stripped, non-empty) and returns what to store — the
value as text and, for numeric kinds, the number — or a problem phrased for the person (or model)
who answered. A multi-label answer is a list of labels (``check_labels``). The question's options
must pass ``benchmark.instruments.checks``. The database holds the same line for stored answers
(``benchmark.instruments.triggers``), so nothing that slips past a form gets stored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchmark.models import Question

from .checks import CHOICE_KINDS, DEFAULT_TEXT_MAX_LENGTH, NUMERIC_KINDS, choices_of, on_grid

Kind = Question.Kind


def check_value(question: Question, value: str) -> tuple[str, float | None, str]:
    """(value to store, number, problem) for a non-empty stripped answer; problem is "" when fine."""
    options = question.options
    if question.kind in CHOICE_KINDS or question.kind == Kind.YES_NO:
        if value in {c.get("value") for c in choices_of(question)}:
            return value, None, ""
        return value, None, f"{value!r} is not one of the choices; {what_to_answer(question)}"
    if question.kind == Kind.TEXT:
        limit = options.get("max_length", DEFAULT_TEXT_MAX_LENGTH)
        if len(value) > limit:
            return value, None, f"keep the answer to {limit} characters (it has {len(value)})."
        return value, None, ""
    number = parse_number(value)
    low, high, step = numeric_range(question)
    if number is None or not low <= number <= high:
        return value, None, what_to_answer(question)
    if not on_grid(number, low, step):
        if step == 1 and float(low).is_integer():
            return value, None, f"choose a whole number from {format_number(low)} to {format_number(high)}."
        return value, None, (
            f"choose a value from {format_number(low)} to {format_number(high)} in steps of {format_number(step)}."
        )
    return format_number(number), number, ""


def check_labels(question: Question, labels: Sequence[str]) -> tuple[list[str], str]:
    """The labels of a multi-label answer, each once in the order of the choices, and a problem ("" when fine).

    Every label must be a choice, and their number within the options' ``min`` and ``max`` picks.
    """
    values = [str(c.get("value")) for c in choices_of(question)]
    unknown = [label for label in labels if label not in values]
    if unknown:
        return [], f"{unknown[0]!r} is not one of the choices; {what_to_answer(question)}"
    kept = [value for value in values if value in labels]
    low, high = question.options.get("min"), question.options.get("max")
    if low is not None and len(kept) < low:
        return kept, f"pick at least {low} of: {_labels(question)}."
    if high is not None and len(kept) > high:
        return kept, f"pick at most {high} of: {_labels(question)}."
    return kept, ""


def what_to_answer(question: Question) -> str:
    """What a valid answer to ``question`` looks like, as an instruction."""
    if question.kind == Kind.MULTI_LABEL:
        return f"pick any of: {_labels(question)}."
    if question.kind in CHOICE_KINDS or question.kind == Kind.YES_NO:
        return f"choose one of: {_labels(question)}."
    if question.kind in NUMERIC_KINDS:
        low, high, _ = numeric_range(question)
        return f"choose a value from {format_number(low)} to {format_number(high)}."
    return "write an answer."


def numeric_range(question: Question) -> tuple[float, float, float]:
    """(lowest, highest, step) of a Likert or slider answer, from its options."""
    options = question.options
    if question.kind == Kind.LIKERT:
        values = [a["value"] for a in options["anchors"]]
        return min(values), max(values), 1
    return options["min"], options["max"], options["step"]


def parse_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def format_number(number: float) -> str:
    """The number as stored text: ``7`` rather than ``7.0``, otherwise the shortest exact form."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def _labels(question: Question) -> str:
    return ", ".join(str(c.get("label", c.get("value"))) for c in choices_of(question))
