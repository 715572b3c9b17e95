"""Attention and gold checks that act: warn an annotator, then pause them, until a researcher restores them.

``annotator.quality`` scores the checks; this module acts on them. After each submission of a gold
or attention item (``act_on_checks``, called by the submit view), the member's **failed checks since
they were last restored** (``Membership.restored_at``; all of them before any restore) are counted:

- an attention item is failed when any of its known answers is missed, as ``annotator.quality``
  counts it; a gold item likewise (one known answer missed fails the check, while gold accuracy on
  the dashboard still counts each known answer);
- at ``Study.checks_warn_after`` failures the annotator is warned once (``warned_at``; the submit
  view shows the warning on their next page), and again after a restore if they reach it anew;
- at ``Study.checks_pause_after`` their assignments are paused (``paused_at``): no new claims
  (``annotator.training`` offers a paused member nothing) and any claim they hold is released, so
  its slot of k goes back to the pool (their drafts are kept). The pause is logged with no actor:
  Parley made it.

A researcher restores a paused annotator (``restore``, a POST on the dashboard): ``paused_at`` is
cleared, ``restored_at`` set, and the count starts again from there. Every change is logged in its
transaction (``annotator.study_log``), and each runs with the membership row locked, so two
submissions at once warn or pause once.

``check_records`` is each annotator's record for the dashboard (and the pool page): attention
checks passed and failed, gold accuracy, failures since the last restore, and the median time per
item (``Assignment.seconds_spent`` of submitted regular, gold and attention items).
"""

from __future__ import annotations

from collections import defaultdict
from statistics import median
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from . import study_log, training
from .assignment import take_back
from .models import Assignment, Membership, Study
from .quality import CHECK_KINDS, KeyedResult, keyed_results, study_quality


def act_on_checks(study: Study, annotator: AbstractBaseUser) -> str | None:
    """After a gold or attention submission: "paused", "warned", or None when nothing changed."""
    if study.checks_warn_after is None and study.checks_pause_after is None:
        return None
    with transaction.atomic():
        membership = Membership.objects.select_for_update().get(study=study, annotator=annotator)
        if membership.paused_at is not None:
            return None
        failed = failed_since_restore(keyed_results(study, CHECK_KINDS, annotator_id=annotator.pk), membership)
        now = timezone.now()
        if study.checks_pause_after is not None and failed >= study.checks_pause_after:
            membership.paused_at = now
            membership.save(update_fields=["paused_at"])
            # Taken back for good, as a researcher's release is: an open tab's autosave cannot retake them.
            released = take_back(Assignment.objects.filter(
                item__study=study, annotator=annotator, status=Assignment.Status.CLAIMED
            ))
            study_log.record(
                study, "checks-paused",
                f"Paused after {failed} failed checks (the study pauses at {study.checks_pause_after}); "
                f"{released} claimed item{'s' if released != 1 else ''} released.",
                annotator=annotator,
            )
            return "paused"
        warned_since_restore = membership.warned_at is not None and (
            membership.restored_at is None or membership.warned_at >= membership.restored_at
        )
        if study.checks_warn_after is not None and failed >= study.checks_warn_after and not warned_since_restore:
            membership.warned_at = now
            membership.save(update_fields=["warned_at"])
            study_log.record(study, "checks-warned",
                             f"Warned after {failed} failed checks (the study warns at {study.checks_warn_after}).",
                             annotator=annotator)
            return "warned"
    return None


def restore(study: Study, annotator: AbstractBaseUser, actor: AbstractBaseUser) -> bool:
    """Let a paused annotator claim items again; only checks failed from now on count. False if not paused."""
    with transaction.atomic():
        membership = Membership.objects.select_for_update().get(study=study, annotator=annotator)
        if membership.paused_at is None:
            return False
        membership.paused_at, membership.restored_at = None, timezone.now()
        membership.save(update_fields=["paused_at", "restored_at"])
        study_log.record(study, "checks-restored", "Restored after a pause for failed checks.", actor=actor,
                         annotator=annotator)
    return True


def failed_since_restore(results: list[KeyedResult], membership: Membership) -> int:
    """How many of ``results`` (one annotator's checks) failed since the membership was last restored."""
    since = membership.restored_at
    return sum(
        1 for result in results
        if not result.passed and (since is None or (result.submitted_at is not None and result.submitted_at > since))
    )


def check_records(study: Study) -> dict[int, dict[str, Any]]:
    """Each member's check record by user id, in six queries."""
    memberships = list(Membership.objects.filter(study=study).select_related("annotator"))
    results = keyed_results(study, CHECK_KINDS)
    figures = study_quality(study, results)
    checks: defaultdict[int, list[KeyedResult]] = defaultdict(list)
    for result in results:
        checks[result.annotator_id].append(result)
    seconds: defaultdict[int, list[int]] = defaultdict(list)
    for annotator_id, spent in (
        Assignment.objects.filter(item__study=study, status=Assignment.Status.SUBMITTED)
        .exclude(item__kind__in=training.BEFORE_REGULAR).values_list("annotator_id", "seconds_spent")
    ):
        seconds[annotator_id].append(spent)
    records = {}
    for membership in memberships:
        user_id = membership.annotator_id
        quality = figures.get(user_id)
        accuracy = quality.gold_accuracy if quality else None
        records[user_id] = {
            "user_id": user_id,
            "name": membership.annotator.get_username(),
            "attention_passed": quality.attention_passed if quality else 0,
            "attention_failed": quality.attention_failed if quality else 0,
            "gold_correct": quality.gold_correct if quality else 0,
            "gold_checked": quality.gold_checked if quality else 0,
            "gold_accuracy": None if accuracy is None else round(100 * accuracy),
            "failed_since_restore": failed_since_restore(checks[user_id], membership),
            "median_seconds": round(median(seconds[user_id])) if seconds[user_id] else None,
            "warned_at": membership.warned_at,
            "paused_at": membership.paused_at,
            "restored_at": membership.restored_at,
            "qualification": qualification_label(study, membership),
        }
    return records


def qualification_label(study: Study, membership: Membership) -> str:
    """Where the member stands on qualification, in a few words ("" when the study has none)."""
    if membership.disqualified_at is not None:
        return "did not qualify"
    if membership.qualified_at is not None:
        return f"qualified (attempt {membership.qualification_attempts})"
    if study.qualification_pass_mark is None:
        return ""
    if membership.qualification_attempts:
        return f"{membership.qualification_attempts} attempt failed, may retry"
    return "not yet qualified"



def pool_cells(study: Study, memberships: list[Membership]) -> dict[int, str]:
    """The pool page's "Checks" column: each member's check record in a few words."""
    cells = {}
    for user_id, record in check_records(study).items():
        passed, failed = record["attention_passed"], record["attention_failed"]
        parts = []
        if passed or failed:
            parts.append(f"attention {passed}/{passed + failed}")
        if record["gold_accuracy"] is not None:
            parts.append(f"gold {record['gold_accuracy']} %")
        if record["failed_since_restore"]:
            parts.append(f"{record['failed_since_restore']} failed since restored" if record["restored_at"]
                         else f"{record['failed_since_restore']} failed")
        if record["qualification"]:
            parts.append(record["qualification"])
        cells[user_id] = ", ".join(parts)
    return cells
