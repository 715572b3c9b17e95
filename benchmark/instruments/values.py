"""One answer checked against its question: the rule a form, a judge's output and an import all follow.

``check_value`` takes the answer as text (stripped, non-empty) and returns what to store — the
value as text and, for numeric kinds, the number — or a problem phrased for the person (or model)
who answered. A multi-label answer is a list of labels (``check_labels``). The question's options
must pass ``benchmark.instruments.checks``. The database holds the same line for stored answers
(``benchmark.instruments.triggers``), so nothing that slips past a form gets stored.

Each is a thin entry point to the question's kind (``benchmark.instruments.kinds``), which holds
the rule; they stay here because many callers check an answer without caring about its kind.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmark.models import Question

from .kinds import get_kind
from .kinds.base import format_number, parse_number  # noqa: F401 (callers import them from here)


def check_value(question: Question, value: str) -> tuple[str, float | None, str]:
    """(value to store, number, problem) for a non-empty stripped answer; problem is "" when fine."""
    return get_kind(question.kind).check_value(question, value)


def check_labels(question: Question, labels: Sequence[str]) -> tuple[list[str], str]:
    """The labels of a multi-label answer, each once in the order of the choices, and a problem ("" when fine).

    Every label must be a choice, and their number within the options' ``min`` and ``max`` picks.
    """
    return get_kind(question.kind).check_values(question, labels)


def what_to_answer(question: Question) -> str:
    """What a valid answer to ``question`` looks like, as an instruction."""
    return get_kind(question.kind).what_to_answer(question)


def numeric_range(question: Question) -> tuple[float, float, float]:
    """(lowest, highest, step) of a Likert or slider answer, from its options."""
    return get_kind(question.kind).numeric_range(question)
