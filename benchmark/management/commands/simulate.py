"""Run agent–agent episodes over scenarios × barrier conditions, resumably (SocialVeil's experiments).

The command stores the run, queues its work on the task queue and follows the run's row with a
progress bar until it ends; the queue's consumers (``make worker``) play it. Ctrl-C stops following,
not the run.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ...jobs.queue import HUEY, QueueUnavailable, check_queue
from ...models import RunChunk, Seat, SimulationRun, Turn
from ...progress_bar import ProgressBar
from ...runs.chunks import queue_run
from ...runs.control import request_cancel
from ...runs.options import (
    ALL_CASTS,
    DEFAULT_CAST,
    DEFAULT_CONDITIONS,
    MEDIATORS,
    PROMEDIATE,
    RunOptions,
    RunOptionsError,
)
from ...runs.planning import plan_run
from ...runs.status import RunBusy, run_for_command
from ..team_option import add_team_argument, team_from_options

POLL_SECONDS = 0.5
NO_CONSUMER_SECONDS = 15


class Command(BaseCommand):
    help = (
        "Simulate episodes for every chosen scenario under every chosen barrier condition, and store each "
        "turn as it is produced. Running the same command again skips finished episodes and resumes the "
        "others from their next turn. The task queue's consumers play the run (start one with `make worker`); "
        "the command follows it until it ends. With --run, queue and follow a run launched from the web. "
        "With --preset promediate it plays ProMediate negotiations: scenarios × conflict modes (--conditions "
        "promediate-<mode>) × mediator conditions (--mediator) × runs (--runs)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument(
            "--scenarios", default="", metavar="IDS",
            help="Comma-separated scenario ids, external ids (the id in the imported file, e.g. a SocialVeil "
            "episode_id) or codenames of the team (default: every scenario of the team; ProMediate negotiations "
            "only with --preset promediate, which plays nothing else).",
        )
        parser.add_argument(
            "--difficulty", "--tags", dest="difficulty", default="", metavar="DIFFICULTIES",
            help="Only scenarios with these comma-separated difficulty tags, e.g. 'hard' (--tags is an old "
            "spelling; prefer --difficulty).",
        )
        parser.add_argument(
            "--casts", default=DEFAULT_CAST, metavar="CASTS",
            help=f"Who plays the roles, each cast its own cell: '{DEFAULT_CAST}' (the roles' default characters), "
            f"'{ALL_CASTS}' (every cast of each chosen scenario, e.g. Sotopia's imported castings), or cast ids or "
            f"external ids; comma-separated, e.g. '{DEFAULT_CAST},{ALL_CASTS}' (default: %(default)s). Cast ids "
            "alone, without --scenarios, play the scenarios they belong to.",
        )
        parser.add_argument(
            "--conditions", default=",".join(DEFAULT_CONDITIONS), metavar="KEYS",
            help="Comma-separated barrier keys, custom barriers included (default: %(default)s).",
        )
        parser.add_argument(
            "--agent-model", default="", metavar="MODEL",
            help="litellm model for the barrier seat, or 'scripted' (default: PARLEY_AGENT_MODEL, else scripted).",
        )
        parser.add_argument(
            "--partner-model", default="", metavar="MODEL",
            help="Model for the partner seat(s) (default: PARLEY_PARTNER_MODEL, else scripted).",
        )
        parser.add_argument(
            "--seat-models", default="", metavar="SEAT=MODEL,...",
            help="Models for particular seats, for pairwise designs: sender=MODEL and receiver=MODEL give every "
            "role labelled so its model, <position>=MODEL one role (e.g. sender=openai/gpt-4o,receiver=scripted). "
            "A position wins over a label; other seats get --agent-model or --partner-model.",
        )
        parser.add_argument(
            "--judge-model", "--judge-models", dest="judge_model", default="", metavar="MODEL",
            help="Judge that scores the finished episodes at the end, or several separated by commas, each "
            "scoring every episode (default: PARLEY_JUDGE_MODEL, else the scripted heuristics); 'none' leaves "
            "them unscored for a later `evaluate`.",
        )
        parser.add_argument(
            "--strategy", default=Seat.Strategy.DEFAULT, choices=Seat.Strategy.values,
            help="The partner's strategy: 'repair' adds the instruction to clarify and paraphrase.",
        )
        parser.add_argument(
            "--episodes-per-cell", "--runs", dest="episodes_per_cell", type=int, default=1,
            help="Episodes per scenario × condition (× mediator condition with the promediate preset; --runs).",
        )
        parser.add_argument(
            "--preset", default="", choices=["", PROMEDIATE],
            help="'promediate': play ProMediate negotiations (the mediator decides first, then the most motivated "
            "party speaks), the persona of the condition given to every party seat.",
        )
        parser.add_argument(
            "--mediator", "--mediators", dest="mediators", default="", metavar="CONDITIONS",
            help=f"With --preset {PROMEDIATE}: mediator conditions, comma-separated, from {', '.join(MEDIATORS)} "
            "(default: all three).",
        )
        parser.add_argument(
            "--model", default="", metavar="MODEL",
            help="Default model for every role not given its own (agent, partner, parties, mediator, judge), e.g. "
            "'scripted' to run offline.",
        )
        parser.add_argument(
            "--party-model", default="", metavar="MODEL",
            help=f"With --preset {PROMEDIATE}: the parties' litellm model, or 'scripted' (default: --model, else "
            "the agent model).",
        )
        parser.add_argument(
            "--mediator-model", default="", metavar="MODEL",
            help=f"With --preset {PROMEDIATE}: the mediator's model (default: --model, else the agent model).",
        )
        parser.add_argument(
            "--articulation-model", default="", metavar="MODEL",
            help="The model that voices the social mediator's chosen strategy (default: the mediator's; the "
            "ProMediate code always used openai/gpt-4.1).",
        )
        parser.add_argument(
            "--persona-to-mediator", action="store_true",
            help="Give the conflict mode's persona to the mediator too, as the ProMediate code does.",
        )
        parser.add_argument("--turn-cap", type=int, default=20, help="Most turns an episode may have (default: 20).")
        parser.add_argument("--temperature", type=float, default=0.7, help="Sampling temperature (default: 0.7).")
        parser.add_argument(
            "--concurrency", type=int, default=8, help="Episodes played at once, i.e. model calls in flight."
        )
        parser.add_argument("--seed", type=int, default=0, help="Seed of episode n in each cell is seed + n.")
        parser.add_argument(
            "--barrier-seats", "--barrier-seat", dest="barrier_seats", default="0", metavar="POSITIONS",
            help="Comma-separated role positions that speak under the barrier, e.g. '0' or '0,2' (default: 0; "
            "--barrier-seat is an old spelling).",
        )
        parser.add_argument(
            "--interview", action="store_true",
            help="After the episodes, ask each agent seat whether every goal was achieved and the scenario's "
            "probes it may be asked (its own model answers; the scripted model offline).",
        )
        parser.add_argument(
            "--run-name", "--tag", dest="run_name", default="", metavar="NAME",
            help="Run name carried by its episodes as their tag (default: derived from the options; --tag is an "
            "old spelling; prefer --run-name).",
        )
        parser.add_argument(
            "--run", type=int, metavar="ID",
            help="Queue and follow the stored run with this id, with its stored options and team.",
        )
        parser.add_argument(
            "--cancel", metavar="TAG",
            help="Cancel the team's run with this name: its chunks stop within two seconds on every consumer.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["cancel"]:
            self._cancel(options)
            return
        try:
            check_queue()
        except QueueUnavailable as error:
            raise CommandError(str(error)) from error
        if options["run"] is not None:
            run = SimulationRun.objects.select_related("team", "created_by").filter(pk=options["run"]).first()
            if run is None:
                raise CommandError(f"--run: there is no simulation run with id {options['run']}.")
            self.stdout.write(f"Executing run {run.tag} (id {run.pk}).")
            if run.done and run.status != SimulationRun.Status.FINISHED:
                SimulationRun.objects.filter(pk=run.pk).update(
                    status=SimulationRun.Status.QUEUED, cancel_requested=False, finished_at=None, message=""
                )
                run.refresh_from_db()
            if not run.done:
                self._queue_and_follow(run, options)
                run.refresh_from_db()
        else:
            run = self._run_from_options(options)
            self._queue_and_follow(run, options)
            run.refresh_from_db()
        if not run.done:
            return
        style = self.style.SUCCESS if run.status == SimulationRun.Status.FINISHED else self.style.WARNING
        self.stdout.write(style(run.message))
        if run.status == SimulationRun.Status.FAILED:
            unfinished = run.total - run.finished - run.failed
            raise CommandError(
                f"{run.failed} episode(s) failed and {unfinished} are unfinished; "
                "run the same command again to retry them."
            )

    def _queue_and_follow(self, run: SimulationRun, options: dict[str, Any]) -> None:
        """Queue the run's work and follow it until it ends, or until Ctrl-C stops the following."""
        try:
            with transaction.atomic():
                queue_run(run)
            if HUEY.immediate:
                self._played_inline(run)
            self._follow(run)
        except KeyboardInterrupt:
            if HUEY.immediate:  # the run was played here, inline: Ctrl-C stops it, resumably
                request_cancel(run)
                self.stdout.write(self.style.WARNING(
                    f"\nStopped run {run.tag}: its unfinished episodes stay to be resumed by the same command."
                ))
                return
            team = f" --team {run.team.slug}" if options.get("team") else ""
            self.stdout.write(self.style.WARNING(
                f"\nStopped following run {run.tag}; it goes on on the task queue's consumers. Follow it on its page, "
                f"or cancel it: manage.py simulate --cancel {run.tag}{team}."
            ))

    def _cancel(self, options: dict[str, Any]) -> None:
        team = team_from_options(options)
        run = SimulationRun.objects.of_team(team).filter(tag=options["cancel"]).order_by("-created_at", "-pk").first()
        if run is None:
            raise CommandError(f"--cancel: the team {team} has no run named {options['cancel']}.")
        if run.done:
            self.stdout.write(f"Run {run.tag} has ended already ({run.get_status_display()}).")
            return
        request_cancel(run)
        self.stdout.write(
            f"Run {run.tag}: cancel requested; its chunks stop within two seconds, finished episodes stay."
        )

    def _played_inline(self, run: SimulationRun) -> None:
        """With tasks run inline (``PARLEY_TASKS_IMMEDIATE``) the run was played as its transaction committed
        (following it then draws its final progress); there is no consumer to wait for, so a run that has not
        ended here never will."""
        run.refresh_from_db()
        if not run.done:
            raise CommandError(
                f"Run {run.tag} did not play: tasks run inline here (PARLEY_TASKS_IMMEDIATE), and its work was "
                "queued inside a transaction that has not committed, so nothing took it."
            )

    def _follow(self, run: SimulationRun) -> SimulationRun:
        """Draw the run's progress from its row until it ends; say so when no consumer takes its work."""
        bar: ProgressBar | None = None
        started = time.monotonic()
        warned = False
        while True:
            run = SimulationRun.objects.select_related("team").get(pk=run.pk)
            if bar is None and run.executed_at is not None and run.status != SimulationRun.Status.QUEUED:
                bar = ProgressBar(self.stderr._out, run.total, "simulate", unit="episodes", already_done=run.skipped)
            if bar is not None:
                turns = Turn.objects.filter(episode__team=run.team_id, episode__tag=run.tag).count()
                played = turns - run.turns_before
                elapsed = bar.elapsed()
                rate = played / elapsed if elapsed else 0.0
                bar.show(
                    run.finished + run.failed, f"({run.failed} failed) · {played} turns · {rate:.1f} turns/s",
                    final=run.done,
                )
            if run.done:
                return run
            if not warned and time.monotonic() - started > NO_CONSUMER_SECONDS and not self._taken(run):
                warned = True
                self.stdout.write(self.style.WARNING(
                    f"No consumer has taken run {run.tag}'s work after {NO_CONSUMER_SECONDS} s: start one with "
                    "`make worker` (the run waits on the queue meanwhile)."
                ))
            time.sleep(POLL_SECONDS)

    @staticmethod
    def _taken(run: SimulationRun) -> bool:
        return run.status != SimulationRun.Status.QUEUED or RunChunk.objects.filter(
            run=run, started_at__isnull=False
        ).exists()

    def _run_from_options(self, options: dict[str, Any]) -> SimulationRun:
        team = team_from_options(options)
        model = options["model"]
        negotiation = (
            {
                "preset": options["preset"],
                "mediators": options["mediators"],
                "party_model": options["party_model"] or model,
                "mediator_model": options["mediator_model"] or model,
                "articulation_model": options["articulation_model"],
                "persona_to_mediator": options["persona_to_mediator"],
            }
            if options["preset"] == PROMEDIATE
            else {
                name: options[name]
                for name in ("mediators", "party_model", "mediator_model", "articulation_model", "persona_to_mediator")
                if options[name]
            }
        )
        try:
            run_options = RunOptions.from_dict(
                {
                    "scenarios": options["scenarios"],
                    "difficulties": options["difficulty"],
                    "conditions": options["conditions"],
                    "agent_model": options["agent_model"] or model,
                    "partner_model": options["partner_model"] or model,
                    "seat_models": options["seat_models"],
                    "judge_model": options["judge_model"] or model,
                    **negotiation,
                    "strategy": options["strategy"],
                    "episodes_per_cell": options["episodes_per_cell"],
                    "turn_cap": options["turn_cap"],
                    "temperature": options["temperature"],
                    "concurrency": options["concurrency"],
                    "seed": options["seed"],
                    "barrier_seats": options["barrier_seats"],
                    "interview": options["interview"],
                    "casts": options["casts"],
                }
            )
            plan = plan_run(run_options, team, options["run_name"] or None)
        except RunOptionsError as error:
            flag = {"difficulties": "difficulty"}.get(error.option, error.option).replace("_", "-")
            raise CommandError(f"--{flag}: {error}") from error
        cells = sum(len(plan.casts_of(scenario)) for scenario in plan.scenarios)
        if plan.promediate:
            self.stdout.write(
                f"Run {plan.tag}: {len(plan.scenarios)} scenario(s) × {len(plan.barriers)} mode(s) × "
                f"{len(plan.mediators)} mediator condition(s) ({', '.join(plan.mediators)}) × "
                f"{plan.options.episodes_per_cell} run(s) = {plan.total} negotiations; parties "
                f"{plan.options.party_model}, mediator {plan.options.mediator_model}."
            )
            return self._stored_run(plan, team)
        self.stdout.write(
            f"Run {plan.tag}: {len(plan.scenarios)} scenario(s)"
            + (f" in {cells} casts" if cells != len(plan.scenarios) or plan.options.casts != (DEFAULT_CAST,) else "")
            + f" × {len(plan.barriers)} condition(s) × "
            f"{plan.options.episodes_per_cell} episode(s) = {plan.total} episodes; barrier seat(s) "
            f"{', '.join(plan.options.barrier_seats)} {plan.options.agent_model}, partner "
            f"{plan.options.partner_model} ({plan.options.strategy})"
            + (f"; seat models {', '.join(plan.options.seat_models)}." if plan.options.seat_models else ".")
        )
        return self._stored_run(plan, team)

    @staticmethod
    def _stored_run(plan: Any, team: Any) -> SimulationRun:
        try:
            return run_for_command(plan.options, plan.tag, team)
        except RunBusy as error:
            raise CommandError(str(error)) from error
