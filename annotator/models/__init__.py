from .annotations import Annotation, Span
from .reports import ReportBundle
from .studies import Assignment, ItemKey, Membership, Study, StudyItem

__all__ = [
    "Annotation",
    "Assignment",
    "ItemKey",
    "Membership",
    "ReportBundle",
    "Span",
    "Study",
    "StudyItem",
]
