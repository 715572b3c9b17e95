"""Crowd annotators: people who come from a crowd platform's link (Prolific-style), with no account.

The link is the study's invite link under ``/annotate/crowd/<invite token>/`` with the platform's ids in
its query string (``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``, read by ``benchmark.recruiting``). The rules:

- A study takes crowd annotators only when ``Study.crowd_link`` is set, and new ones only while it is open and
  its pool is not full; a worker who already came may always come back (to finish, or to see their code).
- A new id gets an account made for it (no usable password, active so a session can hold it) that joins the
  pool exactly as an invited annotator does (``views.invites.admit``: the study's row is locked, so two people
  racing for the last place cannot both take it), and a ``CrowdWorker`` row that binds the id to this browser:
  the browser keeps a random token in a cookie of its own, the row only its SHA-256. It is all one transaction:
  of two requests racing with the same id, the database's unique constraint lets one make the worker; the other
  finds it and is let in only if it brought the same browser's token.
- The same id from another browser is refused (``TakenElsewhere``): the id is no secret, so it must not open
  someone else's work. The same browser coming back is signed in again and resumes where it was.
- When the study has a ``comprehension_instrument``, every member answers it before their first item
  (``comprehension_due``). Its questions with a correct answer (``kind.correct(options)``) must all be right;
  a wrong answer counts a failure and gives a second attempt; a second failure disqualifies the member
  (``Membership.disqualified_at``) and, for a crowd worker, ends with the study's screen-out code. The answers
  are not stored: only the count of failures and when the member passed.
- A worker with nothing left to take sees the study's completion code (``finish``); one disqualified, by the
  comprehension check or by the qualification items, the screen-out code (``screen_out``). Both are stamped
  once, so a reload shows the same page without moving the time.

Researchers see each worker's platform id and outcome in the study's export (``export_columns``): they pay by
it. Annotators never see anyone's id.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark.instruments.forms import InstrumentForm
from benchmark.instruments.kinds import get_kind
from benchmark.recruiting import ArrivalIds, digest, matches_digest

from . import study_log
from .models import CrowdWorker, Membership, Study
from .pool import PoolIsFull, admit

COOKIE_NAME = "parley_crowd_browser"
COOKIE_MAX_AGE = 60 * 60 * 24 * 60  # two months: longer than any crowd study stays open
COMPREHENSION_ATTEMPTS = 2


class Refused(Exception):
    """The link cannot let this person in; ``title`` and the message say why, politely, for the page."""

    status = 403
    title = "This link cannot be used"


class NotCrowdStudy(Refused):
    status = 404
    title = "This study does not take annotators from a crowd platform"


class LinkClosed(Refused):
    status = 410
    title = "This study is not taking anyone new"


class TakenElsewhere(Refused):
    status = 409
    title = "This participant id is already taking part in another browser"


class NotAdmitted(Refused):
    """Too many new accounts from this address: ``retry_after`` seconds to wait."""

    status = 429
    title = "Please wait a little"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def arrive(study: Study, ids: ArrivalIds, token: str, *, allow_new: Callable[[], Any] | None = None) -> CrowdWorker:
    """The worker with this id in ``study``, bound to the browser that holds ``token``; made if new.

    Raises a ``Refused`` (its message is for the page) when the study takes no crowd annotators, when a new
    id comes to a closed or full study, or when the id is bound to another browser. ``allow_new`` is asked
    before a new worker is made (the sign-up throttle); a falsy answer with ``retry_after`` refuses.
    """
    if not study.crowd_link:
        raise NotCrowdStudy("Check the link the study site gave you; if it is right, tell the researchers.")
    existing = _bound_worker(study, ids, token)
    if existing is not None:
        return existing
    if not study.is_open:
        raise LinkClosed("The study is closed or paused and takes no new annotators now. Please return the study "
                         "on the site that sent you here.")
    if allow_new is not None and not (verdict := allow_new()):
        raise NotAdmitted("Too many new annotators came from your address in a short time; try again later.",
                          getattr(verdict, "retry_after", 60))
    try:
        with transaction.atomic():
            user = get_user_model().objects.create_user(username=f"crowd-{secrets.token_hex(8)}", password=None)
            admit(user, study)
            worker = CrowdWorker.objects.create(
                study=study, participant_id=ids.participant_id, platform_study_id=ids.prolific_study_id,
                platform_session_id=ids.prolific_session_id, user=user, browser_token=digest(token),
            )
            study_log.record(study, "crowd-joined", f"A crowd annotator ({ids.participant_id}) joined from the "
                             "platform's link.", annotator=user)
    except (PoolIsFull, IntegrityError) as problem:
        # Another request with the same id made the worker first (perhaps taking the last place): this one is
        # let in only from the same browser.
        existing = _bound_worker(study, ids, token)
        if existing is not None:
            return existing
        if isinstance(problem, PoolIsFull):
            raise LinkClosed("The study has all the annotators it needs. Please return the study on the site that "
                             "sent you here.") from None
        raise
    return worker


def _bound_worker(study: Study, ids: ArrivalIds, token: str) -> CrowdWorker | None:
    """The study's worker with this id if this browser holds them; ``TakenElsewhere`` if another does."""
    worker = CrowdWorker.objects.select_related("user").filter(study=study, participant_id=ids.participant_id).first()
    if worker is None:
        return None
    if not matches_digest(worker.browser_token, token):
        raise TakenElsewhere(
            "Someone with this participant id is already annotating for this study in another browser. Please go "
            "on in the browser you started in; if that is not possible, contact the researchers through the study "
            "site."
        )
    return worker


