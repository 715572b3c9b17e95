"""The ``--team`` option every research command takes, with one default for single-team installs."""

from django.core.management.base import CommandError, CommandParser

from benchmark.models import Team
from benchmark.models.teams import team_for_command


def add_team_argument(parser: CommandParser) -> None:
    parser.add_argument(
        "--team", default="", metavar="SLUG",
        help="The team whose data the command reads and writes; may be left out when there is only one team.",
    )


def team_from_options(options: dict) -> Team:
    """The team named by ``--team`` (or the only one), or a ``CommandError`` naming the choices."""
    try:
        return team_for_command(options.get("team") or None)
    except LookupError as error:
        raise CommandError(str(error)) from None
