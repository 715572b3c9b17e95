"""The jobs page's filter."""

from __future__ import annotations

from django import forms
from django.db.models import QuerySet

from ..models import Job


class JobFilterForm(forms.Form):
    """Which jobs to list, by status; an empty or unknown status lists them all."""

    status = forms.ChoiceField(choices=[("", "any status"), *Job.Status.choices], required=False)

    def filter(self, jobs: QuerySet[Job]) -> QuerySet[Job]:
        status = self.cleaned_data.get("status") if self.is_valid() else ""
        return jobs.filter(status=status) if status else jobs
