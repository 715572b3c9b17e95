"""The scenario editor's form: the scenario's fields and four formsets (roles, goals, probes, barriers).

Roles are numbered as the page shows them (role 1 is the first row); a goal, a probe or a barrier
names its role by that number, and ``ScenarioEditor.data()`` turns numbers into positions once
removed and empty rows are dropped. Every problem is put on the row and field it is about.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from ..forms import team_field
from ..models import Barrier, Character, GoalType, Probe, Role, Scenario, Team
from .scenario_saving import BarrierData, GoalData, ProbeData, RoleData, ScenarioData

SCENARIO_FIELDS = [
    "codename", "external_id", "source", "context", "difficulty", "category", "relationship", "turn_taking",
    "greeter_position", "turn_cap",
]
MAX_ROLES = 12


def role_choices(count: int) -> list[tuple[int, str]]:
    return [(number, f"role {number}") for number in range(1, count + 1)]


class ScenarioFieldsForm(forms.ModelForm):
    """The scenario's own fields; the team is chosen on a new scenario and fixed afterwards."""

    greeter_position = forms.TypedChoiceField(
        coerce=int, empty_value=None, required=False, label="Opening role",
        help_text="For random order after a greeting: the role that greets first; for a negotiation: the mediator.",
    )

    class Meta:
        model = Scenario
        fields = SCENARIO_FIELDS
        labels = {"codename": "Name (codename)", "external_id": "External id", "turn_cap": "Turn cap"}
        widgets = {"context": forms.Textarea(attrs={"rows": 5})}

    def __init__(self, *args: Any, user: AbstractBaseUser, role_count: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.instance.pk:
            self.fields["team"] = team_field(user)
            self.order_fields(["team", *SCENARIO_FIELDS])
        openers = [(number - 1, label) for number, label in role_choices(role_count)]
        self.fields["greeter_position"].choices = [("", "—"), *openers]
        self.fields["codename"].help_text = "Letters, numbers, hyphens and underscores, e.g. charity_donation."
        self.fields["external_id"].help_text = "Optional; unique among your team's scenarios."

    @property
    def team(self) -> Team | None:
        return self.instance.team if self.instance.pk else self.cleaned_data.get("team")

    def clean_external_id(self) -> str | None:
        return (self.cleaned_data.get("external_id") or "").strip() or None

    def clean_turn_cap(self) -> int | None:
        cap = self.cleaned_data.get("turn_cap")
        if cap == 0:
            raise forms.ValidationError("A turn cap is at least 1; leave it empty to use the run's cap.")
        return cap


class RoleForm(forms.Form):
    character = forms.ModelChoiceField(
        Character.objects.none(), label="Character", help_text="Who plays this role by default.",
        error_messages={"required": "Choose the character who plays this role.",
                        "invalid_choice": "Choose one of your team's characters."},
    )
    reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Why the character wants their goals.")
    private_knowledge = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                        help_text="Facts only this side knows.")
    communication = forms.ChoiceField(choices=[("", "—"), *Role._meta.get_field("communication").choices],
                                      required=False, help_text="AgentSense's sender or receiver.")

    def __init__(self, *args: Any, characters: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = characters


class RoleNumberForm(forms.Form):
    """A row that names one of the page's roles by its number."""

    ROLE_FIELD = "role"

    def __init__(self, *args: Any, role_count: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = role_choices(role_count)
        field = self.fields[self.ROLE_FIELD]
        field.choices = choices if isinstance(field, forms.MultipleChoiceField) else [("", "—"), *choices]


class GoalForm(RoleNumberForm):
    role = forms.TypedChoiceField(coerce=int, label="Role", error_messages={"required": "Choose the role it is for."})
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label="Goal",
                           error_messages={"required": "Write the goal, or clear the row."})
    goal_type = forms.ChoiceField(choices=[("", "—"), *GoalType.choices], required=False, label="Goal type")
    tags = forms.CharField(required=False, help_text="Comma-separated, e.g. relatedness, hard.")

    def clean_tags(self) -> list[str]:
        tags = [tag.strip() for tag in self.cleaned_data["tags"].split(",") if tag.strip()]
        for tag in tags:
            if len(tag) > 50:
                raise forms.ValidationError(f"The tag “{tag[:20]}…” is longer than 50 characters.")
        return tags


class ProbeForm(RoleNumberForm):
    ROLE_FIELD = "about"

    about = forms.TypedChoiceField(coerce=int, label="About role",
                                   error_messages={"required": "Choose the role it is about."})
    topic = forms.ChoiceField(choices=[("", "—"), *Probe.Topic.choices],
                              error_messages={"required": "Choose what it asks about."})
    text = forms.CharField(label="Question", widget=forms.Textarea(attrs={"rows": 2}),
                           error_messages={"required": "Write the question, or clear the row."})
    options = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="One option a line.",
                              error_messages={"required": "Give the options, one a line."})
    correct = forms.IntegerField(min_value=1, label="Correct option", help_text="Its number: 1 for the first line.")
    asked_of = forms.ChoiceField(choices=Probe.AskedOf.choices, label="Asked of", initial=Probe.AskedOf.OTHERS)

    def clean_options(self) -> list[str]:
        options = [line.strip() for line in self.cleaned_data["options"].splitlines() if line.strip()]
        if len(options) < 2:
            raise forms.ValidationError("A probe needs at least two options, one a line.")
        return options

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        options, correct = data.get("options"), data.get("correct")
        if options and correct and correct > len(options):
            self.add_error("correct", f"There are {len(options)} options: pick a number from 1 to {len(options)}.")
        return data


