"""Put a user into a team as researcher or annotator, creating the team on first use (and the user with --create)."""

import getpass
import sys
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils.text import slugify

from benchmark.login_links import login_link_path
from benchmark.models import Team, TeamMember


class Command(BaseCommand):
    help = (
        "Add a user to a team (created if it does not exist yet) as a researcher, who sees and manages the "
        "team's data, or as an annotator of its pool. A user already in the team gets the role given. With "
        "--create a missing user is created: with a password typed at a prompt, or with --link none, and a "
        "one-use login link is printed instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team", metavar="TEAM", help="The team's slug, or its name for a new team.")
        parser.add_argument("username", metavar="USERNAME")
        parser.add_argument(
            "--role", choices=TeamMember.Role.values, default=TeamMember.Role.RESEARCHER,
            help="researcher (default) or annotator.",
        )
        parser.add_argument("--create", action="store_true", help="Create the user when there is none of that name.")
        parser.add_argument("--email", default="", help="The new user's e-mail address (for password resets).")
        parser.add_argument(
            "--link", action="store_true",
            help="With --create: print a one-use login link instead of asking for a password.",
        )
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="The site's address, for the printed login link.",
        )

    def handle(self, *args: Any, team: str, username: str, role: str, create: bool, email: str, link: bool,
               base_url: str, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None and not create:
            raise CommandError(f"No user named {username!r}; create the account with --create (or manage.py "
                               "createsuperuser, or sign-up through a study's invite link).")
        if link and not create:
            raise CommandError("--link goes with --create: it prints the new user's first login link.")
        slug = slugify(team)
        if not slug:
            raise CommandError(f"{team!r} cannot name a team: use letters or digits.")
        new_user = user is None
        password = self._ask_password(username) if new_user and not link else None
        with transaction.atomic():
            if new_user:
                user = get_user_model().objects.create_user(username=username, email=email, password=password)
            found = Team.objects.filter(slug=team).first() or Team.objects.filter(slug=slug).first()
            created = found is None
            if created:
                if Team.objects.filter(name=team).exists():
                    raise CommandError(f"A team is already named {team!r}; give its slug instead.")
                found = Team.objects.create(name=team, slug=slug)
            TeamMember.objects.update_or_create(team=found, user=user, defaults={"role": role})
        what = "created the team and added" if created else "added"
        self.stdout.write(f"Team {found.slug}: {what} {username} as {role}.")
        if new_user and link:
            self.stdout.write(f"One-use login link for {username}: {base_url.rstrip('/')}{login_link_path(user)}")

    def _ask_password(self, username: str) -> str:
        """A password typed twice at the prompt and accepted by the site's password validators."""
        if not sys.stdin.isatty():
            raise CommandError("No terminal to type a password at: use --link to print a one-use login link instead.")
        user = get_user_model()(username=username)
        for _ in range(3):
            password = getpass.getpass(f"Password for {username}: ")
            if password != getpass.getpass("Password (again): "):
                self.stderr.write("The two passwords differ; try again.")
                continue
            try:
                password_validation.validate_password(password, user)
            except ValidationError as problem:
                self.stderr.write(" ".join(problem.messages))
                continue
            return password
        raise CommandError("No password was accepted; nothing was created.")
