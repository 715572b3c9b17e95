"""The forms a researcher manages a running study with: its settings, its items, invitations.

The rules they apply live in ``annotator.lifecycle`` and ``annotator.pool``; a form only shows them (a locked
setting is disabled with its reason beside it) and names the field and the problem.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db.models import QuerySet

from benchmark.episodes.forms import EpisodeFilterForm
from benchmark.models import Episode, Instrument

from .lifecycle import LABELS, SETTINGS, active_members, fullest_item, locked_fields, overlap_problem
from .models import Study


class StudySettingsForm(forms.ModelForm):
    """Every setting of a study that may change after it was created; locked ones are disabled with the reason."""

    class Meta:
        model = Study
        fields = list(SETTINGS)
        labels = LABELS
        widgets = {"instructions": forms.Textarea(attrs={"rows": 8})}

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        study = self.instance
        self.fields["comprehension_instrument"].queryset = Instrument.objects.owned_by(user)
        for name, bound in (("overlap", MinValueValidator(1)), ("lease_minutes", MinValueValidator(1)),
                            ("qualification_pass_mark", MaxValueValidator(100)),
                            ("checks_warn_after", MinValueValidator(1)), ("checks_pause_after", MinValueValidator(1))):
            self.fields[name].validators.append(bound)  # the model's own bounds: its full_clean is not run here
        self.fields["lease_minutes"].help_text = (
            "An item claimed but not submitted within this time goes back to the pool. A change applies to new "
            "claims and to the next save of items in progress."
        )
        taken, item = fullest_item(study)
        if item is not None and taken:
            self.fields["overlap"].help_text = (
                f"How many different annotators rate each regular item. It can grow; it can shrink down to {taken}, "
                f"the most ratings (submitted or in progress) an item has (item {item.position + 1})."
            )
        self.locked = locked_fields(study)
        for name, reason in self.locked.items():
            self.fields[name].disabled = True
            self.fields[name].help_text = f"Locked: {reason}"
        for field in self.fields.values():
            if isinstance(field.widget, forms.NumberInput):  # styled like the other text boxes, as on the create form
                field.widget = forms.TextInput(attrs={"inputmode": "numeric", "size": 8})

    def clean_overlap(self) -> int:
        overlap = self.cleaned_data["overlap"]
        problem = overlap_problem(self.instance, overlap)
        if problem:
            raise forms.ValidationError(problem)
        return overlap

    def clean_max_annotators(self) -> int | None:
        most = self.cleaned_data.get("max_annotators")
        members = active_members(self.instance)
        if most is not None and most < members:
            raise forms.ValidationError(f"The pool already has {members} annotators: the most cannot be fewer.")
        return most

    def clean(self) -> dict:
        data = super().clean()
        warn, pause = data.get("checks_warn_after"), data.get("checks_pause_after")
        if warn and pause and pause < warn:
            self.add_error("checks_pause_after", f"Pausing after {pause} failed checks would come before the warning "
                           f"after {warn}: make it {warn} or more.")
        if data.get("crowd_link") and not data.get("completion_code"):
            self.add_error("completion_code", "A study that takes crowd annotators needs a completion code to "
                           "give them at the end.")
        return data

    def changes(self) -> dict[str, Any]:
        """The settings whose posted value differs from the study's."""
        return {name: self.cleaned_data[name] for name in self.changed_data if name not in self.locked}

    def _post_clean(self) -> None:
        """The model's own checks, without writing the values onto ``instance``: ``lifecycle.update_settings``
        applies them under a lock, so the instance keeps what is stored meanwhile."""


class AddItemsForm(forms.Form):
    """Episodes to add, chosen as on the create form: by the episode browser's filters, optionally sampled."""

    source = EpisodeFilterForm.base_fields["source"]
    status = EpisodeFilterForm.base_fields["status"]
    limit = forms.IntegerField(
        required=False, min_value=1, label="At most",
        help_text="Add a random sample of this many matching episodes (drawn with the study's seed). "
        "Leave empty to add them all.",
    )

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        browser = EpisodeFilterForm(user=user)
        for name in ("scenario", "barrier", "tag"):
            self.fields[name] = browser.fields[name]
        self.order_fields(["source", "scenario", "barrier", "status", "tag", "limit"])
        self.fields["limit"].widget = forms.TextInput(attrs={"inputmode": "numeric", "size": 8})

    def episodes(self, study: Study) -> QuerySet[Episode]:
        lookups = {name: self.cleaned_data[name] for name in ("source", "scenario", "barrier", "status", "tag")
                   if self.cleaned_data.get(name)}
        return Episode.objects.of_team(study.team).filter(**lookups)


class ShortenForm(forms.Form):
    count = forms.IntegerField(
        min_value=1, max_value=100000, label="Remove this many items",
        help_text="Regular items nobody has claimed are removed, the last ones first; claimed or submitted items "
        "are never removed.",
        widget=forms.TextInput(attrs={"inputmode": "numeric", "size": 8}),
    )


class InviteForm(forms.Form):
    """One person to invite: by username, or by e-mail address, not both."""

    username = forms.CharField(required=False, max_length=150, label="Username",
                               help_text="Someone with an account: they accept on their annotator page.")
    email = forms.EmailField(required=False, label="or e-mail address",
                             help_text="They get an e-mail with the join link.")

    def clean(self) -> dict:
        data = super().clean()
        username, email = data.get("username", "").strip(), data.get("email", "")
        if username and email:
            self.add_error("email", "Give a username or an e-mail address, not both.")
        elif not username and not email and "email" not in self.errors:
            self.add_error("username", "Give the username or the e-mail address of the person to invite.")
        data["username"] = username
        return data
