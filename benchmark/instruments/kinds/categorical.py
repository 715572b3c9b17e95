"""Categorical: one of the question's named choices (e.g. which barrier an episode was under)."""

from __future__ import annotations

from typing import Any

from . import register
from .base import ChoiceKind, choice_problems


@register
class Categorical(ChoiceKind):
    """``options.choices``: at least two ``{"value", "label", "description"?}`` with distinct values (the
    value is what is stored and exported; the label is what a person sees)."""

    name = "categorical"
    label = "categorical"
    order = 30
    option_names = ("choices",)
    agreement = "categorical"
    truth_sources = ("episode.barrier",)
    participants = True
    widget_template = "instruments/kinds/_categorical.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        return choice_problems(options)