class BarrierSeatsForm(RoleNumberForm):
    ROLE_FIELD = "seats"

    barrier = forms.ModelChoiceField(Barrier.objects.none(), error_messages={
        "invalid_choice": "Choose a built-in barrier or one of your team's."})
    seats = forms.TypedMultipleChoiceField(coerce=int, widget=forms.CheckboxSelectMultiple, label="Seats under it",
                                           error_messages={"required": "Tick the roles that speak under it."})
    style_directive = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label="Style directive",
                                      help_text="Told to those seats instead of the barrier's own directive.",
                                      error_messages={"required": "Write what the barrier seats are told."})
    trait_note = forms.CharField(required=False, label="Trait note",
                                 help_text="Added to the barrier seat's profile, e.g. 'Keeps references implicit.'")

    def __init__(self, *args: Any, barriers: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["barrier"].queryset = barriers


RoleFormSet = forms.formset_factory(RoleForm, extra=1, can_delete=True, max_num=MAX_ROLES, absolute_max=MAX_ROLES)
GoalFormSet = forms.formset_factory(GoalForm, extra=2, can_delete=True, max_num=200, absolute_max=200)
ProbeFormSet = forms.formset_factory(ProbeForm, extra=1, can_delete=True, max_num=100, absolute_max=100)
BarrierFormSet = forms.formset_factory(BarrierSeatsForm, extra=1, can_delete=True, max_num=50, absolute_max=50)


def kept(formset: forms.BaseFormSet) -> list[tuple[int, forms.Form]]:
    """The rows that count, with their index: not removed, and filled in (a blank extra row is left out)."""
    return [
        (index, form) for index, form in enumerate(formset.forms)
        if not formset._should_delete_form(form)
        and (index < formset.initial_form_count() or form.has_changed())
    ]


class ScenarioEditor:
    """The whole page: ``fields`` and the four formsets, checked together; ``data()`` once valid."""

    def __init__(self, user: AbstractBaseUser, scenario: Scenario | None = None, data: Any = None) -> None:
        instance = scenario or Scenario()
        initial = initial_rows(scenario) if scenario else {"roles": [{}, {}]}
        if data is not None:
            role_count = _count(data, "roles", len(initial["roles"]) + RoleFormSet.extra)
        else:
            role_count = len(initial["roles"]) + RoleFormSet.extra
        role_count = min(role_count, MAX_ROLES)
        characters = (Character.objects.of_team(scenario.team) if scenario else Character.objects.owned_by(user))
        barriers = (Barrier.objects.of_team(scenario.team) if scenario else Barrier.objects.owned_by(user))
        barriers = barriers.exclude(key=Barrier.NONE).order_by("position", "key")
        self.fields = ScenarioFieldsForm(data, instance=instance, user=user, role_count=role_count)
        self.roles = RoleFormSet(data, prefix="roles", initial=initial["roles"], form_kwargs={"characters": characters})
        numbered = {"role_count": role_count}
        self.goals = GoalFormSet(data, prefix="goals", initial=initial.get("goals"), form_kwargs=numbered)
        self.probes = ProbeFormSet(data, prefix="probes", initial=initial.get("probes"), form_kwargs=numbered)
        self.barriers = BarrierFormSet(data, prefix="barriers", initial=initial.get("barriers"),
                                       form_kwargs={**numbered, "barriers": barriers})
        self.problems: list[str] = []

    @property
    def formsets(self) -> list[forms.BaseFormSet]:
        return [self.roles, self.goals, self.probes, self.barriers]

    def is_valid(self) -> bool:
        valid = self.fields.is_valid() & all([formset.is_valid() for formset in self.formsets])
        if valid:
            self._check_together()
        return valid and not self.problems and not self.fields.errors and all(
            formset.is_valid() for formset in self.formsets)

    def _check_together(self) -> None:
        """What no single row can check: two roles at least, rows naming roles that are kept, one team."""
        team = self.fields.team
        roles = kept(self.roles)
        if len(roles) < 2:
            self.problems.append("A scenario needs at least two roles, each with a character: fill in role 1 and 2.")
        positions = {index + 1: position for position, (index, _) in enumerate(roles)}
        for _, form in roles:
            character = form.cleaned_data["character"]
            if team and character.team_id != team.pk:
                form.add_error("character", f"{character} belongs to another of your teams.")
        for formset in (self.goals, self.probes, self.barriers):
            for _, form in kept(formset):
                numbers = form.cleaned_data.get(form.ROLE_FIELD)
                for number in numbers if isinstance(numbers, list) else [numbers]:
                    if number not in positions:
                        form.add_error(form.ROLE_FIELD, f"Role {number} is removed or left empty; choose another.")
                        break
        chosen: set[int] = set()
        for _, form in kept(self.barriers):
            barrier = form.cleaned_data["barrier"]
            if barrier.pk in chosen:
                form.add_error("barrier", f"{barrier} is listed twice; give it one row.")
            chosen.add(barrier.pk)
            if team and barrier.team_id not in (None, team.pk):
                form.add_error("barrier", f"{barrier} belongs to another of your teams.")
        greeter = self.fields.cleaned_data.get("greeter_position")
        if greeter is not None and greeter + 1 not in positions:
            self.fields.add_error("greeter_position", f"Role {greeter + 1} is removed or left empty.")

    def data(self) -> ScenarioData:
        """The page as plain values, roles by position (valid pages only)."""
        roles = kept(self.roles)
        positions = {index + 1: position for position, (index, _) in enumerate(roles)}
        fields = self.fields.cleaned_data
        return ScenarioData(
            fields={name: fields[name] for name in SCENARIO_FIELDS},
            roles=[RoleData(form.cleaned_data["character"].pk, form.cleaned_data["reason"].strip(),
                            form.cleaned_data["private_knowledge"].strip(), form.cleaned_data["communication"])
                   for _, form in roles],
            goals=[GoalData(positions[d["role"]], d["text"].strip(), d["goal_type"], tuple(d["tags"]))
                   for d in (form.cleaned_data for _, form in kept(self.goals))],
            probes=[ProbeData(positions[d["about"]], d["topic"], d["text"].strip(), tuple(d["options"]),
                              d["correct"] - 1, d["asked_of"])
                    for d in (form.cleaned_data for _, form in kept(self.probes))],
            barriers=[BarrierData(d["barrier"].pk, d["style_directive"].strip(), d["trait_note"].strip(),
                                  tuple(sorted(positions[number] for number in d["seats"])))
                      for d in (form.cleaned_data for _, form in kept(self.barriers))],
        )


def _count(data: Any, prefix: str, default: int) -> int:
    try:
        return int(data.get(f"{prefix}-TOTAL_FORMS", default))
    except (TypeError, ValueError):
        return default


def initial_rows(scenario: Scenario) -> dict[str, list[dict[str, Any]]]:
    """The stored scenario as the formsets' initial rows (role numbers from 1)."""
    roles = list(scenario.roles.order_by("position").prefetch_related("goals"))
    number = {role.pk: index + 1 for index, role in enumerate(roles)}
    by_position = {role.position: index + 1 for index, role in enumerate(roles)}
    return {
        "roles": [{"character": role.character_id, "reason": role.reason, "private_knowledge": role.private_knowledge,
                   "communication": role.communication} for role in roles],
        "goals": [{"role": number[role.pk], "text": goal.text, "goal_type": goal.goal_type,
                   "tags": ", ".join(goal.tags)} for role in roles for goal in role.goals.all()],
        "probes": [{"about": number[probe.about_id], "topic": probe.topic, "text": probe.text,
                    "options": "\n".join(probe.options), "correct": probe.correct + 1, "asked_of": probe.asked_of}
                   for probe in scenario.probes.order_by("position")],
        "barriers": [{"barrier": prompt.barrier_id, "style_directive": prompt.style_directive,
                      "trait_note": prompt.trait_note,
                      "seats": [by_position[p] for p in prompt.barrier_positions if p in by_position]}
                     for prompt in scenario.barrier_prompts.all()],
    }
