"""Yes / no: no options; the answer is ``yes`` or ``no`` (asked per goal: was it reached?)."""

from __future__ import annotations

from typing import Any

from . import register
from .base import YES_OR_NO, ChoiceKind

YES_NO = ("yes", "no")


@register
class YesNo(ChoiceKind):
    """No options. A tie in the majority goes to "yes"."""

    name = "yes_no"
    label = "yes / no"
    order = 40
    option_names = ()
    boolean = True
    participants = True
    db_checks = (YES_OR_NO,)
    widget_template = "instruments/kinds/_yes_no.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        return []

    def choices(self, question: Any) -> list[dict[str, Any]]:
        return [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]

    def option_order(self, options: Any) -> list[str]:
        return list(YES_NO)
