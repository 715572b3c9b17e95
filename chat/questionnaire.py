"""A chat study's questionnaire: the schema researchers write, the form participants fill in.

A questionnaire is a JSON list of questions, each a dict with

- ``key``: a short identifier (letters, digits, underscores), unique in the list; it names the
  answer in ``Participant.answers`` and the column in the CSV download;
- ``kind``: ``likert`` (a scale of whole numbers), ``choice`` (one of ``options``) or ``text``;
- ``label``: the question as the participant reads it;
- ``required``: whether it must be answered (default true);
- for ``likert``: ``low`` and ``high`` (whole numbers, 2 to 11 points), optional ``low_label`` and
  ``high_label`` for the two ends;
- for ``choice``: ``options``, a list of distinct texts;
- for ``text``: optional ``max_chars`` (2000 when not given).

Bad questionnaires are refused with every problem named by question number and field, so a
researcher can fix a long JSON text in one pass. The default (``chat.models.default_questionnaire``)
asks about goal completion, unresolved confusion and mutual understanding on SocialVeil's 1–5
scales, plus an optional comment.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from .models import Participant

KINDS = ("likert", "choice", "text")
COMMON_FIELDS = {"key", "kind", "label", "required"}
KIND_FIELDS = {
    "likert": {"low", "high", "low_label", "high_label"},
    "choice": {"options"},
    "text": {"max_chars"},
}
KEY_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,49}$")
MAX_SCALE_POINTS = 11
DEFAULT_MAX_CHARS = 2000


def validate_questionnaire(questions: Any) -> list[dict[str, Any]]:
    """Return the questionnaire with defaults filled in, or raise ValidationError naming each problem."""
    if not isinstance(questions, list):
        raise ValidationError("The questionnaire must be a JSON list of questions, e.g. [{\"key\": ...}, ...].")
    problems: list[str] = []
    cleaned: list[dict[str, Any]] = []
    seen_keys: set[str] = set()
    for number, question in enumerate(questions, start=1):
        where = f"Question {number}"
        if not isinstance(question, dict):
            problems.append(f"{where}: must be an object with key, kind and label, not {_json_type(question)}.")
            continue
        before = len(problems)
        key, kind = question.get("key"), question.get("kind")
        if not isinstance(key, str) or not KEY_PATTERN.match(key):
            problems.append(f"{where}, field 'key': use letters, digits and underscores (at most 50), "
                            f"starting with a letter, e.g. \"goal\".")
        elif key in seen_keys:
            problems.append(f"{where}, field 'key': \"{key}\" is already used by an earlier question.")
        else:
            seen_keys.add(key)
        if kind not in KINDS:
            problems.append(f"{where}, field 'kind': must be one of {', '.join(KINDS)}.")
        label = question.get("label")
        if not isinstance(label, str) or not label.strip():
            problems.append(f"{where}, field 'label': the question text is missing.")
        if "required" in question and not isinstance(question["required"], bool):
            problems.append(f"{where}, field 'required': must be true or false.")
        allowed = COMMON_FIELDS | KIND_FIELDS.get(kind, set())
        unknown = sorted(set(question) - allowed)
        if unknown and kind in KINDS:
            problems.append(f"{where}: unknown field{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(repr(u) for u in unknown)} for a {kind} question.")
        if kind == "likert":
            problems.extend(_likert_problems(where, question))
        elif kind == "choice":
            problems.extend(_choice_problems(where, question))
        elif kind == "text":
            problems.extend(_text_problems(where, question))
        if len(problems) == before:
            cleaned.append(_with_defaults(question))
    if problems:
        raise ValidationError(problems)
    return cleaned


def _likert_problems(where: str, question: dict[str, Any]) -> list[str]:
    low, high = question.get("low"), question.get("high")
    problems = [
        f"{where}, field '{name}': must be a whole number."
        for name, value in (("low", low), ("high", high))
        if not _is_int(value)
    ]
    if not problems:
        if high <= low:
            problems.append(f"{where}, field 'high': must be greater than 'low' ({low}).")
        elif high - low + 1 > MAX_SCALE_POINTS:
            problems.append(f"{where}, field 'high': a scale has at most {MAX_SCALE_POINTS} points.")
    for name in ("low_label", "high_label"):
        if name in question and not isinstance(question[name], str):
            problems.append(f"{where}, field '{name}': must be text.")
    return problems


def _choice_problems(where: str, question: dict[str, Any]) -> list[str]:
    options = question.get("options")
    if not isinstance(options, list) or len(options) < 2:
        return [f"{where}, field 'options': list at least two answers to choose from."]
    if not all(isinstance(option, str) and option.strip() for option in options):
        return [f"{where}, field 'options': every option must be non-empty text."]
    if len(set(options)) != len(options):
        return [f"{where}, field 'options': options must differ from each other."]
    return []


def _text_problems(where: str, question: dict[str, Any]) -> list[str]:
    if "max_chars" in question and not (_is_int(question["max_chars"]) and question["max_chars"] > 0):
        return [f"{where}, field 'max_chars': must be a whole number above 0."]
    return []


def _with_defaults(question: dict[str, Any]) -> dict[str, Any]:
    return {**question, "label": question["label"].strip(), "required": question.get("required", True)}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_type(value: Any) -> str:
    return {str: "a string", int: "a number", float: "a number", list: "a list", bool: "true/false"}.get(
        type(value), "null"
    )


# The participant's form


def scale_choices(question: dict[str, Any]) -> list[tuple[int, str]]:
    """The points of a Likert question, the two ends carrying their labels."""
    low, high = question["low"], question["high"]
    labels = {low: question.get("low_label", ""), high: question.get("high_label", "")}
    return [
        (point, f"{point} – {labels[point]}" if labels.get(point) else str(point)) for point in range(low, high + 1)
    ]


def questionnaire_form(questions: list[dict[str, Any]], data: Any = None) -> forms.Form:
    """A form with one field per question; a missing required answer is named by its number and text."""
    form = forms.Form(data)
    for number, question in enumerate(questions, start=1):
        required = question.get("required", True)
        messages = {"required": f"Please answer question {number}: “{question['label']}”."}
        if question["kind"] == "likert":
            field: forms.Field = forms.TypedChoiceField(
                choices=scale_choices(question), coerce=int, empty_value=None, widget=forms.RadioSelect,
                required=required,
                error_messages={**messages, "invalid_choice": f"Question {number}: choose one of the points."},
            )
        elif question["kind"] == "choice":
            field = forms.ChoiceField(
                choices=[(option, option) for option in question["options"]], widget=forms.RadioSelect,
                required=required,
                error_messages={**messages, "invalid_choice": f"Question {number}: choose one of the answers."},
            )
        else:
            limit = question.get("max_chars", DEFAULT_MAX_CHARS)
            field = forms.CharField(
                max_length=limit, widget=forms.Textarea(attrs={"rows": 4, "style": "width: 100%"}), required=required,
                error_messages={**messages,
                                "max_length": f"Question {number}: please keep the answer under {limit} characters."},
            )
        field.label = question["label"]
        field.number = number  # for templates: "Question 2"
        field.kind = question["kind"]
        field.say_optional = not required and "optional" not in question["label"].lower()
        form.fields[question["key"]] = field
    return form


def save_answers(participant: Participant, answers: dict[str, Any]) -> bool:
    """Store the answers and finish the participant, all at once; False if they had already finished.

    Only a participant at the questionnaire stage can submit, so a second submission (a double
    click, a back button) never overwrites the first.
    """
    with transaction.atomic():
        current = Participant.objects.select_for_update().get(pk=participant.pk)
        if current.stage != Participant.Stage.QUESTIONNAIRE:
            return False
        now = timezone.now()
        current.answers = answers
        current.stage = Participant.Stage.DONE
        current.finished_at = now
        current.last_seen_at = now
        current.save(update_fields=["answers", "stage", "finished_at", "last_seen_at"])
    participant.refresh_from_db(fields=["answers", "stage", "finished_at", "last_seen_at"])
    return True
