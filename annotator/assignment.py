"""Who gets which item of a study, and when a claim lapses.

The rules:

- Each regular item is rated by exactly ``study.overlap`` (k) different annotators. A slot is
  taken by a *live* assignment: a submitted one, or a claim whose lease has not run out. Only
  submissions count toward k, but a live claim reserves its slot, so that no more than k people
  ever work on an item at once. A claim whose lease ran out frees its slot at once: nothing has to
  mark it released first.
- Gold and attention items are for quality control: every member of the study gets each of them,
  and they neither count toward nor take a slot of k. Training and qualification items are for
  everyone too, and come first, in study order (``annotator.training``: its stages decide what an
  annotator is offered, and give none to a member paused by failed checks or disqualified).
- An annotator never holds the same item twice (the database's unique constraint on item and
  annotator); a released item is not offered to them again, though ``renew`` gives it back while
  its slot is still free (an open tab that autosaves after a pause).
- An item reserved for one annotator (``StudyItem.reviewer``: a span review is for the other annotator of
  the span, ``annotator.span_review``) is offered to them alone.
- Each annotator walks the items in their own order: a hash of the study's seed, their id and the
  item's id, so it is random across annotators, reproducible, and stable when items are added.
  Gold and attention items are shuffled in with the regular ones, so they turn up spread across
  the queue rather than in a block.

A study that is paused or closed takes no new claims; a paused study's held items can still be
submitted. Closing a study, removing an annotator, and a researcher's release or reassignment take
claims back (``take_back``): the assignment is released with a lease that ends when it was claimed,
which no lapsed lease can have, and such a claim is never retaken by ``renew`` or a submit. A removed
annotator (``Membership.removed_at``) gets no more items.

Claims are atomic. The candidate item's row is locked (``SELECT ... FOR UPDATE`` on PostgreSQL),
its live assignments are counted again and the assignment is created only if a slot is left;
otherwise the next candidate is tried. The annotator's membership row is locked first, so one
annotator's two tabs cannot claim two items at once. Renewing and submitting lock the
assignment's row, then its item's. Every path takes its locks in the order membership or
assignment, then item, so none can deadlock another.

SQLite has no row locks; there each transaction takes the database's single write lock as it
begins (waiting out the busy timeout), so claims run one after another. Call ``claim_next``
outside any open transaction, so that each attempt commits, and releases its locks, on its own.
"""

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from . import training
from .models import Assignment, Membership, Study, StudyItem

QUALITY_KINDS = (StudyItem.Kind.GOLD, StudyItem.Kind.ATTENTION)
FOR_EVERYONE = (*QUALITY_KINDS, *training.BEFORE_REGULAR)  # items every member gets, outside k


class SlotTaken(Exception):
    """The item's slot went to someone else after this annotator's lease ran out."""

    def __init__(self, message: str = "", assignment: Assignment | None = None) -> None:
        super().__init__(
            message
            or "Your time on this item ran out and it has gone to another annotator, so your answers for it "
            "cannot be saved. Please continue with your next item."
        )
        self.assignment = assignment


def live(now: datetime, prefix: str = "") -> Q:
    """Assignments that hold a slot at ``now``: submitted, or claimed with the lease still running.

    ``prefix`` reaches them through a relation, e.g. ``"assignments__"`` from ``StudyItem``.
    """
    return Q(**{f"{prefix}status": Assignment.Status.SUBMITTED}) | Q(
        **{f"{prefix}status": Assignment.Status.CLAIMED, f"{prefix}lease_expires_at__gte": now}
    )


def item_order(study: Study, annotator_id: int, item_ids: list[int]) -> list[int]:
    """``item_ids`` in the annotator's own order for this study.

    Each item is ranked by a BLAKE2 hash of (seed, annotator, item): unlike Python's ``hash()`` it
    is the same in every process, and an item's rank does not depend on the other items.
    """

    def rank(item_id: int) -> tuple[bytes, int]:
        key = f"{study.seed}:{annotator_id}:{item_id}".encode()
        return hashlib.blake2b(key, digest_size=8).digest(), item_id

    return sorted(item_ids, key=rank)


