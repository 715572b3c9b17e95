"""Print the demo accounts' one-use login links, with new passwords: the last thing `make demo`
says before the server starts, so nobody has to scroll for them."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ...demo.accounts import ensure_accounts, write_logins
from ..team_option import add_team_argument, team_from_options


class Command(BaseCommand):
    help = (
        "Give the demo accounts and the superuser admin (created if missing) new passwords and print them "
        "with one-use login links."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000",
            help="Where the site is served, for the printed login links (default: %(default)s).",
        )
        add_team_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        accounts = ensure_accounts(team_from_options(options), new_passwords=True, superuser=True)
        write_logins(self.stdout, accounts, options["base_url"])
