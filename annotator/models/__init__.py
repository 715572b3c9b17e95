from .annotations import Annotation, Span
from .external import ExternalAnnotator
from .reports import ReportBundle
from .studies import Assignment, ItemKey, Membership, Study, StudyItem

__all__ = [
    "Annotation",
    "Assignment",
    "ExternalAnnotator",
    "ItemKey",
    "Membership",
    "ReportBundle",
    "Span",
    "Study",
    "StudyItem",
]
