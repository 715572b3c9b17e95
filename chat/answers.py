"""A participant's answers to their study's questionnaire: storing them, reading them back.

The form is the one every person answering an instrument fills in (``benchmark.instruments.forms``:
one field per question of the study's instrument, each answer checked by ``benchmark.instruments.values``).
Submitting writes one ``Response`` of the participant's ``Respondent`` (kind ``participant``,
labelled with their id, no user account) with a typed ``Answer`` per answered question, freezes
the instrument and finishes the participant, all in one transaction: a participant who already
finished (a double click, a second tab) changes nothing. ``answer_table`` reads the answers back
for the CSV download and the transcript page, as text keyed by question key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmark.instruments import versions
from benchmark.instruments.forms import InstrumentForm
from benchmark.instruments.kinds import get_kind
from benchmark.models import Answer, Instrument, Respondent, Response

from .models import Participant

LABEL_SEPARATOR = "; "  # between a multi-label answer's labels in tables


# Storing


def save_answers(
    participant: Participant, form: InstrumentForm, also: Callable[[Participant, datetime], Any] | None = None
) -> bool:
    """Store the valid form's answers and finish the participant, all at once; False if they had already finished.

    Only a participant at the questionnaire stage can submit, so a second submission never
    overwrites the first. A study without questions finishes the participant without a response.
    ``also(participant, now)`` stores more answers in the same transaction (``chat.human_test``).
    """
    with transaction.atomic():
        current = Participant.objects.select_for_update(of=("self",)).select_related("study__instrument").get(
            pk=participant.pk
        )
        if current.stage != Participant.Stage.QUESTIONNAIRE:
            return False
        now = timezone.now()
        if also is not None:
            also(current, now)
        instrument = current.study.instrument
        if instrument is not None and form.questions:
            current.response = _response(current, instrument, form, now)
            versions.freeze(instrument)
        current.stage = Participant.Stage.DONE
        current.finished_at = now
        current.last_seen_at = now
        current.save(update_fields=["response", "stage", "finished_at", "last_seen_at"])
    participant.refresh_from_db(fields=["response", "stage", "finished_at", "last_seen_at"])
    return True


def _response(participant: Participant, instrument: Instrument, form: InstrumentForm, now: Any) -> Response:
    respondent = participant_respondent(participant)
    response = Response.objects.create(
        instrument=instrument, episode_id=participant.episode_id, respondent=respondent,
        status=Response.Status.SUBMITTED, created_at=now,
    )
    rows = []
    for question in form.questions:
        answered = form.cleaned_data.get(question.key)
        if get_kind(question.kind).multi_valued:
            rows += [Answer(response=response, question=question, value=label) for label in answered or []]
        elif answered is not None:
            value, number = answered
            rows.append(Answer(response=response, question=question, value=value, number=number))
    Answer.objects.bulk_create(rows)
    return response


def participant_respondent(participant: Participant) -> Respondent:
    """The participant's respondent row: kind ``participant``, labelled with their id, no user account.

    The id is the recruiting platform's (Prolific ids name one person across studies), so the same
    id answering several studies is one respondent.
    """
    respondent, _ = Respondent.objects.get_or_create(
        kind=Respondent.Kind.PARTICIPANT, user=None, model="", prompt_version="", label=participant.participant_id
    )
    return respondent


# Reading back


@dataclass(frozen=True)
class AnswerTable:
    """Participants' answers as text, by participant pk and question key, and the keys in column order."""

    keys: list[str]
    prompts: dict[str, str]
    answers: dict[int, dict[str, str]]


def answer_table(instrument: Instrument | None, participants: Iterable[Participant]) -> AnswerTable:
    """The answers of ``participants`` (with ``response`` loaded or not), and the columns to show them in:
    the instrument's keys in order, then keys only found in answers to another version, sorted."""
    by_response = {participant.response_id: participant.pk for participant in participants if participant.response_id}
    answers: dict[int, dict[str, str]] = {pk: {} for pk in by_response.values()}
    prompts: dict[str, str] = {}
    rows = Answer.objects.filter(response_id__in=by_response).order_by("response_id", "question__position", "pk")
    fields = ("response_id", "question__key", "question__prompt", "value")
    for response_id, key, prompt, value in rows.values_list(*fields):
        found = answers[by_response[response_id]]
        found[key] = f"{found[key]}{LABEL_SEPARATOR}{value}" if key in found else value
        prompts.setdefault(key, prompt)
    keys = []
    if instrument is not None:
        for question in instrument.questions.all():
            keys.append(question.key)
            prompts[question.key] = question.prompt
    keys += sorted({key for found in answers.values() for key in found} - set(keys))
    return AnswerTable(keys, prompts, answers)