def worker_of(user: AbstractBaseUser, study: Study) -> CrowdWorker | None:
    """``user``'s crowd worker row in ``study``, or None for an annotator with an account of their own."""
    if not user.is_authenticated:
        return None
    return CrowdWorker.objects.filter(user=user, study=study).first()


def is_crowd_account(user: AbstractBaseUser) -> bool:
    """Whether ``user`` is an account Parley made for a crowd worker (of any study)."""
    return user.is_authenticated and CrowdWorker.objects.filter(user=user).exists()


# The comprehension check


def comprehension_due(membership: Membership) -> bool:
    """Whether the member must pass the study's comprehension check before taking an item."""
    return (
        membership.study.comprehension_instrument_id is not None
        and membership.comprehension_passed_at is None
        and membership.disqualified_at is None
    )


def comprehension_form(study: Study, data: Any = None) -> InstrumentForm:
    """The comprehension questions as the one form that asks an instrument on a page (correct answers hidden)."""
    return InstrumentForm(study.comprehension_instrument, data)


@dataclass(frozen=True)
class Outcome:
    """What one comprehension attempt came to: ``passed``, ``retry`` (one wrong, one more attempt) or
    ``disqualified``; ``wrong`` is how many scored questions were answered wrongly."""

    result: str
    wrong: int = 0


def grade_comprehension(membership: Membership, form: InstrumentForm) -> Outcome:
    """Score a valid comprehension form and record the outcome on the membership, once.

    The membership's row is locked, so a double submit counts once; a member who already passed or was
    disqualified keeps that outcome whatever the form says.
    """
    wrong = sum(1 for question in form.questions if not _answered_right(question, form.cleaned_data.get(question.key)))
    now = timezone.now()
    with transaction.atomic():
        current = Membership.objects.select_for_update().select_related("study", "annotator").get(pk=membership.pk)
        if current.comprehension_passed_at is not None:
            outcome = Outcome("passed")
        elif current.disqualified_at is not None:
            outcome = Outcome("disqualified")
        elif not wrong:
            current.comprehension_passed_at = now
            current.save(update_fields=["comprehension_passed_at"])
            study_log.record(current.study, "comprehension-passed", "Passed the comprehension check.",
                             annotator=current.annotator)
            outcome = Outcome("passed")
        else:
            current.comprehension_failures += 1
            fields = ["comprehension_failures"]
            if current.comprehension_failures >= COMPREHENSION_ATTEMPTS:
                current.disqualified_at = now
                fields.append("disqualified_at")
            current.save(update_fields=fields)
            last = current.disqualified_at is not None
            study_log.record(
                current.study, "comprehension-failed",
                f"Failed the comprehension check (attempt {current.comprehension_failures}, {wrong} wrong)"
                + ("; no more items." if last else "; one more attempt."),
                annotator=current.annotator,
            )
            outcome = Outcome("disqualified" if last else "retry", wrong)
    membership.refresh_from_db()
    return outcome


def _answered_right(question: Any, answered: Any) -> bool:
    """Whether ``answered`` (the form's cleaned answer) is right; a question with no correct answer is not scored."""
    correct = get_kind(question.kind).correct(question.options)
    if correct is None:
        return True
    return isinstance(answered, tuple) and str(answered[0]) == str(correct)


# The end


def finish(worker: CrowdWorker) -> None:
    """Note that the worker was shown the completion code (the first time only)."""
    _stamp(worker, "finished_at")


def screen_out(worker: CrowdWorker) -> None:
    """Note that the worker was shown the screen-out code (the first time only)."""
    _stamp(worker, "screened_out_at")


def _stamp(worker: CrowdWorker, field: str) -> None:
    now = timezone.now()
    if CrowdWorker.objects.filter(pk=worker.pk, **{f"{field}__isnull": True}).update(**{field: now}):
        setattr(worker, field, now)


# The export


def export_columns(study: Study) -> dict[int, dict[str, str]]:
    """Per annotator's account id, the export's crowd columns: the platform's ``participant_id`` and the
    ``crowd_outcome`` (``screened_out``, ``finished`` or empty while they are at work)."""
    columns = {}
    for worker in CrowdWorker.objects.filter(study=study):
        outcome = "screened_out" if worker.screened_out_at else "finished" if worker.finished_at else ""
        columns[worker.user_id] = {"participant_id": worker.participant_id, "crowd_outcome": outcome}
    return columns


def pool_cells(study: Study, memberships: list[Membership]) -> dict[int, str]:
    """The pool page's "Platform id" column: a crowd worker's participant id (the researcher pays by it)."""
    return {user_id: columns["participant_id"] for user_id, columns in export_columns(study).items()}
