"""Put a user into a team as researcher or annotator, creating the team on first use."""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils.text import slugify

from benchmark.models import Team, TeamMember


class Command(BaseCommand):
    help = (
        "Add a user to a team (created if it does not exist yet) as a researcher, who sees and manages the "
        "team's data, or as an annotator of its pool. A user already in the team gets the role given."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team", metavar="TEAM", help="The team's slug, or its name for a new team.")
        parser.add_argument("username", metavar="USERNAME")
        parser.add_argument(
            "--role", choices=TeamMember.Role.values, default=TeamMember.Role.RESEARCHER,
            help="researcher (default) or annotator.",
        )

    def handle(self, *args: Any, team: str, username: str, role: str, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}; create the account first (manage.py createsuperuser, "
                               "or sign-up through a study's invite link).")
        slug = slugify(team)
        if not slug:
            raise CommandError(f"{team!r} cannot name a team: use letters or digits.")
        with transaction.atomic():
            found = Team.objects.filter(slug=team).first() or Team.objects.filter(slug=slug).first()
            created = found is None
            if created:
                if Team.objects.filter(name=team).exists():
                    raise CommandError(f"A team is already named {team!r}; give its slug instead.")
                found = Team.objects.create(name=team, slug=slug)
            TeamMember.objects.update_or_create(team=found, user=user, defaults={"role": role})
        what = "created the team and added" if created else "added"
        self.stdout.write(f"Team {found.slug}: {what} {username} as {role}.")
