"""Bounded numeric (slider): a number from ``min`` to ``max`` in steps of ``step``."""

from __future__ import annotations

from typing import Any

from . import register
from .base import NumericKind, format_number, is_number, on_grid, text_problems, unknown_key_problems

MOST_POINTS_AS_BUTTONS = 11  # a participant's slider with more points is a number box


@register
class Slider(NumericKind):
    """``min`` < ``max``, ``step`` > 0, the range a whole number of steps; optional ``labels``
    ``{"min": ..., "max": ...}`` saying what the two ends mean."""

    name = "slider"
    label = "bounded numeric"
    order = 20
    option_names = ("min", "max", "step", "labels")
    widget_template = "instruments/kinds/_slider.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
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
                problems.extend(unknown_key_problems("options.labels", labels, ("min", "max")))
                for end in ("min", "max"):
                    if end in labels:
                        problems.extend(text_problems(f"options.labels.{end}", labels[end], required=True))
        return problems

    def bounds(self, options: dict[str, Any]) -> tuple[float, float] | None:
        return float(options["min"]), float(options["max"])

    def numeric_range(self, question: Any) -> tuple[float, float, float]:
        options = question.options
        return options["min"], options["max"], options["step"]

    def scale(self, options: dict[str, Any]) -> tuple[float, float] | None:
        """The scale's ends as the options give them, or None when they give none (reports)."""
        if "min" in options and "max" in options:
            return float(options["min"]), float(options["max"])
        return None

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        options = question.options or {}
        labels = options.get("labels") or {}
        answer = f"a score from {options.get('min')} to {options.get('max')}"
        if labels:
            answer += f" ({options.get('min')}: {labels.get('min', '')}; {options.get('max')}: {labels.get('max', '')})"
        return answer, []

    def widget_data(self, question: Any, value: str) -> dict[str, Any]:
        """The range input's ends, step and starting point (the step nearest the middle, as the browser shows it)."""
        options = question.options or {}
        labels = options.get("labels") or {}
        low, high, step = options.get("min", 0), options.get("max", 10), options.get("step", 1)
        middle = low + round((high - low) / 2 / step) * step
        return {
            "min": low,
            "max": high,
            "step": step,
            "start": value or (int(middle) if float(middle).is_integer() else middle),
            "min_label": labels.get("min", ""),
            "max_label": labels.get("max", ""),
        }

    def participant_choices(self, question: Any) -> list[tuple[str, str]]:
        """A short slider's points to pick from (its ends named); empty for a long one (a number box)."""
        low, high, step = self.numeric_range(question)
        points = round((high - low) / step) + 1
        if points > MOST_POINTS_AS_BUTTONS:
            return []
        ends = question.options.get("labels", {})
        values = [format_number(low + i * step) for i in range(points)]
        named = {values[0]: ends.get("min", ""), values[-1]: ends.get("max", "")}
        return [(value, f"{value} – {named[value]}" if named.get(value) else value) for value in values]
