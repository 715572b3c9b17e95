"""The team field of every form that creates research data, and the field for choosing several rows,
for benchmark's pages and the other apps'."""

from django import forms

from .models.teams import research_teams

# What an id column holds (64-bit integers): SQLite's driver raises OverflowError on a larger number.
ID_RANGE = range(-(2**63), 2**63)
NO_TEAM = "You are not a researcher of any team yet; ask an administrator to add you to one."


class TeamChoiceField(forms.ModelChoiceField):
    """One of the asking researcher's teams; left empty, the only one they have."""

    def clean(self, value):
        if value in self.empty_values:
            teams = list(self.queryset[:2])
            if len(teams) == 1:
                return teams[0]
            raise forms.ValidationError(NO_TEAM if not teams else "Choose the team that will own it.")
        return super().clean(value)


def team_field(user) -> TeamChoiceField:
    """The "which team owns it" field of every form that creates research data.

    It offers only the teams where ``user`` is a researcher, and hides itself when there is one.
    """
    teams = research_teams(user).order_by("name")
    only = list(teams[:2])
    field = TeamChoiceField(
        teams, empty_label=None, required=False, label="Team",
        help_text="The team that will own it; only its researchers see it.",
        error_messages={"invalid_choice": "Choose one of your teams."},
    )
    if len(only) == 1:
        field.widget = forms.HiddenInput()
        field.initial = only[0].pk
    return field


class RowsChoiceField(forms.ModelMultipleChoiceField):
    """Several rows by id; an id beyond any id column's range is an invalid choice, not an OverflowError.

    Django refuses ids that are not numbers, but asks the database about ``-99999999999999999999``,
    which SQLite cannot even be sent (Django's single-row field is spared: its lookup checks the range).
    """

    def _check_values(self, value):
        for pk in value if isinstance(value, (list, tuple)) else ():
            try:
                fits = int(pk) in ID_RANGE
            except (TypeError, ValueError):
                continue  # not a number: Django's own check names it
            if not fits:
                raise forms.ValidationError(
                    self.error_messages["invalid_pk_value"], code="invalid_pk_value", params={"pk": pk}
                )
        return super()._check_values(value)
