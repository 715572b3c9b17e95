from .annotations import Annotation, Answer, SocialAttribute, Span
from .reports import ReportBundle
from .schemes import Question, Scheme
from .studies import Assignment, ItemKey, Membership, Study, StudyItem

__all__ = [
    "Annotation",
    "Answer",
    "Assignment",
    "ItemKey",
    "Membership",
    "Question",
    "ReportBundle",
    "Scheme",
    "SocialAttribute",
    "Span",
    "Study",
    "StudyItem",
]
