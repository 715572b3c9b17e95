"""The majority of several respondents' answers to the same question, computed when read, never stored.

Several judges (or annotators) answer the same question about the same episode, seat or goal.
Their majority is, per question and target:

- **numbers** (Likert, slider): the median (the mean of the two middle values for an even count),
  which a single outlying judge cannot drag the way it drags a mean;
- **one choice** (categorical, yes/no, multiple choice, pairwise): the most common value; a tie
  goes to the value listed first among the question's options (or, for yes/no, "yes"), else to
  the value that sorts first, so the same answers always give the same majority;
- **several labels** (multi-label): every label chosen by more than half of the respondents;
- free text and spans have no majority.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..instruments.targets import Target

NUMERIC_KINDS = ("likert", "slider")
CHOICE_KINDS = ("categorical", "yes_no", "multiple_choice", "pairwise")
MULTI_LABEL = "multi_label"
METHOD = (
    "The majority of several respondents, per question and seat: the median of their numbers (the mean of "
    "the two middle values for an even count); for a choice, the most common value (a tie goes to the option "
    "listed first); for a multi-label question, every label more than half of them chose."
)


def majority_number(numbers: Sequence[float]) -> float:
    """The median of ``numbers`` (at least one)."""
    return float(statistics.median(numbers))


def majority_value(values: Sequence[str], order: Sequence[str] = ()) -> str:
    """The most common of ``values`` (at least one); ties broken by ``order``, then by the text."""
    counts = Counter(values)
    top = max(counts.values())
    tied = [value for value, n in counts.items() if n == top]
    rank = {value: position for position, value in enumerate(order)}
    return min(tied, key=lambda value: (rank.get(value, len(rank)), value))


def option_order(kind: str, options: Any) -> list[str]:
    """The values of a question's options in their listed order (for breaking ties)."""
    if kind == "yes_no":
        return ["yes", "no"]
    if isinstance(options, dict):
        return [str(choice.get("value")) for choice in options.get("choices", []) if isinstance(choice, dict)]
    return []


@dataclass(frozen=True)
class MajorityAnswer:
    """The majority answer to one question for one target (the episode, a seat, a goal, a turn, a span)."""

    question_id: int
    target: Target
    value: str
    number: float | None
    respondents: int


def majority_answers(answers: Iterable[Any]) -> list[MajorityAnswer]:
    """The majority of ``answers`` (Answer rows, each with its ``question`` and ``response``), per
    question and target, in the order targets were first seen.

    Each respondent counts once per target: its answers are grouped by the response's respondent.
    """
    groups: dict[tuple[int, Target], list[Any]] = defaultdict(list)
    questions: dict[int, Any] = {}
    for answer in answers:
        groups[(answer.question_id, Target.of(answer))].append(answer)
        questions[answer.question_id] = answer.question
    majority = []
    for (question_id, target), rows in groups.items():
        question = questions[question_id]
        respondents = len({row.response.respondent_id for row in rows})
        if question.kind in NUMERIC_KINDS:
            numbers = [row.number for row in rows if row.number is not None]
            if numbers:
                number = majority_number(numbers)
                text = str(int(number)) if number.is_integer() else repr(number)
                majority.append(MajorityAnswer(question_id, target, text, number, respondents))
        elif question.kind in CHOICE_KINDS:
            value = majority_value([row.value for row in rows], option_order(question.kind, question.options))
            majority.append(MajorityAnswer(question_id, target, value, None, respondents))
        elif question.kind == MULTI_LABEL:
            chosen = Counter(row.value for row in rows)
            order = option_order(question.kind, question.options)
            for label in sorted(chosen, key=lambda v: (order.index(v) if v in order else len(order), v)):
                if chosen[label] * 2 > respondents:
                    majority.append(MajorityAnswer(question_id, target, label, None, respondents))
    return majority
