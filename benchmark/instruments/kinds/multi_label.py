"""Multi-label: any number of the question's choices (one answer row per label)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from . import register
from .base import IN_CHOICES, ChoiceKind, choice_labels, choice_problems, choice_values, is_whole


@register
class MultiLabel(ChoiceKind):
    """``options.choices`` as for categorical; between the optional ``min`` and ``max`` picks. The
    majority is every label chosen by more than half of the respondents."""

    name = "multi_label"
    label = "multi-label"
    order = 60
    option_names = ("choices", "min", "max")
    single_choice = False
    multi_valued = True
    participants = True
    db_checks = (IN_CHOICES,)
    widget_template = "instruments/kinds/_multi_label.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        problems = choice_problems(options)
        count = len(choice_values(options))
        low, high = options.get("min"), options.get("max")
        for name, value in (("min", low), ("max", high)):
            if value is not None and not (is_whole(value) and 0 <= value <= count):
                problems.append(f"options.{name}: must be a whole number from 0 to the number of choices ({count})")
        if is_whole(high) and high < 1:
            problems.append("options.max: must allow at least one pick")
        elif is_whole(low) and is_whole(high) and low > high:
            problems.append(f"options.max: must not be less than min ({low})")
        return problems

    def check_values(self, question: Any, values: Sequence[str]) -> tuple[list[str], str]:
        """The labels, each once in the order of the choices, and a problem ("" when fine).

        Every label must be a choice, and their number within the options' ``min`` and ``max`` picks.
        """
        known = [str(c.get("value")) for c in self.choices(question)]
        unknown = [label for label in values if label not in known]
        if unknown:
            return [], f"{unknown[0]!r} is not one of the choices; {self.what_to_answer(question)}"
        kept = [value for value in known if value in values]
        low, high = question.options.get("min"), question.options.get("max")
        if low is not None and len(kept) < low:
            return kept, f"pick at least {low} of: {choice_labels(self, question)}."
        if high is not None and len(kept) > high:
            return kept, f"pick at most {high} of: {choice_labels(self, question)}."
        return kept, ""

    def what_to_answer(self, question: Any) -> str:
        return f"pick any of: {choice_labels(self, question)}."

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        answer, details = super().summary(question)
        return "any of: " + answer.removeprefix("one of: "), details

    def instruction(self, question: Any) -> str:
        return "a list of any of these values: " + ", ".join(repr(str(c.get("value"))) for c in self.choices(question))

    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        chosen = Counter(row.value for row in rows)
        order = self.option_order(question.options)
        ranked = sorted(chosen, key=lambda v: (order.index(v) if v in order else len(order), v))
        return [(label, None) for label in ranked if chosen[label] * 2 > respondents]
