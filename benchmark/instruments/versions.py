"""Versions of an instrument: frozen once answered, changed only by copying to a new version.

Once a response under an instrument is final (an annotation submitted, a judge's answers stored)
the instrument is frozen (``freeze``): its questions can no longer change, so every stored answer
keeps the meaning it was given under. ``check_editable`` refuses changes to a frozen instrument;
``new_version`` copies it, questions and team included, under the next free version of its name.
"""

from __future__ import annotations

import copy

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark.models import Instrument, Question


def check_editable(instrument: Instrument) -> None:
    """Refuse changes to a frozen instrument, reading the database so a stale copy cannot slip through.

    Call it from a form's ``clean`` (the message then shows on the form) or from an admin's
    ``save_model``/``delete_model`` as a last guard.
    """
    frozen_at = instrument.frozen_at
    if frozen_at is None and instrument.pk is not None:
        frozen_at = Instrument.objects.filter(pk=instrument.pk).values_list("frozen_at", flat=True).first()
    if frozen_at is not None:
        since = timezone.localtime(frozen_at).strftime("%Y-%m-%d %H:%M")
        raise ValidationError(
            f"“{instrument}” is frozen since {since}: answers were given under it, so its questions "
            "can no longer change; make a new version to edit it.",
            code="frozen",
        )


def freeze(instrument: Instrument) -> None:
    """Mark the instrument frozen, once: the first call sets ``frozen_at``, later calls keep it."""
    if instrument.pk is None:
        raise ValueError("save the instrument before freezing it")
    now = timezone.now()
    if Instrument.objects.filter(pk=instrument.pk, frozen_at__isnull=True).update(frozen_at=now):
        instrument.frozen_at = now
    elif instrument.frozen_at is None:  # frozen meanwhile by someone else: read when
        instrument.frozen_at = Instrument.objects.values_list("frozen_at", flat=True).get(pk=instrument.pk)


def new_version(instrument: Instrument) -> Instrument:
    """An editable copy of ``instrument`` (same name, team, preset and questions) under the next free version.

    Copying the newest version gives ``version + 1``; copying an older one still never collides.
    """
    if instrument.pk is None:
        raise ValueError("save the instrument before copying it")
    questions = list(instrument.questions.all())
    for attempt in range(3):
        try:
            with transaction.atomic():
                copy_ = Instrument.objects.create(
                    name=instrument.name, version=next_version(instrument.name), preset=instrument.preset,
                    description=instrument.description, team_id=instrument.team_id,
                )
                Question.objects.bulk_create(copy_question(q, copy_) for q in questions)
                return copy_
        except IntegrityError:  # another copy took the version meanwhile
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def next_version(name: str) -> int:
    """The version an instrument named ``name`` gets next (names are unique per version across teams)."""
    versions = Instrument.objects.filter(name=name).values_list("version", flat=True)
    return max(versions, default=0) + 1


_COPIED_FIELDS = (
    "key", "position", "kind", "prompt", "label", "help_text", "required", "scope", "rationale", "low", "high",
    "dimension", "truth",
)


def copy_question(question: Question, instrument: Instrument) -> Question:
    """An unsaved copy of ``question`` (its label and options too) in ``instrument``."""
    fields = {name: getattr(question, name) for name in _COPIED_FIELDS}
    return Question(instrument=instrument, options=copy.deepcopy(question.options), **fields)
