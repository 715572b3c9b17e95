"""Free text: optional ``max_length`` (a whole number > 0; 2000 when absent). No majority, no agreement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import register
from .base import DEFAULT_TEXT_MAX_LENGTH, QuestionKind, is_whole


@register
class Text(QuestionKind):
    name = "text"
    label = "free text"
    order = 80
    option_names = ("max_length",)
    agreement = None
    participants = True
    export_columns = ("value",)
    widget_template = "instruments/kinds/_text.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        if "max_length" in options and not (is_whole(options["max_length"]) and options["max_length"] > 0):
            return ["options.max_length: must be a whole number greater than 0"]
        return []

    def max_length(self, question: Any) -> int:
        return question.options.get("max_length", DEFAULT_TEXT_MAX_LENGTH)

    def check_value(self, question: Any, value: str) -> tuple[str, float | None, str]:
        limit = self.max_length(question)
        if len(value) > limit:
            return value, None, f"keep the answer to {limit} characters (it has {len(value)})."
        return value, None, ""

    def what_to_answer(self, question: Any) -> str:
        return "write an answer."

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        return "a short text", []

    def instruction(self, question: Any) -> str:
        return f"a text of at most {self.max_length(question)} characters"

    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        return []
