"""Have one or several automated judges answer the judge's instruments about episodes; with
--interview also the agents' interviews and the judges' answers on every goal, with --blind the
blind test (AgentSense's three perspectives and its baseline); with --promediate, instead, ProMediate's
evaluation pass over negotiations (attitudes, pair agreement, topic tags, mediator intelligence); with
--shrec, instead, models answering SHREC's task items (``benchmark.shrec.running``)."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet

from benchmark.agents import llm, respondent
from benchmark.agents.allowed_models import ModelNotAllowed, check_models
from benchmark.evaluation import goal_judge, judge
from benchmark.evaluation.interviews import blind, running
from benchmark.evaluation.promediate import passes
from benchmark.jobs.queue import HUEY
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Episode, Job, TaskAnswer
from benchmark.progress_bar import ProgressBar
from benchmark.shrec import running as shrec

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
        "judges, each is stored as its own respondent; reports show each and their majority. --interview also "
        "asks each agent seat about every goal and its probes and has the judges answer every goal yes or no; "
        "--blind has each agent seat's model answer its probes before the conversation (the blind test)."
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
            "--model", "--models", "--judge-model", dest="model",
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
            f"(default: PARLEY_JUDGE_RETRIES, else {respondent.DEFAULT_RETRIES}).",
        )
        parser.add_argument(
            "--interview", action="store_true",
            help="Also interview every agent seat (was each goal achieved? the probes it may be asked; its own "
            "model answers, the scripted model offline) and have each judge model answer every goal yes or no.",
        )
        parser.add_argument(
            "--blind", action="store_true",
            help="Also run the blind test: each agent seat's model answers its probes from the scenario alone, "
            "without the transcript (episodes whose scenario has probes).",
        )

        parser.add_argument(
            "--promediate", action="store_true",
            help="Run ProMediate's evaluation pass instead of the judge's instruments: each party's attitude per "
            "topic after each of its turns, the agreement of every pair on every topic (rescoring only the "
            "pairs a turn changed), which topics each turn mentions and each mediator intervention addresses, "
            "and the mediator-intelligence ratings of every intervention. Episodes need their scenario's topics.",
        )
        parser.add_argument(
            "--mentions", choices=passes.MENTIONS, default="judge",
            help="With --promediate: which topics a turn mentions, asked of the judge ('judge', the default) or "
            "derived from the attitudes it read ('attitudes': a party turn mentions the topics it took a stance "
            "on, an intervention the topics it addresses).",
        )

        parser.add_argument(
            "--shrec", metavar="TASK",
            help="Have the models answer SHREC's task items instead: one task (detection, error, attributes, "
            "multiple, pre, post, rationale, correction), several separated by commas, or 'all'. Text only: "
            "the prompts give the conversation history, no video frames (SH-10 stays off), so the rows are "
            "the paper's (L) rows. Items already answered by a model under the same prompt version, variant "
            "and temperature are skipped unless --force. Work goes on the task queue in chunks.",
        )
        parser.add_argument(
            "--variant", choices=TaskAnswer.Variant.values, default=TaskAnswer.Variant.ZERO_SHOT,
            help="With --shrec: the prompt variant (default zero-shot; few-shot shows --examples other items of "
            "the task set with their answers first; cot asks for step-by-step reasoning before the answer line).",
        )
        parser.add_argument(
            "--examples", type=int, default=shrec.DEFAULT_EXAMPLES,
            help=f"With --shrec --variant few-shot: how many worked examples (default {shrec.DEFAULT_EXAMPLES}).",
        )
        parser.add_argument("--task-set", help="With --shrec: the task set by name (default: the team's latest).")
        parser.add_argument("--subset", type=int, help="With --shrec: only the items of this subset (from 0).")
        parser.add_argument(
            "--temperature", type=float, default=0.0,
            help="With --shrec: the sampling temperature (default 0); another value is recorded with the answers.",
        )
        parser.add_argument(
            "--coerce-model",
            help="With --shrec: a second model that restates each reply as a bare answer (the paper's coercion "
            "step); stored beside the parsed answer, never replacing it.",
        )

    def handle(self, *args: object, **options: object) -> None:
        if options["shrec"] is not None:
            self.shrec(options)
            return
        shrec_only = ("task_set", "subset", "coerce_model")
        if (any(options[name] is not None for name in shrec_only) or options["variant"] != TaskAnswer.Variant.ZERO_SHOT
                or options["temperature"] != 0 or options["examples"] != shrec.DEFAULT_EXAMPLES):
            raise CommandError("--variant, --examples, --task-set, --subset, --temperature and --coerce-model apply "
                               "only with --shrec.")
        if not options["promediate"] and options["mentions"] != "judge":
            raise CommandError("--mentions applies only with --promediate.")
        if options["promediate"] and (options["interview"] or options["blind"]):
            raise CommandError("--promediate runs on its own; leave out --interview and --blind.")
        models = self.models(options)
        concurrency = self.concurrency(options)
        retries = options["retries"]
        if retries is not None and retries < 0:
            raise CommandError(f"--retries cannot be negative, got {retries}.")

        episodes = self.select(options)
        ids = list(episodes.values_list("pk", flat=True))
        if options["promediate"]:
            self.promediate(ids, models, str(options["mentions"]), concurrency, bool(options["force"]), retries)
            return
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
        problems = len(failures)
        if options["interview"]:
            problems += self.interview(ids, models, concurrency, bool(options["force"]), retries)
        if options["blind"]:
            problems += self.blind_test(ids, concurrency, bool(options["force"]))
        if problems > len(failures):
            raise CommandError(f"{problems} judgement(s), interview(s) or blind test(s) failed; see the errors above.")
        if failures:
            raise CommandError(f"{len(failures)} judgement(s) could not be made; nothing was stored for them.")

    def models(self, options: dict[str, Any]) -> list[str]:
        """The judge models given (or configured), each one the team may call."""
        given = options["model"] if options["model"] is not None else llm.model_for("judge")
        try:
            models = judge.judge_models(str(given))
        except ValueError:
            raise CommandError("--model cannot be empty; give a litellm model name or 'scripted'.") from None
        try:
            check_models(models, team_from_options(options).slug)
        except ModelNotAllowed as problem:
            raise CommandError(f"--model: {problem}") from None
        return models

    @staticmethod
    def concurrency(options: dict[str, Any]) -> int:
        concurrency = int(options["concurrency"])
        if concurrency < 1:
            raise CommandError(f"--concurrency must be at least 1, got {concurrency}.")
        return concurrency

    def shrec(self, options: dict[str, Any]) -> None:
        """Each model answers the chosen SHREC task items; a model that cannot be reached stops the run."""
        for name in ("promediate", "interview", "blind"):
            if options[name]:
                raise CommandError(f"--shrec runs on its own; leave out --{name}.")
        if any(options[name] is not None for name in ("tag", "ids", "source")):
            raise CommandError("--shrec answers task items, not episodes; leave out --tag, --ids and --source.")
        if options["temperature"] < 0 or options["examples"] < 1 or (options["subset"] or 0) < 0:
            raise CommandError("--temperature and --subset cannot be negative, and --examples must be at least 1.")
        team = team_from_options(options)
        try:
            tasks = shrec.parse_tasks(str(options["shrec"]))
            task_set = shrec.choose_task_set(team, options["task_set"])
        except ValueError as problem:
            raise CommandError(f"--shrec: {problem}.") from None
        models, concurrency = self.models(options), self.concurrency(options)
        coerce_model = str(options["coerce_model"] or "").strip()
        if coerce_model:
            try:
                check_models([coerce_model], team.slug)
            except ModelNotAllowed as problem:
                raise CommandError(f"--coerce-model: {problem}") from None
        ids = shrec.select_items(task_set, tasks, options["subset"])
        if not ids:
            within = f" in subset {options['subset']}" if options["subset"] is not None else ""
            raise CommandError(f"Task set {task_set.name} has no items of {', '.join(tasks)}{within}.")
        missing = 0
        for model in models:
            run = shrec.RunSettings(
                model=model, variant=str(options["variant"]), temperature=float(options["temperature"]),
                force=bool(options["force"]), coerce_model=coerce_model, examples=int(options["examples"]),
                concurrency=concurrency,
            )
            missing += self.shrec_run(ids, run, task_set.name, team)
        if missing:
            raise CommandError(f"{missing} item(s) have no answer; run the same command again to retry them.")

    def shrec_run(self, ids: list[int], run: shrec.RunSettings, task_set: str, team: Any) -> int:
        """One model over the items, chunk by chunk on the queue (the first alone); the items left unanswered."""
        self.stdout.write(
            f"Answering {len(ids)} item(s) of task set {task_set} with {run.model} ({run.variant}, temperature "
            f"{run.temperature:g}" + (f", coerced by {run.coerce_model}" if run.coerce_model else "") + ")."
        )
        cached = 0 if run.force else shrec.tally(ids, run).answered
        pieces = shrec.chunks(ids)
        later = [[piece] for piece in pieces[1:]] if HUEY.immediate else [pieces[1:]] if pieces[1:] else []
        bar = ProgressBar(self.stderr, len(ids), "shrec", unit="items")
        label = f"SHREC {task_set}: {run.model} ({run.variant})"
        done, jobs = 0, []
        for number, batch in enumerate([pieces[:1], *later]):
            queued = [shrec.queue_chunk(piece, run, team=team, label=label) for piece in batch]
            self.follow(queued, [len(piece) for piece in batch], bar, done)
            done, jobs = done + sum(map(len, batch)), jobs + queued
            if number == 0 and shrec.unreachable(queued[0]):
                bar.close()
                raise CommandError(f"{run.model}: the run stopped at its first chunk: {shrec.stop_message(queued[0])}")
        bar.close()
        for job in jobs:
            if job.status == Job.Status.FAILED:
                self.stderr.write(f"{run.model}: {shrec.stop_message(job)}")
        counts = shrec.tally(ids, run)
        self.stdout.write(
            f"{run.model} ({run.variant}): {counts.answered} of {len(ids)} item(s) answered ({cached} cached), "
            f"{counts.unparsed} of them unparsed; {counts.missing} without an answer."
        )
        return counts.missing

    def follow(self, jobs: list[Job], sizes: list[int], bar: ProgressBar, before: int) -> None:
        """Wait for the chunks' jobs to end, drawing the items done; inline, they have ended already."""
        started, warned = time.monotonic(), False
        while True:
            for job in jobs:
                job.refresh_from_db()
            bar.show(before + sum(size for job, size in zip(jobs, sizes, strict=True) if job.done))
            if all(job.done for job in jobs):
                return
            if HUEY.immediate:
                raise CommandError("The chunks did not run: tasks run inline here (PARLEY_TASKS_IMMEDIATE), and "
                                   "their work was queued inside a transaction that has not committed.")
            if not warned and time.monotonic() - started > shrec.NO_CONSUMER_SECONDS and all(
                job.status == Job.Status.QUEUED for job in jobs
            ):
                warned = True
                self.stdout.write(self.style.WARNING(
                    f"No consumer has taken the chunks after {shrec.NO_CONSUMER_SECONDS} s: start one with "
                    "`make worker` (the chunks wait on the queue meanwhile)."
                ))
            time.sleep(shrec.POLL_SECONDS)

    def promediate(
        self, ids: list[int], models: list[str], mentions: str, concurrency: int, force: bool, retries: int | None
    ) -> None:
        """ProMediate's pass over the episodes with each judge; exits non-zero when an episode failed."""
        failed = 0
        for model in models:
            judge_name, version = passes.judge_name(model, mentions)
            self.stdout.write(f"ProMediate evaluation of {len(ids)} episode(s) by {judge_name} ({version}).")
            bar = ProgressBar(self.stderr, len(ids), "promediate")
            results = async_to_sync(passes.evaluate_negotiations)(
                ids, model=model, mentions=mentions, force=force, concurrency=concurrency, retries=retries,
                on_result=lambda result, bar=bar: bar.advance(),
            )
            bar.close()
            outcomes = Counter(result.outcome for result in results)
            for result in results:
                if not result.ok:
                    self.stderr.write(f"{judge_name}: episode {result.episode_id}: {result.error}")
            failed_pairs = sum(result.counts.get("failed pairs", 0) for result in results)
            self.stdout.write(
                f"Evaluated {len(ids)} episode(s) with {judge_name} ({version}): {outcomes[passes.EVALUATED]} "
                f"evaluated, {outcomes[passes.CACHED]} cached, {outcomes[passes.FAILED]} failed"
                + (f"; {failed_pairs} pair score(s) stored as failed (unusable replies)." if failed_pairs else ".")
            )
            failed += outcomes[passes.FAILED]
        if failed:
            raise CommandError(f"{failed} ProMediate evaluation(s) failed; nothing was stored for them.")

    def interview(self, ids: list[int], models: list[str], concurrency: int, force: bool, retries: int | None) -> int:
        """Interview the agents of the episodes with turns, then have every judge answer every goal; the failures."""
        asked = list(Episode.objects.filter(pk__in=ids, turns__isnull=False).distinct().values_list("pk", flat=True))
        bar = ProgressBar(self.stderr, len(asked), "interview")
        results = async_to_sync(running.interview_episodes)(
            asked, concurrency=concurrency, force=force, on_result=lambda result: bar.advance()
        )
        bar.close()
        outcomes = Counter(result.outcome for result in results)
        failed = [result for result in results if result.outcome == running.FAILED]
        for result in failed:
            self.stderr.write(f"interview of episode {result.episode_id}: {result.error}")
        self.stdout.write(
            f"Interviewed the agents of {len(asked)} episode(s): {outcomes[running.INTERVIEWED]} interviewed, "
            f"{outcomes[running.CACHED]} cached, {outcomes[running.FAILED]} failed."
        )
        with_goals = Episode.objects.filter(pk__in=asked, scenario__roles__goals__isnull=False).distinct()
        goal_ids = list(with_goals.values_list("pk", flat=True))
        bar = ProgressBar(self.stderr, len(goal_ids) * len(models), "goal judges")
        judgements = async_to_sync(goal_judge.judge_goals)(
            goal_ids, models, concurrency=concurrency, force=force, retries=retries,
            on_result=lambda result: bar.advance(),
        )
        bar.close()
        for result in judgements:
            if not result.ok:
                self.stderr.write(f"{result.model} on the goals of episode {result.episode_id}: {result.error}")
        for model in models:
            name, version = goal_judge.respondent_name(model)
            tally = Counter(result.outcome for result in judgements if result.model == name)
            self.stdout.write(
                f"Judged the goals of {len(goal_ids)} episode(s) with {name} ({version}): "
                f"{tally[goal_judge.JUDGED]} judged, {tally[goal_judge.CACHED]} cached, "
                f"{tally[goal_judge.FAILED]} failed."
            )
        return len(failed) + sum(1 for result in judgements if not result.ok)

    def blind_test(self, ids: list[int], concurrency: int, force: bool) -> int:
        """Every agent seat answers its probes without the transcript, for episodes with probes; the failures."""
        probed = list(Episode.objects.filter(pk__in=ids, scenario__probes__isnull=False).distinct()
                      .values_list("pk", flat=True))
        bar = ProgressBar(self.stderr, len(probed), "blind test")
        results = async_to_sync(blind.blind_test_episodes)(
            probed, concurrency=concurrency, force=force, on_result=lambda result: bar.advance()
        )
        bar.close()
        outcomes = Counter(result.outcome for result in results)
        failed = [result for result in results if result.outcome == running.FAILED]
        for result in failed:
            self.stderr.write(f"blind test of episode {result.episode_id}: {result.error}")
        skipped = len(ids) - len(probed)
        self.stdout.write(
            f"Blind test on {len(probed)} episode(s) with probes ({skipped} without): "
            f"{outcomes[running.INTERVIEWED]} answered, {outcomes[running.CACHED]} cached, {len(failed)} failed."
        )
        return len(failed)

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
