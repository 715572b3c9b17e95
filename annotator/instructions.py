"""What the study's instructions page says of each question: what it asks for, in a line."""

from typing import Any

from benchmark.instruments.kinds import get_kind
from benchmark.models import Question


def summarise(question: Question) -> dict[str, Any]:
    """What a question asks for, in a line, for the instructions page."""
    kind = get_kind(question.kind)
    answer, details = kind.summary(question)
    return {
        "question": question,
        "answer": answer,
        "details": details,
        "numbered": kind.numbered,
        "per_seat": question.per_seat,
        "per_goal": question.scope == Question.Scope.GOAL,
        "per_turn": question.scope == Question.Scope.TURN,
    }
