"""The annotator's panel of the instrument builder's preview: the item page's own form code, on two example seats.

The builder (``benchmark.instrument_builder``) cannot import this app, so ``apps.py`` registers
``annotator_preview`` with it. The form is drawn by ``item_page``'s ``_sections`` and ``_entry`` and
the same partials as the item page, so what the researcher sees is what annotators get (hidden
options, a multiple-choice question's correct answer, left out as there). The seats and goals are
stand-ins with the attributes the form reads, because a preview has no episode; a question asked per
turn is shown once, as beside an agent's first turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.template.loader import render_to_string

from benchmark.instruments.kinds import get_kind
from benchmark.models import Instrument, Question

from .answer_forms import FormValues
from .item_page import _entry, _sections


@dataclass(frozen=True)
class _Goal:
    pk: int
    text: str


class _Goals:
    """What the form asks of a role's goals: ``all()``."""

    def __init__(self, *goals: _Goal) -> None:
        self._goals = list(goals)

    def all(self) -> list[_Goal]:
        return self._goals


@dataclass(frozen=True)
class _Character:
    name: str


@dataclass(frozen=True)
class _Role:
    goals: _Goals


@dataclass(frozen=True)
class _Seat:
    position: int
    character: _Character
    role: _Role


EXAMPLE_SEATS = (
    _Seat(0, _Character("First character"), _Role(_Goals(_Goal(-1, "(the first character’s goal)")))),
    _Seat(1, _Character("Second character"), _Role(_Goals(_Goal(-2, "(the second character’s goal)")))),
)


def annotator_preview(request: HttpRequest, instrument: Instrument) -> str:
    """The item page's answer form for ``instrument``'s questions, as an annotator sees it."""
    questions = list(instrument.questions.order_by("position"))
    asked = [q for q in questions if get_kind(q.kind).for_item(q, None) is not None]  # as the item page binds them
    values = FormValues(None, {})
    sections = _sections(asked, list(EXAMPLE_SEATS), values, {}, pairwise=True)
    beside_turns = [_entry(q, None, values, {}, turn=0) for q in asked if q.scope == Question.Scope.TURN]
    from_item = [q.key for q in questions if q not in asked]
    return render_to_string("annotator/partials/_instrument_preview.html", {
        "sections": sections, "turn_entries": beside_turns, "from_item": from_item, "questions": questions,
    }, request=request)
