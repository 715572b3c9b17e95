"""Load Parley's demo: 12 two-party scenarios and a three-party one × 4 barrier conditions, two
AgentSense-style templates of three and four parties with three casts each, scripted episodes,
scores, interviews, goal verdicts, ProMediate's HMO negotiation under two conflict modes and three
mediator conditions with its consensus trace (``benchmark.demo.negotiations``), eight synthetic SHREC
recordings imported as SHREC's files are, each with a stand-in audio track (``benchmark.demo.shrec_recordings``),
and accounts (``benchmark.demo.accounts``).

Everything is found again by external id or username, so running it twice changes nothing
(``--reset`` replays the demo episodes; ``--reset-passwords`` issues new passwords). The
episodes are played by the offline scripted model with each role's beats, so the result is the
same on every machine and needs no API key. The episodes of more than two parties (tag
``demo-groups``: the three-party scenario under each condition, and each template's instances
without a barrier) are also interviewed: each seat answers the AgentSense goal questions about
its own goals (self) and the others' (other), and the scenario's probes, after the talk and, for
the blind test, from the scenario alone; and the scripted judge answers every goal (external).
"""

from __future__ import annotations

import time
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ...agents.llm import SCRIPTED
from ...demo.accounts import ensure_accounts, write_logins
from ...demo.content import CONDITIONS, GROUP_SCENARIOS, SCENARIOS
from ...demo.group_templates import TEMPLATES
from ...demo.install import EPISODE_ID, beats_of, install_scenario, install_template_instances
from ...demo.negotiations import Negotiations, install_negotiations
from ...demo.shrec_recordings import install_shrec_recordings
from ...evaluation import judge
from ...evaluation.goal_judge import CACHED, judge_goals
from ...evaluation.interviews.blind import blind_test_episodes
from ...evaluation.interviews.running import interview_episodes
from ...importing import ImportProblem
from ...models import Barrier, Episode, Scenario, Team
from ...runs.simulation import create_episode, run_episode
from ...scenarios.turn_taking import turn_cap_for
from ..team_option import add_team_argument, team_from_options

DEMO_TAG = "demo"
GROUP_TAG = "demo-groups"  # the scenarios of more than two parties, kept out of the demo studies


