"""The admin is for superusers only: operators who manage teams and fix data across teams.

Researchers work through Parley's own pages, which are scoped to their teams; a staff flag or
model permissions alone open nothing here. One check in one place, instead of scoping every
ModelAdmin and its inlines, choices and actions to teams.
"""

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest


class SuperuserAdminSite(AdminSite):
    site_header = "Parley administration"
    site_title = "Parley admin"

    def has_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser


class ParleyAdminConfig(AdminConfig):
    default_site = "config.admin.SuperuserAdminSite"
