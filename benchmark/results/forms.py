"""The results page's filters: which episodes, which judge, whose scores. Every field is optional."""

from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from ..models import Episode, Evaluation, Scenario, Seat
from ..stats.results import PARTNER, SEAT_ROLES
from .build import ResultFilters


class ResultFilterForm(forms.Form):
    """GET filters for the results page and its downloads; a value outside the choices is a form error."""

    tag = forms.ChoiceField(required=False, help_text="The experiment tag (a run's name).")
    source = forms.ChoiceField(choices=[("", "any source"), *Episode.Source.choices], required=False)
    strategy = forms.ChoiceField(
        choices=[("", "any partner strategy"), *Seat.Strategy.choices], required=False, label="Partner strategy"
    )
    evaluator = forms.ChoiceField(required=False, label="Judge", help_text="Default: the judge with the most scores.")
    prompt_version = forms.ChoiceField(required=False, label="Judge prompt version")
    template = forms.ChoiceField(
        required=False, help_text="Only the scenarios instantiated from this template, to compare its casts."
    )
    seat = forms.ChoiceField(
        choices=[(role, f"{role} seat") for role in SEAT_ROLES], required=False, label="Per-seat scores of the",
        help_text="Per-seat scores of the partner (as in SocialVeil) or of the barrier seat.",
    )

    def __init__(self, *args, episodes: QuerySet[Episode], **kwargs) -> None:
        """``episodes``: those the asking researcher may see; the choices come from them alone."""
        super().__init__(*args, **kwargs)
        tags = episodes.exclude(tag="").order_by("tag").values_list("tag", flat=True).distinct()
        self.fields["tag"].choices = [("", "any tag"), *((tag, tag) for tag in tags)]
        evaluations = Evaluation.objects.filter(episode__in=episodes.values("pk"))
        evaluators = evaluations.order_by("evaluator").values_list("evaluator", flat=True).distinct()
        self.fields["evaluator"].choices = [("", "most scores"), *((name, name) for name in evaluators)]
        versions = (
            evaluations.exclude(prompt_version="").order_by("prompt_version")
            .values_list("prompt_version", flat=True).distinct()
        )
        self.fields["prompt_version"].choices = [("", "any version"), *((v, v) for v in versions)]
        templates = (
            Scenario.objects.filter(instances__episodes__in=episodes.values("pk")).distinct().order_by("codename", "pk")
        )
        self.fields["template"].choices = [("", "any scenario"), *((str(t.pk), str(t)) for t in templates)]

    def filters(self) -> ResultFilters | None:
        """The filters, or None when a field is invalid (the form then carries the errors)."""
        if not self.is_valid():
            return None
        data = self.cleaned_data
        return ResultFilters(
            tag=data["tag"], source=data["source"], strategy=data["strategy"], evaluator=data["evaluator"],
            prompt_version=data["prompt_version"] or None, seat_role=data["seat"] or PARTNER,
            template=data["template"],
        )
