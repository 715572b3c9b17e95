"""A study's annotator pool after it is created: who is in it, how each stands, and what a researcher does to it.

- **Release** takes back an annotator's items in progress (``assignment.take_back``): the items go back to the
  pool for others, their drafts are kept, and the annotator is not offered them again.
- **Reassign** moves one item in progress to another active member, who has never had it (an annotator holds
  an item once: ``assignment``'s rule) and who gets a fresh lease; it respects k, since the item's slot passes
  from one to the other.
- **Remove** (``Membership.removed_at``): no more items, items in progress taken back; their submitted work is
  kept, counted in reports, and marked in exports and on the pool page ("removed on ...").
- **Reinstate** undoes a removal (if the pool has room).
- **Curators** are trusted annotators who may adjudicate items.
- **Invitations** by username (the person sees it on their annotator page and accepts) or by e-mail (a message
  with the study's join link; the invitation is accepted when someone joins with that address, or through the
  link's signed invitation).

Each action locks the annotator's membership row first, as a claim does, so a claim racing a release or
removal either lands first (and is taken back) or sees the change. Every action writes the study's log.

``annotator_rows`` builds one dict per member for the pool page; other parts add columns through
``register_column`` (a label and a function of the study and its memberships), without editing this module.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.core import signing
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from . import study_log
from .assignment import live, take_back
from .forms import join_team_as_annotators
from .models import Assignment, Invitation, Membership, Study, StudyItem
from .permissions import ANNOTATORS

STATUS_LABELS = {
    "active": "active",
    "curator": "curator",
    "paused": "paused by checks",
    "disqualified": "disqualified",
    "removed": "removed",
}

Column = Callable[[Study, list[Membership]], dict[int, str]]
_columns: dict[str, Column] = {}


class PoolError(ValueError):
    """An action the pool's state does not allow; the message says why."""


def register_column(label: str, column: Column) -> None:
    """Add a column to the pool page: ``column(study, memberships)`` gives each annotator's (user id) cell text."""
    _columns[label] = column


def columns() -> list[str]:
    return list(_columns)


def status(membership: Membership) -> str:
    """The member's standing, the most final first: removed, disqualified, paused by checks, curator, active."""
    if membership.removed_at:
        return "removed"
    if membership.disqualified_at:
        return "disqualified"
    if membership.paused_at:
        return "paused"
    return "curator" if membership.is_curator else "active"


def annotator_rows(study: Study) -> list[dict]:
    """One dict per member, in username order: what the pool page shows and acts on (see the module docstring).

    Keys: ``user``, ``membership``, ``status``, ``status_label``, ``submitted``, ``in_progress``,
    ``median_seconds`` (over submitted items; None before any), ``claimed`` (live claims, for reassigning) and
    ``columns`` (label → cell text, from ``register_column``). Three queries plus one per registered column.
    """
    now = timezone.now()
    memberships = list(Membership.objects.filter(study=study).select_related("annotator")
                       .order_by("annotator__username"))
    seconds: defaultdict[int, list[int]] = defaultdict(list)
    claimed: defaultdict[int, list[Assignment]] = defaultdict(list)
    assignments = (Assignment.objects.filter(item__study=study).filter(live(now))
                   .select_related("item").order_by("item__position"))
    for assignment in assignments:
        if assignment.status == Assignment.Status.SUBMITTED:
            seconds[assignment.annotator_id].append(assignment.seconds_spent)
        else:
            claimed[assignment.annotator_id].append(assignment)
    extra = {label: column(study, memberships) for label, column in _columns.items()}
    rows = []
    for membership in memberships:
        user_id = membership.annotator_id
        spent = seconds[user_id]
        median = round(statistics.median(spent)) if spent else None
        rows.append({
            "user": membership.annotator,
            "membership": membership,
            "status": status(membership),
            "status_label": STATUS_LABELS[status(membership)],
            "submitted": len(spent),
            "in_progress": len(claimed[user_id]),
            "median_seconds": median,
            "claimed": claimed[user_id],
            "columns": {label: cells.get(user_id, "") for label, cells in extra.items()},
        })
    return rows


def _member(study: Study, annotator_id: int) -> Membership:
    """Lock and return the annotator's membership (``PoolError`` if they are not in the pool)."""
    try:
        return Membership.objects.select_for_update().select_related("annotator").get(
            study=study, annotator_id=annotator_id)
    except Membership.DoesNotExist:
        raise PoolError("That person is not in this study's pool.") from None


def _items(count: int) -> str:
    return f"{count} item{'s' if count != 1 else ''}"


def release(study: Study, annotator_id: int, *, actor: AbstractBaseUser) -> int:
    """Take back the annotator's items in progress; how many."""
    with transaction.atomic():
        membership = _member(study, annotator_id)
        released = take_back(Assignment.objects.filter(
            item__study=study, annotator_id=annotator_id, status=Assignment.Status.CLAIMED))
        study_log.record(study, "released", f"{_items(released)} in progress released (drafts kept).",
                         actor=actor, annotator=membership.annotator)
    return released


