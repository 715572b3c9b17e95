"""Build SHREC's eight tasks from a study's spans, or load a task file, as one task set of the team.

The study's submitted spans are read into plain records (``annotator.shrec_records``), paired and
turned into task items (``benchmark.shrec``), drawn into subsets and stored all or nothing
(``benchmark.shrec.saving``); a one-line summary per task follows. It works on a study of an imported
SHREC file (spans on the recording's time) and on any study over the SHREC spans preset (spans on
turns, paired by IoU). ``--import`` loads a JSONL task file instead, ``--export`` writes the task set
as one (alone, with ``--name``: an existing set).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.management.stdout_writer import StdoutWriter
from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import TaskSet
from benchmark.progress_bar import ProgressBar
from benchmark.shrec.builders import DISTRACTOR_RULES, MCQ_SOURCES, TASKS, BuildOptions, build_tasks
from benchmark.shrec.dataset import dataset_statistics
from benchmark.shrec.excerpts import check_mode
from benchmark.shrec.saving import TaskSetError, save_task_set
from benchmark.shrec.segments import ANNOTATOR_CHOICES, ATTRIBUTE_POLICIES, BALANCES
from benchmark.shrec.subsets import assign_subsets
from benchmark.shrec.task_files import TaskFileError, read_task_file, write_task_set

from ...models import Annotation, Study
from ...shrec_records import study_episode_records
from ..study_option import find_study


def _tasks(text: str) -> list[str]:
    if text.strip() == "all":
        return list(TASKS)
    chosen = [task.strip() for task in text.split(",") if task.strip()]
    unknown = [task for task in chosen if task not in TASKS]
    if not chosen or unknown:
        raise argparse.ArgumentTypeError(
            f"expected all or tasks from {', '.join(TASKS)} separated by commas; got {text!r}"
        )
    return [task for task in TASKS if task in chosen]


def _excerpt(text: str) -> str:
    problem = check_mode(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _whole(low: int):
    def convert(text: str) -> int:
        if not (text.strip().isascii() and text.strip().isdigit()) or int(text) < low:
            raise argparse.ArgumentTypeError(f"expected a whole number of {low} or more, got {text!r}")
        return int(text)

    return convert


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


class BuildProgress:
    """One progress bar per multiple-choice task, the part of a build that takes time on a large study."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.bars: dict[str, ProgressBar] = {}

    def show(self, task: str, done: int, total: int) -> None:
        if task not in self.bars:
            self.bars[task] = ProgressBar(self.stream, total, f"shrec_tasks {task}", unit="items")
        self.bars[task].show(done)
        if done == total:
            self.bars[task].close()


