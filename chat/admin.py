"""The admin for chat studies and their participants.

Studies are edited with their conditions inline; their questionnaire is an instrument (edited in
the instruments' admin), which ``ChatStudy.clean`` checks: a preset or the study team's own, every
question one a participant can answer. Participants are what people did through a study link: the
admin shows them, filters them and changes only their stage (to unstick someone by hand), never
their ids, cell, episode or answers. Lists join what their columns show, so a page costs a fixed
number of queries.
"""

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from .forms import https_by_default
from .models import ChatCondition, ChatStudy, Participant


class ChatConditionInline(admin.TabularInline):
    model = ChatCondition
    extra = 0
    autocomplete_fields = ["barrier"]


class ChatStudyAdminForm(forms.ModelForm):
    class Meta:
        model = ChatStudy
        fields = "__all__"
        formfield_callback = https_by_default


@admin.register(ChatStudy)
class ChatStudyAdmin(admin.ModelAdmin):
    form = ChatStudyAdminForm
    list_display = [
        "title", "slug", "created_by", "instrument", "is_open", "turn_cap", "participant_count", "created_at",
    ]
    list_filter = ["team", "is_open", "partner_strategy", "created_by"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["scenarios"]
    autocomplete_fields = ["created_by", "instrument"]
    readonly_fields = ["created_at"]
    inlines = [ChatConditionInline]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def get_queryset(self, request: HttpRequest) -> QuerySet[ChatStudy]:
        return super().get_queryset(request).select_related("created_by", "instrument").annotate(
            participant_count=Count("participants")
        )

    @admin.display(description="participants", ordering="participant_count")
    def participant_count(self, study: ChatStudy) -> int:
        return study.participant_count


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["participant_id", "study", "stage", "scenario", "barrier", "created_at", "last_seen_at"]
    list_filter = ["stage", "study", "barrier"]
    search_fields = ["participant_id", "prolific_pid", "prolific_session_id"]
    list_select_related = ["study", "scenario", "barrier"]
    date_hierarchy = "created_at"
    readonly_fields = [
        "study", "participant_id", "prolific_pid", "prolific_study_id", "prolific_session_id", "scenario",
        "barrier", "episode", "response", "agent_lease_until", "agent_lease_owner", "created_at", "consented_at",
        "last_seen_at", "finished_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
