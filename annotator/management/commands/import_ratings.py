"""Import ratings made outside Parley (long or wide files) into an annotation study."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.importing import ImportProblem
from benchmark.management.team_option import add_team_argument, team_from_options

from ...external_ratings import import_ratings
from ..study_option import find_study


class Command(BaseCommand):
    help = (
        "Import ratings given outside Parley (a Prolific form, a spreadsheet) into a study: a long CSV or JSON Lines "
        "file (episode_id, annotator_id, question, value, rationale, seat, goal) or a wide CSV (one column per "
        "question). Each rater becomes a pseudonymous external annotator; the file is imported all or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="The ratings file (.csv or .jsonl); see docs/formats.md.")
        parser.add_argument("--study", required=True, metavar="ID_OR_SLUG", help="The study to import into.")
        add_team_argument(parser)
        parser.add_argument(
            "--dry-run", action="store_true",
            help="Check the file and report what would be created, then roll everything back.",
        )

    def handle(self, *args: object, file: str, study: str, dry_run: bool, **options: object) -> None:
        team = team_from_options(options)
        found = find_study(study, team)
        try:
            result = import_ratings(file, study=found, dry_run=dry_run)
        except ImportProblem as problem:
            raise CommandError(str(problem)) from problem
        self.stdout.write(result.summary())
        if dry_run:
            self.stdout.write(f"Dry run: nothing was saved in study {found.slug!r}.")

