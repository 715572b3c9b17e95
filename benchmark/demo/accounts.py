"""The demo's accounts: a researcher and three annotators of the demo team, and a superuser.

The researcher is neither staff nor superuser and holds no model permissions: everything a
researcher does goes through Parley's team-scoped pages. The superuser ``admin`` is for the few
operator tasks that only the admin does (users, teams, built-in presets).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import OutputWrapper
from django.db import transaction

from ..login_links import login_link_path
from ..models import Team, TeamMember
from ..permissions import RESEARCHERS

ANNOTATORS = "annotators"
RESEARCHER = "researcher"
ANNOTATOR_NAMES = ("annotator1", "annotator2", "annotator3")
SUPERUSER = "admin"


@dataclass(frozen=True)
class Account:
    user: Any
    role: str  # as printed: researchers, annotators, superuser
    password: str  # empty when it was left as it was


@transaction.atomic
def ensure_accounts(team: Team, *, new_passwords: bool = False, superuser: bool = False) -> list[Account]:
    """Create the demo accounts that are missing (the superuser too with ``superuser``); a password is
    set (and returned) only for a new account, or for every account with ``new_passwords``."""
    researchers, _ = Group.objects.get_or_create(name=RESEARCHERS)
    researchers.permissions.clear()  # earlier demos granted every benchmark permission
    annotators, _ = Group.objects.get_or_create(name=ANNOTATORS)
    accounts = []
    for username, group in [(RESEARCHER, researchers)] + [(name, annotators) for name in ANNOTATOR_NAMES]:
        user, password = _user(username, new_passwords, superuser=False)
        user.groups.add(group)
        role = TeamMember.Role.RESEARCHER if group == researchers else TeamMember.Role.ANNOTATOR
        TeamMember.objects.update_or_create(team=team, user=user, defaults={"role": role})
        accounts.append(Account(user, group.name, password))
    if superuser:
        user, password = _user(SUPERUSER, new_passwords, superuser=True)
        accounts.append(Account(user, "superuser", password))
    return accounts


def _user(username: str, new_password: bool, *, superuser: bool) -> tuple[Any, str]:
    user, created = get_user_model().objects.get_or_create(username=username)
    # Staff opens nothing more for researchers (a group and a team role); the admin is the superuser's.
    user.is_staff = user.is_superuser = superuser
    password = ""
    if created or new_password:
        password = secrets.token_urlsafe(9)
        user.set_password(password)
    user.save()
    return user, password


def write_logins(out: OutputWrapper, accounts: list[Account], base_url: str) -> None:
    """Each account with its password (when just set) and a one-use login link."""
    out.write("Demo accounts (each login link works once):")
    for account in accounts:
        shown = account.password or "(unchanged; make demo or demo_logins sets a new one)"
        link = base_url.rstrip("/") + login_link_path(account.user)
        note = f"  then {base_url.rstrip('/')}/admin/" if account.role == "superuser" else ""
        out.write(f"  {account.user.username:<11} {account.role:<12} password {shown}\n    {link}{note}")
