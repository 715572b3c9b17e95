"""What the study's instructions page says of each question: what it asks for, in a line."""

from typing import Any

from benchmark.instruments.checks import choices_of
from benchmark.models import Question

Kind = Question.Kind


def summarise(question: Question) -> dict[str, Any]:
    """What a question asks for, in a line, for the instructions page."""
    options = question.options or {}
    details: list[dict[str, Any]] = []
    if question.kind == Kind.LIKERT:
        details = options.get("anchors", [])
        values = [str(anchor.get("value")) for anchor in details]
        answer = f"a rating from {values[0]} to {values[-1]}" if values else "a rating"
    elif question.kind == Kind.SLIDER:
        labels = options.get("labels") or {}
        answer = f"a score from {options.get('min')} to {options.get('max')}"
        if labels:
            answer += f" ({options.get('min')}: {labels.get('min', '')}; {options.get('max')}: {labels.get('max', '')})"
    elif question.kind in (Kind.CATEGORICAL, Kind.PAIRWISE, Kind.MULTIPLE_CHOICE, Kind.YES_NO, Kind.MULTI_LABEL):
        choices = choices_of(question)
        answer = "any of: " if question.kind == Kind.MULTI_LABEL else "one of: "
        answer += ", ".join(str(choice.get("label") or choice.get("value")) for choice in choices)
        details = [choice for choice in choices if choice.get("description")]
    elif question.kind == Kind.SPAN:
        answer = "stretches of the transcript you mark as a social error or a social competency"
    else:
        answer = "a short text"
    return {
        "question": question,
        "answer": answer,
        "details": details,
        "numbered": question.kind == Kind.LIKERT,
        "per_seat": question.per_seat,
        "per_goal": question.scope == Question.Scope.GOAL,
        "per_turn": question.scope == Question.Scope.TURN,
    }
