"""The page a researcher makes a human-baseline study on: a task set of their teams, the tasks, a subset."""

from __future__ import annotations

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from benchmark.models import Task, TaskSet

from ..models import Study
from .study import HumanStudyProblem, create_human_baseline_study


class HumanBaselineForm(forms.Form):
    """What ``create_human_baseline_study`` needs; ``save(created_by=...)`` makes the study, all or nothing."""

    task_set = forms.ModelChoiceField(
        TaskSet.objects.none(), empty_label=None, label="Task set",
        help_text="Task items built by shrec_tasks; the study belongs to the task set's team.",
    )
    tasks = forms.MultipleChoiceField(
        choices=Task.choices, required=False, widget=forms.CheckboxSelectMultiple, label="Tasks",
        help_text="One study may ask one task or several; none ticked: all eight.",
    )
    subset = forms.IntegerField(required=False, min_value=0, max_value=1000, label="Subset",
                                help_text="Only the items drawn into this subset (from 0). Empty: every item.")
    title = forms.CharField(max_length=200, required=False, help_text="Empty: 'SHREC human baseline: <task set>'.")
    slug = forms.SlugField(max_length=80, required=False, help_text="The study's address. Empty: made from the title.")
    overlap = forms.IntegerField(min_value=1, max_value=1000, initial=3, label="Overlap k",
                                 help_text="How many different people answer each item.")

    def __init__(self, *args, user: AbstractBaseUser, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["task_set"].queryset = TaskSet.objects.owned_by(user).select_related("team")

    def clean_slug(self) -> str:
        slug = self.cleaned_data.get("slug", "")
        if slug and Study.objects.filter(slug=slug).exists():  # the same words whoever has it
            raise forms.ValidationError("This slug is not available; choose another.")
        return slug

    def save(self, *, created_by: AbstractBaseUser) -> Study | None:
        """The new study, or None with the reason added to the form's errors."""
        data = self.cleaned_data
        try:
            return create_human_baseline_study(
                task_set=data["task_set"], tasks=[task for task in Task.values if task in data["tasks"]] or None,
                subset=data.get("subset"), title=data["title"], slug=data["slug"], overlap=data["overlap"],
                created_by=created_by,
            )
        except HumanStudyProblem as problem:
            self.add_error(None, str(problem))
            return None
