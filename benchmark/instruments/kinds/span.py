"""Span task: stretches of the transcript marked as a social error or competency (SHREC)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmark.models import SocialAttribute

from . import register
from .base import QuestionKind

SPAN_LABELS = ("error", "competency")


@register
class Span(QuestionKind):
    """``labels``: a non-empty subset of ``["error", "competency"]``; ``attributes``: the keys of the
    ``SocialAttribute`` rows a span may be tagged with (all must exist). Asked once per episode, with
    a rationale on every span (not on the question). Its answers are ``annotator.Span`` rows, not
    ``Answer`` rows; agreement is span overlap."""

    name = "span"
    label = "span task"
    order = 70
    option_names = ("labels", "attributes")
    whole_transcript = True
    agreement = "spans"
    export_columns = ("start_turn", "start_char", "end_turn", "end_char", "text", "attributes", "correction")
    widget_template = "instruments/kinds/_span.html"

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        problems = []
        labels = options.get("labels")
        if not isinstance(labels, list) or not labels:
            problems.append(f"options.labels: give a non-empty list drawn from {', '.join(SPAN_LABELS)}")
        else:
            for index, label in enumerate(labels):
                if label not in SPAN_LABELS:
                    problems.append(
                        f"options.labels[{index}]: {label!r} is not a span label; use {', '.join(SPAN_LABELS)}"
                    )
                elif labels.index(label) != index:
                    problems.append(f"options.labels[{index}]: {label!r} is listed twice")
        attributes = options.get("attributes")
        if not isinstance(attributes, list) or not attributes:
            problems.append("options.attributes: give a non-empty list of social attribute keys")
        else:
            known = set(SocialAttribute.objects.values_list("key", flat=True))
            for index, key in enumerate(attributes):
                if not isinstance(key, str) or key not in known:
                    problems.append(
                        f"options.attributes[{index}]: {key!r} is not a social attribute; "
                        f"use one of {', '.join(sorted(known)) or '(none defined)'}"
                    )
                elif attributes.index(key) != index:
                    problems.append(f"options.attributes[{index}]: {key!r} is listed twice")
        return problems

    def question_problems(self, question: Any) -> list[str]:
        problems = []
        if question.scope != "episode":
            problems.append("scope: span questions cover the whole transcript; ask them once per episode")
        if question.rationale != "none":
            problems.append("rationale: span questions ask for a rationale on every span; set it to 'none'")
        return problems

    def check_value(self, question: Any, value: str) -> tuple[str, float | None, str]:
        return value, None, "a span question is answered by marking spans of the transcript, not by a value."

    def what_to_answer(self, question: Any) -> str:
        return "mark the spans of the transcript."

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        return "stretches of the transcript you mark as a social error or a social competency", []

    def instruction(self, question: Any) -> str:
        labels = ", ".join(repr(label) for label in question.options.get("labels", SPAN_LABELS))
        return f"a list of spans, each {{start_turn, end_turn, label}} with label one of {labels}"

    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        return []
