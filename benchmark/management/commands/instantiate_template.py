"""Fill a scenario template's character slots with casts, making one scenario per cast (AgentSense §3.2)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...scenarios.templates import TemplateProblem, find_template, instantiate
from ..team_option import add_team_argument, team_from_options


class Command(BaseCommand):
    help = (
        "Instantiate a scenario template: pick casts among the team's characters that fit every slot's "
        "constraints (age range, gender, occupation) and make one scenario per cast, pointing back at the "
        "template so results can be grouped by it. The same seed gives the same casts; a cast that already "
        "has its scenario is not made twice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument("template", metavar="TEMPLATE", help="The template's id or codename.")
        parser.add_argument(
            "--count", type=int, default=1, help="How many different casts, i.e. scenarios (default: 1)."
        )
        parser.add_argument("--seed", type=int, default=0, help="Seed of the casting draws (default: 0).")

    def handle(self, *args: Any, **options: Any) -> None:
        team = team_from_options(options)
        if options["count"] < 1:
            raise CommandError(f"--count: ask for at least one cast, not {options['count']}.")
        try:
            template = find_template(team, options["template"])
            result = instantiate(template, count=options["count"], seed=options["seed"])
        except TemplateProblem as problem:
            raise CommandError(f"Template {options['template']!r}: {problem}.") from problem
        for scenario in result.scenarios:
            cast = ", ".join(
                f"{role.character.name}" for role in scenario.roles.select_related("character").order_by("position")
            )
            state = "new" if scenario in result.created else "already there"
            self.stdout.write(f"  {scenario} (id {scenario.pk}): {cast} ({state})")
        self.stdout.write(self.style.SUCCESS(
            f"Template {template}: {len(result.created)} new scenario(s), {len(result.found)} already there."
        ))
