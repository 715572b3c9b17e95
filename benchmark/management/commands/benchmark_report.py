"""Print or write the benchmark results: SocialVeil's Table 2, barrier signatures, linguistic correlations;
or, with ``--analysis agentsense``, AgentSense's analyses of multi-party episodes (the AgentSense results page);
or, with ``--analysis promediate``, ProMediate's Tables 1–3 and the ME–MI correlation (the ProMediate page);
or, with ``--analysis shrec``, SHREC's Tables 1 and 2 for one task set (the SHREC page).

The report is computed in full before anything is written, and a file is written under a
temporary name and renamed into place, so bad input or a failure leaves no partial output.
"""

from __future__ import annotations

import argparse
import secrets
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.models import Category, Difficulty, Episode, Respondent, Scenario, Seat, TaskSet
from benchmark.results.agentsense import tables as agentsense_tables
from benchmark.results.agentsense.records import AgentSenseFilters, build_agentsense
from benchmark.results.build import MAJORITY, ResultFilters, ResultsProblem, build_results, unknown_scenarios
from benchmark.results.promediate import tables as promediate_tables
from benchmark.results.promediate.build import ProMediateProblem, build_promediate
from benchmark.results.promediate.traces import ProMediateFilters
from benchmark.results.shrec import tables as shrec_tables
from benchmark.results.shrec.build import build_shrec
from benchmark.results.shrec.records import ShrecResultsProblem, choose_task_set
from benchmark.results.tables import CSV_TABLES, csv_table, report_json, text_report
from benchmark.scenarios.templates import TemplateProblem, find_template
from benchmark.stats.bootstrap import DEFAULT_RESAMPLES
from benchmark.stats.promediate import PRESETS
from benchmark.stats.results import DEFAULT_SEED, SEAT_ROLES

FORMATS = ("text", "json", "csv")
ANALYSES = ("barriers", "agentsense", "promediate", "shrec")


def _count(text: str) -> int:
    if not (text.strip().isascii() and text.strip().isdigit()):
        raise argparse.ArgumentTypeError(f"expected a whole number of 0 or more, got {text!r}")
    return int(text)


