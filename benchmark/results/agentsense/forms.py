"""The AgentSense results page's filters: which run, model, template and scenario category. Every field is optional."""

from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from ...models import Category, Episode, Scenario, Seat
from .records import AgentSenseFilters


class AgentSenseFilterForm(forms.Form):
    """GET filters for the page and its downloads; a value outside the choices is a form error."""

    tag = forms.ChoiceField(required=False, help_text="The experiment tag (a run's name).")
    model = forms.ChoiceField(required=False, help_text="Only episodes in which this model plays a seat.")
    template = forms.ChoiceField(
        required=False, help_text="Only the scenarios instantiated from this template, to compare its casts."
    )
    category = forms.ChoiceField(
        choices=[("", "any category"), *Category.choices], required=False, label="Scenario category"
    )

    def __init__(self, *args, episodes: QuerySet[Episode], **kwargs) -> None:
        """``episodes``: those the asking researcher may see; the choices come from them alone."""
        super().__init__(*args, **kwargs)
        tags = episodes.exclude(tag="").order_by("tag").values_list("tag", flat=True).distinct()
        self.fields["tag"].choices = [("", "any tag"), *((tag, tag) for tag in tags)]
        models = (
            Seat.objects.filter(episode__in=episodes.values("pk")).exclude(model="").order_by("model")
            .values_list("model", flat=True).distinct()
        )
        self.fields["model"].choices = [("", "any model"), *((model, model) for model in models)]
        templates = (
            Scenario.objects.filter(instances__episodes__in=episodes.values("pk")).distinct().order_by("codename", "pk")
        )
        self.fields["template"].choices = [("", "any scenario"), *((str(t.pk), str(t)) for t in templates)]

    def filters(self) -> AgentSenseFilters | None:
        """The filters, or None when a field is invalid (the form then carries the errors)."""
        if not self.is_valid():
            return None
        return AgentSenseFilters(**{name: self.cleaned_data[name] for name in ("tag", "model", "template", "category")})
