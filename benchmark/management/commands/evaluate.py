"""Have one or several automated judges answer the judge's instruments about episodes."""

from __future__ import annotations

from collections import Counter

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet

from benchmark.agents import llm
from benchmark.evaluation import judge
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Episode
from benchmark.progress import ProgressBar

ANY = "any"


def parse_ids(value: str) -> list[int]:
    """'3,7,12' -> [3, 7, 12]; anything else is refused with the offending part named."""
    ids = []
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise CommandError(f"--ids takes episode ids separated by commas, e.g. 3,7,12; {part!r} is not an id.")
        ids.append(int(part))
    if not ids:
        raise CommandError("--ids was given no episode id.")
    return ids


class Command(BaseCommand):
    help = (
        "Score finished episodes with one or several judge models at temperature 0: each answers the "
        "Sotopia-EVAL judge instrument (seven goal-oriented dimensions per seat) and the SocialVeil judge "
        "instrument (unresolved confusion and mutual understanding per episode). Episodes a judge model has "
        "already answered under the same prompt version are skipped unless --force is given. With several "
        "judges, each is stored as its own respondent; reports show each and their majority."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument("--tag", help="Only episodes with this experiment tag (e.g. a run's name).")
        parser.add_argument("--ids", help="Only these episodes, by id, separated by commas (e.g. 3,7,12).")
        parser.add_argument(
            "--source", choices=Episode.Source.values, help="Only episodes from this source."
        )
        parser.add_argument(
            "--status", choices=[*Episode.Status.values, ANY], default=Episode.Status.FINISHED,
            help="Only episodes in this status (default: finished; 'any' for all).",
        )
        parser.add_argument(
            "--model", "--models", dest="model",
            help="The judge model, or several separated by commas (litellm names, or 'scripted' for the "
            "offline heuristics), e.g. openai/gpt-4o,anthropic/claude-3-5-sonnet. Default: "
            "PARLEY_JUDGE_MODEL (which may list several the same way), else scripted.",
        )
        parser.add_argument(
            "--concurrency", type=int, default=4,
            help="How many judge calls to make at once, over all judges (default 4).",
        )
        parser.add_argument(
            "--force", action="store_true",
            help="Score again even when a complete set of scores exists; the new set replaces the old one.",
        )
        parser.add_argument(
            "--retries", type=int,
            help="Times to ask again for the whole evaluation when a reply stays unusable after its repair "
            f"(default: PARLEY_JUDGE_RETRIES, else {judge.DEFAULT_RETRIES}).",
        )

    def handle(self, *args: object, **options: object) -> None:
        given = options["model"] if options["model"] is not None else llm.model_for("judge")
        try:
            models = judge.judge_models(str(given))
        except ValueError:
            raise CommandError("--model cannot be empty; give a litellm model name or 'scripted'.") from None
        concurrency = options["concurrency"]
        if concurrency < 1:
            raise CommandError(f"--concurrency must be at least 1, got {concurrency}.")
        retries = options["retries"]
        if retries is not None and retries < 0:
            raise CommandError(f"--retries cannot be negative, got {retries}.")

        episodes = self.select(options)
        ids = list(episodes.values_list("pk", flat=True))
        names = [judge.respondent_name(model) for model in models]
        judges = ", ".join(f"{model} (prompt version {version})" for model, version in names)
        self.stdout.write(f"Scoring {len(ids)} episode(s) with {judges}.")

        bar = ProgressBar(self.stderr, len(ids) * len(models), "evaluate")
        tally: Counter[tuple[str, str]] = Counter()
        outcomes: Counter[str] = Counter()

        def on_result(result: judge.JudgeResult) -> None:
            tally[(result.model, result.outcome)] += 1
            outcomes[result.outcome] += 1
            bar.advance(
                f"scored {outcomes[judge.SCORED]}, cached {outcomes[judge.CACHED]}, failed {outcomes[judge.FAILED]}"
            )

        # async_to_sync, not asyncio.run: the judge's database work then runs on this thread, in
        # this command's connection (and a test's transaction).
        results = async_to_sync(judge.evaluate_episodes)(
            ids, models=models, concurrency=concurrency, force=options["force"], retries=retries, on_result=on_result
        )
        bar.close()
        failures = [result for result in results if not result.ok]
        for result in failures:
            prefix = f"{result.model}: " if len(models) > 1 else ""
            self.stderr.write(f"{prefix}episode {result.episode_id}: {result.error}")
        for model, version in names:
            self.stdout.write(
                f"Evaluated {len(ids)} episode(s) with {model} ({version}): "
                f"{tally[(model, judge.SCORED)]} scored, {tally[(model, judge.CACHED)]} cached, "
                f"{tally[(model, judge.FAILED)]} failed."
            )
        if failures:
            raise CommandError(f"{len(failures)} judgement(s) could not be made; nothing was stored for them.")

    def select(self, options: dict[str, object]) -> QuerySet[Episode]:
        """The chosen episodes, oldest first; a filter that matches nothing is an error that says so."""
        episodes = Episode.objects.of_team(team_from_options(options))
        described = []
        if options["tag"] is not None:
            tag = str(options["tag"])
            if not episodes.filter(tag=tag).exists():
                raise CommandError(f"No episode has the tag {tag!r}.")
            episodes = episodes.filter(tag=tag)
            described.append(f"tag {tag!r}")
        if options["ids"] is not None:
            ids = parse_ids(str(options["ids"]))
            missing = sorted(set(ids) - set(episodes.filter(pk__in=ids).values_list("pk", flat=True)))
            if missing:
                raise CommandError(f"No episode with id {', '.join(map(str, missing))}.")
            episodes = episodes.filter(pk__in=ids)
            described.append(f"ids {options['ids']}")
        if options["source"] is not None:
            episodes = episodes.filter(source=options["source"])
            described.append(f"source {options['source']}")
        if options["status"] != ANY:
            episodes = episodes.filter(status=options["status"])
            described.append(f"status {options['status']}")
        episodes = episodes.order_by("created_at", "pk")
        if not episodes.exists():
            raise CommandError(f"No episode matches {', '.join(described) or 'the selection'}.")
        return episodes
