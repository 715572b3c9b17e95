"""A study's log: every change to a study, with who made it and when (``StudyEvent``).

Every page, command and task that changes a study after it is created (its settings, its phase, its
items, its pool, an annotator's standing, a curation) writes one event through ``record`` in the same
transaction as the change, so the log never tells of a change that was rolled back. ``actor`` is the
person who made it, or None when Parley did (a check that paused an annotator); ``annotator`` the one
the change was about. ``action`` is a short slug, ``detail`` a sentence the study's log page shows.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from .models import Study, StudyEvent


def record(
    study: Study, action: str, detail: str = "", *, actor: AbstractBaseUser | None = None,
    annotator: AbstractBaseUser | None = None,
) -> StudyEvent:
    """Log one change to ``study``; call it inside the change's transaction."""
    return StudyEvent.objects.create(
        study=study, action=action, detail=detail,
        actor=actor if actor is not None and actor.is_authenticated else None, annotator=annotator,
    )


def events(study: Study, limit: int | None = None) -> list[StudyEvent]:
    """The study's log, newest first, with who made each change and whom it was about."""
    rows = StudyEvent.objects.filter(study=study).select_related("actor", "annotator").order_by("-at", "-pk")
    return list(rows[:limit] if limit else rows)
