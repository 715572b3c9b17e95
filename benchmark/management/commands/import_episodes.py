"""Import episodes from Parley JSON Lines, Sotopia logs and profiles, AgentSense scenes, SocialVeil run outputs,
ProMediate cases, or a CSV of turns."""

from collections import Counter

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.import_jobs.jobs import JobNotRunnable, run_job
from benchmark.importing import FORMATS, ImportProblem, import_file
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import ImportJob


class Command(BaseCommand):
    help = (
        "Import episodes from files (Parley JSON Lines, Sotopia episode logs and profiles, AgentSense scene "
        "lines with or without a run's outputs, a SocialVeil run's outputs, a ProMediate case, or a CSV of "
        "turns), or scores for episodes already here (Sotopia's judge scores, a scores CSV or JSON Lines). Each "
        "file is imported all or nothing; what is already present is left unchanged, and an episode already "
        "present gets the responses it lacks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="*", metavar="FILE",
                            help="Files to import, in order; a directory is read as a run's outputs (SocialVeil "
                                 "or ProMediate, by the files it holds).")
        add_team_argument(parser)
        parser.add_argument(
            "--format", choices=["auto", *FORMATS], default="auto",
            help="The files' format; 'auto' (the default) tells from the extension and the content.",
        )
        parser.add_argument(
            "--tag", default="",
            help="The experiment tag of every episode the files create, instead of the files' own: keeps two runs "
            "of one model (say, SocialVeil's default and repair strategy) apart in benchmark_report --tag.",
        )
        parser.add_argument(
            "--dry-run", action="store_true",
            help="Check the files and report what would be created, then roll everything back.",
        )
        parser.add_argument(
            "--job", type=int, metavar="ID",
            help="Do here the dry run or the import of upload ID from the import page (the page queues it as a "
            "task for a consumer; this is for an operator whose consumers are down).",
        )

    def handle(
        self, *args: object, files: list[str], format: str, dry_run: bool, job: int | None, tag: str,
        **options: object,
    ) -> None:
        if job is not None:
            if files or tag:
                raise CommandError("Give either files (with --tag, if any) or --job, not both.")
            self.run_job(job)
            return
        if not files:
            raise CommandError("Name at least one file to import.")
        team = team_from_options(options)
        created: Counter[str] = Counter()
        unchanged: Counter[str] = Counter()
        for number, path in enumerate(files):
            try:
                result = import_file(path, team=team, format=format, dry_run=dry_run, tag=tag.strip())
            except ImportProblem as problem:
                kept = f" (the {number} file(s) before it were imported)" if number and not dry_run else ""
                raise CommandError(f"{problem}{kept}") from problem
            self.stdout.write(result.summary())
            if options["verbosity"] >= 2:
                for line in result.details:
                    self.stdout.write(f"  {line}")
            created.update(result.created)
            unchanged.update(result.unchanged)
        verb = "would create" if dry_run else "created"
        self.stdout.write(
            f"Total: {len(files)} file(s); {verb} {created['episode']} episode(s), "
            f"{unchanged['episode']} unchanged; {created['scenario']} scenario(s), "
            f"{created['character']} character(s), {created['turn']} turn(s), {created['answer']} answer(s)."
            + (" Dry run: nothing was saved." if dry_run else "")
        )

    def run_job(self, job_id: int) -> None:
        try:
            job = run_job(job_id)
        except ImportJob.DoesNotExist:
            raise CommandError(f"There is no import {job_id}.") from None
        except JobNotRunnable as error:
            raise CommandError(str(error)) from None
        for result in job.results:
            self.stdout.write(result["summary"])
        if job.error:
            raise CommandError(job.error)
        self.stdout.write(f"Import {job.pk}: {job.get_status_display()}.")
