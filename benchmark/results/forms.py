"""The results page's filters: which episodes, which kind of respondent and which of them, whose scores.

Every field is optional."""

from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from ..instruments.respondents import respondent_name
from ..models import Difficulty, Episode, Respondent, Scenario, Seat
from ..stats.results import PARTNER, SEAT_ROLES
from .build import MAJORITY, ResultFilters, score_answers


class ResultFilterForm(forms.Form):
    """GET filters for the results page and its downloads; a value outside the choices is a form error."""

    tag = forms.ChoiceField(required=False, help_text="The experiment tag (a run's name).")
    source = forms.ChoiceField(choices=[("", "any source"), *Episode.Source.choices], required=False)
    strategy = forms.ChoiceField(
        choices=[("", "any partner strategy"), *Seat.Strategy.choices], required=False, label="Partner strategy"
    )
    difficulty = forms.ChoiceField(
        choices=[("", "any difficulty"), *Difficulty.choices], required=False,
        help_text="Only scenarios of this difficulty: hard is SocialVeil's Sotopia-Hard.",
    )
    respondent_kind = forms.ChoiceField(
        choices=[("", "judges (or the kind of the one named)"), *Respondent.Kind.choices], required=False,
        label="Scores by", help_text="Whose answers to the rated dimensions to report: automated judges by default.",
    )
    evaluator = forms.ChoiceField(
        required=False, label="Judge",
        help_text="Default: the one with the most scores. 'Majority' takes the median of all of them (of the "
        "prompt version below, if one is chosen) for each episode, seat and dimension.",
    )
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
        # Only respondents with scores: one without any would be offered and then refused.
        respondents = Respondent.objects.filter(
            pk__in=score_answers(episodes).values("response__respondent_id")
        ).values_list("model", "label", "user_id", "prompt_version")
        names = sorted({respondent_name(model, label, user) for model, label, user, _ in respondents})
        self.fields["evaluator"].choices = [
            ("", "most scores"), (MAJORITY, "majority (median of all)"), *((name, name) for name in names)
        ]
        versions = sorted({version for *_, version in respondents if version})
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
            tag=data["tag"], source=data["source"], strategy=data["strategy"],
            respondent_kind=data["respondent_kind"], evaluator=data["evaluator"],
            prompt_version=data["prompt_version"] or None, seat_role=data["seat"] or PARTNER,
            template=data["template"], difficulty=data["difficulty"],
        )
