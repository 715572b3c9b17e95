"""Likert: a point on a scale of consecutive whole values (1..5), its points named by anchors.

Every point is an anchor ``{"value", "label", "description"}``; a point between two named ones may be
left unlabelled (``{"value": 2}`` alone), as ProMediate's per-intervention scale names only 1, 3 and 5.
The two ends are always named. ``options.not_applicable`` (``{"label", "description"}``) adds an
explicit "not applicable" answer, stored as the value ``"na"`` with no number: a rating of how a
mediator handled a problem that never arose is no point on the scale, and statistics must not read it
as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import register
from .base import NOT_APPLICABLE, NumericKind, is_whole, text_problems, unknown_key_problems

# What a model (or an importer) may write for "not applicable"; -1 is upstream ProMediate's sentinel.
NOT_APPLICABLE_SPELLINGS = frozenset({"na", "n/a", "n.a.", "not applicable", "none", "null", "-1"})


@register
class Likert(NumericKind):
    """``options.anchors``: at least three ``{"value": int, "label", "description"}``, values rising by one;
    inner points may be unlabelled; ``options.not_applicable``: an optional "not applicable" answer."""

    name = "likert"
    label = "Likert scale"
    order = 10
    option_names = ("anchors", "not_applicable")
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
            end = index in (0, len(anchors) - 1)
            if end or "label" in anchor or "description" in anchor:
                problems.extend(text_problems(f"{path}.label", anchor.get("label"), required=True))
                problems.extend(text_problems(f"{path}.description", anchor.get("description"), required=True))
        problems.extend(_not_applicable_problems(options))
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

    # --- not applicable ---------------------------------------------------------------------------

    def offers_not_applicable(self, question: Any) -> bool:
        return isinstance(question.options, dict) and isinstance(question.options.get("not_applicable"), dict)

    def check_value(self, question: Any, value: str) -> tuple[str, float | None, str]:
        if self.offers_not_applicable(question) and value.strip().lower() in NOT_APPLICABLE_SPELLINGS:
            return NOT_APPLICABLE, None, ""
        return super().check_value(question, value)

    def parse_reply(self, question: Any, reply: Any) -> Any:
        """As numeric kinds do, and a JSON ``null`` is "not applicable" where the question offers it."""
        if reply is None and self.offers_not_applicable(question):
            reply = NOT_APPLICABLE
        return super().parse_reply(question, reply)

    def what_to_answer(self, question: Any) -> str:
        text = super().what_to_answer(question)
        if self.offers_not_applicable(question):
            return text[:-1] + f", or {NOT_APPLICABLE!r} when it does not apply."
        return text

    def instruction(self, question: Any) -> str:
        text = super().instruction(question)
        if self.offers_not_applicable(question):
            return f"{text}, or the text {NOT_APPLICABLE!r} when the question does not apply"
        return text

    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        """The median of the points given, unless most of those who answered said "not applicable"."""
        not_applicable = sum(1 for row in rows if row.number is None and row.value == NOT_APPLICABLE)
        rated = [row for row in rows if row.number is not None]
        if not_applicable and not_applicable > len(rated):
            return [(NOT_APPLICABLE, None)]
        return super().majority(question, rated, respondents)

    # --- showing it ---------------------------------------------------------------------------------

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        details = [anchor for anchor in (question.options or {}).get("anchors", []) if anchor.get("label")]
        values = [str(anchor.get("value")) for anchor in (question.options or {}).get("anchors", [])]
        answer = f"a rating from {values[0]} to {values[-1]}" if values else "a rating"
        if self.offers_not_applicable(question):
            answer += ", or not applicable"
            details = [*details, self._not_applicable_option(question)]
        return answer, details

    def widget_options(self, question: Any) -> list[dict[str, Any]]:
        """Every point (an unlabelled one with an empty label), then "not applicable" where offered."""
        points = [{"value": anchor["value"], "label": anchor.get("label", ""),
                   "description": anchor.get("description", "")}
                  for anchor in (question.options or {}).get("anchors") or []]
        if self.offers_not_applicable(question):
            points.append(self._not_applicable_option(question))
        return points

    def participant_choices(self, question: Any) -> list[tuple[str, str]]:
        """What a participant picks from: every point, numbered and named (where it has a name)."""
        choices = [(str(a["value"]), f"{a['value']} – {a['label']}" if a.get("label") else str(a["value"]))
                   for a in question.options["anchors"]]
        if self.offers_not_applicable(question):
            choices.append((NOT_APPLICABLE, question.options["not_applicable"]["label"]))
        return choices

    def _not_applicable_option(self, question: Any) -> dict[str, Any]:
        option = question.options["not_applicable"]
        return {"value": NOT_APPLICABLE, "label": option["label"], "description": option.get("description", "")}


def _not_applicable_problems(options: dict[str, Any]) -> list[str]:
    if "not_applicable" not in options:
        return []
    option = options["not_applicable"]
    path = "options.not_applicable"
    if not isinstance(option, dict):
        return [f"{path}: must be an object with a label and a description"]
    return [
        *unknown_key_problems(path, option, ("label", "description")),
        *text_problems(f"{path}.label", option.get("label"), required=True),
        *text_problems(f"{path}.description", option.get("description"), required=False),
    ]
