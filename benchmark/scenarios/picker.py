"""Choosing scenarios in a form: a search that tells same-named scenarios apart, and its widget.

A SocialVeil import brings some two hundred scenarios, many under one codename ("charity_donation"
six times); a list of codenames cannot tell them apart. Every option shows the scenario's id, source,
external id, seat count, barriers and the start of its context, and a search narrows the list by
any of them (and by difficulty, category and its goals' types and tags).

``ScenarioPicker`` is a checkbox list, so without JavaScript it is a plain multiple choice of every
scenario; with htmx a search box above it asks ``benchmark:scenario-picker`` for the matching
options, and the ones already ticked stay in the list (the search sends them along).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.db.models import Count, F, Prefetch, Q, QuerySet
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from ..models import Scenario, ScenarioBarrier

SEARCH_LIMIT = 50


def fully_cast(scenarios: QuerySet[Scenario]) -> QuerySet[Scenario]:
    """Those of ``scenarios`` a person can play with agents in the other seats: two roles or more, every
    one cast, and not a template (whose roles are slots to fill)."""
    return (
        scenarios.filter(is_template=False)
        .annotate(
            role_count=Count("roles", distinct=True),
            cast_count=Count("roles", filter=Q(roles__character__isnull=False), distinct=True),
        )
        .filter(role_count__gte=2, cast_count=F("role_count"))
        .order_by("codename", "pk")
    )


def playable(scenarios: QuerySet[Scenario]) -> QuerySet[Scenario]:
    """Those of ``scenarios`` a run can play: every one but templates."""
    return scenarios.filter(is_template=False).annotate(role_count=Count("roles", distinct=True)).order_by(
        "codename", "pk")


# Which scenarios a form offers, by the name its widget sends to the search.
SCOPES = {"cast": fully_cast, "playable": playable}


def with_details(scenarios: QuerySet[Scenario]) -> QuerySet[Scenario]:
    """What an option shows, fetched with the list: barrier prompts and their barriers."""
    return scenarios.prefetch_related(
        Prefetch("barrier_prompts", queryset=ScenarioBarrier.objects.select_related("barrier"))
    )


def search_text(query: Mapping[str, str], name: str = "q") -> str:
    """What a search box sent, as the searches read it: no NUL (PostgreSQL stores none), trimmed, 200 characters."""
    return query.get(name, "").replace("\x00", "").strip()[:200]


def search_scenarios(scenarios: QuerySet[Scenario], text: str) -> QuerySet[Scenario]:
    """Scenarios matching every word of ``text`` in their id, codename, external id, source, context,
    difficulty, category, or their goals' types and tags."""
    for word in text.split()[:10]:
        match = (
            Q(codename__icontains=word) | Q(external_id__icontains=word) | Q(source__icontains=word)
            | Q(context__icontains=word) | Q(difficulty__iexact=word) | Q(category__icontains=word)
            | Q(roles__goals__goal_type__icontains=word) | Q(roles__goals__tags__icontains=word)
        )
        number = word.lstrip("#")
        if number.isdigit() and len(number) < 19:
            match |= Q(pk=int(number))
        scenarios = scenarios.filter(pk__in=Scenario.objects.filter(match).values("pk"))
    return scenarios


def option_rows(scenarios: QuerySet[Scenario], chosen: list[str], text: str = "",
                limit: int | None = SEARCH_LIMIT) -> dict[str, Any]:
    """The options to show: the chosen ones first (always), then those matching ``text``, at most ``limit``."""
    chosen_ids = {int(pk) for pk in chosen if str(pk).isdigit() and len(str(pk)) < 19}
    ticked = list(with_details(scenarios.filter(pk__in=chosen_ids)))
    others = with_details(search_scenarios(scenarios, text).exclude(pk__in=chosen_ids))
    found = list(others[:limit] if limit else others)
    more = others.count() - len(found) if limit and len(found) == limit else 0
    rows = [(scenario, True) for scenario in ticked] + [(scenario, False) for scenario in found]
    return {"rows": rows, "more": more, "text": text}


class ScenarioPicker(forms.CheckboxSelectMultiple):
    """A checkbox list of scenarios with a search box; ``scope`` names the form's scenarios in ``SCOPES``."""

    template_name = "benchmark/scenarios/widgets/picker.html"

    def __init__(self, scope: str, attrs: dict[str, Any] | None = None) -> None:
        if scope not in SCOPES:
            raise ValueError(f"unknown scenario scope {scope!r}; known: {', '.join(SCOPES)}")
        super().__init__(attrs)
        self.scope = scope
        self.queryset: QuerySet[Scenario] | None = None  # for a field without choices; else the field's queryset

    def id_for_label(self, id_: str, index: str | None = None) -> str:
        """The field's label names the search box."""
        return f"{id_}-search" if id_ and index is None else super().id_for_label(id_, index)

    def get_context(self, name: str, value: Any, attrs: dict[str, Any] | None) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        queryset = self.queryset if self.queryset is not None else getattr(self.choices, "queryset", None)
        chosen = [str(pk) for pk in (value or [])]
        rows = option_rows(queryset, chosen, limit=None) if queryset is not None else {"rows": [], "more": 0}
        context["picker"] = {"scope": self.scope, **rows}
        return context

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> str:
        """Rendered by the project's templates (the form renderer reads only Django's own widget templates)."""
        return mark_safe(render_to_string(self.template_name, self.get_context(name, value, attrs)))

    def optgroups(self, name: str, value: Any, attrs: dict[str, Any] | None = None) -> list:
        return []  # the template lists ``picker.rows`` itself
