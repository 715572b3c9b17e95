"""A chat study's questionnaire: the instrument participants answer after the chat, picked on the study form.

The questionnaire is a ``benchmark.Instrument`` (``ChatStudy.instrument``): by default the shared
preset ``chat-questionnaire`` (goal completion, unresolved confusion and mutual understanding on
1–5, an optional comment), otherwise a preset or one of the study team's own, built in the
instrument builder (``benchmark.instrument_builder``). Participants answer every question once
about their own chat, so only instruments whose questions are all asked once per episode and of a
kind participants can answer (``ChatStudy.questionnaire_problem``) are offered. An instrument that
has answers is frozen; changing it makes its next version in the builder, and the study form then
picks that version, so what participants answered stays as they answered it.

``participant_preview`` is this app's panel of the builder's preview (registered in ``apps.py``): the
participant's questionnaire form itself, ``benchmark.instruments.forms.InstrumentForm``, drawn by its partial.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string

from benchmark.instruments import presets
from benchmark.instruments.forms import InstrumentForm
from benchmark.models import Instrument

from .models import ChatStudy


def default_instrument() -> Instrument:
    """The shared preset a study asks unless the researcher picks another instrument."""
    return presets.install_preset(presets.CHAT_PRESET)


def questionnaire_choices(instruments: QuerySet[Instrument]) -> list[Instrument]:
    """Those of ``instruments`` participants can answer after a chat (presets and the team's own), by name."""
    default_instrument()  # installed, so a fresh site offers it
    rows = instruments.prefetch_related("questions").select_related("team").order_by("team", "name", "-version")
    return [instrument for instrument in rows
            if instrument.questions.all()
            and not ChatStudy(instrument=instrument, team_id=instrument.team_id).questionnaire_problem()]


def participant_preview(request: HttpRequest, instrument: Instrument) -> str:
    """The participant's questionnaire form for ``instrument``, or why participants cannot be asked it."""
    problem = ChatStudy(instrument=instrument, team_id=instrument.team_id).questionnaire_problem()
    form = None if problem else InstrumentForm(instrument)
    return render_to_string("chat/research/partials/_questionnaire_preview.html",
                            {"form": form, "problem": problem}, request=request)