def remove(study: Study, annotator_id: int, *, actor: AbstractBaseUser) -> int:
    """Remove the annotator from the pool: no more items, items in progress taken back; how many."""
    with transaction.atomic():
        membership = _member(study, annotator_id)
        if membership.removed_at:
            raise PoolError(f"{membership.annotator.get_username()} was already removed.")
        membership.removed_at = timezone.now()
        membership.save(update_fields=["removed_at"])
        released = take_back(Assignment.objects.filter(
            item__study=study, annotator_id=annotator_id, status=Assignment.Status.CLAIMED))
        study_log.record(study, "removed", f"Removed from the pool; {_items(released)} in progress released, "
                         "submitted work kept.", actor=actor, annotator=membership.annotator)
    return released


def reinstate(study: Study, annotator_id: int, *, actor: AbstractBaseUser) -> None:
    """Undo a removal: the annotator may take items again (their released items stay released)."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).exists()  # as ``admit``: one last place, one taker
        membership = _member(study, annotator_id)
        if not membership.removed_at:
            raise PoolError(f"{membership.annotator.get_username()} is in the pool.")
        if pool_is_full(study):
            raise PoolError("The pool is full: raise the most annotators in the settings first.")
        membership.removed_at = None
        membership.save(update_fields=["removed_at"])
        study_log.record(study, "reinstated", "Back in the pool.", actor=actor, annotator=membership.annotator)


def set_curator(study: Study, annotator_id: int, is_curator: bool, *, actor: AbstractBaseUser) -> None:
    with transaction.atomic():
        membership = _member(study, annotator_id)
        if is_curator and membership.removed_at:
            raise PoolError("A removed annotator cannot be a curator.")
        membership.is_curator = is_curator
        membership.save(update_fields=["is_curator"])
        study_log.record(study, "curator" if is_curator else "not-curator",
                         "Made a curator." if is_curator else "No longer a curator.",
                         actor=actor, annotator=membership.annotator)


def reassign(study: Study, assignment_id: int, to_id: int, *, actor: AbstractBaseUser) -> Assignment:
    """Move an item in progress to another active member; the new assignment. ``PoolError`` says why not."""
    now = timezone.now()
    with transaction.atomic():
        target = _member(study, to_id)
        if status(target) not in ("active", "curator"):
            raise PoolError(f"{target.annotator.get_username()} is {STATUS_LABELS[status(target)]}: "
                            "they cannot take items.")
        try:
            old = Assignment.objects.select_for_update().select_related("annotator").get(
                pk=assignment_id, item__study=study)
        except Assignment.DoesNotExist:
            raise PoolError("That item is not in this study.") from None
        if old.status != Assignment.Status.CLAIMED or old.lease_expires_at < now:
            raise PoolError("That item is no longer in progress: it was submitted, released or its lease ran out.")
        if old.annotator_id == to_id:
            raise PoolError("The item is already theirs.")
        item = StudyItem.objects.select_for_update().get(pk=old.item_id)
        if Assignment.objects.filter(item=item, annotator_id=to_id).exists():
            raise PoolError(f"{target.annotator.get_username()} already had item {item.position + 1}: an annotator "
                            "rates an item once.")
        if item.reviewer_id is not None and item.reviewer_id != to_id:
            raise PoolError(f"Item {item.position + 1} is reserved for its reviewer.")
        take_back(Assignment.objects.filter(pk=old.pk))
        # The slot passes from one to the other, so k holds; live() counts it again to be sure.
        if item.kind == StudyItem.Kind.REGULAR and Assignment.objects.filter(live(now), item=item).count() >= \
                study.overlap:
            raise PoolError(f"Item {item.position + 1} already has its k = {study.overlap} ratings.")
        try:
            with transaction.atomic():
                new = Assignment.objects.create(
                    item=item, annotator_id=to_id, status=Assignment.Status.CLAIMED, claimed_at=now,
                    lease_expires_at=now + timedelta(minutes=study.lease_minutes),
                )
        except IntegrityError:
            raise PoolError("They took that item meanwhile.") from None
        study_log.record(study, "reassigned", f"Item {item.position + 1} reassigned from "
                         f"{old.annotator.get_username()} to {target.annotator.get_username()}.",
                         actor=actor, annotator=target.annotator)
    return new


# Joining and invitations


def join_study(user: AbstractBaseUser, study: Study) -> bool:
    """Put ``user`` in the annotators group, the study's pool and its team's annotators (a researcher of
    the team stays a researcher); True if they were not in the pool yet."""
    group, _ = Group.objects.get_or_create(name=ANNOTATORS)
    user.groups.add(group)
    join_team_as_annotators(study.team, [user])
    _, joined = Membership.objects.get_or_create(study=study, annotator=user)
    if joined:
        study_log.record(study, "joined", "Joined the pool.", actor=user, annotator=user)
    return joined


def pool_is_full(study: Study) -> bool:
    """Whether the study's pool has reached its ``max_annotators`` (never, without one); a removed annotator
    frees their place."""
    return study.max_annotators is not None and study.memberships.filter(removed_at__isnull=True).count() >= \
        study.max_annotators


class PoolIsFull(Exception):
    """The last place went to someone else: nothing of this join is kept."""


def admit(user: AbstractBaseUser, study: Study) -> None:
    """Join ``user`` unless the pool is full (``PoolIsFull``); call it in a transaction. The study's row is
    locked first, so two people racing for the last place cannot both take it."""
    Study.objects.select_for_update().filter(pk=study.pk).exists()
    if pool_is_full(study) and not Membership.objects.filter(study=study, annotator=user).exists():
        raise PoolIsFull
    join_study(user, study)


def invite_user(study: Study, username: str, *, actor: AbstractBaseUser) -> Invitation:
    """Invite an existing account by username; they accept it on their annotator page."""
    user = get_user_model().objects.filter(is_active=True, **{get_user_model().USERNAME_FIELD: username}).first()
    if user is None:
        raise PoolError(f"No one has the username “{username}”.")
    membership = Membership.objects.filter(study=study, annotator=user).first()
    if membership is not None:
        raise PoolError(f"{username} was removed from the pool: reinstate them on this page instead."
                        if membership.removed_at else f"{username} is already in the pool.")
    with transaction.atomic():
        invitation, made = Invitation.objects.get_or_create(study=study, user=user, defaults={"invited_by": actor})
        if not made:
            raise PoolError(f"{username} was already invited.")
        study_log.record(study, "invited", f"{username} invited by username.", actor=actor, annotator=user)
    return invitation


def invite_email(study: Study, email: str, join_url: str, *, actor: AbstractBaseUser) -> Invitation:
    """Invite an address: an e-mail with the study's join link, carrying the signed invitation."""
    with transaction.atomic():
        invitation, made = Invitation.objects.get_or_create(study=study, email=email.lower(),
                                                            defaults={"invited_by": actor})
        if not made:
            raise PoolError(f"{email} was already invited.")
        study_log.record(study, "invited", f"{email} invited by e-mail.", actor=actor)
        link = f"{join_url}?invitation={signing.dumps(invitation.pk, salt=SALT)}"
        transaction.on_commit(lambda: send_mail(
            f"Invitation to annotate: {study.title}",
            f"You are invited to annotate conversations in the study “{study.title}”.\n\n"
            f"Open this link to join (you can create an account there):\n{link}\n",
            None, [email],
        ))
    return invitation


