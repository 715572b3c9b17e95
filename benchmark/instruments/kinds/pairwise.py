"""Pairwise comparison: one of the choices (e.g. A / B / tie) about two episodes side by side."""

from __future__ import annotations

from typing import Any

from . import register
from .base import ChoiceKind, choice_problems


@register
class Pairwise(ChoiceKind):
    """``options.choices`` as for categorical; the item shows two conversations."""

    name = "pairwise"
    label = "pairwise comparison"
    order = 90
    option_names = ("choices",)
    agreement = "categorical"
    compares_two = True
    widget_template = "instruments/kinds/_pairwise.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        return choice_problems(options)
