"""The researchers' admin for annotation studies.

Schemes are edited with their questions inline until the first submitted annotation freezes
them; after that every question is read-only and the "copy as new version" action makes an
editable copy. Annotations, answers and spans are what annotators wrote: the admin shows them and
never changes them. Every list joins what its columns show, so a page costs a fixed number of
queries.
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from . import schemes
from .models import (
    Annotation,
    Answer,
    Assignment,
    ItemKey,
    Membership,
    Question,
    ReportBundle,
    Scheme,
    SocialAttribute,
    Span,
    Study,
    StudyItem,
)


def _editable(scheme: Scheme | None) -> bool:
    if scheme is None:
        return True
    try:
        schemes.check_editable(scheme)
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


# Schemes


class QuestionFormSet(BaseInlineFormSet):
    """A scheme's questions are checked together (keys, positions, options), and only while editable."""

    def clean(self) -> None:
        super().clean()
        if any(self.errors) or not self.has_changed():
            return
        if self.instance.pk is not None:
            schemes.check_editable(self.instance)
        kept = [
            form.instance for form in self.forms
            if not self._should_delete_form(form) and (form.instance.pk is not None or form.has_changed())
        ]
        schemes.check_questions(kept)


class QuestionForm(forms.ModelForm):
    def clean(self) -> dict:
        data = super().clean()
        scheme = data.get("scheme") or getattr(self.instance, "scheme", None)
        if scheme is not None and self.instance.pk is not None:
            schemes.check_editable(scheme)
        if "kind" in data and "options" in data:
            try:
                schemes.check_options(data["kind"], data["options"])
            except ValidationError as problems:
                self.add_error("options", problems)
        return data


class QuestionInline(admin.StackedInline):
    model = Question
    formset = QuestionFormSet
    form = QuestionForm
    extra = 0
    ordering = ["position"]

    def has_add_permission(self, request: HttpRequest, obj: Scheme | None = None) -> bool:
        return _editable(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Scheme | None = None) -> bool:
        return _editable(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Scheme | None = None) -> bool:
        return _editable(obj) and super().has_delete_permission(request, obj)


@admin.register(Scheme)
class SchemeAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "preset", "question_count", "is_frozen", "frozen_at", "created_at"]
    list_filter = ["preset", ("frozen_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "description", "preset"]
    readonly_fields = ["frozen_at", "created_at"]
    inlines = [QuestionInline]
    actions = ["copy_as_new_version"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Scheme]:
        return super().get_queryset(request).annotate(question_count=Count("questions"))

    def get_readonly_fields(self, request: HttpRequest, obj: Scheme | None = None) -> list[str]:
        if not _editable(obj):
            return ["name", "preset", "version", "description", "frozen_at", "created_at"]
        return list(self.readonly_fields)

    def save_model(self, request: HttpRequest, obj: Scheme, form, change: bool) -> None:
        if change:
            schemes.check_editable(obj)  # a last guard: the form is read-only once frozen
        super().save_model(request, obj, form, change)

    @admin.display(description="questions", ordering="question_count")
    def question_count(self, scheme: Scheme) -> int:
        return scheme.question_count

    @admin.display(description="frozen", boolean=True, ordering="frozen_at")
    def is_frozen(self, scheme: Scheme) -> bool:
        return scheme.frozen

    @admin.action(description="Copy as a new version (editable)")
    def copy_as_new_version(self, request: HttpRequest, queryset: QuerySet[Scheme]) -> None:
        copies = [schemes.new_version(scheme) for scheme in queryset]
        links = format_html_join(
            ", ", '<a href="{}">{}</a>',
            ((reverse("admin:annotator_scheme_change", args=[copy.pk]), str(copy)) for copy in copies),
        )
        self.message_user(request, format_html("Created {}.", links), messages.SUCCESS)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    form = QuestionForm
    list_display = ["key", "scheme", "position", "kind", "per_seat", "required", "rationale", "dimension", "truth"]
    list_filter = ["kind", "per_seat", "required", "scheme"]
    search_fields = ["key", "prompt", "scheme__name"]
    list_select_related = ["scheme"]
    ordering = ["scheme", "position"]

    def has_change_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        return (obj is None or _editable(obj.scheme)) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        return (obj is None or _editable(obj.scheme)) and super().has_delete_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: Question, form, change: bool) -> None:
        schemes.check_editable(obj.scheme)
        super().save_model(request, obj, form, change)


@admin.register(SocialAttribute)
class SocialAttributeAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "position"]
    list_editable = ["position"]
    search_fields = ["key", "name", "definition"]


