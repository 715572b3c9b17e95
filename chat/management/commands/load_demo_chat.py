"""Create the demo chat study over three of ``load_demo``'s scenarios and print its links.

The study (slug ``demo-chat``) crosses three demo scenarios with the four built-in barrier
conditions, two participants wanted per cell, and leaves the agent model blank: the configured
agent model plays, or the offline scripted one when none is configured. It is found again by its
slug, so running this twice changes nothing in the database. Each run prints a participant link
with a new participant id: a participant id is used once (it is bound to the first browser that
opens it, and a finished one only shows its completion code), so a link from an earlier run may
already be taken. It needs ``load_demo`` first (scenarios and the
researcher account) and says so, exiting non-zero, when they are missing.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.urls import reverse

from benchmark.agents import llm
from benchmark.demo.content import CONDITIONS
from benchmark.demo.install import SCENARIO_ID
from benchmark.management.commands.load_demo import RESEARCHER
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Barrier, Scenario

from ...models import ChatCondition, ChatStudy
from ...questionnaire import default_instrument

SLUG = "demo-chat"
TITLE = "Demo: talk it through"
SCENARIO_CODENAMES = ("shared-car", "faulty-blender", "report-deadline")  # family, strangers, acquaintances
TARGET = 2
COMPLETION_CODE = "PARLEY-DEMO-CHAT"


def demo_query() -> dict[str, str]:
    """Link parameters for a participant id no earlier run printed (random, so nobody has used it)."""
    number = secrets.token_hex(4)
    return {"PROLIFIC_PID": f"demo-participant-{number}", "STUDY_ID": "demo", "SESSION_ID": f"demo-{number}"}


class Command(BaseCommand):
    help = "Create the demo chat study (3 demo scenarios × 4 barriers) and print its links; run load_demo first."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000",
            help="Where the site is served, for the printed links (default: %(default)s).",
        )
        add_team_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        team = team_from_options(options)
        researcher = get_user_model().objects.filter(username=RESEARCHER).first()
        scenario_ids = [SCENARIO_ID.format(codename=codename) for codename in SCENARIO_CODENAMES]
        scenarios = list(Scenario.objects.of_team(team).filter(external_id__in=scenario_ids).order_by("codename"))
        barriers = list(Barrier.objects.of_team(team).filter(key__in=CONDITIONS))
        if researcher is None or len(scenarios) < len(scenario_ids):
            raise CommandError(
                f"The demo {'researcher account' if researcher is None else 'scenarios'} "
                "is missing: run `python manage.py load_demo` first."
            )
        if len(barriers) < len(CONDITIONS):
            raise CommandError("The built-in barriers are missing: run `python manage.py migrate` first.")

        study = ChatStudy.objects.filter(slug=SLUG).first()
        state = "already there"
        if study is None:
            with transaction.atomic():
                study = ChatStudy.objects.create(
                    team=team, slug=SLUG, title=TITLE, created_by=researcher, human_position=1, agent_model="",
                    completion_code=COMPLETION_CODE, instrument=default_instrument(),
                )
                study.scenarios.set(scenarios)
                ChatCondition.objects.bulk_create(
                    ChatCondition(study=study, barrier=barrier, target=TARGET) for barrier in barriers
                )
            state = "created"

        base_url = options["base_url"].rstrip("/")
        link = base_url + reverse("chat:entry", args=[study.slug])
        cells = study.scenarios.count() * study.conditions.filter(target__gt=0).count()
        model = study.agent_model or llm.model_for("agent")
        self.stdout.write(f"Demo chat study “{study.title}” ({state}): {cells} cells, agent model {model}.")
        self.stdout.write(f"  participant link  {link}?{urlencode(demo_query())}  (a new participant each run)")
        self.stdout.write(f"  live monitor      {base_url}{reverse('chat:monitor', args=[study.slug])}"
                          f"  (log in as {RESEARCHER})")
        self.stdout.write(self.style.SUCCESS(f"Demo chat study ready: /s/{study.slug}/, completion code "
                                             f"{study.completion_code}."))
