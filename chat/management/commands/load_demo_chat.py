"""Create the demo chat studies over ``load_demo``'s scenarios and print their links.

- **Two-party** (slug ``demo-chat``): three demo scenarios crossed with the four built-in barrier
  conditions, two participants wanted per cell.
- **Group** (slug ``demo-group-chat``): the first cast of the demo's three-party template
  (``parent-care``), without a barrier, three participants wanted. The participant plays one of
  the two grown-up children; agents play the parent and the other child, in the scenario's own
  order (random after the parent's greeting, 15 turns). Afterwards the participant answers
  AgentSense's human test (``chat.human_test``: their own goals, then the probes about the others)
  before the usual questions.

- **Negotiation** (slug ``demo-negotiation``): ProMediate's HMO case (``benchmark.demo.negotiations``)
  with the parties in the Competing mode; the participant is the mediator: after every party's turn
  they may intervene or let the parties go on (``chat.negotiation``), while agents play the three parties.

All leave the agent model blank: the configured agent model plays, or the offline scripted one
when none is configured. Each study is found again by its slug, so running this twice changes
nothing in the database. Each run prints participant links with new participant ids: a
participant id is used once (it is bound to the first browser that opens it, and a finished one
only shows its completion code), so a link from an earlier run may already be taken. It needs
``load_demo`` first (scenarios and the researcher account) and says so, exiting non-zero, when they
are missing.
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
from benchmark.demo import negotiations
from benchmark.demo.accounts import RESEARCHER
from benchmark.demo.content import CONDITIONS
from benchmark.demo.install import SCENARIO_ID, TEMPLATE_ID
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Barrier, Scenario, Team

from ...models import ChatCondition, ChatStudy
from ...questionnaire import default_instrument

SLUG = "demo-chat"
TITLE = "Demo: talk it through"
SCENARIO_CODENAMES = ("shared-car", "faulty-blender", "report-deadline")  # family, strangers, acquaintances
TARGET = 2
COMPLETION_CODE = "PARLEY-DEMO-CHAT"

GROUP_SLUG = "demo-group-chat"
GROUP_TITLE = "Demo: a family decides"
GROUP_TEMPLATE = "parent-care"  # three parties: a parent and two grown-up children
GROUP_POSITION = 1  # the child who lives nearby; agents play the parent (who greets) and the child abroad
GROUP_TARGET = 3
GROUP_COMPLETION_CODE = "PARLEY-DEMO-GROUP"

NEGOTIATION_SLUG = "demo-negotiation"
NEGOTIATION_TITLE = "Demo: mediate a drug contract"
NEGOTIATION_SCENARIO = negotiations.SCENARIO_ID
NEGOTIATION_MODE = "promediate-competing"
NEGOTIATION_TARGET = 2
NEGOTIATION_COMPLETION_CODE = "PARLEY-DEMO-MEDIATE"


def demo_query() -> dict[str, str]:
    """Link parameters for a participant id no earlier run printed (random, so nobody has used it)."""
    number = secrets.token_hex(4)
    return {"PROLIFIC_PID": f"demo-participant-{number}", "STUDY_ID": "demo", "SESSION_ID": f"demo-{number}"}


class Command(BaseCommand):
    help = "Create the demo chat studies (two-party, group, negotiation) and print their links; run load_demo first."

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
        group_scenario = group_scenario_of(team)
        barriers = list(Barrier.objects.of_team(team).filter(key__in=CONDITIONS))
        if researcher is None or len(scenarios) < len(scenario_ids) or group_scenario is None:
            raise CommandError(
                f"The demo {'researcher account' if researcher is None else 'scenarios'} "
                "is missing: run `python manage.py load_demo` first."
            )
        if len(barriers) < len(CONDITIONS):
            raise CommandError("The built-in barriers are missing: run `python manage.py migrate` first.")

        study, state = self._study(
            team, SLUG, title=TITLE, created_by=researcher, scenarios=scenarios, human_position=1,
            completion_code=COMPLETION_CODE, targets={barrier: TARGET for barrier in barriers},
        )
        no_barrier = next(barrier for barrier in barriers if barrier.key == "none")
        group, group_state = self._study(
            team, GROUP_SLUG, title=GROUP_TITLE, created_by=researcher, scenarios=[group_scenario],
            human_position=GROUP_POSITION, completion_code=GROUP_COMPLETION_CODE, targets={no_barrier: GROUP_TARGET},
        )

        negotiation_scenario = Scenario.objects.of_team(team).filter(external_id=NEGOTIATION_SCENARIO).first()
        competing = Barrier.objects.of_team(team).filter(key=NEGOTIATION_MODE).first()
        if negotiation_scenario is None or competing is None:
            raise CommandError("The demo negotiation is missing: run `python manage.py load_demo` first.")
        negotiation, negotiation_state = self._study(
            team, NEGOTIATION_SLUG, title=NEGOTIATION_TITLE, created_by=researcher, scenarios=[negotiation_scenario],
            human_position=negotiation_scenario.greeter_position, completion_code=NEGOTIATION_COMPLETION_CODE,
            targets={competing: NEGOTIATION_TARGET},
        )

        base_url = options["base_url"].rstrip("/")
        cells = study.scenarios.count() * study.conditions.filter(target__gt=0).count()
        model = study.agent_model or llm.model_for("agent")
        self.stdout.write(f"Demo chat study “{study.title}” ({state}): {cells} cells, agent model {model}.")
        self._links(study, base_url)
        seats = {role.position: role.character.name for role in group_scenario.roles.select_related("character")}
        agents = " and ".join(name for position, name in sorted(seats.items()) if position != group.human_position)
        self.stdout.write(
            f"Demo group chat study “{group.title}” ({group_state}): {group_scenario.codename}, the participant plays "
            f"{seats[group.human_position]}, agents ({group.agent_model or llm.model_for('agent')}) play {agents}."
        )
        self._links(group, base_url)
        self.stdout.write(
            f"Demo negotiation study “{negotiation.title}” ({negotiation_state}): {negotiation_scenario.codename}, "
            f"the participant is the mediator; agents ({negotiation.agent_model or llm.model_for('agent')}) play "
            "the parties."
        )
        self._links(negotiation, base_url)
        self.stdout.write(self.style.SUCCESS(
            f"Demo chat studies ready: /s/{study.slug}/, completion code {study.completion_code}; "
            f"/s/{group.slug}/, completion code {group.completion_code}; /s/{negotiation.slug}/, completion code "
            f"{negotiation.completion_code}."
        ))

    def _study(
        self, team: Team, slug: str, *, title: str, created_by: Any, scenarios: list[Scenario], human_position: int,
        completion_code: str, targets: dict[Barrier, int],
    ) -> tuple[ChatStudy, str]:
        """The demo chat study with ``slug``, created with these settings when it is not there yet."""
        study = ChatStudy.objects.filter(slug=slug).first()
        if study is not None:
            return study, "already there"
        with transaction.atomic():
            study = ChatStudy(
                team=team, slug=slug, title=title, created_by=created_by, human_position=human_position,
                agent_model="", completion_code=completion_code, instrument=default_instrument(),
            )
            study.full_clean()
            study.save()
            study.scenarios.set(scenarios)
            ChatCondition.objects.bulk_create(
                ChatCondition(study=study, barrier=barrier, target=target) for barrier, target in targets.items()
            )
        return study, "created"

    def _links(self, study: ChatStudy, base_url: str) -> None:
        link = base_url + reverse("chat:entry", args=[study.slug])
        self.stdout.write(f"  participant link  {link}?{urlencode(demo_query())}  (a new participant each run)")
        self.stdout.write(f"  live monitor      {base_url}{reverse('chat:monitor', args=[study.slug])}"
                          f"  (log in as {RESEARCHER})")


def group_scenario_of(team: Team) -> Scenario | None:
    """The group chat's scenario: the first instance ``load_demo`` made of the three-party template, if any."""
    template = TEMPLATE_ID.format(codename=GROUP_TEMPLATE)
    return Scenario.objects.of_team(team).filter(template__external_id=template).order_by("pk").first()
