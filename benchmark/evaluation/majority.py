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

Each rule is the question's kind's (``QuestionKind.majority`` in ``benchmark.instruments.kinds``);
this module groups the answers and asks the kind.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..instruments.kinds import get_kind
from ..instruments.kinds.base import majority_number, majority_value  # noqa: F401 (the rules' building blocks)
from ..instruments.targets import Target

METHOD = (
    "The majority of several respondents, per question and seat: the median of their numbers (the mean of "
    "the two middle values for an even count); for a choice, the most common value (a tie goes to the option "
    "listed first); for a multi-label question, every label more than half of them chose."
)


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
        for value, number in get_kind(question.kind).majority(question, rows, respondents):
            majority.append(MajorityAnswer(question_id, target, value, number, respondents))
    return majority
