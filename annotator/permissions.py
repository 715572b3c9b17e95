"""Who may do what in the annotator app: one place for every view and export to ask."""

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from benchmark.permissions import RESEARCHERS, is_researcher, researcher_required

from .models import Assignment

__all__ = ["ANNOTATORS", "RESEARCHERS", "is_researcher", "own_assignment", "researcher_required"]

ANNOTATORS = "annotators"


def own_assignment(request: HttpRequest, assignment_id: int) -> Assignment:
    """The signed-in annotator's own assignment; anyone else's is a 404, so ids reveal nothing."""
    return get_object_or_404(
        Assignment.objects.select_related("item__study__instrument", "item__episode__scenario",
                                          "item__episode__recording", "item__task_item"),
        pk=assignment_id,
        annotator=request.user,
    )
