"""The builder's forms: an instrument's name, one question (its fields drawn from its kind), a copy, an upload.

``QuestionForm`` builds an unsaved ``Question`` and asks the instruments' own checks about it
(``benchmark.instruments.checks.question_problems``, which asks the kind); each problem is put on the
field it names: an option's problem on that option's field, with "line n" for an entry of a list.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from benchmark.forms import team_field
from benchmark.instruments import checks
from benchmark.instruments.kinds import all_kinds, get_kind
from benchmark.instruments.kinds.base import QuestionKind
from benchmark.models import Instrument, Question

from .option_fields import EMPTY, editor_for

OPTION_PREFIX = "option_"
UPLOAD_MAX_BYTES = 2 * 1024 * 1024
_ENTRY = re.compile(r"^options\.(?P<name>\w+)(?:\[(?P<index>\d+)\])?(?:\.(?P<rest>[\w.]+))?$")
_RATIONALES = Question._meta.get_field("rationale").choices


def kind_choices() -> list[tuple[str, str]]:
    return [(kind.name, kind.label) for kind in all_kinds()]


class InstrumentForm(forms.ModelForm):
    """A new instrument's name and description, and the team that owns it; later, its name and description."""

    class Meta:
        model = Instrument
        fields = ["name", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        help_texts = {"description": "What it asks and why, for the team (respondents do not see it)."}

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            self.fields["team"] = team_field(user)
            self.order_fields(["team", "name", "description"])

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Give the instrument a name.")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        team = data.get("team") or self.instance.team
        name = data.get("name")
        clash = Instrument.objects.filter(team=team, name=name, version=self.instance.version or 1)
        if name and team is not None and clash.exclude(pk=self.instance.pk).exists():
            self.add_error("name", f"Your team already has an instrument called “{name}”; choose another name.")
        return data


class QuestionForm(forms.Form):
    """One question of ``kind``: its wording, whom it asks about (scope) and the kind's options, one field each."""

    key = forms.SlugField(max_length=50, help_text="A short name for exports and reports: letters, digits, - or _.")
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), help_text="The question as respondents read it.")
    label = forms.CharField(max_length=100, required=False, help_text="A short name for tables; the key when empty.")
    help_text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False,
                                help_text="Shown under the question.")
    required = forms.BooleanField(required=False, initial=True)
    scope = forms.ChoiceField(choices=Question.Scope.choices, label="Asked",
                              help_text="What each answer is about: the episode, each seat, each goal, each turn.")
    rationale = forms.ChoiceField(choices=_RATIONALES, label="Reason for the answer", initial="none")
    dimension = forms.CharField(max_length=30, required=False,
                                help_text="Optional: the construct it measures, to set it beside the judge's.")

    def __init__(self, *args: Any, kind: QuestionKind, instrument: Instrument, question: Question | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind, self.instrument, self.question = kind, instrument, question
        self.option_names = list(kind.option_names or ())
        for name in self.option_names:
            self.fields[OPTION_PREFIX + name] = editor_for(name).field(name)
        if question is not None and not self.is_bound:
            for name in ("key", "prompt", "label", "help_text", "required", "scope", "rationale", "dimension"):
                self.initial[name] = getattr(question, name)
            for name in self.option_names:
                self.initial[OPTION_PREFIX + name] = editor_for(name).to_text((question.options or {}).get(name))

    def option_fields(self) -> list[forms.BoundField]:
        return [self[OPTION_PREFIX + name] for name in self.option_names]

    def plain_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if not name.startswith(OPTION_PREFIX)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        options: dict[str, Any] = {}
        for name in self.option_names:
            field = OPTION_PREFIX + name
            if field in self.errors:
                continue
            try:
                value = editor_for(name).read(data.get(field, ""))
            except forms.ValidationError as problem:
                self.add_error(field, problem)
                continue
            if value is not EMPTY:
                options[name] = value
        if self.errors:
            return data
        key = data["key"]
        problems = checks.question_problems(self.build(options))
        others = self.instrument.questions.exclude(pk=getattr(self.question, "pk", None))
        if others.filter(key=key).exists():
            self.add_error("key", f"Another question of this instrument has the key “{key}”.")
        for problem in problems:
            self._place(problem.removeprefix(f"{key}: "))
        data["options"] = options
        return data

    def build(self, options: dict[str, Any]) -> Question:
        """The question as the form says it (unsaved), keeping what the form does not edit (its truth)."""
        data = self.cleaned_data
        question = Question(
            instrument=self.instrument, kind=self.kind.name, options=options,
            position=self.question.position if self.question else 0, truth=self.question.truth if self.question else "",
            **{name: data[name].strip() if isinstance(data[name], str) else data[name]
               for name in ("key", "prompt", "label", "help_text", "required", "scope", "rationale", "dimension")},
        )
        if not checks.option_problems(question.kind, options):
            checks.set_bounds(question)
        return question

    def _place(self, problem: str) -> None:
        """Put one of the checks' problems (``<field>: <message>``) on the field it names."""
        where, _, message = problem.partition(": ")
        found = _ENTRY.match(where)
        if found and OPTION_PREFIX + found["name"] in self.fields:
            if found["index"] is not None:
                part = f" ({found['rest']})" if found["rest"] else ""
                message = f"Line {int(found['index']) + 1}{part}: {message}"
            elif found["rest"]:
                message = f"{found['rest']}: {message}"
            self.add_error(OPTION_PREFIX + found["name"], message)
        elif where in self.fields:
            self.add_error(where, message)
        else:
            self.add_error(None, f"{where}: {message}" if message else where)


class KindForm(forms.Form):
    """Which kind of question to add."""

    kind = forms.ChoiceField(choices=kind_choices, label="Add a question of kind")

    def kind_or_none(self) -> QuestionKind | None:
        return get_kind(self.cleaned_data["kind"]) if self.is_valid() else None


class CopyForm(forms.Form):
    """A copy of an instrument (a preset or the team's own) for one of the researcher's teams, under a new name."""

    name = forms.CharField(max_length=200, help_text="The copy's name.")

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"] = team_field(user)
        self.order_fields(["team", "name"])

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        name, team = (data.get("name") or "").strip(), data.get("team")
        if name and team is not None and Instrument.objects.filter(team=team, name=name).exists():
            self.add_error("name", f"Your team already has an instrument called “{name}”; choose another name.")
        data["name"] = name
        return data


class UploadForm(forms.Form):
    """An instrument file to import, for one of the researcher's teams."""

    file = forms.FileField(help_text="A JSON file as the instrument's Export link writes it.")

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"] = team_field(user)
        self.order_fields(["team", "file"])

    def clean_file(self) -> bytes:
        upload = self.cleaned_data["file"]
        if upload.size > UPLOAD_MAX_BYTES:
            raise forms.ValidationError(f"The file is larger than {UPLOAD_MAX_BYTES // 1024 // 1024} MB.")
        return upload.read()
