"""A participant's answers to their study's questionnaire: the form, storing it, reading it back.

The form has one field per question of the study's instrument, named by the question's key. Each
answer is checked by ``benchmark.instruments.values``, the rule every respondent's answers follow
(the database's triggers hold the same line), and a problem is named by the question's number.
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

from django import forms
from django.db import transaction
from django.utils import timezone

from benchmark.instruments import versions
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.values import check_labels, check_value, numeric_range, what_to_answer
from benchmark.models import Answer, Instrument, Question, Respondent, Response

from .models import Participant

LABEL_SEPARATOR = "; "  # between a multi-label answer's labels in tables


# The participant's form


class QuestionnaireForm(forms.Form):
    """One field per question; ``cleaned_data`` holds (value, number) per answered question, or the
    list of labels for a multi-label one."""

    def __init__(self, instrument: Instrument | None, data: Any = None, *, episode: Any = None) -> None:
        super().__init__(data)
        # Each question as asked about the participant's episode (a per-item choice brings its own choices).
        asked = (get_kind(q.kind).for_item(q, episode) for q in (instrument.questions.all() if instrument else []))
        self.questions = [question for question in asked if question is not None]
        for question in self.questions:
            self.fields[question.key] = question_field(question)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for question in self.questions:
            text = data.get(question.key)
            kind = get_kind(question.kind)
            if kind.posts_several_values:
                labels, problem = check_labels(question, text or [])
                if text and problem:
                    self.add_error(question.key, f"Question {question.position + 1}: {problem}")
                if kind.multi_valued:
                    data[question.key] = labels if text else []
                else:  # several places posted, one answer (a ranking)
                    data[question.key] = (labels[0], None) if text and labels and not problem else None
            elif text:
                value, number, problem = check_value(question, text.strip())
                if problem:
                    self.add_error(question.key, f"Question {question.position + 1}: {problem}")
                else:
                    data[question.key] = (value, number)
            else:
                data[question.key] = None
        return data


def question_field(question: Question) -> forms.Field:
    number = question.position + 1
    messages = {
        "required": f"Please answer question {number}: “{question.prompt}”.",
        "invalid_choice": f"Question {number}: {what_to_answer(question)}",
    }
    kind = get_kind(question.kind)
    choices = kind.participant_choices(question)
    if kind.multi_valued:
        field: forms.Field = forms.MultipleChoiceField(choices=choices, widget=forms.CheckboxSelectMultiple)
    elif kind.posts_several_values:  # its widget posts the field once per place
        field = forms.MultipleChoiceField(choices=choices, widget=forms.SelectMultiple)
    elif choices:
        field = forms.ChoiceField(choices=choices, widget=forms.RadioSelect)
    elif not kind.numeric:  # free text
        field = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}))
    else:  # a slider with many points
        low, high, step = numeric_range(question)
        field = forms.CharField(widget=forms.NumberInput(attrs={"min": low, "max": high, "step": step}))
    field.required = question.required
    field.error_messages.update(messages)
    field.label = question.prompt
    field.help_text = question.help_text
    field.number = number  # for templates: "2. How ..."
    field.kind = question.kind
    field.question = question
    field.bound_field_class = QuestionBoundField
    field.say_optional = not question.required and "optional" not in question.prompt.lower()
    return field


class QuestionBoundField(forms.BoundField):
    """A question's field as its kind's widget partial draws it: the partial the annotator's page uses
    (``templates/instruments/kinds/``), given the same ``question``, ``answer`` and ``entry``."""

    @property
    def kind(self) -> Any:
        return get_kind(self.field.question.kind)

    @property
    def widget_template(self) -> str:
        return self.kind.widget_template

    @property
    def question_view(self) -> dict[str, Any]:
        question = self.field.question
        options = {name: value for name, value in (question.options or {}).items()
                   if name not in self.kind.hidden_options}
        return {"key": question.key, "kind": question.kind, "prompt": self.label, "options": options}

    @property
    def answer(self) -> dict[str, Any]:
        value = self.value()
        values = [str(v) for v in value] if isinstance(value, list | tuple) else []
        return {"name": self.html_name, "value": "" if value is None or values else str(value), "values": values,
                "error": ""}

    @property
    def entry(self) -> dict[str, Any]:
        choices = getattr(self.field, "choices", None) or []
        question = self.field.question
        return {
            "options": [dict(value=value, label=label, description="", shortcut="") for value, label in choices],
            "widget": self.kind.widget_data(question, self.answer["value"]),
            "number_box": self.kind.numeric and not choices,  # a slider with many points: a number box
            "numbered": False,  # a participant's Likert labels already start with their value
        }


# Storing


def save_answers(
    participant: Participant, form: QuestionnaireForm, also: Callable[[Participant, datetime], Any] | None = None
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


def _response(participant: Participant, instrument: Instrument, form: QuestionnaireForm, now: Any) -> Response:
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
