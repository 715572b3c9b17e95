"""Rewrite scenarios' shared contexts into one neutral sentence (SocialVeil's neutralisation)."""

from __future__ import annotations

from collections import Counter

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from benchmark.agents import llm
from benchmark.agents.allowed_models import ModelNotAllowed, check_model
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Scenario, Team
from benchmark.progress_bar import ProgressBar
from benchmark.scenarios import neutralise


def select_scenarios(value: str, team: Team) -> list[int]:
    """The team's scenario ids for '3,7,shared-car': ids or codenames, each of which must exist."""
    wanted = [part.strip() for part in value.split(",") if part.strip()]
    if not wanted:
        raise CommandError("--scenarios was given no scenario; name ids or codenames separated by commas.")
    numbers = [int(part) for part in wanted if part.isdigit()]
    names = [part for part in wanted if not part.isdigit()]
    found = list(
        Scenario.objects.of_team(team).filter(Q(pk__in=numbers) | Q(codename__in=names)).values_list("pk", "codename")
    )
    missing = [
        part for part in wanted
        if not any(str(pk) == part or codename == part for pk, codename in found)
    ]
    if missing:
        raise CommandError(f"No scenario with id or codename {', '.join(missing)}.")
    return sorted({pk for pk, _ in found})


class Command(BaseCommand):
    help = (
        "Rewrite each scenario's shared context into one sentence that keeps the setting but hides roles, "
        "goals and private figures. The original stays in original_context; results are cached per scenario "
        "and prompt version, and a researcher's edited text is never regenerated."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument("--scenarios", help="Scenario ids or codenames, separated by commas.")
        parser.add_argument("--all", action="store_true", help="Every scenario of the team.")
        parser.add_argument(
            "--model",
            help="The neutralising model (a litellm name, or 'scripted' for the offline heuristic). "
            "Default: PARLEY_NEUTRALIZER_MODEL, else scripted.",
        )
        parser.add_argument(
            "--force", action="store_true",
            help="Write a new sentence even when one is cached for this prompt version (edited ones are kept).",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Print each context before and after; save nothing."
        )
        parser.add_argument(
            "--concurrency", type=int, default=4, help="How many scenarios to rewrite at once (default 4)."
        )

    def handle(self, *args: object, **options: object) -> None:
        if bool(options["scenarios"]) == bool(options["all"]):
            raise CommandError("Say which scenarios to neutralise: --scenarios ID,... or --all (not both).")
        model = options["model"] if options["model"] is not None else llm.model_for("neutralizer")
        if not str(model).strip():
            raise CommandError("--model cannot be empty; give a litellm model name or 'scripted'.")
        if options["concurrency"] < 1:
            raise CommandError(f"--concurrency must be at least 1, got {options['concurrency']}.")
        team = team_from_options(options)
        try:
            check_model(str(model), team.slug)
        except ModelNotAllowed as problem:
            raise CommandError(f"--model: {problem}") from None
        if options["all"]:
            ids = list(Scenario.objects.of_team(team).order_by("pk").values_list("pk", flat=True))
            if not ids:
                raise CommandError("There are no scenarios to neutralise.")
        else:
            ids = select_scenarios(str(options["scenarios"]), team)
        dry_run = bool(options["dry_run"])
        version = neutralise.prompt_version_for(model)
        self.stdout.write(
            f"Neutralising {len(ids)} scenario(s) with {model} (prompt version {version})"
            + (", dry run." if dry_run else ".")
        )

        bar = ProgressBar(self.stderr, len(ids), "neutralise")
        tally: Counter[str] = Counter()

        def on_result(result: neutralise.NeutralisationResult) -> None:
            tally[result.outcome] += 1
            bar.advance(result.label)

        results = async_to_sync(neutralise.neutralise_scenarios)(
            ids, model=model, concurrency=options["concurrency"], force=bool(options["force"]), dry_run=dry_run,
            on_result=on_result,
        )
        bar.close()
        for result in results:
            if not result.ok:
                self.stderr.write(f"{result.label}: {result.error}")
            elif dry_run:
                self.stdout.write(
                    f"{result.label} ({result.outcome}, {result.model})\n  before: {result.before}\n"
                    f"  after:  {result.after}"
                )
        self.stdout.write(
            f"{len(results)} scenario(s): {tally[neutralise.GENERATED]} rewritten, {tally[neutralise.CACHED]} cached, "
            f"{tally[neutralise.KEPT]} kept (edited by hand), {tally[neutralise.FAILED]} failed"
            + ("; dry run, nothing was saved." if dry_run else ".")
        )
        if tally[neutralise.FAILED]:
            raise CommandError(
                f"{tally[neutralise.FAILED]} scenario(s) could not be neutralised; they keep their context."
            )
