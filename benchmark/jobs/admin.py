"""The task queue in the admin (superusers only): every team's jobs, read only, and Huey's dashboard.

The jobs are queued by the pages and commands that start work, kept current by the queue's signals
(:mod:`benchmark.jobs.signals`) and retried from the jobs page, so here they are only read.

Huey's dashboard (``huey.contrib.djhuey.stats``, when ``PARLEY_TASK_STATS`` leaves it installed)
hangs its pages on a model with no table. Its admin keeps Django's object pages (add, change,
delete, history), and each of those that reads a row fails on the missing table, a server error
for whoever follows such a URL; registered again here with only the dashboard's own pages.
"""

from __future__ import annotations

from django.apps import apps
from django.contrib import admin
from django.http import HttpRequest
from django.urls import URLPattern

from ..models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    """Every team's jobs and the upkeep that belongs to none; the queue's own figures are Huey's dashboard."""

    list_display = ["label", "team", "task", "status", "attempts", "worker", "created_at", "finished_at"]
    list_filter = ["status", "team", "task"]
    list_select_related = ["team"]
    search_fields = ["label", "error", "task_id"]
    date_hierarchy = "created_at"
    actions = None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False


if apps.is_installed("huey.contrib.djhuey.stats"):
    from huey.contrib.djhuey.stats.admin import HueyDashboardAdmin
    from huey.contrib.djhuey.stats.models import HueyDashboard

    OBJECT_PAGES = ("_add", "_change", "_delete", "_history")

    class DashboardAdmin(HueyDashboardAdmin):
        """Huey's dashboard, its live fragment, its events and its actions; no object pages."""

        def get_urls(self) -> list[URLPattern]:
            return [url for url in super().get_urls() if url.name and not url.name.endswith(OBJECT_PAGES)]

    if admin.site.is_registered(HueyDashboard):
        admin.site.unregister(HueyDashboard)
    admin.site.register(HueyDashboard, DashboardAdmin)
