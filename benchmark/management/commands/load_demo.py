"""Load Parley's demo: 12 two-party scenarios and a three-party one × 4 barrier conditions,
scripted episodes, scores and interviews, accounts.

Everything is found again by external id or username, so running it twice changes nothing
(``--reset`` replays the demo episodes; ``--reset-passwords`` issues new passwords). The
episodes are played by the offline scripted model with each role's beats, so the result is the
same on every machine and needs no API key. The three-party episodes (tag ``demo-groups``) are
also interviewed: each seat answers the AgentSense goal questions and the scenario's probes, and
the scripted judge answers every goal (the external perspective).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ...agents.llm import SCRIPTED
from ...demo.content import CONDITIONS, GROUP_SCENARIOS, SCENARIOS, DemoScenario
from ...demo.install import EPISODE_ID, beats_of, install_scenario
from ...evaluation import judge
from ...evaluation.goal_judge import judge_goals
from ...evaluation.interviews.running import interview_episode
from ...login_links import login_link_path
from ...models import Barrier, Episode, Scenario, Team, TeamMember
from ...permissions import RESEARCHERS
from ...runs.simulation import create_episode, run_episode
from ...runs.turn_taking import turn_cap_for
from ..team_option import add_team_argument, team_from_options

ANNOTATORS = "annotators"
RESEARCHER = "researcher"
ANNOTATOR_NAMES = ("annotator1", "annotator2", "annotator3")
DEMO_TAG = "demo"
GROUP_TAG = "demo-groups"  # the scenarios of more than two parties, kept out of the demo studies


class Command(BaseCommand):
    help = (
        "Load the demo scenarios, 52 scripted episodes with scripted scores (the three-party ones with "
        "interviews), and demo accounts."
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
        add_team_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        team = team_from_options(options)
        barriers = {b.key: b for b in Barrier.objects.of_team(team).filter(key__in=CONDITIONS)}
        missing = [key for key in CONDITIONS if key not in barriers]
        if missing:
            raise CommandError(f"Barrier(s) {', '.join(missing)} are missing; run `manage.py migrate` first.")

        created = 0
        specs = [*SCENARIOS, *GROUP_SCENARIOS]
        for number, spec in enumerate(specs, start=1):
            with transaction.atomic():
                scenario = install_scenario(spec, team)
                lengths = []
                for condition in CONDITIONS:
                    episode, new = self._episode(scenario, spec, barriers[condition], condition, options["reset"])
                    created += new
                    lengths.append(f"{condition} {episode.turns.count()}")
            self.stdout.write(f"[{number:2}/{len(specs)}] {spec.codename}: " + ", ".join(lengths) + " turns")

        accounts = 0
        if not options["skip_accounts"]:
            accounts = self._accounts(team, options["base_url"], options["reset_passwords"])
        episodes = len(specs) * len(CONDITIONS)
        self.stdout.write(self.style.SUCCESS(
            f"Demo ready: {len(specs)} scenarios, {episodes} episodes ({created} new), "
            f"{accounts} accounts, in {time.monotonic() - started:.1f}s."
        ))

    def _episode(
        self, scenario: Scenario, spec: DemoScenario, barrier: Barrier, condition: str, reset: bool
    ) -> tuple[Episode, bool]:
        """The demo episode for one condition: played (or resumed) with beats, then scored (and a
        group's interviewed)."""
        external_id = EPISODE_ID.format(codename=spec.codename, condition=condition)
        group = spec in GROUP_SCENARIOS
        seed = len(SCENARIOS) + GROUP_SCENARIOS.index(spec) if group else SCENARIOS.index(spec)
        episode = Episode.objects.of_team(scenario.team).filter(external_id=external_id).first()
        if episode is not None and reset:
            episode.delete()
            episode = None
        new = episode is None
        if episode is None:
            episode = create_episode(
                scenario, barrier, barrier_seats=(0,), models=dict.fromkeys(range(len(spec.roles)), SCRIPTED),
                tag=GROUP_TAG if group else DEMO_TAG, turn_cap=turn_cap_for(scenario, 20),
                settings={"temperature": 0.7}, external_id=external_id,
            )
        if episode.status != Episode.Status.FINISHED:
            episode = async_to_sync(run_episode)(episode, seed=seed, beats=beats_of(spec))
        # The scripted judge answers unless it already has (a replayed episode is judged afresh).
        result = async_to_sync(judge.evaluate_episode)(episode, model=SCRIPTED, force=new)
        if not result.ok:
            raise CommandError(f"the scripted judge could not score {external_id}: {result.error}")
        if group:  # AgentSense's three perspectives: each agent on itself and the others, and a judge
            async_to_sync(interview_episode)(episode.pk)  # kept when already stored
            async_to_sync(judge_goals)([episode.pk], SCRIPTED)
        return episode, new

    def _accounts(self, team: Team, base_url: str, reset_passwords: bool) -> int:
        """A researcher and three annotators of ``team``, with passwords and login links.

        The researcher is neither staff nor superuser and holds no model permissions: the admin is
        for superusers, and everything a researcher does goes through Parley's team-scoped pages.
        """
        researchers, _ = Group.objects.get_or_create(name=RESEARCHERS)
        researchers.permissions.clear()  # earlier demos granted every benchmark permission
        annotators, _ = Group.objects.get_or_create(name=ANNOTATORS)

        self.stdout.write("Demo accounts (each login link works once):")
        specs = [(RESEARCHER, researchers)] + [(name, annotators) for name in ANNOTATOR_NAMES]
        for username, group in specs:
            user, password = self._user(username, reset_passwords)
            user.groups.add(group)
            role = TeamMember.Role.RESEARCHER if group == researchers else TeamMember.Role.ANNOTATOR
            TeamMember.objects.update_or_create(team=team, user=user, defaults={"role": role})
            shown = password or "(unchanged; --reset-passwords sets a new one)"
            link = base_url.rstrip("/") + login_link_path(user)
            self.stdout.write(f"  {username:<11} {group.name:<12} password {shown}\n    {link}")
        return len(specs)

    def _user(self, username: str, reset_password: bool) -> tuple[Any, str]:
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username)
        user.is_staff = False  # researchers are a group and a team role; staff opens nothing more
        user.is_superuser = False
        password = ""
        if created or reset_password:
            password = secrets.token_urlsafe(9)
            user.set_password(password)
        user.save()
        return user, password