class Command(BaseCommand):
    help = (
        "Build SHREC's task items (detection, error, attributes, multiple, pre, post, rationale, correction) "
        "from a study's submitted spans and store them as a task set, or load (--import) or write (--export) "
        "a JSONL task file."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument("--study", metavar="ID_OR_SLUG",
                            help="The study whose submitted spans are used (default: the team's one study with "
                            "submitted spans, e.g. that of a SHREC import).")
        parser.add_argument("--import", dest="import_file", metavar="FILE", help="Load a JSONL task file instead.")
        parser.add_argument("--export", metavar="FILE", help="Write the task set as JSONL to FILE ('-': stdout).")
        parser.add_argument("--name", help="The task set name (default: shrec-seed<SEED>, or the task file one).")
        parser.add_argument("--replace", action="store_true", help="Replace a set of that name (and its answers).")
        parser.add_argument("--tasks", type=_tasks, default=list(TASKS), help="all (default) or a list, e.g. pre,post.")
        parser.add_argument("--seed", type=_whole(0), default=0, help="Seeds distractors, option order, None segments, "
                            "subsets (default 0).")
        parser.add_argument("--subsets", type=_whole(1), default=3, help="Subsets drawn per task (default 3).")
        parser.add_argument("--subset-size", type=_whole(1), default=None,
                            help="Items per subset (default: each source's items split evenly between the subsets).")
        parser.add_argument("--stratify", choices=("source", "none"), default="source",
                            help="Balance each subset between the sources (source, default) or not (none).")
        parser.add_argument("--pairing", choices=("shrec", "iou"), default=None,
                            help="How spans are paired: shrec (times; default when spans have times) or iou (turns).")
        parser.add_argument("--start-tolerance", type=_seconds, default=3.0, help="SHREC pairing: starts apart (s).")
        parser.add_argument("--end-tolerance", type=_seconds, default=3.0, help="SHREC pairing: ends apart (s).")
        parser.add_argument("--containment-tolerance", type=_seconds, default=10.0,
                            help="SHREC pairing: ends apart when one span contains the other (s).")
        parser.add_argument("--annotators", choices=ANNOTATOR_CHOICES, default="first_two",
                            help="Pair the first two annotators who marked something (default) or every two.")
        parser.add_argument("--attributes", choices=ATTRIBUTE_POLICIES, default="first",
                            help="An agreed pair's attributes: the first annotator's (default), either's, or both's.")
        parser.add_argument("--distractors", choices=DISTRACTOR_RULES, default="disjoint",
                            help="Rationale/correction distractors' attributes: disjoint (default) or not identical.")
        parser.add_argument("--min-eligible", type=_whole(4), default=4,
                            help="Fewest eligible distractors for a multiple-choice item (default 4; upstream 5).")
        parser.add_argument("--balance", choices=BALANCES, default="n",
                            help="None segments per episode: as many as agreed ones (n, default) or one fewer (n-1).")
        parser.add_argument("--excerpt", type=_excerpt, default="pair",
                            help="What an item shows: pair (default), seconds (±5 s), span, span+N.")
        parser.add_argument("--mcq-from", choices=MCQ_SOURCES, default="groups",
                            help="Multiple-choice tasks from every pairing group (default) or agreed ones only.")
        parser.add_argument("--no-same-context-exclusion", action="store_true",
                            help="Pre/post: allow distractors that answer the same context.")

    def handle(self, *args: Any, **options: Any) -> None:
        team = team_from_options(options)
        if options["import_file"] and options["study"]:
            raise CommandError("give --study to build from spans or --import to load a task file, not both")
        if options["import_file"]:
            task_set = self._import(team, options)
        elif options["export"] and options["name"] and not options["study"]:
            task_set = TaskSet.objects.of_team(team).filter(name=options["name"]).first()
            if task_set is None:
                raise CommandError(f"--name {options['name']!r}: the team {team.slug!r} has no task set of that name")
        else:
            task_set = self._build(team, options)
        if options["export"]:
            self._export(task_set, options["export"])

    def _build(self, team, options: dict[str, Any]) -> TaskSet:
        study = find_study(options["study"], team) if options["study"] else self._only_study_with_spans(team)
        build = BuildOptions(
            seed=options["seed"], pairing=options["pairing"], start_tolerance=options["start_tolerance"],
            end_tolerance=options["end_tolerance"], containment_tolerance=options["containment_tolerance"],
            annotators=options["annotators"], attributes=options["attributes"], balance=options["balance"],
            excerpt=options["excerpt"], distractors=options["distractors"], min_eligible=options["min_eligible"],
            same_context_exclusion=not options["no_same_context_exclusion"], mcq_from=options["mcq_from"],
        )
        episodes = study_episode_records(study)
        if not any(annotator.spans for episode in episodes for annotator in episode.annotators):
            raise CommandError(f"the study {study.slug!r} has no submitted spans to build tasks from")
        try:
            bars = BuildProgress(self.stderr)
            result = build_tasks(episodes, options["tasks"], build, bars.show)
            stratify = options["stratify"] == "source"
            report = assign_subsets(result.items, options["subsets"], options["subset_size"], options["seed"], stratify)
        except ValueError as error:
            raise CommandError(str(error)) from None
        params = {
            **dataclasses.asdict(build), "tasks": options["tasks"], "subsets": options["subsets"],
            "subset_size": options["subset_size"], "stratify": options["stratify"],
            "study": {"id": study.pk, "slug": study.slug, "title": study.title},
            "counts": dict(result.counts), "skipped": dict(result.skipped), "subset_sizes": report.sizes,
            "overlapping_subsets": report.overlapping, "dataset": dataset_statistics(episodes, result.segments),
        }
        name = options["name"] or f"shrec-seed{options['seed']}"
        task_set = self._save(team, name, result.items, options, seed=options["seed"], params=params,
                              spans_from=f"study {study.title}")
        for task in options["tasks"]:
            self._summary(task, result.counts[task], report.sizes.get(task, []), result.skipped,
                          task in report.overlapping)
        self.stdout.write(
            f"Task set {task_set.name!r} (team {team.slug}): {len(result.items)} items from {len(episodes)} episodes "
            f"of the study {study.title!r}, seed {options['seed']}."
        )
        return task_set

    def _only_study_with_spans(self, team) -> Study:
        """Without --study: the team's one study with submitted spans (after one SHREC import, its study)."""
        studies = list(
            Study.objects.of_team(team)
            .filter(items__assignments__annotations__status=Annotation.Status.SUBMITTED,
                    items__assignments__annotations__spans__isnull=False)
            .distinct().order_by("pk")
        )
        if len(studies) == 1:
            return studies[0]
        if not studies:
            raise CommandError(f"the team {team.slug!r} has no study with submitted spans: import a SHREC file "
                               "(import_episodes --format shrec FILE) or name a study with --study")
        names = ", ".join(f"{study.slug} ({study.title})" for study in studies)
        raise CommandError(f"the team {team.slug!r} has {len(studies)} studies with spans; choose one with "
                           f"--study: {names}")

    def _summary(self, task: str, count: int, sizes: list[int], skipped, overlapping: bool) -> None:
        parts = [f"{task}: {count} items"]
        if sizes:
            parts.append(f"subsets {'/'.join(str(size) for size in sizes)}" + (" (overlapping)" if overlapping else ""))
        parts += [f"{number} skipped ({reason.split(': ', 1)[1]})" for reason, number in sorted(skipped.items())
                  if reason.startswith(f"{task}: ")]
        self.stdout.write(", ".join(parts))

    def _import(self, team, options: dict[str, Any]) -> TaskSet:
        path = Path(options["import_file"])
        try:
            with path.open(encoding="utf-8") as lines:
                loaded = read_task_file(lines, path.name)
        except OSError as error:
            raise CommandError(f"--import {path}: cannot read it ({error.strerror})") from None
        except UnicodeDecodeError:
            raise CommandError(f"--import {path}: not UTF-8 text") from None
        except TaskFileError as error:
            raise CommandError(str(error)) from None
        name = options["name"] or loaded.name
        task_set = self._save(team, name, loaded.items, options, seed=loaded.seed, params=loaded.params,
                              spans_from=loaded.spans_from or f"task file {path.name}")
        self.stdout.write(f"Task set {task_set.name!r} (team {team.slug}): {len(loaded.items)} items from {path.name}.")
        return task_set

    def _save(self, team, name: str, items, options: dict[str, Any], **fields: Any) -> TaskSet:
        try:
            return save_task_set(team, name, items, replace=options["replace"], **fields)
        except TaskSetError as error:
            raise CommandError(str(error)) from None

    def _export(self, task_set: TaskSet, target: str) -> None:
        if target == "-":
            write_task_set(task_set, StdoutWriter(self.stdout))
            return
        path = Path(target)
        partial = path.with_name(path.name + ".partial")
        try:
            with partial.open("w", encoding="utf-8") as out:
                count = write_task_set(task_set, out)
            partial.replace(path)
        except OSError as error:
            raise CommandError(f"--export {path}: cannot write it ({error.strerror})") from None
        self.stdout.write(f"Wrote {count} items of {task_set.name!r} to {path}.")