# Studies


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["annotator"]
    readonly_fields = ["joined_at", "instructions_read_at"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = [
        "title", "slug", "scheme", "overlap", "item_count", "member_count", "is_open", "created_by", "created_at",
    ]
    list_filter = ["team", "is_open", "scheme"]
    search_fields = ["title", "slug", "instructions"]
    list_select_related = ["scheme", "created_by"]
    prepopulated_fields = {"slug": ["title"]}
    readonly_fields = ["invite_token", "created_by", "created_at", "dashboard_link"]
    autocomplete_fields = ["scheme"]
    inlines = [MembershipInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Study]:
        return super().get_queryset(request).annotate(
            item_count=Count("items", distinct=True), member_count=Count("memberships", distinct=True)
        )

    def save_model(self, request: HttpRequest, obj: Study, form, change: bool) -> None:
        if obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    @admin.display(description="items", ordering="item_count")
    def item_count(self, study: Study) -> int:
        return study.item_count

    @admin.display(description="annotators", ordering="member_count")
    def member_count(self, study: Study) -> int:
        return study.member_count

    @admin.display(description="dashboard")
    def dashboard_link(self, study: Study) -> str:
        if study.pk is None:
            return "—"
        url = reverse("annotator:dashboard", args=[study.slug])
        return format_html('<a href="{}">{}</a>', url, url)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["annotator", "study", "joined_at", "instructions_read_at"]
    list_filter = ["study"]
    search_fields = ["annotator__username", "study__title", "study__slug"]
    list_select_related = ["annotator", "study"]
    autocomplete_fields = ["annotator", "study"]


class ItemKeyInline(admin.TabularInline):
    model = ItemKey
    extra = 0
    raw_id_fields = ["question"]


@admin.register(StudyItem)
class StudyItemAdmin(admin.ModelAdmin):
    list_display = ["__str__", "study", "position", "kind", "episode", "compared_episode"]
    list_filter = ["kind", "study"]
    search_fields = ["study__title", "study__slug", "episode__external_id", "attention_instruction"]
    list_select_related = ["study", "episode__scenario", "episode__barrier", "compared_episode__scenario",
                           "compared_episode__barrier"]
    autocomplete_fields = ["study", "episode", "compared_episode"]
    inlines = [ItemKeyInline]


@admin.register(ItemKey)
class ItemKeyAdmin(admin.ModelAdmin):
    list_display = ["item", "question", "seat_position", "value", "tolerance"]
    list_filter = ["item__kind", "item__study"]
    search_fields = ["item__study__title", "question__key", "value"]
    list_select_related = ["item__study", "question__scheme"]
    raw_id_fields = ["item", "question"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "status", "claimed_at", "lease_expires_at", "submitted_at", "seconds_spent"]
    list_filter = ["status", "item__study", "item__kind"]
    search_fields = ["annotator__username", "item__study__title", "item__episode__external_id"]
    list_select_related = ["item__study", "annotator"]
    raw_id_fields = ["item", "annotator"]
    date_hierarchy = "claimed_at"


# What annotators wrote: shown, never changed here


class AnswerInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Answer
    fields = ["question", "seat_position", "value", "number", "rationale"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Answer]:
        return super().get_queryset(request).select_related("question__scheme")


class SpanInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Span
    fields = ["question", "label", "start_turn", "start_char", "end_turn", "end_char", "attribute_list",
              "rationale", "correction"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Span]:
        return super().get_queryset(request).select_related("question__scheme").prefetch_related("attributes")

    @admin.display(description="attributes")
    def attribute_list(self, span: Span) -> str:
        return ", ".join(attribute.name for attribute in span.attributes.all())


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["__str__", "status", "version", "scheme", "revision", "seconds_spent", "created_at",
                    "submitted_at"]
    list_filter = ["status", "scheme", "assignment__item__study"]
    search_fields = ["assignment__annotator__username", "assignment__item__study__title",
                     "assignment__item__episode__external_id"]
    list_select_related = ["assignment__item__study", "assignment__annotator", "scheme"]
    inlines = [AnswerInline, SpanInline]
    date_hierarchy = "created_at"


@admin.register(Answer)
class AnswerAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["annotation", "question", "seat_position", "value", "number"]
    list_filter = ["question__kind", "annotation__status", "annotation__assignment__item__study"]
    search_fields = ["value", "rationale", "question__key", "annotation__assignment__annotator__username"]
    list_select_related = ["annotation__assignment__item__study", "annotation__assignment__annotator",
                           "question__scheme"]


@admin.register(Span)
class SpanAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["__str__", "annotation", "label", "question"]
    list_filter = ["label", "attributes", "annotation__assignment__item__study"]
    search_fields = ["rationale", "correction", "annotation__assignment__annotator__username"]
    list_select_related = ["annotation__assignment__item__study", "annotation__assignment__annotator",
                           "question__scheme"]


@admin.register(ReportBundle)
class ReportBundleAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["study", "status", "annotations", "size", "created_at", "finished_at"]
    list_filter = ["status"]
    list_select_related = ["study"]
    search_fields = ["study__title", "study__slug"]