def claim_next(study: Study, annotator: AbstractBaseUser, *, now: datetime | None = None) -> Assignment | None:
    """The annotator's current item: the live claim they hold, or a newly claimed one.

    A new claim is the first item in the annotator's order that has a free slot and that they
    never had. Returns None when the study is paused (and they hold nothing) or closed, when they were removed,
    or when nothing is left for them; raises
    ``PermissionDenied`` for someone outside the study's pool.
    """
    now = now or timezone.now()
    membership = Membership.objects.filter(study=study, annotator=annotator).first()
    if membership is None:
        raise PermissionDenied("You are not an annotator in this study.")
    if membership.removed_at is not None:
        return None
    held = _held_claim(study, annotator, now)
    if held is not None:  # in a paused study too: held items can still be submitted
        return held
    if not study.is_open:
        return None
    stage = training.stage(study, annotator, membership)
    if stage.resume is not None:  # a lapsed training claim, a second qualification attempt's draft
        return renew(Assignment.objects.select_related("item").get(pk=stage.resume), now=now)
    rows = list(_claimable(study, annotator, now).values_list("pk", "kind", "position"))
    candidates = {pk: kind for pk, kind, _ in rows}
    for item_id in training.queue(stage, rows, lambda ids: item_order(study, annotator.pk, ids)):
        assignment = _claim(study, annotator, item_id, candidates[item_id], now)
        if assignment is not None:
            return assignment
    return None


def renew(assignment: Assignment, *, now: datetime | None = None) -> Assignment:
    """Extend the lease after activity (an autosave); take back a lapsed claim whose slot is free.

    A submitted assignment is returned as it is: its slot is held for good. Raises ``SlotTaken``
    when the lease ran out and the slot has gone to someone else (the claim is then released).
    The assignment passed in is updated in place and returned.
    """
    now = now or timezone.now()
    with transaction.atomic():
        _hold(assignment, now)
    if assignment.status == Assignment.Status.RELEASED:
        raise SlotTaken(_why_released(assignment), assignment=assignment)
    return assignment


def mark_submitted(assignment: Assignment, *, now: datetime | None = None) -> None:
    """Record the submission, holding the slot first exactly as ``renew`` does.

    Raises ``SlotTaken``, without recording a submission, if the slot went to someone else. Submitting again
    (an edited annotation) keeps the first ``submitted_at``.
    """
    now = now or timezone.now()
    with transaction.atomic():
        _hold(assignment, now, submit=True)
    if assignment.status == Assignment.Status.RELEASED:
        raise SlotTaken(_why_released(assignment), assignment=assignment)


TAKEN_BACK = (
    "A researcher took this item back (the study was closed, or your items were released or reassigned), so your "
    "answers for it cannot be saved; your draft is kept."
)


def taken_back(assignment: Assignment) -> bool:
    """Whether a researcher took the claim back (``take_back``), rather than its lease running out."""
    return assignment.status == Assignment.Status.RELEASED and assignment.lease_expires_at <= assignment.claimed_at


def take_back(claims: QuerySet[Assignment]) -> int:
    """Release ``claims`` (unsubmitted) for good: a lease that ends when it began marks them; their drafts stay.

    Call it in the transaction that made the change, after locking what stops new claims (the membership rows).
    """
    return claims.exclude(status=Assignment.Status.SUBMITTED).update(
        status=Assignment.Status.RELEASED, lease_expires_at=F("claimed_at")
    )


def _why_released(assignment: Assignment) -> str:
    return TAKEN_BACK if taken_back(assignment) else ""


def _active(study: Study, annotator: AbstractBaseUser) -> bool:
    """Whether the annotator may claim: not removed from the study (read again, after any lock)."""
    return Membership.objects.filter(study=study, annotator=annotator, removed_at__isnull=True).exists()


def remaining_for(study: Study, annotator: AbstractBaseUser, *, now: datetime | None = None) -> int:
    """How many more items the annotator could still claim (not counting a claim they hold now).

    An upper bound: others may fill the free slots first. Zero for someone outside the pool, paused,
    disqualified or waiting to start a second qualification attempt; it does not look at whether the
    study is open.
    """
    now = now or timezone.now()
    membership = Membership.objects.filter(study=study, annotator=annotator).first()
    if membership is None or not training.stage(study, annotator, membership).offers_items:
        return 0
    return _claimable(study, annotator, now).count()


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's work in a study, counting every kind of item (gold and attention too)."""

    submitted: int = 0
    in_progress: int = 0
    seconds_spent: int = 0
    remaining: int = 0


