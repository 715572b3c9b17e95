"""Changing an instrument's questions from the builder, each change in one transaction that first locks the
instrument and refuses one anyone answered (frozen, ``benchmark.instruments.versions.check_editable``, or
holding a response, an annotator's draft too): it keeps its questions as they were answered, and the
page offers a new version instead. A question other rows hang on (a study's known answers) is not
removed, as they would go with it.

Positions stay 0..n-1 in the order the researcher sees; the database's unique (instrument, position)
is never broken on the way, so a move swaps through a free position and a removal closes the gap
one question at a time. The whole list is checked again after every change
(``benchmark.instruments.checks.check_questions``: keys that collide as form fields, bounds set).
"""

from __future__ import annotations

from django.contrib.admin.utils import NestedObjects
from django.core.exceptions import ValidationError
from django.db import router, transaction

from benchmark.instruments import checks, versions
from benchmark.models import Instrument, Question, Team

SPARE_POSITION = 32000  # above any real position; a question passes through it while two swap


def lock(instrument: Instrument) -> Instrument:
    """The instrument locked for this transaction, refused (``ValidationError``) when anyone answered it."""
    fresh = Instrument.objects.select_for_update().get(pk=instrument.pk)
    refusal = why_not_editable(fresh)
    if refusal:
        raise ValidationError(refusal, code="answered")
    return fresh


def why_not_editable(instrument: Instrument) -> str:
    """Why ``instrument``'s questions can no longer change ("" when they can): frozen, or holding a response (an
    annotator's draft too, whose answers name its questions)."""
    try:
        versions.check_editable(instrument)
    except ValidationError as frozen:
        return frozen.messages[0]
    if instrument.responses.exists():
        return (f"“{instrument}” has answers (drafts too), so its questions can no longer change; make a new version "
                "to edit it.")
    return ""


def save_question(instrument: Instrument, question: Question, replaces: Question | None = None) -> Question:
    """Store ``question`` (unsaved, checked by its form) as a new last question, or in place of ``replaces``."""
    with transaction.atomic():
        lock(instrument)
        stored = list(instrument.questions.order_by("position"))
        if replaces is None:
            question.position = len(stored)
            listed = [*stored, question]
        else:
            question.pk, question.position = replaces.pk, replaces.position
            listed = [question if q.pk == replaces.pk else q for q in stored]
        question.instrument = instrument
        checks.check_questions(listed)
        question.save()
    return question


def move_question(instrument: Instrument, question: Question, step: int) -> None:
    """Swap ``question`` with its neighbour ``step`` (-1 up, +1 down) places away; nothing at either end."""
    with transaction.atomic():
        lock(instrument)
        here = instrument.questions.filter(pk=question.pk).first()
        neighbour = here and instrument.questions.filter(position=here.position + step).first()
        if neighbour is None:  # at an end, or removed meanwhile
            return
        position = here.position
        Question.objects.filter(pk=here.pk).update(position=SPARE_POSITION)
        Question.objects.filter(pk=neighbour.pk).update(position=position)
        Question.objects.filter(pk=here.pk).update(position=neighbour.position)


def remove_question(instrument: Instrument, question: Question) -> None:
    """Delete ``question`` and close the gap it leaves."""
    with transaction.atomic():
        lock(instrument)
        here = instrument.questions.filter(pk=question.pk).first()
        if here is None:  # removed meanwhile
            return
        _check_nothing_hangs_on(here)
        position = here.position
        here.delete()
        for later in instrument.questions.filter(position__gt=position).order_by("position"):
            Question.objects.filter(pk=later.pk).update(position=later.position - 1)


def _check_nothing_hangs_on(question: Question) -> None:
    """Refuse to remove a question other rows hang on (a study's known answers for it, say), which would go with it."""
    collector = NestedObjects(using=router.db_for_write(Question))
    collector.collect([question])
    held = [f"{len(rows)} {model._meta.verbose_name_plural}" for model, rows in collector.model_objs.items()
            if model is not Question and rows]
    if held or collector.protected:
        named = ", ".join(held) or "answers"
        raise ValidationError(f"The question “{question.key}” holds {named}; make a new version to remove it.")


def copy_instrument(source: Instrument, team: Team, name: str) -> Instrument:
    """A new instrument of ``team`` called ``name`` asking ``source``'s questions (a preset's or the team's own)."""
    with transaction.atomic():
        made = Instrument.objects.create(
            team=team, name=name, version=versions.next_version(name), preset=source.preset,
            description=source.description,
        )
        Question.objects.bulk_create(versions.copy_question(q, made) for q in source.questions.all())
    return made
