"""The team field of every form that creates research data, for benchmark's pages and the other apps'."""

from django import forms

from .models.teams import research_teams

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