@dataclass(frozen=True)
class StudyProgress:
    """Where a study stands.

    The study-wide numbers are about regular items, the ones rated k times: ``items`` of them,
    ``items_complete`` with k submissions, ``submitted`` ratings of ``slots`` (items × k) and
    ``in_progress`` live claims. ``items_short`` lists the regular items with fewer than k
    submissions and their count, in study order. Gold and attention items are counted apart
    (``quality_items``, ``quality_submitted``). ``per_annotator`` maps each member's user id (and
    anyone else holding assignments) to their ``AnnotatorProgress``.
    """

    items: int
    items_complete: int
    submitted: int
    in_progress: int
    items_short: list[tuple[StudyItem, int]]
    per_annotator: dict[int, AnnotatorProgress]
    overlap: int = 1
    quality_items: int = 0
    quality_submitted: int = 0
    now: datetime = field(default_factory=timezone.now)

    @property
    def slots(self) -> int:
        return self.items * self.overlap


def progress(study: Study, *, now: datetime | None = None) -> StudyProgress:
    """Counts for the dashboard in three queries, however many items and annotators there are."""
    now = now or timezone.now()
    claimed_live = Q(assignments__status=Assignment.Status.CLAIMED, assignments__lease_expires_at__gte=now)
    items = list(
        study.items.select_related("episode")
        .annotate(
            submitted_count=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
            claimed_count=Count("assignments", filter=claimed_live),
        )
        .order_by("position")
    )
    members = set(Membership.objects.filter(study=study).values_list("annotator_id", flat=True))
    rows = Assignment.objects.filter(item__study=study).values_list(
        "annotator_id", "item_id", "status", "lease_expires_at", "seconds_spent"
    )

    regular = [item for item in items if item.kind == StudyItem.Kind.REGULAR]
    quality = [item for item in items if item.kind != StudyItem.Kind.REGULAR]
    claimable = {item.pk for item in quality} | {
        item.pk for item in regular if item.submitted_count + item.claimed_count < study.overlap
    }

    reserved = {item.pk: item.reviewer_id for item in items if item.reviewer_id is not None}
    tallies: defaultdict[int, Counter[str]] = defaultdict(Counter)
    for annotator_id in members:
        tallies[annotator_id] = Counter()
    for annotator_id, item_id, status, lease_expires_at, seconds_spent in rows:
        tally = tallies[annotator_id]
        tally["seconds_spent"] += seconds_spent
        tally["submitted"] += status == Assignment.Status.SUBMITTED
        tally["in_progress"] += status == Assignment.Status.CLAIMED and lease_expires_at >= now
        tally["had_claimable"] += item_id in claimable

    per_annotator = {
        annotator_id: AnnotatorProgress(
            submitted=tally["submitted"],
            in_progress=tally["in_progress"],
            seconds_spent=tally["seconds_spent"],
            remaining=(
                _open_to(claimable, reserved, annotator_id) - tally["had_claimable"] if annotator_id in members else 0
            ),
        )
        for annotator_id, tally in tallies.items()
    }
    return StudyProgress(
        items=len(regular),
        items_complete=sum(item.submitted_count >= study.overlap for item in regular),
        submitted=sum(item.submitted_count for item in regular),
        in_progress=sum(item.claimed_count for item in regular),
        items_short=[(item, item.submitted_count) for item in regular if item.submitted_count < study.overlap],
        per_annotator=per_annotator,
        overlap=study.overlap,
        quality_items=len(quality),
        quality_submitted=sum(item.submitted_count for item in quality),
        now=now,
    )


def _open_to(claimable: set[int], reserved: dict[int, int], annotator_id: int) -> int:
    """How many of the ``claimable`` items ``annotator_id`` may take: those reserved for no one or for them."""
    return sum(1 for item_id in claimable if reserved.get(item_id, annotator_id) == annotator_id)


def _held_claim(study: Study, annotator: AbstractBaseUser, now: datetime) -> Assignment | None:
    return (
        Assignment.objects.filter(
            item__study=study, annotator=annotator, status=Assignment.Status.CLAIMED, lease_expires_at__gte=now
        )
        .order_by("claimed_at", "pk")
        .first()
    )


