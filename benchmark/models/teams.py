"""Teams own research data: a lab's scenarios, characters, episodes, runs and studies.

Every research object belongs to exactly one team, directly (``team``) or through its parent (an
evaluation through its episode). Researchers see and change only their teams' objects; an id from
another team is a 404, as if it did not exist. Built-in barriers and instrument presets have no team
and are shared read-only. Superusers see every team.

A model says how it reaches its team with ``team_path`` on its ``OwnedQuerySet`` manager (a
subclass names another path, e.g. ``episode__team``); views, forms and commands ask
``Model.objects.owned_by(user)`` or ``.of_team(team)`` and never filter by team themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import Q

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

DEFAULT_TEAM_SLUG = "default"


class Team(models.Model):
    """A research group (a lab, a project) whose members share its data and nothing else."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True, help_text="Used by commands: --team <slug>.")
    created_at = models.DateTimeField(auto_now_add=True)
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, through="TeamMember", related_name="teams")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TeamMember(models.Model):
    """A user's place in a team: researchers manage its data; annotators form its annotator pool."""

    class Role(models.TextChoices):
        RESEARCHER = "researcher", "researcher"
        ANNOTATOR = "annotator", "annotator"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_memberships")
    role = models.CharField(max_length=20, choices=Role, default=Role.RESEARCHER)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team", "role", "user"]
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="team_member_unique")]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.team}"


def research_teams(user: AbstractBaseUser | AnonymousUser) -> models.QuerySet[Team]:
    """The teams whose data ``user`` may see and change: all for a superuser, none when signed out."""
    if not user.is_authenticated or not user.is_active:
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    return Team.objects.filter(members__user=user, members__role=TeamMember.Role.RESEARCHER)


class OwnedQuerySet(models.QuerySet):
    """Rows scoped to teams. ``team_path`` is the lookup from the model to its team.

    ``shared_when_teamless``: rows with no team (built-in barriers) are visible to every team.
    """

    team_path = "team"
    shared_when_teamless = False

    def _in_teams(self, teams: Any) -> models.QuerySet:
        condition = Q(**{f"{self.team_path}__in": teams})
        if self.shared_when_teamless:
            condition |= Q(**{f"{self.team_path}__isnull": True})
        return self.filter(condition)

    def owned_by(self, user: AbstractBaseUser | AnonymousUser) -> models.QuerySet:
        """What ``user`` may see: the rows of their research teams (and shared rows)."""
        if user.is_authenticated and user.is_active and user.is_superuser:
            return self
        return self._in_teams(research_teams(user).values("pk"))

    def of_team(self, team: Team) -> models.QuerySet:
        """The rows one team works with (its own, and shared rows): for commands and workers."""
        return self._in_teams([team.pk])


def team_for_command(slug: str | None) -> Team:
    """The team a management command works for: ``--team <slug>``, or the only team there is.

    Raises ``LookupError`` with a message naming the choices when neither settles it.
    """
    if slug:
        try:
            return Team.objects.get(slug=slug)
        except Team.DoesNotExist:
            known = ", ".join(Team.objects.values_list("slug", flat=True)) or "none"
            raise LookupError(f"No team with the slug {slug!r} (teams: {known}).") from None
    teams = list(Team.objects.all()[:2])
    if len(teams) == 1:
        return teams[0]
    if not teams:
        raise LookupError("There is no team yet: create one with manage.py add_team_member, or in the admin.")
    known = ", ".join(Team.objects.values_list("slug", flat=True))
    raise LookupError(f"There are several teams; say which with --team (one of: {known}).")


def is_team_researcher(user: AbstractBaseUser | AnonymousUser, team: Team | int | None) -> bool:
    """Whether ``user`` may change ``team``'s data."""
    if team is None:
        return False
    team_id = team if isinstance(team, int) else team.pk
    return research_teams(user).filter(pk=team_id).exists()
