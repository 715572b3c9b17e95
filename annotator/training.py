"""Training and qualification before regular work: which stage an annotator is in, and what it offers.

The rules (``annotator.assignment.claim_next`` asks ``stage`` before every claim):

- **Training** items come first: every member takes all of them, in study order, before any other
  item; they are not limited by k. After each one is submitted the item page shows the correct
  answers (the item's ``ItemKey``\\ s) beside the annotator's, with the researcher's explanation
  (``feedback``), and a "Next" button.
- **Qualification** items come next, in study order, for everyone, not limited by k either. When
  every one is submitted, the attempt is scored (``annotator.qualification.settle``): the share of
  the known answers matched. At or above ``Study.qualification_pass_mark`` the annotator is
  qualified and regular items follow; below it they get a second attempt if the study allows one
  (the same items again, as new versions of the same assignments), else their participation ends.
  A study with qualification items and no pass mark asks them once and does not score them.
- **Regular** items, with gold and attention checks shuffled in, follow in the annotator's own order
  (``annotator.assignment.item_order``).
- A member paused by failed checks (``Membership.paused_at``, ``annotator.check_actions``) or who
  failed qualification (``disqualified_at``) gets no new item.
- A submitted training or qualification item cannot be edited: training answers are shown next to the
  correct ones, so an edit would only copy them, and an attempt is scored as it was submitted. The
  second attempt is the one way to answer a qualification item again.

Every stage is worked out from the rows (items, the annotator's assignments and annotation versions),
so two tabs, or a page opened after a lapse, always agree on where the annotator is.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Max, Q

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.targets import COLUMNS, Target
from benchmark.models import Answer

from .models import Annotation, Assignment, ItemKey, Membership, Study, StudyItem
from .quality import KnownAnswer, matches

TRAINING = StudyItem.Kind.TRAINING
QUALIFICATION = StudyItem.Kind.QUALIFICATION
BEFORE_REGULAR = (TRAINING, QUALIFICATION)

# Stages that offer items, and those that wait on something else.
OFFERING = ("training", "qualification", "regular")


@dataclass(frozen=True)
class Stage:
    """Where an annotator stands: ``name`` is training, qualification, regular (items offered), retry (a second
    qualification attempt may be started), unscored (an attempt finished, not scored yet), disqualified or
    paused. ``resume`` is an assignment of the stage to go back to (a lapsed claim, a second attempt's draft)."""

    name: str
    resume: int | None = None
    attempt: int = 1

    @property
    def offers_items(self) -> bool:
        return self.name in OFFERING


def stage(study: Study, annotator: AbstractBaseUser, membership: Membership | None = None) -> Stage:
    """The annotator's stage in ``study`` (two or three queries)."""
    membership = membership or Membership.objects.get(study=study, annotator=annotator)
    if membership.paused_at is not None:
        return Stage("paused")
    if membership.disqualified_at is not None:
        return Stage("disqualified")
    items = list(study.items.filter(kind__in=BEFORE_REGULAR).order_by("position").values_list("pk", "kind"))
    if not items:
        return Stage("regular")
    mine = _attempts(annotator, [pk for pk, _ in items])
    training = [pk for pk, kind in items if kind == TRAINING]
    pending = [pk for pk in training if mine[pk].submitted < 1]
    if pending:
        return Stage("training", resume=mine[pending[0]].assignment)
    qualification = [pk for pk, kind in items if kind == QUALIFICATION]
    if not qualification or membership.qualified_at is not None:
        return Stage("regular")
    scored = study.qualification_pass_mark is not None
    attempt = membership.qualification_attempts + 1 if scored else 1
    if scored and attempt > allowed_attempts(study):
        return Stage("disqualified")
    if attempt > 1 and not any(mine[pk].latest >= attempt for pk in qualification):
        return Stage("retry", attempt=attempt)
    pending = [pk for pk in qualification if mine[pk].submitted < attempt]
    if pending:
        return Stage("qualification", resume=mine[pending[0]].assignment, attempt=attempt)
    return Stage("unscored" if scored else "regular", attempt=attempt)


def allowed_attempts(study: Study) -> int:
    return 2 if study.qualification_retry else 1


def queue(current: Stage, rows: list[tuple[int, str, int]], order: Any) -> list[int]:
    """The claimable items ``rows`` (id, kind, position) the stage offers, in the order to try them.

    Training and qualification items go in study order; regular work in ``order(ids)``, the annotator's own.
    """
    if current.name in ("training", "qualification"):
        kind = TRAINING if current.name == "training" else QUALIFICATION
        return [pk for pk, item_kind, _ in sorted(rows, key=lambda row: row[2]) if item_kind == kind]
    if current.name == "regular":
        return order([pk for pk, kind, _ in rows if kind not in BEFORE_REGULAR])
    return []


def answers_final(item: StudyItem) -> bool:
    """Whether a submitted version of this item cannot be edited (training and qualification items)."""
    return item.kind in BEFORE_REGULAR


@dataclass
class _Tries:
    assignment: int | None = None
    submitted: int = 0  # the highest submitted version: how many attempts answered it
    latest: int = 0  # the highest version, draft or submitted


def _attempts(annotator: AbstractBaseUser, item_ids: list[int]) -> defaultdict[int, _Tries]:
    tries: defaultdict[int, _Tries] = defaultdict(_Tries)
    rows = (
        Assignment.objects.filter(annotator=annotator, item_id__in=item_ids)
        .annotate(
            latest=Max("annotations__version"),
            submitted_version=Max("annotations__version",
                                  filter=Q(annotations__status=Annotation.Status.SUBMITTED)),
        )
        .values_list("pk", "item_id", "status", "latest", "submitted_version")
    )
    for pk, item_id, status, latest, submitted_version in rows:
        done = status == Assignment.Status.SUBMITTED
        tries[item_id] = _Tries(pk, (submitted_version or 1) if done else 0, latest or 0)
    return tries


# The feedback after a training item


@dataclass(frozen=True)
class FeedbackRow:
    question: str
    about: str
    yours: str
    correct: str
    matched: bool


@dataclass(frozen=True)
class Feedback:
    """A submitted training item's correct answers beside the annotator's, and the researcher's explanation."""

    rows: list[FeedbackRow] = field(default_factory=list)
    explanation: str = ""

    @property
    def matched(self) -> int:
        return sum(row.matched for row in self.rows)


def feedback(assignment: Assignment, seat_names: dict[int, str]) -> Feedback | None:
    """For a training item whose latest version is submitted: each known answer with the annotator's answer to
    the same question and target (``seat_names``: a seat's character, as the page shows it); else None."""
    item = assignment.item
    if item.kind != TRAINING:
        return None
    latest = assignment.annotations.order_by("-version").first()
    if latest is None or latest.status != Annotation.Status.SUBMITTED:
        return None
    given = {
        (question_id, Target.from_columns(*target)): (value, number)
        for question_id, value, number, *target in Answer.objects.filter(response_id=latest.response_id)
        .values_list("question_id", "value", "number", *COLUMNS)
    }
    rows = []
    for key in ItemKey.objects.filter(item=item).select_related("question").order_by(
        "question__position", "seat_position"
    ):
        question = key.question
        answer = given.get((question.pk, Target.from_columns(seat_position=key.seat_position)))
        labels = dict(get_kind(question.kind).participant_choices(question))
        rows.append(FeedbackRow(
            question=question.prompt,
            about=seat_names.get(key.seat_position, f"seat {key.seat_position + 1}")
            if key.seat_position is not None else "",
            yours=labels.get(answer[0], answer[0]) if answer else "(no answer)",
            correct=labels.get(key.value, key.value),
            matched=answer is not None and matches(KnownAnswer(key.value, key.tolerance), *answer),
        ))
    return Feedback(rows, item.explanation)
