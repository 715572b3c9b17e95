"""Create a SHREC human-baseline study from a task set: people answer the task items the models answer.

One study item per task item (its excerpt, its own options; the correct one never shown), one question
per task, so a study holds one task or several (``annotator.human_baseline``). Its answers are the
results' Human row (``benchmark_report --analysis shrec``).
"""

from __future__ import annotations

from collections import Counter

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import TaskSet

from ...human_baseline.study import HumanStudyProblem, create_human_baseline_study, parse_tasks


class Command(BaseCommand):
    help = (
        "Create a human-baseline annotation study over a SHREC task set's items (SH-13): each item shows its "
        "excerpt, the task's text as the model's prompt words it, and the item's own options."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument("--task-set", required=True, metavar="NAME", help="The task set (shrec_tasks --name).")
        parser.add_argument(
            "--tasks", default="all", metavar="all|TASK,...",
            help="The tasks whose items the study asks: 'all' (a mixed study) or names separated by commas "
            "(detection, error, attributes, multiple, pre, post, rationale, correction). Default: all.",
        )
        parser.add_argument("--subset", type=int, metavar="K", help="Only the items of subset K (from 0).")
        parser.add_argument("--title", default="", help="The study's title (default: 'SHREC human baseline: NAME').")
        parser.add_argument("--slug", default="", help="The study's address (default: made from the title).")
        parser.add_argument("--overlap", type=int, default=3, metavar="N",
                            help="How many different people answer each item (default 3).")
        parser.add_argument("--seed", type=int, default=0, help="Makes each person's item order reproducible.")
        parser.add_argument("--annotators", default="", metavar="USER,...",
                            help="Usernames to put in the study's pool now; others join with the invite link.")

    def handle(self, *args, **options) -> None:
        team = team_from_options(options)
        task_set = TaskSet.objects.of_team(team).filter(name=options["task_set"]).first()
        if task_set is None:
            raise CommandError(f"--task-set {options['task_set']!r}: the team {team.slug!r} has no task set of this "
                               "name; build one with shrec_tasks")
        names = [name.strip() for name in options["annotators"].split(",") if name.strip()]
        pool = list(get_user_model().objects.filter(username__in=names, is_active=True).order_by("username"))
        unknown = sorted(set(names) - {user.get_username() for user in pool})
        if unknown:
            raise CommandError(f"--annotators: no active account named {', '.join(unknown)}")
        if options["subset"] is not None and options["subset"] < 0:
            raise CommandError(f"--subset must be 0 or more, not {options['subset']}")
        try:
            study = create_human_baseline_study(
                task_set=task_set, tasks=parse_tasks(options["tasks"]), subset=options["subset"],
                title=options["title"], slug=options["slug"], overlap=options["overlap"], seed=options["seed"],
                pool=pool,
            )
        except HumanStudyProblem as problem:
            raise CommandError(str(problem)) from None
        counts = Counter(study.items.values_list("task_item__task", flat=True))
        tasks = ", ".join(f"{task} {count}" for task, count in counts.items())
        join = reverse("annotator:join", args=[study.invite_token])
        self.stdout.write(
            f"Created study {study.slug!r} over task set {task_set.name!r}: {sum(counts.values())} items ({tasks}), "
            f"{study.overlap} people per item; invite link {join}"
        )
