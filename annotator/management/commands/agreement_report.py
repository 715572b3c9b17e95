"""Write the agreement report of a study, or of any long-format CSV of ratings, to a file.

The report is computed in full before anything is written, and the file is written under a
temporary name and renamed into place, so bad input or a failure leaves no partial output.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.management.team_option import add_team_argument, team_from_options
from benchmark.stats.bootstrap import DEFAULT_RESAMPLES
from benchmark.stats.csv_input import (
    CsvProblem,
    OptionProblem,
    collect,
    parse_categories,
    parse_question_list,
    parse_scale,
    read_long_csv,
)
from benchmark.stats.report import DEFAULT_SEED, agreement_report

from ..study_option import find_study

FORMATS = ("json", "html", "csv", "zip")
CSV_SOURCE_FORMATS = ("json", "csv")
TEXT_FORMATS = ("json", "html")
CSV_ONLY_OPTIONS = ("categorical", "numeric", "categories", "scale")


def _option(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type that reports the parser's own message instead of 'invalid value'."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except OptionProblem as problem:
            raise argparse.ArgumentTypeError(str(problem)) from problem

    return convert


def _respondent_kinds(text: str) -> list[str]:
    """``judge,agent`` → the respondent kinds to compare human answers with (each one known)."""
    from benchmark.models import Respondent

    kinds = [kind.strip() for kind in text.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in Respondent.Kind.values]
    if not kinds or unknown:
        raise argparse.ArgumentTypeError(
            f"expected respondent kinds from {', '.join(Respondent.Kind.values)}, separated by commas; got {text!r}"
        )
    return list(dict.fromkeys(kinds))


def _count(text: str) -> int:
    if not (text.strip().isascii() and text.strip().isdigit()):
        raise argparse.ArgumentTypeError(f"expected a whole number of 0 or more, got {text!r}")
    return int(text)


class Command(BaseCommand):
    help = (
        "Write the agreement report of a study (--study) or of a long-format CSV of ratings "
        "(--from-csv, no database needed) as JSON, HTML, CSV tables in a ZIP, or a ZIP bundle."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--study", metavar="ID_OR_SLUG", help="The study to report on: its id or its slug.")
        add_team_argument(parser)
        source.add_argument(
            "--from-csv", metavar="FILE",
            help="A long-format CSV with columns item, annotator, question, value and optionally cluster, "
            "truth, condition, judge ('-' reads standard input). See docs/report-schema.md.",
        )
        parser.add_argument(
            "--format", choices=FORMATS, default="json",
            help="json (the default): the report; html: a standalone page; csv: a ZIP of CSV tables; zip: the "
            "bundle of raw annotations, report.json, report.html and figures. html and zip need --study.",
        )
        parser.add_argument(
            "--output", "--out", dest="output", required=True, metavar="PATH",
            help="The file to write ('-' for standard output, json and html only). Written whole or not at all.",
        )
        parser.add_argument(
            "--categorical", action="append", default=[], type=_option(parse_question_list), metavar="Q[,Q...]",
            help="--from-csv: treat these questions as categorical even if their values are numbers. Repeatable.",
        )
        parser.add_argument(
            "--numeric", action="append", default=[], type=_option(parse_question_list), metavar="Q[,Q...]",
            help="--from-csv: these questions are numeric; a value that is not a number is an error. Repeatable.",
        )
        parser.add_argument(
            "--categories", action="append", default=[], type=_option(parse_categories), metavar="Q=A,B,C",
            help="--from-csv: the categories annotators could choose for question Q, in order (sets q of "
            "Randolph's kappa; other values are an error). Makes Q categorical. Repeatable.",
        )
        parser.add_argument(
            "--scale", action="append", default=[], type=_option(parse_scale), metavar="Q=LOW:HIGH",
            help="--from-csv: the ends of question Q's rating scale, e.g. goal=0:10 (for the binned kappas; "
            "values outside are an error). Makes Q numeric. Repeatable.",
        )
        parser.add_argument(
            "--compare-with", type=_respondent_kinds, default=None, metavar="KIND[,KIND...]",
            help="--study: whose answers the annotators' are compared with, by respondent kind: judge (the "
            "default), agent, participant, annotator (other studies' annotators) or gold (the study's adjudicated "
            "gold).",
        )
        parser.add_argument(
            "--resamples", type=_count, default=DEFAULT_RESAMPLES, metavar="B",
            help="Bootstrap resamples for the confidence intervals (default: %(default)s; 0 skips them).",
        )
        parser.add_argument(
            "--seed", type=_count, default=DEFAULT_SEED, metavar="N",
            help="Seed of the bootstrap, so a report can be reproduced exactly (default: %(default)s).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        self._summary: list[str] = []
        out, format = options["output"], options["format"]
        if out == "-" and format not in TEXT_FORMATS:
            raise CommandError(f"--format {format} writes a ZIP file; give --out a file path, not '-'")
        target = None if out == "-" else _writable(Path(out))

        if options["from_csv"] is not None:
            content, source, counts = self._from_csv(options)
        else:
            content, source, counts = self._from_study(options)

        if target is None:
            self.stdout.write(content, ending="")
            log, written = self.stderr, "standard output"
        else:
            _write_atomically(target, content)
            log, written = self.stdout, str(target)
        log.write(
            f"Wrote the {format} report of {source} to {written}: {counts} in {time.perf_counter() - started:.2f} s.",
            style_func=lambda text: text,
        )
        for line in self._summary:
            log.write(line, style_func=lambda text: text)

    def _from_csv(self, options: dict[str, Any]) -> tuple[str | bytes, str, str]:
        format = options["format"]
        if options["compare_with"]:
            raise CommandError(
                "--compare-with needs --study: a CSV's judge column already says what its ratings are compared with"
            )
        if format not in CSV_SOURCE_FORMATS:
            raise CommandError(
                f"--format {format} needs --study: the page and the bundle show the study's items; "
                f"--from-csv writes {' or '.join(CSV_SOURCE_FORMATS)}"
            )
        path = options["from_csv"]
        source = "standard input" if path == "-" else Path(path).name
        try:
            table, settled = read_long_csv(
                sys.stdin if path == "-" else path,
                name=source,
                categorical=[q for names in options["categorical"] for q in names],
                numeric=[q for names in options["numeric"] for q in names],
                categories=collect(options["categories"], "--categories"),
                scales=collect(options["scale"], "--scale"),
            )
        except (CsvProblem, OptionProblem) as problem:
            raise CommandError(str(problem)) from problem
        resamples, seed = options["resamples"], options["seed"]
        report = {
            "input": {"file": source, **settled.to_dict()},
            "resamples": resamples,
            "seed": seed,
            **agreement_report(table, **settled.as_arguments(), resamples=resamples, seed=seed),
        }
        counts = (
            f"{len(report['questions'])} question(s), {table['item'].nunique()} item(s), {len(table)} rating(s)"
        )
        if format == "json":
            return _json(report), source, counts
        from annotator.reports import render_tables_zip

        return render_tables_zip(report), source, counts

    def _from_study(self, options: dict[str, Any]) -> tuple[str | bytes, str, str]:
        given = [f"--{name}" for name in CSV_ONLY_OPTIONS if options[name]]
        if given:
            raise CommandError(
                f"{', '.join(given)} apply to --from-csv only; a study's instrument sets its questions' kinds and "
                "options"
            )
        study = find_study(options["study"], team_from_options(options))
        from annotator.reports import build_report, render_bundle, render_html, render_tables_zip, report_json
        from annotator.reports.agentsense import summary_lines
        from annotator.reports.build import DEFAULT_RESPONDENTS

        kinds = options["compare_with"] or DEFAULT_RESPONDENTS
        report = build_report(study, resamples=options["resamples"], seed=options["seed"], respondent_kinds=kinds)
        # A study that asks about goals (AgentSense) also gets its comparison with self, other and
        # external answers printed, so the command line shows Table 8's figures at once.
        self._summary = summary_lines(report["agentsense"])
        renderers: dict[str, Callable[[], str | bytes]] = {
            "json": lambda: report_json(report),
            "html": lambda: render_html(study, report),
            "csv": lambda: render_tables_zip(report),
            "zip": lambda: render_bundle(study, report),
        }
        content = renderers[options["format"]]()
        counted = report["counts"]
        counts = (
            f"{len(report['questions'])} question(s), {counted['items_rated']} item(s), "
            f"{counted['answers']} answer(s), {counted['spans']} span(s)"
        )
        return content, f"study {study.slug!r}", counts


def _json(report: dict[str, Any]) -> str:
    """As annotator.reports.report_json writes it, without loading the study report machinery (about 1 s)."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _writable(path: Path) -> Path:
    """Check up front that the output can be written, so a long computation does not end in an error."""
    if path.is_dir():
        raise CommandError(f"--out {path}: is a directory; give a file path")
    if not path.parent.is_dir():
        raise CommandError(f"--out {path}: the directory {path.parent} does not exist")
    return path


def _write_atomically(path: Path, content: str | bytes) -> None:
    """Write beside the target under a temporary name, then rename: readers never see half a file."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "xb") as handle:
            handle.write(data)
        temporary.replace(path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise CommandError(f"cannot write {path}: {error.strerror}") from error
