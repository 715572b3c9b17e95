from .annotations import Annotation, Answer, SocialAttribute, Span
from .schemes import Question, Scheme
from .studies import Assignment, ItemKey, Membership, Study, StudyItem

__all__ = [
    "Annotation",
    "Answer",
    "Assignment",
    "ItemKey",
    "Membership",
    "Question",
    "Scheme",
    "SocialAttribute",
    "Span",
    "Study",
    "StudyItem",
]
