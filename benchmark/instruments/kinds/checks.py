"""The system check: every registered question kind has every part (``manage.py check`` fails otherwise).

A part is missing when a data part (``name``, ``label``, ``option_names``, ``widget_template``,
``agreement``, ``export_columns``) is left unset, when a method part (``check_value``,
``majority``, ...) is still the base class's, or when the widget partial does not exist. Each error
names the kind's class and the part, e.g. ``benchmark.E101 question kind Ranking (ranking) lacks majority``.
It is registered in ``benchmark.apps.BenchmarkConfig.ready``.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.checks import Error
from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from . import all_kinds
from .base import AGREEMENTS, REQUIRED_PARTS, PartMissing, QuestionKind

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,19}$")  # Question.kind is a CharField(max_length=20)


def kind_problems(kind: QuestionKind) -> list[str]:
    """What ``kind`` lacks or gets wrong, as messages (empty when it is complete)."""
    problems = []
    cls = type(kind)
    for part in REQUIRED_PARTS:
        value = getattr(cls, part, None)
        if callable(value) and getattr(value, "required_part", False):
            problems.append(f"lacks {part} (define the method)")
        elif part == "agreement":
            if value is PartMissing:
                problems.append("lacks agreement (say which statistic fits, or None)")
            elif value not in AGREEMENTS:
                problems.append(f"agreement {value!r} is not one of {', '.join(repr(a) for a in AGREEMENTS)}")
        elif part == "option_names":
            if not isinstance(value, tuple):
                problems.append("lacks option_names (a tuple of the options it takes, () for none)")
        elif not value:
            problems.append(f"lacks {part}")
    if kind.name and not NAME_PATTERN.match(kind.name):
        problems.append(f"name {kind.name!r} must be up to 20 lower-case letters, digits or underscores")
    if kind.numeric and cls.bounds is QuestionKind.bounds:
        problems.append("is numeric but lacks bounds and numeric_range")
    if kind.posts_several_values and cls.check_values is QuestionKind.check_values:
        problems.append("is multi-valued but lacks check_values")
    if kind.agreement == "own" and cls.agreement_statistic is QuestionKind.agreement_statistic:
        problems.append("computes its own agreement but lacks agreement_statistic")
    if kind.widget_template:
        try:
            get_template(kind.widget_template)
        except TemplateDoesNotExist:
            problems.append(f"widget template {kind.widget_template} does not exist")
    return problems


def check_question_kinds(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """One error per missing or wrong part of every registered kind."""
    errors = []
    for kind in all_kinds():
        for problem in kind_problems(kind):
            errors.append(Error(
                f"question kind {type(kind).__name__} ({kind.name or 'no name'}) {problem}",
                hint="See benchmark/instruments/kinds/base.py for the parts every kind has.",
                obj=type(kind), id="benchmark.E101",
            ))
    return errors