SALT = "annotator.invitation"


def signed_invitation(study: Study, token: str) -> Invitation | None:
    """The open invitation a join link's ``invitation`` parameter names, if it is genuine and for ``study``."""
    try:
        pk = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return None
    return Invitation.objects.filter(pk=pk, study=study, accepted_at__isnull=True).first()


def pending_for(user: AbstractBaseUser) -> list[Invitation]:
    """Open invitations to ``user``, by username or by their e-mail address, to studies still taking members."""
    email = getattr(user, "email", "")
    mine = Q(user=user) | (Q(email__iexact=email) if email else Q(pk__in=[]))
    return list(Invitation.objects.filter(mine, accepted_at__isnull=True, study__closed_at__isnull=True)
                .select_related("study").order_by("-created_at"))


def accept(invitation: Invitation, user: AbstractBaseUser) -> None:
    """Join ``user`` to the invitation's study and mark it accepted (``PoolError`` if closed or full)."""
    study = invitation.study
    if study.phase == "closed":
        raise PoolError("The study is closed and takes no one new.")
    try:
        with transaction.atomic():
            admit(user, study)
            mark_accepted(study, user, invitation)
    except PoolIsFull:
        raise PoolError("The study's pool is full.") from None


def mark_accepted(study: Study, user: AbstractBaseUser, invitation: Invitation | None = None) -> None:
    """After ``user`` joined ``study``: accept their invitations to it (this one, by username, by e-mail)."""
    email = getattr(user, "email", "")
    mine = Q(user=user) | (Q(email__iexact=email) if email else Q(pk__in=[]))
    if invitation is not None:
        mine |= Q(pk=invitation.pk)
    accepted = Invitation.objects.filter(mine, study=study, accepted_at__isnull=True)
    if invitation is not None and invitation.email and not email:  # they signed up from the e-mailed link
        user.email = invitation.email
        user.save(update_fields=["email"])
    if accepted.update(accepted_at=timezone.now()):
        study_log.record(study, "invitation-accepted", "Accepted the invitation.", actor=user, annotator=user)
