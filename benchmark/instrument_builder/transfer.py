"""The instrument format, out and back in: a JSON object ``{"name", "description", "questions": [...]}``.

Each question is an object in the format the chat questionnaire was once written in, with what an
annotation or judge question adds: ``key``, ``kind``, ``prompt``, optional ``label``, ``help_text``,
``required`` (default true), ``scope`` (default ``episode``), ``rationale`` (default ``none``),
``dimension``, ``truth``, and ``options`` exactly as the kind's checks describe them
(``benchmark.instruments.checks``). A bare list of questions is read too. An upload is checked whole
before anything is stored, and every problem is named by question number and field, so a file can
be fixed in one pass; nothing is stored unless all of it passes.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from benchmark.instruments import checks
from benchmark.instruments.versions import next_version
from benchmark.models import Instrument, Question, Team

FORMAT = "parley-instrument"
QUESTION_FIELDS = ("key", "kind", "prompt", "label", "help_text", "required", "scope", "rationale", "dimension",
                   "truth", "options")
TEXT_FIELDS = ("prompt", "label", "help_text", "dimension", "truth", "scope", "rationale")
LABEL_MAX_LENGTH = Question._meta.get_field("label").max_length
RATIONALES = [value for value, _ in Question._meta.get_field("rationale").choices]
DEFAULTS = {"required": True, "scope": Question.Scope.EPISODE, "rationale": "none"}


def question_to_data(question: Question) -> dict[str, Any]:
    """One question in the format (fields at their default left out)."""
    item: dict[str, Any] = {"key": question.key, "kind": question.kind, "prompt": question.prompt}
    for name in ("label", "help_text", "dimension", "truth"):
        if getattr(question, name):
            item[name] = getattr(question, name)
    for name, default in DEFAULTS.items():
        if getattr(question, name) != default:
            item[name] = getattr(question, name)
    if question.options:
        item["options"] = question.options
    return item


def instrument_to_data(instrument: Instrument) -> dict[str, Any]:
    return {
        "format": FORMAT, "name": instrument.name, "description": instrument.description,
        "questions": [question_to_data(question) for question in instrument.questions.all()],
    }


def read_upload(content: bytes) -> tuple[dict[str, Any], list[Question]]:
    """(name and description, unsaved questions) from an uploaded file, or ``ValidationError`` naming every problem."""
    try:
        data = json.loads(content.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ValidationError("The file is not UTF-8 text.") from None
    except json.JSONDecodeError as problem:
        raise ValidationError(
            f"The file is not valid JSON: {problem.msg} at line {problem.lineno}, column {problem.colno}."
        ) from None
    except (ValueError, RecursionError):
        raise ValidationError("The file is JSON Parley cannot read (a number too long, or nesting too deep).") from None
    about: dict[str, Any] = {}
    if isinstance(data, dict):
        unknown = [name for name in data if name not in ("format", "name", "description", "questions")]
        if unknown:
            raise ValidationError(f"Field '{unknown[0]}' is not part of the instrument format "
                                  "(use name, description, questions).")
        for name in ("name", "description"):
            if not isinstance(data.get(name, ""), str):
                raise ValidationError(f"Field '{name}' must be text.")
            about[name] = data.get(name, "").strip()
        data = data.get("questions")
    return about, questions_from_data(data)


def questions_from_data(data: Any) -> list[Question]:
    """Unsaved questions (positions in order, bounds set), or ``ValidationError`` listing every problem as
    ``Question <n>, field '<field>': <what to do>``."""
    if not isinstance(data, list):
        raise ValidationError('The questions must be a JSON list, e.g. [{"key": "goal", "kind": "likert", ...}].')
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
                options=item.get("options", {}),
                **{name: item.get(name, DEFAULTS.get(name, "")) for name in ("required", "scope", "rationale")},
                **{name: item.get(name, "").strip() for name in ("label", "help_text", "dimension", "truth")},
            )
            found = [_split(problem, key) for problem in checks.question_problems(question)]
        problems.extend(f"{where}, field '{field}': {message}" for field, message in found)
        if question is not None and not found:
            questions.append(question)
    if problems:
        raise ValidationError(problems)
    checks.check_questions(questions)  # passes by now (or names the empty list); it sets numeric bounds
    return questions


def _item_problems(item: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for what the instruments' checks cannot be asked about: unknown fields and types."""
    problems = [(name, f"not a field of a question; use {', '.join(QUESTION_FIELDS)}")
                for name in item if name not in QUESTION_FIELDS]
    if not isinstance(item.get("key"), str) or not item.get("key"):
        problems.append(("key", "give a short name of letters, digits, hyphens or underscores, e.g. \"goal\""))
    if not isinstance(item.get("kind"), str) or not item.get("kind"):
        problems.append(("kind", "name the question's kind, e.g. \"likert\""))
    if not isinstance(item.get("prompt"), str) or not item["prompt"].strip():
        problems.append(("prompt", "write the question the respondent reads"))
    for name in TEXT_FIELDS[1:]:
        if name in item and not isinstance(item[name], str):
            problems.append((name, "must be text"))
    if isinstance(item.get("label"), str) and len(item["label"].strip()) > LABEL_MAX_LENGTH:
        problems.append(("label", f"keep it to {LABEL_MAX_LENGTH} characters"))
    if "required" in item and not isinstance(item["required"], bool):
        problems.append(("required", "must be true or false"))
    if isinstance(item.get("rationale"), str) and item["rationale"] not in RATIONALES:
        problems.append(("rationale", f"use one of {', '.join(RATIONALES)}"))
    if "options" in item and not isinstance(item["options"], dict):
        problems.append(("options", "must be an object of named options, e.g. {\"max_length\": 500}"))
    return problems


def _split(problem: str, key: str) -> tuple[str, str]:
    """A problem of ``checks.question_problems`` (``<key>: <field>: <message>``) as (field, message)."""
    field, _, message = problem.removeprefix(f"{key}: ").partition(": ")
    return field, message


def create_instrument(team: Team, name: str, description: str, questions: list[Question]) -> Instrument:
    """A new team instrument asking ``questions`` (unsaved, checked), under the next free version of ``name``."""
    with transaction.atomic():
        instrument = Instrument.objects.create(team=team, name=name, version=next_version(name),
                                               description=description)
        for question in questions:
            question.pk, question.instrument = None, instrument
        Question.objects.bulk_create(questions)
    return instrument
