"""The admin for instruments and what respondents answered (superusers only: see ``config.admin``).

Instruments are edited with their questions inline until the first final response freezes them;
after that every question is read-only and the "copy as new version" action makes an editable
copy. Saving questions goes through ``checks.check_questions``, which also sets a numeric
question's bounds from its options. An instrument with no team is shared by every team (the
presets are); one with a team is that team's own. Answers are what respondents gave: listed here,
never changed (respondents and responses have their admin in ``benchmark.admin``). Every list
joins what its columns show.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from benchmark.models import Answer, Instrument, Question, SocialAttribute

from . import checks, versions
from .targets import Target


def _editable(instrument: Instrument | None) -> bool:
    if instrument is None:
        return True
    try:
        versions.check_editable(instrument)
    except ValidationError:
        return False
    return True


class ReadOnlyAdminMixin:
    """Show rows without letting anyone add, change or delete them."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class QuestionFormSet(BaseInlineFormSet):
    """An instrument's questions are checked together (keys, positions, options), and only while editable."""

    def clean(self) -> None:
        super().clean()
        if any(self.errors) or not self.has_changed():
            return
        if self.instance.pk is not None:
            versions.check_editable(self.instance)
        kept = [
            form.instance for form in self.forms
            if not self._should_delete_form(form) and (form.instance.pk is not None or form.has_changed())
        ]
        checks.check_questions(kept)  # sets each kept question's low/high from its options


class QuestionForm(forms.ModelForm):
    class Meta:
        model = Question
        exclude = ["low", "high"]  # set from the options by the checks

    def clean(self) -> dict:
        data = super().clean()
        instrument = data.get("instrument") or getattr(self.instance, "instrument", None)
        if instrument is not None and self.instance.pk is not None:
            versions.check_editable(instrument)
        if "kind" in data and "options" in data:
            try:
                checks.check_options(data["kind"], data["options"])
            except ValidationError as problems:
                self.add_error("options", problems)
            else:
                bounds = checks.numeric_bounds(data["kind"], data["options"])
                self.instance.low, self.instance.high = bounds if bounds else (None, None)
        return data


class QuestionInline(admin.StackedInline):
    model = Question
    formset = QuestionFormSet
    form = QuestionForm
    readonly_fields = ["low", "high"]
    extra = 0
    ordering = ["position"]

    def has_add_permission(self, request: HttpRequest, obj: Instrument | None = None) -> bool:
        return _editable(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Instrument | None = None) -> bool:
        return _editable(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Instrument | None = None) -> bool:
        return _editable(obj) and super().has_delete_permission(request, obj)


@admin.register(Instrument)
class InstrumentAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "team", "preset", "question_count", "is_frozen", "frozen_at", "created_at"]
    list_filter = ["team", "preset", ("frozen_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "description", "preset"]
    list_select_related = ["team"]
    readonly_fields = ["frozen_at", "created_at"]
    inlines = [QuestionInline]
    actions = ["copy_as_new_version"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Instrument]:
        return super().get_queryset(request).annotate(question_count=Count("questions"))

    def get_readonly_fields(self, request: HttpRequest, obj: Instrument | None = None) -> list[str]:
        if not _editable(obj):
            return ["name", "team", "preset", "version", "description", "frozen_at", "created_at"]
        return list(self.readonly_fields)

    def save_model(self, request: HttpRequest, obj: Instrument, form, change: bool) -> None:
        if change:
            versions.check_editable(obj)  # a last guard: the form is read-only once frozen
        super().save_model(request, obj, form, change)

    @admin.display(description="questions", ordering="question_count")
    def question_count(self, instrument: Instrument) -> int:
        return instrument.question_count

    @admin.display(description="frozen", boolean=True, ordering="frozen_at")
    def is_frozen(self, instrument: Instrument) -> bool:
        return instrument.frozen

    @admin.action(description="Copy as a new version (editable)")
    def copy_as_new_version(self, request: HttpRequest, queryset: QuerySet[Instrument]) -> None:
        copies = [versions.new_version(instrument) for instrument in queryset]
        links = format_html_join(
            ", ", '<a href="{}">{}</a>',
            ((reverse("admin:benchmark_instrument_change", args=[copy.pk]), str(copy)) for copy in copies),
        )
        self.message_user(request, format_html("Created {}.", links), messages.SUCCESS)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    form = QuestionForm
    list_display = ["key", "instrument", "position", "kind", "scope", "required", "rationale", "dimension", "truth"]
    list_filter = ["kind", "scope", "required", "instrument"]
    search_fields = ["key", "prompt", "instrument__name"]
    list_select_related = ["instrument"]
    readonly_fields = ["low", "high"]
    ordering = ["instrument", "position"]

    def has_change_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        return (obj is None or _editable(obj.instrument)) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        return (obj is None or _editable(obj.instrument)) and super().has_delete_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: Question, form, change: bool) -> None:
        versions.check_editable(obj.instrument)
        super().save_model(request, obj, form, change)


@admin.register(SocialAttribute)
class SocialAttributeAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "position"]
    list_editable = ["position"]
    search_fields = ["key", "name", "definition"]


# What respondents answered: shown, never changed here


@admin.register(Answer)
class AnswerAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["response", "question", "target", "value", "number"]
    list_filter = ["question__kind", "response__status", "response__respondent__kind"]
    search_fields = ["value", "reasoning", "question__key", "response__respondent__user__username"]
    list_select_related = ["response__respondent__user", "response__instrument", "response__episode",
                           "question__instrument"]

    @admin.display(description="about", ordering="seat_position")
    def target(self, answer: Answer) -> str:
        """What the answer is about: the episode, a seat, a goal (by id), a turn, a span."""
        return Target.of(answer).describe()