class Command(BaseCommand):
    help = (
        "Report the judges' scores of benchmark episodes (or another kind of respondent's): mean ± SE per "
        "model and condition with the change "
        "from 'none' (all scenarios and per difficulty), each barrier's deviation from the others with bootstrap "
        "CIs, and correlations of linguistic features with the scores. With --analysis agentsense: goal completion "
        "per model and perspective (self, other, judges), by ERG need, goal type and category, attackers and "
        "defenders, PSI, sender/receiver pairings and agreement between perspectives. With --analysis promediate: "
        "CC, TLE, RL, ME and MI per conflict mode and mediator condition (Table 1), per mediator model (Table 2), "
        "their factor loadings (Table 3) and the ME-MI correlation. With --analysis shrec: SHREC's eight tasks per "
        "model and variant and for people (Tables 1 and 2), mean ± SD over subsets, per-attribute F1 and the "
        "dataset statistics of one task set. Text (default), JSON or CSV."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_team_argument(parser)
        parser.add_argument("--analysis", default="barriers", choices=ANALYSES,
                            help="barriers: the judges' scores under communication barriers (default); agentsense: "
                            "AgentSense's analyses of goal and probe answers; promediate: ProMediate's negotiation "
                            "metrics from the consensus traces; shrec: SHREC's tasks answered by models and "
                            "people.")
        parser.add_argument("--task-set", default="", metavar="NAME",
                            help="With --analysis shrec: the task set to report (default: the latest built).")
        parser.add_argument("--answers", default="parsed", choices=["parsed", "coerced"],
                            help="With --analysis shrec: score the models' replies as Parley's parser read them "
                            "(default) or as the coercing model read them where one did (evaluate --coerce-model).")
        parser.add_argument("--model", default="",
                            help="With --analysis agentsense: only episodes in which this model plays a seat.")
        parser.add_argument("--mediator-model", default="",
                            help="With --analysis promediate: only conversations whose mediator is this model "
                            "(conversations without a mediator stay, as the baseline).")
        parser.add_argument("--metric-preset", default="upstream", choices=list(PRESETS),
                            help="With --analysis promediate: the metric options, upstream (the public code's "
                            "formulas, default) or paper (the paper's wording).")
        parser.add_argument("--episode", type=_count, default=None, metavar="ID",
                            help="With --analysis promediate: the episode whose trajectory the JSON keeps "
                            "(default: the first with a mediator).")
        parser.add_argument("--category", default="", choices=["", *Category.values],
                            help="With --analysis agentsense: only scenarios of this AgentSense category.")
        parser.add_argument("--tag", default="", help="Only episodes with this experiment tag (a run's name).")
        parser.add_argument("--source", default="", choices=["", *Episode.Source.values],
                            help="Only episodes from this source.")
        parser.add_argument("--strategy", default="", choices=["", *Seat.Strategy.values],
                            help="Only episodes whose partner used this strategy (default or repair).")
        parser.add_argument("--difficulty", default="", choices=["", *Difficulty.values],
                            help="Only episodes of scenarios of this difficulty (hard: SocialVeil's Sotopia-Hard).")
        parser.add_argument("--scenarios", default="", metavar="IDS",
                            help="Only episodes of these comma-separated scenarios: ids, external ids (e.g. a "
                            "SocialVeil episode_id) or codenames.")
        parser.add_argument("--template", default="", metavar="TEMPLATE",
                            help="Only episodes of scenarios instantiated from this template (its id or codename).")
        parser.add_argument(
            "--respondent-kind", default="", choices=["", *Respondent.Kind.values],
            help="Whose scores to report: automated judges (the default, unless --evaluator names one of "
            "another kind, such as the imported 'human mean'), annotators, participants or interviewed agents.",
        )
        parser.add_argument(
            "--evaluator", default="",
            help="The respondent whose scores to report (a judge's model name, e.g. 'openai/gpt-4o' or "
            f"'scripted'), or '{MAJORITY}': the median of all of them per episode, seat and dimension. "
            "Default: the one with the most scores on the selected episodes.",
        )
        parser.add_argument("--prompt-version", default=None,
                            help="Only scores made with this judge prompt version.")
        parser.add_argument("--seat", default="partner", choices=SEAT_ROLES,
                            help="Whose per-seat scores to report: the partner's (default, as in SocialVeil) or "
                            "the barrier seat's.")
        parser.add_argument("--format", default="text", choices=FORMATS,
                            help="text: readable tables (default); json: every number (docs/results-schema.md); "
                            "csv: one table, chosen with --table.")
        parser.add_argument("--table", default=None,
                            choices=list(dict.fromkeys([*CSV_TABLES, *agentsense_tables.CSV_TABLES,
                                                        *promediate_tables.CSV_TABLES,
                                                        *shrec_tables.CSV_TABLES])),
                            help="With --format csv: which table (default: means; episodes is one row per "
                            "episode and seat with scores and linguistic features). With --analysis agentsense: "
                            f"{', '.join(agentsense_tables.CSV_TABLES)} (default: completion). With --analysis "
                            f"promediate: {', '.join(promediate_tables.CSV_TABLES)} (default: table1). With --analysis "
                            f"shrec: {', '.join(shrec_tables.CSV_TABLES)} (default: table1).")
        parser.add_argument("--output", "--out", dest="output", default="-", metavar="PATH",
                            help="The file to write, or '-' for standard output (the default). Written whole or "
                            "not at all.")
        parser.add_argument("--bootstrap", type=_count, default=DEFAULT_RESAMPLES, metavar="B",
                            help="Bootstrap resamples for the deviation CIs and every AgentSense CI (default: "
                            "%(default)s; 0 skips them).")
        parser.add_argument("--seed", type=_count, default=DEFAULT_SEED, metavar="N",
                            help="Seed of the bootstrap, so a report can be reproduced exactly (default: "
                            "%(default)s).")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        format, table_name, output = options["format"], options["table"], options["output"]
        if table_name and format != "csv":
            raise CommandError("--table applies to --format csv only")
        target = None if output == "-" else _writable(Path(output))
        team = team_from_options(options)
        episodes = Episode.objects.of_team(team)
        if options["tag"] and not episodes.filter(tag=options["tag"]).exists():
            raise CommandError(f"--tag {options['tag']!r}: no episode has this tag")
        template = ""
        if options["template"]:
            try:
                template = str(find_template(team, options["template"]).pk)
            except TemplateProblem as problem:
                raise CommandError(f"--template: {problem}") from problem
        if options["analysis"] != "promediate" and (
            options["mediator_model"] or options["episode"] is not None or options["metric_preset"] != "upstream"
        ):
            raise CommandError("--mediator-model, --metric-preset and --episode apply to --analysis promediate only")
        if (options["task_set"] or options["answers"] != "parsed") and options["analysis"] != "shrec":
            raise CommandError("--task-set and --answers apply to --analysis shrec only")
        if options["analysis"] == "shrec":
            content, summary = _shrec(options, team)
            _emit(self, content, target, f"Wrote the {format} SHREC results to", summary, started)
            return
        if options["analysis"] == "agentsense":
            content, summary = _agentsense(options, episodes, template)
            _emit(self, content, target, f"Wrote the {format} AgentSense results to", summary, started)
            return
        if options["analysis"] == "promediate":
            content, summary = _promediate(options, episodes, team)
            _emit(self, content, target, f"Wrote the {format} ProMediate results to", summary, started)
            return
        if options["model"] or options["category"]:
            raise CommandError("--model and --category apply to --analysis agentsense only")
        scenarios = tuple(dict.fromkeys(part.strip() for part in options["scenarios"].split(",") if part.strip()))
        unknown = unknown_scenarios(scenarios, Scenario.objects.of_team(team)) if scenarios else []
        if unknown:
            raise CommandError(f"--scenarios: no scenario has the id, external id or codename "
                               f"{', '.join(map(repr, unknown))}")
        if table_name and table_name not in CSV_TABLES:
            raise CommandError(f"--table {table_name}: the barrier analysis has the tables {', '.join(CSV_TABLES)}")
        filters = ResultFilters(
            tag=options["tag"], source=options["source"], strategy=options["strategy"],
            respondent_kind=options["respondent_kind"], evaluator=options["evaluator"],
            prompt_version=options["prompt_version"], seat_role=options["seat"], template=template,
            difficulty=options["difficulty"], scenarios=scenarios,
        )
        try:
            report, table = build_results(filters, episodes, resamples=options["bootstrap"], seed=options["seed"])
        except ResultsProblem as problem:
            raise CommandError(str(problem)) from problem
        if format == "json":
            content = report_json(report)
        elif format == "csv":
            content = csv_table(table_name or "means", report, table)
        else:
            content = text_report(report)
        judge = report["evaluator"]
        summary = (f"{report['counts']['episodes']} episode(s) scored by "
                   f"{judge['evaluator'] if judge else 'no ' + report['respondent_kind']}, "
                   f"{len(report['models'])} model(s), {len(report['conditions'])} condition(s)")
        _emit(self, content, target, f"Wrote the {format} results to", summary, started)


def _agentsense(options: dict[str, Any], episodes: Any, template: str) -> tuple[str, str]:
    """The AgentSense report in the asked format, and a summary line."""
    format, table_name = options["format"], options["table"] or "completion"
    if table_name not in agentsense_tables.CSV_TABLES:
        raise CommandError(f"--table {table_name}: the AgentSense analysis has the tables "
                           f"{', '.join(agentsense_tables.CSV_TABLES)}")
    if options["respondent_kind"] or options["evaluator"] or options["prompt_version"] or options["strategy"]:
        raise CommandError("--respondent-kind, --evaluator, --prompt-version and --strategy apply to the barrier "
                           "analysis; AgentSense reads every perspective")
    filters = AgentSenseFilters(tag=options["tag"], model=options["model"], template=template,
                                category=options["category"])
    report, goals, probes = build_agentsense(filters, episodes, resamples=options["bootstrap"], seed=options["seed"])
    if format == "json":
        content = report_json(report)
    elif format == "csv":
        content = agentsense_tables.csv_table(table_name, report, goals, probes)
    else:
        content = agentsense_tables.text_report(report)
    counts = report["counts"]
    return content, (f"{counts['episodes']} episode(s) with answers, {len(report['models'])} model(s), "
                     f"{counts['goal_answers']} goal and {counts['probe_answers']} probe answer(s)")


def _promediate(options: dict[str, Any], episodes: Any, team: Any) -> tuple[str, str]:
    """The ProMediate report in the asked format, and a summary line."""
    format, table_name = options["format"], options["table"] or "table1"
    if table_name not in promediate_tables.CSV_TABLES:
        raise CommandError(f"--table {table_name}: the ProMediate analysis has the tables "
                           f"{', '.join(promediate_tables.CSV_TABLES)}")
    unused = [name for name in ("model", "category", "template", "source", "strategy", "difficulty", "respondent_kind")
              if options[name]]
    if unused:
        raise CommandError(f"--{unused[0].replace('_', '-')} does not apply to --analysis promediate (it takes "
                           "--tag, --scenarios, --mediator-model, --evaluator, --prompt-version, --metric-preset)")
    if options["evaluator"] == MAJORITY:
        raise CommandError(f"--evaluator {MAJORITY}: the ProMediate analysis reads one judge's consensus trace; "
                           "name the judge (e.g. 'scripted') or leave it out for each episode's latest reading")
    scenarios = tuple(dict.fromkeys(part.strip() for part in options["scenarios"].split(",") if part.strip()))
    unknown = unknown_scenarios(scenarios, Scenario.objects.of_team(team)) if scenarios else []
    if unknown:
        raise CommandError(f"--scenarios: no scenario has the id, external id or codename "
                           f"{', '.join(map(repr, unknown))}")
    if options["prompt_version"] is not None and not options["evaluator"]:
        raise CommandError("--prompt-version needs --evaluator (the consensus judge it belongs to)")
    filters = ProMediateFilters(
        tag=options["tag"], scenarios=scenarios, mediator_model=options["mediator_model"],
        judge=options["evaluator"], prompt_version=options["prompt_version"], preset=options["metric_preset"],
        episode=options["episode"],
    )
    try:
        report, frame = build_promediate(filters, episodes, resamples=options["bootstrap"], seed=options["seed"])
    except ProMediateProblem as problem:
        raise CommandError(str(problem)) from problem
    if format == "json":
        content = report_json(report)
    elif format == "csv":
        content = promediate_tables.csv_table(table_name, report, frame)
    else:
        content = promediate_tables.text_report(report)
    counts = report["counts"]
    return content, (f"{counts['episodes']} conversation(s) over {counts['scenarios']} scenario(s), "
                     f"{counts['left_out']} left out")


def _shrec(options: dict[str, Any], team: Any) -> tuple[str, str]:
    """The SHREC report of one task set in the asked format, and a summary line."""
    format, table_name = options["format"], options["table"] or "table1"
    if table_name not in shrec_tables.CSV_TABLES:
        raise CommandError(f"--table {table_name}: the SHREC analysis has the tables "
                           f"{', '.join(shrec_tables.CSV_TABLES)}")
    unused = [name for name in ("model", "category", "template", "source", "strategy", "difficulty", "respondent_kind",
                                "evaluator", "prompt_version", "tag", "scenarios") if options[name]]
    if unused:
        raise CommandError(f"--{unused[0].replace('_', '-')} does not apply to --analysis shrec (it takes --task-set, "
                           "--bootstrap, --seed)")
    try:
        task_set = choose_task_set(TaskSet.objects.of_team(team), options["task_set"])
    except ShrecResultsProblem as problem:
        raise CommandError(f"--task-set: {problem}" if options["task_set"] else str(problem)) from problem
    report = build_shrec(task_set, answers=options["answers"], resamples=options["bootstrap"], seed=options["seed"])
    if format == "json":
        content = report_json(report)
    elif format == "csv":
        content = shrec_tables.csv_table(table_name, report)
    else:
        content = shrec_tables.text_report(report)
    human = report["human"]
    return content, (f"task set {task_set.name}: {report['task_set']['items']} item(s), {len(report['rows'])} model "
                     f"row(s), {human['people'] if human else 0} person(s) in the Human row")


def _emit(command: BaseCommand, content: str, target: Path | None, what: str, summary: str, started: float) -> None:
    """Write the content to the file or standard output; the summary goes to the other stream."""
    if target is None:
        command.stdout.write(content, ending="")
        log, written = command.stderr, "standard output"
    else:
        _write_atomically(target, content)
        log, written = command.stdout, str(target)
    log.write(f"{what} {written}: {summary} in {time.perf_counter() - started:.2f} s.", style_func=lambda text: text)


def _writable(path: Path) -> Path:
    """Check up front that the output can be written, so a long computation does not end in an error."""
    if path.is_dir():
        raise CommandError(f"--output {path}: is a directory; give a file path")
    if not path.parent.is_dir():
        raise CommandError(f"--output {path}: the directory {path.parent} does not exist")
    return path


def _write_atomically(path: Path, content: str) -> None:
    """Write beside the target under a temporary name, then rename: readers never see half a file."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8", newline="") as handle:
            handle.write(content)
        temporary.replace(path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise CommandError(f"cannot write {path}: {error.strerror}") from error
