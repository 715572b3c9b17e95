"""Multiple choice with a correct answer: for probes and quiz-like tasks scored for accuracy."""

from __future__ import annotations

from typing import Any

from . import register
from .base import ChoiceKind, choice_problems, choice_values


@register
class MultipleChoice(ChoiceKind):
    """``options.choices`` as for categorical and ``options.correct``, the value of the right one."""

    name = "multiple_choice"
    label = "multiple choice (with a correct answer)"
    order = 50
    option_names = ("choices", "correct")
    hidden_options = ("correct",)
    widget_template = "instruments/kinds/_multiple_choice.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        problems = choice_problems(options)
        correct = options.get("correct")
        if correct is None:
            problems.append("options.correct: give the value of the correct choice")
        elif correct not in choice_values(options):
            problems.append(f"options.correct: {correct!r} is not the value of one of the choices")
        return problems

    def correct(self, options: Any) -> str | None:
        """The value of the correct choice, if the options say."""
        return options.get("correct") if isinstance(options, dict) else None
