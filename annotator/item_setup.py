"""Setting up one item of a study: its kind (regular, gold, attention, training, qualification), the
explanation a training item shows, an attention item's instruction, and the known answers (``ItemKey``).

A known answer is asked for each question that can have one, once per episode or once per seat as
the question is asked: questions with a list of choices or a number (a Likert point, a slider), not
spans, free text or several labels, whose answers are not compared as one value. Each is checked
against its question exactly as an answer is (``benchmark.instruments.values``), so a known answer
the question does not allow is refused with the field named. A number may carry a tolerance.

An item's kind cannot change once anyone has claimed or submitted it: its answers were given as that
kind (counted toward k, or checked, or shown the correct answers), and changing it would move them
in or out of the agreement report. Its known answers and explanation can change at any time (they
are read when a check is scored, and scores are worked out again from them).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from benchmark.instruments.kinds import get_kind
from benchmark.instruments.values import check_value
from benchmark.models import Question, Seat

from . import study_log
from .models import ItemKey, StudyItem

KIND_LOCKED = (
    "The kind cannot change: annotators have already claimed or submitted this item as a {kind} item, and "
    "changing it would move their answers in or out of the agreement report."
)


def keyable(question: Question) -> bool:
    """Whether a question can have a known answer compared as one value."""
    kind = get_kind(question.kind)
    return (kind.single_choice or kind.numeric) and not kind.multi_valued and question.scope in (
        Question.Scope.EPISODE, Question.Scope.SEAT
    )


class ItemSetupForm(forms.Form):
    """The item's kind, explanation, instruction, and one known-answer field per question and target."""

    kind = forms.ChoiceField(choices=StudyItem.Kind.choices)
    explanation = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Shown with the correct answers after a training item is submitted.",
    )
    attention_instruction = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="For an attention check: the instruction shown inside the item.",
    )

    def __init__(self, *args: Any, item: StudyItem, **kwargs: Any) -> None:
        self.item = item
        keys = {(key.question_id, key.seat_position): key for key in item.keys.all()}
        super().__init__(*args, initial={
            "kind": item.kind, "explanation": item.explanation, "attention_instruction": item.attention_instruction,
        }, **kwargs)
        self.kind_locked = item.assignments.exists()
        if self.kind_locked:
            self.fields["kind"].disabled = True
            self.fields["kind"].help_text = KIND_LOCKED.format(kind=item.get_kind_display())
        seats = list(Seat.objects.filter(episode_id=item.episode_id).select_related("character").order_by("position"))
        self.key_fields: list[tuple[str, str | None]] = []  # (answer field, tolerance field or None)
        for question in item.study.instrument.questions.order_by("position"):
            if not keyable(question):
                continue
            targets = [(seat.position, seat.character.name) for seat in seats] if question.scope == "seat" else [
                (None, "")
            ]
            choices = get_kind(question.kind).participant_choices(question)
            for seat, name in targets:
                stored = keys.get((question.pk, seat))
                suffix = f"{question.pk}_{'all' if seat is None else seat}"
                label = f"{question.prompt}" + (f" — about {name}" if name else "")
                if choices:
                    field: forms.Field = forms.ChoiceField(
                        required=False, label=label, choices=[("", "— no known answer —"), *choices]
                    )
                else:
                    field = forms.CharField(required=False, label=label, max_length=200,
                                            help_text=get_kind(question.kind).what_to_answer(question))
                self.fields[f"key_{suffix}"] = field
                self.initial[f"key_{suffix}"] = stored.value if stored else ""
                tolerance = None
                if get_kind(question.kind).numeric:
                    tolerance = f"tolerance_{suffix}"
                    self.fields[tolerance] = forms.FloatField(
                        required=False, min_value=0, label=f"Tolerance for “{question.prompt}”"
                        + (f" about {name}" if name else ""),
                        help_text="How far off still counts as right (0: exactly).",
                    )
                    self.initial[tolerance] = stored.tolerance if stored else 0
                self.key_fields.append((f"key_{suffix}", tolerance))
                field.question, field.seat = question, seat  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for name, _ in self.key_fields:
            value = (data.get(name) or "").strip()
            if not value:
                continue
            stored, _, problem = check_value(self.fields[name].question, value)  # type: ignore[attr-defined]
            if problem:
                self.add_error(name, f"“{value}” is not an answer this question allows: {problem}")
            else:
                data[name] = stored
        kind = data.get("kind", self.item.kind)
        if kind == StudyItem.Kind.ATTENTION and not (data.get("attention_instruction") or "").strip():
            self.add_error("attention_instruction", "An attention check needs the instruction the item shows.")
        if kind in (StudyItem.Kind.TRAINING, StudyItem.Kind.QUALIFICATION, StudyItem.Kind.GOLD,
                    StudyItem.Kind.ATTENTION) and not any(data.get(name) for name, _ in self.key_fields):
            if self.key_fields:
                self.add_error(None, f"A {StudyItem.Kind(kind).label} item needs at least one known answer.")
            else:
                self.add_error("kind", "The study's instrument has no question a known answer can be given for.")
        return data

    def save(self, actor: AbstractBaseUser) -> StudyItem:
        """Store the kind, texts and known answers, and log the change, all at once."""
        item, data = self.item, self.cleaned_data
        with transaction.atomic():
            item.kind = data["kind"] if not self.kind_locked else item.kind
            item.explanation = data["explanation"].strip()
            item.attention_instruction = data["attention_instruction"].strip()
            item.save(update_fields=["kind", "explanation", "attention_instruction"])
            item.keys.all().delete()
            keys = []
            for name, tolerance in self.key_fields:
                if data.get(name):
                    field = self.fields[name]
                    keys.append(ItemKey(
                        item=item, question=field.question, seat_position=field.seat,  # type: ignore[attr-defined]
                        value=data[name], tolerance=(data.get(tolerance) or 0) if tolerance else 0,
                    ))
            ItemKey.objects.bulk_create(keys)
            study_log.record(
                item.study, "item-setup",
                f"Item {item.position + 1} set up as {item.get_kind_display()} with {len(keys)} known "
                f"answer{'s' if len(keys) != 1 else ''}.",
                actor=actor,
            )
        return item
