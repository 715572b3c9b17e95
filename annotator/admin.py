"""The researchers' admin for annotation studies.

A study's instrument, its questions and the answers themselves live in the research core and have
their admin there (``benchmark.instruments.admin``). Annotations and spans are what annotators
wrote: the admin shows them, with each version's answers, and never changes them. Every list joins
what its columns show, so a page costs a fixed number of queries.
"""

from django.contrib import admin
from django.db.models import Count, Prefetch, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from benchmark.instruments.targets import Target
from benchmark.models import Answer

from .models import Annotation, Assignment, ItemKey, Membership, ReportBundle, Span, Study, StudyItem


class ReadOnlyAdminMixin:
    """Show rows without letting anyone add, change or delete them."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


# Studies


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["annotator"]
    readonly_fields = ["joined_at", "instructions_read_at"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = [
        "title", "slug", "instrument", "overlap", "item_count", "member_count", "is_open", "created_by", "created_at",
    ]
    list_filter = ["team", "is_open", "instrument"]
    search_fields = ["title", "slug", "instructions"]
    list_select_related = ["instrument", "created_by"]
    prepopulated_fields = {"slug": ["title"]}
    readonly_fields = ["invite_token", "created_by", "created_at", "dashboard_link"]
    autocomplete_fields = ["instrument"]
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
    list_select_related = ["item__study", "question__instrument"]
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


class SpanInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Span
    fields = ["question", "label", "start_turn", "start_char", "end_turn", "end_char", "attribute_list",
              "rationale", "correction"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Span]:
        return super().get_queryset(request).select_related("question__instrument").prefetch_related("attributes")

    @admin.display(description="attributes")
    def attribute_list(self, span: Span) -> str:
        return ", ".join(attribute.name for attribute in span.attributes.all())


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["__str__", "status", "version", "instrument", "revision", "seconds_spent", "created_at",
                    "submitted_at"]
    list_filter = ["status", "response__instrument", "assignment__item__study"]
    search_fields = ["assignment__annotator__username", "assignment__item__study__title",
                     "assignment__item__episode__external_id"]
    list_select_related = ["assignment__item__study", "assignment__annotator", "response__instrument"]
    readonly_fields = ["answers"]
    inlines = [SpanInline]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Annotation]:
        answers = Answer.objects.select_related("question", "goal").order_by(
            "question__position", "seat_position", "goal", "turn", "end_turn", "start_char", "pk")
        return super().get_queryset(request).prefetch_related(Prefetch("response__answers", queryset=answers))

    @admin.display(description="instrument", ordering="response__instrument")
    def instrument(self, annotation: Annotation) -> str:
        return str(annotation.response.instrument)

    @admin.display(description="answers")
    def answers(self, annotation: Annotation) -> str:
        """The version's answers (benchmark answers of its response), one line each."""
        rows = [
            (answer.question.key, _about(answer), answer.value, f" — {answer.reasoning}" if answer.reasoning else "")
            for answer in annotation.response.answers.all()
        ]
        return format_html_join(mark_safe("<br>"), "{}{}: {}{}", rows) if rows else "—"


@admin.register(Span)
class SpanAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["__str__", "annotation", "label", "question"]
    list_filter = ["label", "attributes", "annotation__assignment__item__study"]
    search_fields = ["rationale", "correction", "annotation__assignment__annotator__username"]
    list_select_related = ["annotation__assignment__item__study", "annotation__assignment__annotator",
                           "question__instrument"]


@admin.register(ReportBundle)
class ReportBundleAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["study", "status", "annotations", "size", "created_at", "finished_at"]
    list_filter = ["status"]
    list_select_related = ["study"]
    search_fields = ["study__title", "study__slug"]


def _about(answer: Answer) -> str:
    """`` (seat 2)``, `` (goal: …)``, `` (turn 4)``: what an answer is about, after its question; nothing for the
    episode."""
    target = Target.of(answer)
    if target == Target.episode():
        return ""
    if target.seat is not None and target.goal is None:
        return f" (seat {target.seat + 1})"
    return f" ({target.describe(goal_names={answer.goal_id: f'goal: {answer.goal.text}'} if answer.goal else None)})"
