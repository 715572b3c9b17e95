"""The demo's SHREC benchmark: tasks built from the demo recordings' spans, answered by the scripted answerer and
by generated people, so the SHREC results page and ``benchmark_report --analysis shrec`` open with numbers.

``load_demo`` imports eight synthetic SHREC recordings (``benchmark.demo.shrec_recordings``) and the annotator app
keeps their annotators' spans in the imported study ``SHREC: demo-shrec``. From there this module runs what a
researcher would run, in order:

1. ``shrec_tasks --study <that study> --tasks all --seed 0 --subsets 3 --subset-size 4 --name demo-shrec``: the
   eight tasks, three subsets of four items each;
2. the scripted answerer on every item, through the runner ``evaluate --shrec all --models scripted`` queues
   (``benchmark.shrec.running.answer_items``, the work of one queued chunk, here called directly as ``load_demo``
   calls the judge);
3. a human-baseline study of subset 0's items (``annotator.human_baseline``), answered by two demo annotators
   with **generated** answers (``generate_human_answers``: seeded, mostly right, labelled as generated wherever
   they appear), which the results show as the Human row; the third annotator has every item left to answer.

Each step finds its work done already on a second run (the task set by name, the answers by the runner's cache,
the study by slug, the generated answers by their mark), so running ``load_demo_studies`` twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from io import StringIO

from asgiref.sync import async_to_sync
from django.contrib.auth.models import AbstractBaseUser
from django.core.management import call_command

from benchmark.agents.llm import SCRIPTED
from benchmark.demo.shrec_recordings import TAG
from benchmark.models import Task, TaskSet, Team
from benchmark.shrec import running

from .external_spans import shrec_study
from .human_baseline.generated import generate_human_answers
from .human_baseline.study import create_human_baseline_study
from .models import Study

TASK_SET = "demo-shrec"
SEED = 0
SUBSETS = 3
SUBSET_SIZE = 4
HUMAN_SUBSET = 0
HUMAN_SLUG = "demo-shrec-human-baseline"
HUMAN_TITLE = "SHREC human baseline"
HUMAN_OVERLAP = 3
GENERATED_PEOPLE = 2  # of the demo annotators, in order; the others answer themselves


class DemoShrecMissing(Exception):
    """The demo recordings' study is not there: ``load_demo`` has not run."""


@dataclass
class DemoShrec:
    task_set: TaskSet
    built: bool  # the task set was built by this call
    answered: int  # items the scripted answerer answered now (not from its cache)
    human_study: Study
    generated: int  # generated human answers submitted now


def install_shrec_benchmark(
    team: Team, annotators: Sequence[AbstractBaseUser], researcher: AbstractBaseUser
) -> DemoShrec:
    """Build, answer and open to people the demo's SHREC tasks (each step once; see the module docstring)."""
    task_set = TaskSet.objects.of_team(team).filter(name=TASK_SET).first()
    built = task_set is None
    if built:
        spans = shrec_study(team, TAG)
        if spans is None:
            raise DemoShrecMissing(f"the demo's SHREC recordings (tag {TAG!r}) have no study: run load_demo first")
        call_command(
            "shrec_tasks", "--team", team.slug, "--study", spans.slug, "--tasks", "all", "--seed", str(SEED),
            "--subsets", str(SUBSETS), "--subset-size", str(SUBSET_SIZE), "--name", TASK_SET, stdout=StringIO(),
            stderr=StringIO(),
        )
        task_set = TaskSet.objects.of_team(team).get(name=TASK_SET)
    outcomes = async_to_sync(running.answer_items)(
        running.select_items(task_set, Task.values), running.RunSettings(model=SCRIPTED)
    )
    failed = [outcome for outcome in outcomes if outcome.outcome == running.FAILED]
    if failed:
        raise RuntimeError(f"the scripted answerer failed on item {failed[0].item_id}: {failed[0].error}")
    study = Study.objects.filter(slug=HUMAN_SLUG).first() or create_human_baseline_study(
        task_set=task_set, subset=HUMAN_SUBSET, title=HUMAN_TITLE, slug=HUMAN_SLUG, overlap=HUMAN_OVERLAP,
        seed=SEED, pool=annotators, created_by=researcher,
    )
    generated = generate_human_answers(study, list(annotators[:GENERATED_PEOPLE]), seed=SEED)
    answered = sum(outcome.outcome == running.ANSWERED for outcome in outcomes)
    return DemoShrec(task_set, built, answered, study, generated)
