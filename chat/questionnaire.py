"""A chat study's questionnaire: an instrument researchers write as JSON on the study form.

The questionnaire is a ``benchmark.Instrument`` (``ChatStudy.instrument``): by default the shared
preset ``chat-questionnaire`` (goal completion, unresolved confusion and mutual understanding on
1–5, an optional comment), otherwise one of the study team's own. Researchers edit it as a JSON
list of questions in the instrument's own format, each an object with

- ``key``: a short name (letters, digits, hyphens, underscores), unique in the list; it names the
  answer's column in the participants' CSV;
- ``kind``: one of ``participant_kinds()`` (likert, slider, categorical, yes_no, multi_label, text);
- ``prompt``: the question as the participant reads it; optional ``help_text`` under it and
  ``label``, a short name for tables;
- ``required`` (default true); optional ``dimension``, the construct a numeric question measures
  (``unresolved_confusion``, ``mutual_understanding``), so results can set participants' answers
  beside the judge's;
- ``options``: what the kind needs, exactly as ``benchmark.instruments.checks`` describes it
  (Likert ``anchors``, slider ``min``/``max``/``step``, ``choices``, text ``max_length``).

Every question is asked once per episode. ``questions_from_json`` checks the list with the
instruments' own checks and names every problem by question number and field, so a long text can
be fixed in one pass. ``save_questionnaire`` stores it without ever changing what participants
answered: an instrument that has answers is frozen, so an edit becomes its next version.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from benchmark.instruments import checks, presets, versions
from benchmark.models import Instrument, Question

from .models import ChatStudy, participant_kinds

QUESTION_FIELDS = ("key", "kind", "prompt", "label", "help_text", "required", "dimension", "options")
TEXT_FIELDS = ("prompt", "label", "help_text", "dimension")
LABEL_MAX_LENGTH = Question._meta.get_field("label").max_length
# What two questions must share to be the same question (what participants read and may answer).
SAME_QUESTION = ("key", "kind", "prompt", "label", "help_text", "required", "dimension", "options")


def default_instrument() -> Instrument:
    """The shared preset a study asks when the researcher writes no questions of their own."""
    return presets.install_preset(presets.CHAT_PRESET)


def questions_to_json(instrument: Instrument | None) -> list[dict[str, Any]]:
    """The instrument's questions in the format researchers edit (empty fields left out)."""
    if instrument is None:
        return []
    written = []
    for question in instrument.questions.all():
        item: dict[str, Any] = {"key": question.key, "kind": question.kind, "prompt": question.prompt}
        for name in ("label", "help_text", "dimension"):
            if getattr(question, name):
                item[name] = getattr(question, name)
        item["required"] = question.required
        if question.options:
            item["options"] = question.options
        written.append(item)
    return written


def questions_from_json(data: Any) -> list[Question]:
    """Unsaved questions (positions in order, bounds set) from the researcher's JSON, or ValidationError
    listing every problem as ``Question <n>, field '<field>': <what to do>``."""
    if not isinstance(data, list):
        raise ValidationError(
            'The questionnaire must be a JSON list of questions, e.g. [{"key": "goal", "kind": "likert", ...}].'
        )
    problems: list[str] = []
    questions: list[Question] = []
    first_use: dict[str, int] = {}
    for number, item in enumerate(data, start=1):
        where = f"Question {number}"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object with a key, a kind, a prompt and options.")
            continue
        found = _item_problems(item)
        key = item.get("key")
        if isinstance(key, str) and key:
            if key in first_use:
                found.append(("key", f"“{key}” is already the key of question {first_use[key]}"))
            else:
                first_use[key] = number
        question = None
        if not found:
            question = Question(
                key=key, position=number - 1, kind=item["kind"], prompt=item["prompt"].strip(),
                label=item.get("label", "").strip(), help_text=item.get("help_text", "").strip(),
                required=item.get("required", True), scope=Question.Scope.EPISODE, rationale="none",
                options=item.get("options", {}), dimension=item.get("dimension", ""),
            )
            found = [_split(problem, key) for problem in checks.question_problems(question)]
        problems.extend(f"{where}, field '{field}': {message}" for field, message in found)
        if question is not None and not found:
            questions.append(question)
    if problems:
        raise ValidationError(problems)
    if questions:
        checks.check_questions(questions)  # passes by now; it sets each numeric question's bounds
    return questions


