"""The form that asks a person an instrument's questions: one field per question, drawn by its kind's widget.

One form for everyone who answers an instrument on a page of their own: a chat participant's questionnaire
(``chat.answers``), AgentSense's human test after a chat (``chat.human_test``, through ``question_field``) and a
crowd annotator's comprehension check (``annotator.crowd``). Each field is named by its question's key and
drawn by the partial ``templates/instruments/_question.html`` with its kind's widget partial
(``templates/instruments/kinds/``), the one the annotator's item page draws too. Each answer is checked by
``benchmark.instruments.values``, the rule every respondent's answers follow (the database's triggers hold
the same line), and a problem is named by the question's number.
"""

from __future__ import annotations

from typing import Any

from django import forms

from ..models import Instrument, Question
from .kinds import get_kind
from .values import check_labels, check_value, numeric_range, what_to_answer


class InstrumentForm(forms.Form):
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
