"""Changing an instrument's questions from the builder, each change in one transaction that first locks the
instrument and refuses a frozen one (``benchmark.instruments.versions.check_editable``): an instrument
someone answered keeps its questions as they were answered, and the page offers a new version instead.

Positions stay 0..n-1 in the order the researcher sees; the database's unique (instrument, position)
is never broken on the way, so a move swaps through a free position and a removal closes the gap
one question at a time. The whole list is checked again after every change
(``benchmark.instruments.checks.check_questions``: keys that collide as form fields, bounds set).
"""

from __future__ import annotations

from django.db import transaction

from benchmark.instruments import checks, versions
from benchmark.models import Instrument, Question, Team

SPARE_POSITION = 32000  # above any real position; a question passes through it while two swap


def lock(instrument: Instrument) -> Instrument:
    """The instrument locked for this transaction, refused (``ValidationError``) when frozen or a preset."""
    fresh = Instrument.objects.select_for_update().get(pk=instrument.pk)
    versions.check_editable(fresh)
    return fresh


def is_answered(instrument: Instrument) -> bool:
    """Whether anyone's answers hang on it: frozen, or holding a response (a draft, too)."""
    return instrument.frozen or instrument.responses.exists()


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
        here = Question.objects.get(pk=question.pk, instrument=instrument)
        neighbour = instrument.questions.filter(position=here.position + step).first()
        if neighbour is None:
            return
        position = here.position
        Question.objects.filter(pk=here.pk).update(position=SPARE_POSITION)
        Question.objects.filter(pk=neighbour.pk).update(position=position)
        Question.objects.filter(pk=here.pk).update(position=neighbour.position)


def remove_question(instrument: Instrument, question: Question) -> None:
    """Delete ``question`` and close the gap it leaves."""
    with transaction.atomic():
        lock(instrument)
        position = Question.objects.get(pk=question.pk, instrument=instrument).position
        Question.objects.filter(pk=question.pk).delete()
        for later in instrument.questions.filter(position__gt=position).order_by("position"):
            Question.objects.filter(pk=later.pk).update(position=later.position - 1)


def copy_instrument(source: Instrument, team: Team, name: str) -> Instrument:
    """A new instrument of ``team`` called ``name`` asking ``source``'s questions (a preset's or the team's own)."""
    with transaction.atomic():
        made = Instrument.objects.create(
            team=team, name=name, version=versions.next_version(name), preset=source.preset,
            description=source.description,
        )
        Question.objects.bulk_create(versions.copy_question(q, made) for q in source.questions.all())
    return made