def _item_problems(item: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for what the instruments' checks cannot be asked about: unknown fields and types."""
    problems = [
        (name, f"not a field of a question; use {', '.join(QUESTION_FIELDS)}") for name in item
        if name not in (*QUESTION_FIELDS, "scope")  # the scope is named below, more usefully
    ]
    if not isinstance(item.get("key"), str) or not item.get("key"):
        problems.append(("key", "give a short name of letters, digits, hyphens or underscores, e.g. \"goal\""))
    if item.get("kind") not in participant_kinds():
        problems.append(("kind", f"use one of {', '.join(participant_kinds())}"))
    if not isinstance(item.get("prompt"), str) or not item["prompt"].strip():
        problems.append(("prompt", "write the question the participant reads"))
    for name in TEXT_FIELDS[1:]:
        if name in item and not isinstance(item[name], str):
            problems.append((name, "must be text"))
    if isinstance(item.get("label"), str) and len(item["label"].strip()) > LABEL_MAX_LENGTH:
        problems.append(("label", f"keep it to {LABEL_MAX_LENGTH} characters"))
    if "required" in item and not isinstance(item["required"], bool):
        problems.append(("required", "must be true or false"))
    if "options" in item and not isinstance(item["options"], dict):
        problems.append(("options", "must be an object of named options, e.g. {\"max_length\": 500}"))
    if "scope" in item:
        problems.append(("scope", "participants answer every question once, about their own conversation; "
                                  "leave the scope out"))
    return problems


def _split(problem: str, key: str) -> tuple[str, str]:
    """A problem of ``checks.question_problems`` (``<key>: <field>: <message>``) as (field, message)."""
    field, _, message = problem.removeprefix(f"{key}: ").partition(": ")
    return field, message


def same_questions(instrument: Instrument | None, questions: list[Question]) -> bool:
    """Whether ``instrument`` asks exactly ``questions`` (same order, wording, kinds and options)."""
    if instrument is None:
        return not questions
    stored = list(instrument.questions.all())
    return len(stored) == len(questions) and all(
        all(getattr(old, name) == getattr(new, name) for name in SAME_QUESTION)
        for old, new in zip(stored, questions, strict=True)
    )


def save_questionnaire(study: ChatStudy, questions: list[Question] | None) -> Instrument | None:
    """Point ``study`` (saved) at an instrument asking ``questions`` and return it; None asks the default preset.

    Unchanged questions keep the study's instrument; the default preset's questions use the preset.
    Otherwise the study's own instrument is changed in place while it is unanswered and no other
    study asks it; else a new one is made, the next version of the study's own instrument (one
    that participants answered stays as they answered it) or, the first time, a new team
    instrument. An empty list asks nothing.
    """
    current = study.instrument
    with transaction.atomic():
        if questions is None:
            target = default_instrument()
        elif same_questions(current, questions):
            return current
        elif not questions:
            target = None
        elif same_questions(default_instrument(), questions):
            target = default_instrument()
        elif current is not None and current.team_id == study.team_id and _changeable(current, study):
            target = current
            target.questions.all().delete()
        elif current is not None and current.team_id == study.team_id:
            target = versions.new_version(current)
            target.questions.all().delete()
        else:
            name = f"Chat questionnaire: {study.title}"[:200]
            target = Instrument.objects.create(
                team_id=study.team_id, name=name, version=versions.next_version(name),
                preset=current.preset if current is not None else "",
                description=f"Asked after the chat in the study “{study.title}” (/s/{study.slug}/).",
            )
        if target is not None and not target.questions.exists():
            for question in questions:
                question.pk, question.instrument = None, target
            Question.objects.bulk_create(questions)
        study.instrument = target
        study.save(update_fields=["instrument"])
    return target


def _changeable(instrument: Instrument, study: ChatStudy) -> bool:
    """Whether the study may change ``instrument``'s questions in place: nobody answered it, nothing else asks it."""
    fresh = Instrument.objects.select_for_update().get(pk=instrument.pk)  # a submission freezes it meanwhile
    if fresh.frozen or fresh.responses.exists():
        return False
    return not instrument.chat_studies.exclude(pk=study.pk).exists()
