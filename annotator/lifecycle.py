"""A study's life after it is created: its settings, its phase, its items.

The rules, and why:

- **Settings** change where that is safe (``locked_fields`` says why where it is not). The seed cannot
  change once an item was claimed: it fixed the order annotators saw. The comprehension instrument cannot
  change once someone answered it, nor the qualification pass mark or retry once someone finished an
  attempt: the same test must be scored the same way for everyone. k can grow, and shrink only down to the
  most ratings (submitted or in progress) any regular item already has, so no rating is orphaned and no
  one's claim is pulled from under them. A lease change applies to new claims and to renewals.
- **Phase** (``Study.phase``): *open* takes claims; *paused* takes no new claims, but items already held
  can still be submitted, and people may still join; *closed* takes neither claims nor members, and its
  held (claimed, unsubmitted) assignments are taken back (``assignment.take_back``), their drafts kept:
  closing never deletes work. A closed study reopens as open.
- **Items** are added from the team's episodes not yet in the study, chosen with the create form's
  filters; shortening removes only regular items nobody has ever claimed, so no answer, draft or claim
  is lost, and says how many it could not remove.

Every change writes its line of the study's log (``annotator.study_log.record``) in its own transaction.
Closing locks every membership row of the study first, as a claim does (``annotator.assignment``), so a
claim either lands before the close (and is taken back) or sees the study closed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from benchmark.models import Episode

from . import study_log
from .assignment import live, take_back
from .models import Assignment, Membership, Study, StudyItem
from .windows import window_items

# The settings the settings page edits, in its order.
SETTINGS = (
    "title", "instructions", "overlap", "lease_minutes", "min_seconds_per_item", "max_annotators", "seed",
    "spans_need_rationale", "qualification_pass_mark", "qualification_retry", "checks_warn_after",
    "checks_pause_after", "crowd_link", "completion_code", "screen_out_code", "comprehension_instrument",
    "curators_blinded",
)

# How the settings page and the log name a setting (the model's own verbose name otherwise).
LABELS = {
    "overlap": "Overlap k", "lease_minutes": "Lease (minutes)",
    "min_seconds_per_item": "Minimum seconds per item", "seed": "Random seed",
    "spans_need_rationale": "Spans need a rationale (and errors a correction)",
    "qualification_pass_mark": "Qualification pass mark (%)",
    "qualification_retry": "Allow a second qualification attempt",
    "checks_warn_after": "Warn after failed checks", "checks_pause_after": "Pause after failed checks",
    "crowd_link": "Take annotators from a crowd link", "curators_blinded": "Blind curators",
}


class LifecycleError(ValueError):
    """A change that the study's state does not allow; the message says why, for the page."""


def locked_fields(study: Study) -> dict[str, str]:
    """Settings that cannot change now, each with the reason shown beside it."""
    locked = {}
    if Assignment.objects.filter(item__study=study).exists():
        locked["seed"] = "Items were already claimed: the seed fixed the order each annotator saw them in."
    members = Membership.objects.filter(study=study)
    if members.filter(Q(comprehension_failures__gt=0) | Q(comprehension_passed_at__isnull=False)).exists():
        locked["comprehension_instrument"] = (
            "Annotators already answered the comprehension questions: everyone must be asked the same ones."
        )
    if members.filter(qualification_attempts__gt=0).exists():
        reason = "Annotators already took the qualification: everyone must be scored the same way."
        locked["qualification_pass_mark"] = reason
        locked["qualification_retry"] = reason
    return locked


def fullest_item(study: Study) -> tuple[int, StudyItem | None]:
    """The most live ratings (submitted or claimed within the lease) any regular item has, and that item."""
    item = (
        study.items.filter(kind=StudyItem.Kind.REGULAR)
        .annotate(taken=Count("assignments", filter=live(timezone.now(), "assignments__")))
        .order_by("-taken", "position").first()
    )
    return (item.taken, item) if item is not None else (0, None)


def active_members(study: Study) -> int:
    return Membership.objects.filter(study=study, removed_at__isnull=True).count()


def update_settings(study: Study, changes: dict, *, actor: AbstractBaseUser) -> list[str]:
    """Apply ``changes`` (setting → new value) to ``study`` and log them; the sentences of what changed.

    The locks and bounds are read again under the study's row lock, so a change that became unsafe since the
    form was shown (an item was claimed meanwhile) is refused with its reason, as ``LifecycleError``.
    """
    with transaction.atomic():
        current = Study.objects.select_for_update().get(pk=study.pk)
        changed = {name: value for name, value in changes.items() if getattr(current, name) != value}
        locked = locked_fields(current)
        for name in changed:
            if name in locked:
                raise LifecycleError(f"{label(name)}: {locked[name]}")
        if "overlap" in changed:
            problem = overlap_problem(current, changed["overlap"])
            if problem:
                raise LifecycleError(problem)
        said = [_said(name, getattr(current, name), value) for name, value in changed.items()]
        for name, value in changed.items():
            setattr(current, name, value)
        if changed:
            current.save(update_fields=list(changed))
            study_log.record(current, "settings", "; ".join(said), actor=actor)
    for name, value in changed.items():
        setattr(study, name, value)
    return said


def overlap_problem(study: Study, overlap: int) -> str:
    """Why k cannot become ``overlap`` (empty when it can)."""
    taken, item = fullest_item(study)
    if item is not None and overlap < taken:
        return (f"Item {item.position + 1} already has {taken} ratings (submitted or in progress): k can shrink "
                f"only down to {taken}.")
    return ""


def label(name: str) -> str:
    return LABELS.get(name) or str(Study._meta.get_field(name).verbose_name).capitalize()


def _said(name: str, old: object, new: object) -> str:
    if name == "instructions":
        return "instructions edited"
    return f"{label(name)}: {_shown(old)} → {_shown(new)}"


