"""The share of persistent disagreement in a span review study (SHREC's review step, ``annotator.span_review``).

Of the unmatched spans reviewed (a submitted answer to "Do you agree with this mark?"), the share the reviewer
disagreed with: SHREC reports 8.7 %. Only each assignment's latest submitted version counts, as everywhere in
the agreement report; a study that is not a review study has no entry (null).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from benchmark.models import Answer

from ..models import Annotation, Study, StudyItem

REVIEW_PRESET = "shrec-span-review"  # Instrument.preset of a review study's instrument (``annotator.span_review``)
AGREE = "agree"  # the review question's key
METHOD = (
    "persistent_disagreement = reviewed marks answered 'no' to 'Do you agree with this mark?' / reviewed marks; "
    "a mark is one annotator's span that the SHREC pairing left unmatched, reviewed by the episode's other "
    "annotator; each review's latest submitted version counts"
)


def review_outcome(study: Study, latest: QuerySet[Annotation]) -> dict[str, Any] | None:
    """``{"marks", "reviewed", "disagreed", "persistent_disagreement", "method"}`` for a review study, else None.

    ``latest``: the study's latest submitted annotation versions (``reports.build.latest_submitted``)."""
    if study.instrument.preset != REVIEW_PRESET:  # the instrument is read already: no query for other studies
        return None
    marks = StudyItem.objects.filter(study=study, reviewed_span__isnull=False).count()
    values = list(
        Answer.objects.filter(
            response__in=latest.filter(assignment__item__reviewed_span__isnull=False).values("response_id"),
            question__key=AGREE,
        ).values_list("value", flat=True)
    )
    disagreed = sum(value == "no" for value in values)
    return {
        "marks": marks,
        "reviewed": len(values),
        "disagreed": disagreed,
        "persistent_disagreement": disagreed / len(values) if values else None,
        "method": METHOD,
    }


def review_note(outcome: dict[str, Any] | None) -> list[str]:
    """The report's note on the review, in words (none for other studies)."""
    if outcome is None:
        return []
    if not outcome["reviewed"]:
        return [f"Span review: none of the {outcome['marks']} unmatched marks has been reviewed yet."]
    return [
        f"Span review: the reviewers disagreed with {outcome['disagreed']} of the {outcome['reviewed']} unmatched "
        f"marks they reviewed ({outcome['persistent_disagreement']:.1%} persistent disagreement; SHREC reports 8.7 %)."
    ]
