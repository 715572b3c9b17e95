"""The SHREC results page's one choice: which task set (default: the latest the researcher's teams built)."""

from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from ...models import TaskSet
from .records import ANSWER_SOURCES, PARSED, choose_task_set


class ShrecResultsForm(forms.Form):
    """GET choice for the page and its downloads; a value outside the choices is a form error."""

    task_set = forms.ChoiceField(
        required=False,
        label="Task set",
        help_text="Which build of the eight tasks to report; by default the latest.",
    )
    answers = forms.ChoiceField(
        choices=[(source, source) for source in ANSWER_SOURCES],
        required=False,
        initial=PARSED,
        label="Models' answers",
        help_text="parsed: as Parley's parser read each reply (default); coerced: as a coercing model read it, "
        "where one did (the paper's second-model step).",
    )

    def __init__(self, *args, task_sets: QuerySet[TaskSet], **kwargs) -> None:
        """``task_sets``: those the asking researcher may see; the choices come from them alone."""
        super().__init__(*args, **kwargs)
        self.task_sets = task_sets
        latest_first = task_sets.select_related("team").order_by("-created_at", "-pk")
        self.fields["task_set"].choices = [
            ("", "the latest"),
            *((str(task_set.pk), f"{task_set.name} ({task_set.team})") for task_set in latest_first),
        ]

    def answers_from(self) -> str:
        return self.cleaned_data.get("answers") or PARSED

    def chosen(self) -> TaskSet:
        """The chosen task set, or the latest; raises ``ShrecResultsProblem`` when there is none."""
        wanted = self.cleaned_data.get("task_set")
        if wanted:
            return self.task_sets.get(pk=int(wanted))
        return choose_task_set(self.task_sets)
