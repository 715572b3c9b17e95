"""Export a team's scenario library: its own barriers, characters, templates and scenarios."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.management.stdout_writer import StdoutWriter
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.scenarios.library_export import LibraryProblem, select_library, write_library


class Command(BaseCommand):
    help = (
        "Export the team's scenario library as Parley JSON Lines: its own barriers, its characters, templates "
        "and scenarios, one record a line. Import it elsewhere with import_episodes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument(
            "--out", required=True, metavar="PATH", help="The file to write, or '-' for standard output."
        )
        parser.add_argument(
            "--source", default="", help="Only scenarios from this source (e.g. 'sotopia'), with their templates."
        )
        parser.add_argument(
            "--codename", action="append", default=[], metavar="CODENAME",
            help="Only this scenario, with its template; repeat for several.",
        )

    def handle(self, *args: object, out: str, source: str, codename: list[str], **options: object) -> None:
        team = team_from_options(options)
        try:
            library = select_library(team, source=source, codenames=codename)
            if out == "-":
                counts = write_library(library, StdoutWriter(self.stdout))
                report = self.stderr  # standard output carries the library itself
            else:
                with open(out, "w", encoding="utf-8", newline="") as handle:
                    counts = write_library(library, handle)
                report = self.stdout
        except LibraryProblem as problem:
            raise CommandError(str(problem)) from problem
        except OSError as error:
            raise CommandError(f"cannot write {out}: {error.strerror}") from error
        report.write(
            f"Exported {counts['barrier']} barrier(s), {counts['character']} character(s) and "
            f"{counts['scenario']} scenario(s) to {'standard output' if out == '-' else out}.",
            style_func=lambda text: text,
        )
