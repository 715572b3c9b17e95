"""Export episodes as Parley JSON Lines or a CSV of turns."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.exporting import EXPORT_FORMATS, export_episodes, select_episodes
from benchmark.management.stdout_writer import StdoutWriter
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Barrier, Episode


class Command(BaseCommand):
    help = "Export episodes as Parley JSON Lines (the default) or a CSV of turns."

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument(
            "--out", required=True, metavar="PATH", help="The file to write, or '-' for standard output."
        )
        parser.add_argument(
            "--format",
            choices=EXPORT_FORMATS,
            default="parley",
            help="'parley': one JSON object per episode, everything included; 'csv': one row per turn.",
        )
        parser.add_argument("--source", choices=Episode.Source.values, help="Only episodes from this source.")
        parser.add_argument(
            "--barrier", metavar="KEY", help="Only episodes under this barrier (its key, e.g. 'semantic')."
        )
        parser.add_argument("--tag", help="Only episodes with this experiment tag.")

    def handle(
        self,
        *args: object,
        out: str,
        format: str,
        source: str | None,
        barrier: str | None,
        tag: str | None,
        **options: object,
    ) -> None:
        team = team_from_options(options)
        barriers = Barrier.objects.of_team(team)
        if barrier and not barriers.filter(key=barrier).exists():
            known = ", ".join(barriers.values_list("key", flat=True))
            raise CommandError(f"--barrier {barrier!r} is not a barrier key; known keys: {known}")
        episodes = select_episodes(team, source=source, barrier=barrier, tag=tag)
        if out == "-":
            count = export_episodes(episodes, StdoutWriter(self.stdout), format=format)
            report = self.stderr  # standard output carries the export itself
        else:
            try:
                with open(out, "w", encoding="utf-8", newline="") as handle:
                    count = export_episodes(episodes, handle, format=format)
            except OSError as error:
                raise CommandError(f"cannot write {out}: {error.strerror}") from error
            report = self.stdout
        report.write(
            f"Exported {count} episode(s) as {format} to {'standard output' if out == '-' else out}.",
            style_func=lambda text: text,
        )
