"""The character form: a persona's profile, created for one of the researcher's teams.

A character who sat in an episode is shown with that episode, and its agents were prompted with
the profile as it was: such a character's profile does not change in place; the edit is saved as
a new character (``save_as_new``), which later scenarios and casts can use.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from ..forms import team_field
from ..models import Character, Seat

CHARACTER_FIELDS = [
    "first_name", "last_name", "external_id", "age", "gender", "pronouns", "occupation", "big_five", "mbti",
    "moral_values", "personal_values", "personality", "decision_style", "public_info", "secret",
]


def seat_count(character: Character) -> int:
    return Seat.objects.filter(character=character).count()


class CharacterForm(forms.ModelForm):
    class Meta:
        model = Character
        fields = CHARACTER_FIELDS
        widgets = {name: forms.Textarea(attrs={"rows": 3}) for name in ("personality", "public_info", "secret")}

    def __init__(self, *args: Any, user: AbstractBaseUser, save_as_new: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.save_as_new = save_as_new
        if not self.instance.pk:
            self.fields["team"] = team_field(user)
            self.order_fields(["team", *CHARACTER_FIELDS])
        self.fields["age"].widget = forms.TextInput(attrs={"inputmode": "numeric", "size": 5})
        self.fields["age"].validators.append(lambda age: _plausible(age))

    def clean_external_id(self) -> str | None:
        return (self.cleaned_data.get("external_id") or "").strip() or None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        team = self.instance.team if self.instance.pk else data.get("team")
        external_id = data.get("external_id")
        if team and external_id:
            taken = Character.objects.filter(team=team, external_id=external_id)
            if self.instance.pk and not self.save_as_new:
                taken = taken.exclude(pk=self.instance.pk)
            if taken.exists():
                self.add_error("external_id", f"Another of the team's characters has the external id “{external_id}”.")
        if self.instance.pk and not self.save_as_new and self.has_changed():
            played = seat_count(self.instance)
            if played:
                self.add_error(None, (
                    f"{self.instance} sat in {played} episode seat{'s' if played != 1 else ''}, whose agents were "
                    "prompted with this profile; it cannot change under them. Save your edits as a new character."
                ))
        return data

    def save(self, commit: bool = True) -> Character:
        character = super().save(commit=False)
        if self.save_as_new:
            character.pk = None
        if not character.team_id:
            character.team = self.cleaned_data["team"]
        character.save()
        return character


def _plausible(age: int | None) -> None:
    if age is not None and age > 130:
        raise forms.ValidationError("An age is at most 130.")