class Command(BaseCommand):
    help = (
        "Load the demo scenarios and templates, 58 scripted episodes with scripted scores (those of more "
        "than two parties with interviews and goal verdicts), ProMediate's negotiations, eight synthetic SHREC "
        "recordings with their annotations and audio, and demo accounts."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000",
            help="Where the site is served, for the printed login links (default: %(default)s).",
        )
        parser.add_argument("--reset", action="store_true", help="Delete and replay the demo episodes.")
        parser.add_argument(
            "--reset-passwords", action="store_true", help="Give existing demo accounts new passwords."
        )
        parser.add_argument("--skip-accounts", action="store_true", help="Do not create or print demo accounts.")
        parser.add_argument(
            "--no-logins", action="store_true",
            help="Create the demo accounts but print no logins (make demo prints them last, with demo_logins).",
        )
        add_team_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        team = team_from_options(options)
        barriers = {b.key: b for b in Barrier.objects.of_team(team).filter(key__in=CONDITIONS)}
        missing = [key for key in CONDITIONS if key not in barriers]
        if missing:
            raise CommandError(f"Barrier(s) {', '.join(missing)} are missing; run `manage.py migrate` first.")

        created = episodes = 0
        groups: list[int] = []  # episodes of more than two parties, interviewed below
        specs = [*SCENARIOS, *GROUP_SCENARIOS]
        steps = len(specs) + len(TEMPLATES)
        for number, spec in enumerate(specs, start=1):
            group = spec in GROUP_SCENARIOS
            seed = len(SCENARIOS) + GROUP_SCENARIOS.index(spec) if group else SCENARIOS.index(spec)
            with transaction.atomic():
                scenario = install_scenario(spec, team)
                lengths = []
                for condition in CONDITIONS:
                    episode, new = self._episode(
                        scenario, beats_of(spec), barriers[condition], condition, seed=seed,
                        tag=GROUP_TAG if group else DEMO_TAG, reset=options["reset"],
                    )
                    created += new
                    episodes += 1
                    lengths.append(f"{condition} {episode.turns.count()}")
                    if group:
                        groups.append(episode.pk)
            self.stdout.write(f"[{number:2}/{steps}] {spec.codename}: " + ", ".join(lengths) + " turns")

        seed = len(specs)
        for number, template in enumerate(TEMPLATES, start=len(specs) + 1):
            with transaction.atomic():
                lengths = []
                for instance in install_template_instances(template, team):
                    episode, new = self._episode(
                        instance.scenario, instance.beats, barriers["none"], "none", seed=seed, tag=GROUP_TAG,
                        reset=options["reset"],
                    )
                    seed += 1
                    created += new
                    episodes += 1
                    groups.append(episode.pk)
                    lengths.append(f"{instance.scenario.codename} {episode.turns.count()}")
            self.stdout.write(f"[{number:2}/{steps}] template {template.codename}: " + ", ".join(lengths) + " turns")

        self._interview(groups)
        negotiations = self._negotiate(team, reset=options["reset"])
        accounts = 0
        if not options["skip_accounts"]:
            demo_accounts = ensure_accounts(team, new_passwords=options["reset_passwords"])
            if not options["no_logins"]:
                write_logins(self.stdout, demo_accounts, options["base_url"])
            accounts = len(demo_accounts)
        # After the accounts, so that the imported annotators (users of their own) take no place the demo accounts had.
        recordings = self._shrec(team)
        self.stdout.write(self.style.SUCCESS(
            f"Demo ready: {len(specs)} scenarios, {len(TEMPLATES)} templates, {episodes} episodes ({created} new), "
            f"{len(negotiations.episodes)} negotiations, {recordings} SHREC recordings, {accounts} accounts, in "
            f"{time.monotonic() - started:.1f}s."
        ))

    def _episode(
        self, scenario: Scenario, beats: dict[int, tuple[str, ...]], barrier: Barrier, condition: str, *,
        seed: int, tag: str, reset: bool,
    ) -> tuple[Episode, bool]:
        """The demo episode of ``scenario`` for one condition: played (or resumed) with beats, then scored."""
        external_id = EPISODE_ID.format(codename=scenario.codename, condition=condition)
        episode = Episode.objects.of_team(scenario.team).filter(external_id=external_id).first()
        if episode is not None and reset:
            episode.delete()
            episode = None
        new = episode is None
        if episode is None:
            episode = create_episode(
                scenario, barrier, barrier_seats=(0,), models=dict.fromkeys(beats, SCRIPTED),
                tag=tag, turn_cap=turn_cap_for(scenario, 20), settings={"temperature": 0.7}, external_id=external_id,
            )
        if episode.status != Episode.Status.FINISHED:
            episode = async_to_sync(run_episode)(episode, seed=seed, beats=beats)
        # The scripted judge answers unless it already has (a replayed episode is judged afresh).
        result = async_to_sync(judge.evaluate_episode)(episode, model=SCRIPTED, force=new)
        if not result.ok:
            raise CommandError(f"the scripted judge could not score {external_id}: {result.error}")
        return episode, new

    def _negotiate(self, team: Team, *, reset: bool) -> Negotiations:
        """ProMediate's HMO case, played offline under two conflict modes × three mediator conditions and read
        by the scripted evaluation pass (attitudes, pair agreement, topic tags, the MI judge)."""
        started = time.monotonic()
        try:
            negotiations = install_negotiations(team, reset=reset, say=self.stdout.write)
        except RuntimeError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Negotiations: {len(negotiations.episodes)} of {negotiations.scenario.codename or 'the HMO case'} "
            f"({negotiations.played} played, {negotiations.evaluated} evaluated) in {time.monotonic() - started:.1f}s."
        )
        return negotiations

    def _shrec(self, team: Team) -> int:
        """SHREC's synthetic recordings, imported (with their annotators' spans) and given their audio tracks."""
        started = time.monotonic()
        try:
            recordings = install_shrec_recordings(team)
        except ImportProblem as problem:
            raise CommandError(f"the demo's SHREC file did not import: {problem}") from problem
        self.stdout.write(
            f"SHREC: {recordings.imported.summary().splitlines()[0]}; {recordings.attached} audio tracks stored, "
            f"in {time.monotonic() - started:.1f}s."
        )
        return len(recordings.episodes)

    def _interview(self, episode_ids: list[int]) -> None:
        """AgentSense's three perspectives on the group episodes: every seat on every goal (its own: self;
        the others': other) and on its probes, also before the talk (the blind test), and the scripted
        judge on every goal (external). Answers already stored are kept."""
        started = time.monotonic()
        results = async_to_sync(interview_episodes)(episode_ids)
        results += async_to_sync(blind_test_episodes)(episode_ids)  # the probes before the talk: the baseline
        for result in results:
            if result.error:
                raise CommandError(f"the scripted interview or blind test of episode {result.episode_id} failed: "
                                   f"{result.error}")
        judgements = async_to_sync(judge_goals)(episode_ids, SCRIPTED)  # AgentSense's external perspective
        for judgement in judgements:
            if not judgement.ok:
                raise CommandError(
                    f"the scripted goal judge could not answer episode {judgement.episode_id}: {judgement.error}"
                )
        answered = sum(result.responses for result in results)
        judged = sum(judgement.outcome != CACHED for judgement in judgements)
        self.stdout.write(
            f"Group episodes: {len(episode_ids)} interviewed and blind-tested ({answered} new responses) and "
            f"{judged} judged on every goal, in {time.monotonic() - started:.1f}s."
        )