def _claimable(study: Study, annotator: AbstractBaseUser, now: datetime) -> QuerySet[StudyItem]:
    """Items the annotator never had and that have a free slot (gold and attention always do): one query."""
    had = Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator)
    return (
        StudyItem.objects.filter(study=study)
        .filter(Q(reviewer__isnull=True) | Q(reviewer=annotator))
        .filter(~Exists(had))
        .annotate(live_count=Count("assignments", filter=live(now, "assignments__")))
        .filter(Q(kind__in=FOR_EVERYONE) | Q(live_count__lt=study.overlap))
    )


def _claim(
    study: Study, annotator: AbstractBaseUser, item_id: int, kind: str, now: datetime
) -> Assignment | None:
    """Claim one item if a slot is still free; the annotator's live claim if another request got one first.

    Locks the annotator's membership (one claim at a time per annotator) and then the item (one
    claim at a time per item), in that order everywhere, so two claims cannot deadlock.
    """
    with transaction.atomic():
        try:
            _lock(Membership.objects.filter(study=study, annotator=annotator))
        except Membership.DoesNotExist:
            raise PermissionDenied("You are no longer an annotator in this study.") from None
        held = _held_claim(study, annotator, now)
        if held is not None:
            return held
        # Read after the membership lock: closing a study and removing an annotator lock it first too.
        if not Study.objects.filter(pk=study.pk, is_open=True).exists() or not _active(study, annotator):
            return None
        try:
            _lock(StudyItem.objects.filter(pk=item_id))
        except StudyItem.DoesNotExist:  # a researcher shortened the study since the candidates were read
            return None
        if kind == StudyItem.Kind.REGULAR:
            taken = Assignment.objects.filter(live(now), item_id=item_id).count()
            if taken >= study.overlap:
                return None
        try:
            with transaction.atomic():
                return Assignment.objects.create(
                    item_id=item_id,
                    annotator=annotator,
                    status=Assignment.Status.CLAIMED,
                    claimed_at=now,
                    lease_expires_at=now + timedelta(minutes=study.lease_minutes),
                )
        except IntegrityError:
            # Unique (item, annotator): another tab claimed and submitted it since the candidates were read.
            return None


def _hold(assignment: Assignment, now: datetime, *, submit: bool = False) -> None:
    """Inside a transaction: make ``assignment`` hold its slot with a fresh lease (or submit it), or release it.

    Locks the assignment's row and then its item's (the order ``annotator.drafts`` uses too, so
    the two cannot deadlock) and reads the assignment again, so a concurrent claim, renewal or
    release is seen. A claim is (re)taken only if fewer than k *other* assignments are live; that
    check is made for live claims too, because a claimer whose clock ran ahead may have counted
    this lease as run out already.
    """
    current = _lock(Assignment.objects.filter(pk=assignment.pk))
    item = _lock(StudyItem.objects.select_related("study").filter(pk=assignment.item_id))
    assignment.status, assignment.lease_expires_at = current.status, current.lease_expires_at
    assignment.submitted_at = current.submitted_at
    if current.status == Assignment.Status.SUBMITTED or taken_back(current):
        return
    study = item.study
    if item.kind == StudyItem.Kind.REGULAR:
        others = Assignment.objects.filter(live(now), item_id=item.pk).exclude(pk=assignment.pk).count()
        if others >= study.overlap:
            if current.status != Assignment.Status.RELEASED:
                assignment.status = Assignment.Status.RELEASED
                assignment.save(update_fields=["status"])
            return
    assignment.status = Assignment.Status.SUBMITTED if submit else Assignment.Status.CLAIMED
    assignment.lease_expires_at = now + timedelta(minutes=study.lease_minutes)
    assignment.submitted_at = now if submit else None
    assignment.save(update_fields=["status", "lease_expires_at", "submitted_at"])


def _lock(rows: QuerySet) -> object:
    """Lock the one row of ``rows`` until the transaction ends, and return it.

    PostgreSQL locks just that row, in the mode that still lets other rows reference it (so
    saving an annotation or an item key does not wait). SQLite has no row locks and ignores
    ``select_for_update``; there every transaction takes the database's write lock as it begins
    (``transaction_mode: IMMEDIATE`` in ``config.settings``), which serialises claims as a whole.
    """
    features = connection.features
    return rows.select_for_update(
        of=("self",) if features.has_select_for_update_of else (),
        no_key=features.has_select_for_no_key_update,
    ).get()
