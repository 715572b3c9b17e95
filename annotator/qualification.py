"""Scoring a qualification attempt, and the second attempt.

An attempt is scored once every qualification item of the study has a submitted answer for it
(``annotator.training`` says when): the score is the share of the items' known answers the
annotator matched (``annotator.quality.matches``, as gold accuracy is counted; a question left
unanswered is a miss). At or above ``Study.qualification_pass_mark`` percent the annotator is
qualified; below it, if the study allows a second attempt and this was the first, they may start
one; otherwise they are disqualified and their participation ends (thanks, and for a crowd worker
the study's screen-out code). An item with no known answers adds nothing; an attempt with none at
all passes, as nothing in it could be missed.

**The second attempt** is the same items again, each as a new annotation version of the same
assignment, starting empty. Why versions rather than new items or assignments: an annotator holds
an item once (the database's unique assignment), versions already keep every earlier answer (so
the first attempt stays on record, superseded, for the researcher), and the score of an attempt is
then simply that of the latest submitted versions. The correct answers of qualification items are
never shown, so the second attempt is a real one.

``settle`` locks the annotator's membership row, works the stage out again and scores only an
attempt that is finished and not yet scored, so two tabs submitting the last items at once, or a
submit and a page load, score it once and log it once.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from . import drafts, study_log, training
from .models import Assignment, Membership, Study
from .quality import keyed_results


def settle(study: Study, annotator: AbstractBaseUser) -> str | None:
    """Score the annotator's finished, unscored attempt: "qualified", "retry" (a second attempt may be
    started) or "disqualified"; None when there was nothing to score."""
    with transaction.atomic():
        membership = _locked(study, annotator)
        current = training.stage(study, annotator, membership)
        if current.name != "unscored":
            return None
        matched, checked = score(study, annotator)
        percent = round(100 * matched / checked) if checked else 100
        membership.qualification_attempts = current.attempt
        now = timezone.now()
        if 100 * matched >= study.qualification_pass_mark * checked:
            outcome, membership.qualified_at = "qualified", now
        elif current.attempt < training.allowed_attempts(study):
            outcome = "retry"
        else:
            outcome, membership.disqualified_at = "disqualified", now
        membership.save(update_fields=["qualification_attempts", "qualified_at", "disqualified_at"])
        said = {"qualified": "passed", "retry": "may try once more",
                "disqualified": "did not pass; participation ended"}
        study_log.record(
            study, f"qualification-{outcome}",
            f"Qualification attempt {current.attempt}: {matched} of {checked} known answers matched ({percent} %, "
            f"pass mark {study.qualification_pass_mark} %): {said[outcome]}.",
            annotator=annotator,
        )
    return outcome


def score(study: Study, annotator: AbstractBaseUser) -> tuple[int, int]:
    """(known answers matched, known answers) on the latest submitted versions of the qualification items."""
    results = keyed_results(study, (training.QUALIFICATION,), annotator_id=annotator.pk)
    return sum(result.matched for result in results), sum(result.checked for result in results)


def last_score(study: Study, annotator: AbstractBaseUser) -> int | None:
    """The score of the latest attempt in percent, for the page that says how it went."""
    matched, checked = score(study, annotator)
    return round(100 * matched / checked) if checked else None


def start_retry(study: Study, annotator: AbstractBaseUser) -> bool:
    """Open the second attempt: an empty new version of every qualification item. False when the annotator is
    not waiting to start one (already started in another tab, qualified, or not allowed)."""
    with transaction.atomic():
        membership = _locked(study, annotator)
        current = training.stage(study, annotator, membership)
        if current.name != "retry":
            return False
        held = Assignment.objects.filter(
            item__study=study, item__kind=training.QUALIFICATION, annotator=annotator
        ).order_by("item__position")
        for assignment in held:
            latest = assignment.annotations.order_by("-version").values_list("version", flat=True).first()
            drafts.start_edit(assignment, version=latest, copy=False)
        study_log.record(study, "qualification-second-attempt", f"Started qualification attempt {current.attempt}.",
                         actor=annotator, annotator=annotator)
    return True


def _locked(study: Study, annotator: AbstractBaseUser) -> Membership:
    return Membership.objects.select_for_update().get(study=study, annotator=annotator)
