"""Likert: a point on a scale of at least three named anchors with consecutive whole values (1..5)."""

from __future__ import annotations

from typing import Any

from . import register
from .base import NumericKind, is_whole, text_problems, unknown_key_problems


@register
class Likert(NumericKind):
    """``options.anchors``: at least three ``{"value": int, "label", "description"}``, values rising by one."""

    name = "likert"
    label = "Likert scale"
    order = 10
    option_names = ("anchors",)
    numbered = True
    widget_template = "instruments/kinds/_likert.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        anchors = options.get("anchors")
        if not isinstance(anchors, list):
            return ["options.anchors: give a list of anchors, each {value, label, description}"]
        problems = []
        if len(anchors) < 3:
            problems.append("options.anchors: give at least three anchors")
        previous: int | None = None
        for index, anchor in enumerate(anchors):
            path = f"options.anchors[{index}]"
            if not isinstance(anchor, dict):
                problems.append(f"{path}: must be an object with a value, a label and a description")
                previous = None
                continue
            problems.extend(unknown_key_problems(path, anchor, ("value", "label", "description")))
            value = anchor.get("value")
            if not is_whole(value):
                problems.append(f"{path}.value: must be a whole number")
                value = None
            elif previous is not None and value != previous + 1:
                problems.append(
                    f"{path}.value: expected {previous + 1} (anchor values must be consecutive whole numbers, rising)"
                )
            previous = value
            problems.extend(text_problems(f"{path}.label", anchor.get("label"), required=True))
            problems.extend(text_problems(f"{path}.description", anchor.get("description"), required=True))
        return problems

    def bounds(self, options: dict[str, Any]) -> tuple[float, float] | None:
        values = [anchor["value"] for anchor in options["anchors"]]
        return float(min(values)), float(max(values))

    def numeric_range(self, question: Any) -> tuple[float, float, float]:
        values = [a["value"] for a in question.options["anchors"]]
        return min(values), max(values), 1

    def scale(self, options: dict[str, Any]) -> tuple[float, float] | None:
        """The scale's ends as the options give them, or None when they give none (reports)."""
        if options.get("anchors"):
            values = [float(anchor["value"]) for anchor in options["anchors"]]
            return min(values), max(values)
        return None

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        details = (question.options or {}).get("anchors", [])
        values = [str(anchor.get("value")) for anchor in details]
        return (f"a rating from {values[0]} to {values[-1]}" if values else "a rating"), details

    def widget_options(self, question: Any) -> list[dict[str, Any]]:
        return (question.options or {}).get("anchors") or []

    def participant_choices(self, question: Any) -> list[tuple[str, str]]:
        """What a participant picks from: every point, numbered and named."""
        return [(str(a["value"]), f"{a['value']} – {a['label']}") for a in question.options["anchors"]]
