from .annotations import Annotation, Span
from .crowd import CrowdWorker
from .curation import CuratedDecision, Curation
from .events import StudyEvent
from .external import ExternalAnnotator
from .reports import ReportBundle
from .studies import Assignment, Invitation, ItemKey, Membership, Study, StudyItem

__all__ = [
    "Annotation",
    "Assignment",
    "CrowdWorker",
    "CuratedDecision",
    "Curation",
    "ExternalAnnotator",
    "Invitation",
    "ItemKey",
    "Membership",
    "ReportBundle",
    "Span",
    "Study",
    "StudyEvent",
    "StudyItem",
]
