"""The ProMediate results page's filters: run tag, scenario, mediator model, consensus judge and metric preset.

Every field is optional; the choices come from the episodes and readings the asking researcher may see.
"""

from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from ...models import Episode, PairAgreement, Scenario
from ...stats.promediate import PRESETS
from .traces import ProMediateFilters


class ProMediateFilterForm(forms.Form):
    """GET filters for the page and its downloads; a value outside the choices is a form error."""

    tag = forms.ChoiceField(required=False, help_text="The experiment tag (a run's name).")
    scenario = forms.ChoiceField(required=False, help_text="Only this scenario (Table 2's 'chosen scenario').")
    mediator_model = forms.ChoiceField(
        required=False,
        label="Mediator model",
        help_text="Only conversations whose mediator is this model (those without a mediator stay, as the baseline).",
    )
    judge = forms.ChoiceField(
        required=False,
        label="Consensus judge",
        help_text="Whose reading of the consensus to report; by default the latest reading of each episode.",
    )
    preset = forms.ChoiceField(
        choices=[(name, name) for name in PRESETS],
        required=False,
        initial="upstream",
        label="Metric options",
        help_text="upstream: the public code's formulas (default); paper: the paper's wording.",
    )
    episode = forms.IntegerField(
        required=False,
        min_value=1,
        label="Trajectory of episode",
        help_text="The episode drawn per topic (default: the first with a mediator).",
    )

    def __init__(self, *args, episodes: QuerySet[Episode], **kwargs) -> None:
        """``episodes``: those the asking researcher may see; the choices come from them alone."""
        super().__init__(*args, **kwargs)
        tags = episodes.exclude(tag="").order_by("tag").values_list("tag", flat=True).distinct()
        self.fields["tag"].choices = [("", "any tag"), *((tag, tag) for tag in tags)]
        scenarios = Scenario.objects.filter(pk__in=episodes.values("scenario_id"), topics__isnull=False).distinct()
        self.fields["scenario"].choices = [("", "all scenarios"), *((str(s.pk), str(s)) for s in scenarios)]
        models = sorted(
            {
                str((settings or {}).get("promediate", {}).get("mediator_model") or "")
                for settings in episodes.values_list("settings", flat=True)
            }
            - {""}
        )
        self.fields["mediator_model"].choices = [("", "any model"), *((model, model) for model in models)]
        judges = (
            PairAgreement.objects.filter(episode__in=episodes.values("pk"))
            .order_by("judge")
            .values_list("judge", flat=True)
            .distinct()
        )
        self.fields["judge"].choices = [("", "latest reading"), *((judge, judge) for judge in judges)]

    def filters(self) -> ProMediateFilters | None:
        """The filters, or None when a field is invalid (the form then carries the errors)."""
        if not self.is_valid():
            return None
        data = self.cleaned_data
        return ProMediateFilters(
            tag=data["tag"],
            scenarios=(data["scenario"],) if data["scenario"] else (),
            mediator_model=data["mediator_model"],
            judge=data["judge"],
            preset=data["preset"] or "upstream",
            episode=data["episode"],
        )