def _shown(value: object) -> str:
    if value is None or value == "":
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# The phase

_MOVES = {  # action → (phases it starts from, what it does)
    "pause": (("open",), "paused"),
    "resume": (("paused",), "resumed"),
    "close": (("open", "paused"), "closed"),
    "reopen": (("closed",), "reopened"),
}


def change_phase(study: Study, action: str, *, actor: AbstractBaseUser) -> str:
    """Pause, resume, close or reopen ``study``; the sentence logged. ``LifecycleError`` if it cannot."""
    if action not in _MOVES:
        raise LifecycleError(f"Unknown action {action!r}: pause, resume, close or reopen.")
    starts, done = _MOVES[action]
    with transaction.atomic():
        if action == "close":  # a claim locks its membership first: see the module's docstring
            list(Membership.objects.select_for_update().filter(study=study).values_list("pk"))
        current = Study.objects.select_for_update().get(pk=study.pk)
        if current.phase not in starts:
            raise LifecycleError(f"The study is {current.phase}: it cannot be {done}.")
        current.is_open = action in ("resume", "reopen")
        current.closed_at = timezone.now() if action == "close" else None
        current.save(update_fields=["is_open", "closed_at"])
        detail = f"Study {done}."
        if action == "close":
            released = take_back(Assignment.objects.filter(item__study=current, status=Assignment.Status.CLAIMED))
            if released:
                detail += f" {released} item{'s' if released != 1 else ''} in progress released (drafts kept)."
        study_log.record(current, action, detail, actor=actor)
    study.is_open, study.closed_at = current.is_open, current.closed_at
    return detail


# Items


@dataclass(frozen=True)
class ItemsAdded:
    added: int
    already_in: int  # matching episodes the study already had


def candidate_episodes(study: Study, episodes: QuerySet[Episode]) -> QuerySet[Episode]:
    """Of ``episodes``, the study's team's that are not in the study yet (as a whole-episode item or window)."""
    return episodes.filter(team=study.team).exclude(study_items__study=study)


def add_items(
    study: Study, episodes: QuerySet[Episode], *, limit: int | None, seed: int, actor: AbstractBaseUser
) -> ItemsAdded:
    """Add the team's ``episodes`` not yet in the study as regular items, sampled down to ``limit`` with ``seed``.

    A study that rates windows (ProMediate) gets the windows of the new episodes. A study whose items compare
    two episodes is refused: which pairs to make is the create form's choice, not one to make here.
    """
    if study.items.filter(compared_episode__isnull=False).exists():
        raise LifecycleError("This study compares pairs of episodes; add pairs by creating a new study.")
    fresh = list(candidate_episodes(study, episodes).order_by("pk").values_list("pk", flat=True))
    already = episodes.filter(team=study.team).count() - len(fresh)
    rng = random.Random(seed)
    if limit is not None and limit < len(fresh):
        fresh = sorted(rng.sample(fresh, limit))
    if not fresh:
        raise LifecycleError("No episode matches that the study does not already have.")
    windowed = window_items(study.instrument.preset, Episode.objects.filter(pk__in=fresh).order_by("pk"), rng=rng)
    values = windowed if windowed is not None else [{"episode_id": pk} for pk in fresh]
    if not values:
        raise LifecycleError("None of these episodes gives an item this study's instrument can rate.")
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).exists()  # two adds cannot take the same positions
        last = study.items.aggregate(last=Max("position"))["last"]
        start = 0 if last is None else last + 1
        StudyItem.objects.bulk_create(
            StudyItem(study=study, position=start + offset, **fields) for offset, fields in enumerate(values)
        )
        study_log.record(study, "items-added", f"{len(values)} item{'s' if len(values) != 1 else ''} added "
                         f"from {len(fresh)} episode{'s' if len(fresh) != 1 else ''}.", actor=actor)
    return ItemsAdded(added=len(values), already_in=already)


@dataclass(frozen=True)
class ItemsRemoved:
    asked: int
    removed: int
    kept: int  # how many of those asked could not be removed: every other regular item was claimed


def shorten(study: Study, count: int, *, actor: AbstractBaseUser) -> ItemsRemoved:
    """Remove up to ``count`` regular items, the last ones first, of those nobody ever claimed.

    Items are locked before they are checked and removed, as a claim locks the item before it takes it, so an
    item claimed meanwhile is kept.
    """
    regular = study.items.filter(kind=StudyItem.Kind.REGULAR)
    with transaction.atomic():
        chosen = _unclaimed(regular, count)
        if chosen:
            StudyItem.objects.filter(pk__in=chosen).delete()
            study_log.record(study, "items-removed", f"{len(chosen)} unclaimed item{'s' if len(chosen) != 1 else ''} "
                             f"removed ({count} asked).", actor=actor)
    return ItemsRemoved(asked=count, removed=len(chosen), kept=count - len(chosen))


def removable(study: Study) -> int:
    """How many regular items nobody ever claimed (what shortening could remove)."""
    return study.items.filter(kind=StudyItem.Kind.REGULAR, assignments__isnull=True, curation__isnull=True).count()


def _unclaimed(regular: QuerySet[StudyItem], count: int) -> list[int]:
    """Lock the last regular items one by one and keep the first ``count`` nobody ever claimed."""
    chosen: list[int] = []
    unclaimed = regular.filter(assignments__isnull=True, curation__isnull=True).order_by("-position")
    for item_id in unclaimed.values_list("pk", flat=True):
        if len(chosen) == count:
            break
        locked = StudyItem.objects.select_for_update().filter(pk=item_id)
        if locked.exists() and not Assignment.objects.filter(item_id=item_id).exists():
            chosen.append(item_id)
    return chosen
