"""The AgentSense report as flat tables: one set of rows for the CSV downloads, the command's text and the page.

Every table is built once from the report dict (``records.build_agentsense``); the CSV writes
the numbers unrounded through the one CSV writer (``benchmark.csv_output``, so a model named like a
formula is quoted), the text and the page round them. ``goal-answers`` and ``probe-answers`` are
the records behind the report, one row per answer, so an analysis can be re-run elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...csv_output import csv_text
from ..tables import text_grid

CELL_COLUMNS = ("mean", "ci_low", "ci_high", "n", "scenarios")
VIEW_LABELS = {
    "self": "self", "other": "other", "judges_average": "judges' average", "judges_majority": "judges' majority",
    "humans": "humans (annotators' majority)", "others_majority": "others' majority",
}
ROLE_LABELS = {"attacker": "attacker accuracy", "defender": "defender score", "blind": "blind-test accuracy"}


@dataclass
class Table:
    """One table: its file name, a title, its columns and its rows (dicts of unrounded values)."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: list[dict[str, Any]]


def view_label(view: str) -> str:
    """How a view is written for people: 'judge:gpt-4o' is 'judge gpt-4o'."""
    if view.startswith("judge:"):
        return f"judge {view[len('judge:'):]}"
    return VIEW_LABELS.get(view, view)


def _cell(cell: Mapping[str, Any] | None) -> dict[str, Any]:
    cell = cell or {}
    interval = cell.get("ci95") or (None, None)
    return {"mean": cell.get("mean"), "ci_low": interval[0], "ci_high": interval[1], "n": cell.get("n", 0),
            "scenarios": cell.get("clusters", 0)}


def _nested(by_model: Mapping[str, Mapping[str, Any]], label: str) -> Iterator[dict[str, Any]]:
    for model, cells in by_model.items():
        for value, cell in cells.items():
            yield {"model": model, label: value, **_cell(cell)}


def report_tables(report: Mapping[str, Any]) -> dict[str, Table]:
    """Every table of the report, by file name (without ``.csv``), in the page's order."""
    primary = view_label(report["primary_view"] or "")
    completion = [{"view": view_label(view), "model": model, **_cell(cell)}
                  for view, cells in report["completion"].items() for model, cell in cells.items()]
    overestimation = [
        {"comparison": f"{view_label(entry['view'])} − {view_label(entry['baseline'])}", "model": model, **_cell(cell)}
        for entry in report["overestimation"].values()
        for model, cell in [("all models", entry["all"]), *entry["by_model"].items()] if cell.get("n")
    ]
    reasoning = [{"measure": ROLE_LABELS[role], "model": model, **_cell(cell)}
                 for role, cells in report["reasoning"].items() for model, cell in cells.items()]
    psi = [
        {"metric": _metric_label(metric), "model": model, "psi": cell["psi"], "ci_low": (cell["ci95"] or [None])[0],
         "ci_high": (cell["ci95"] or [None, None])[1], "templates": cell["templates"], "scenarios": cell["scenarios"],
         "notes": "; ".join(cell["notes"])}
        for metric, cells in report["psi"].items() for model, cell in cells.items()
    ]
    pairings = [
        {"sender_model": cell["sender_model"], "receiver_model": cell["receiver_model"], "characters": group,
         **_cell(cell[group])}
        for cell in report["pairings"]["cells"] for group in ("all", "senders", "receivers")
    ]
    judges = report["agreement"]["judges"]
    agreement = [
        {"first": view_label(pair["first"]), "second": view_label(pair["second"]), "statistic": "Cohen's kappa",
         "n": pair["n"], "kappa": pair["kappa"], "kappa_ci_low": (pair["kappa_ci95"] or [None])[0],
         "kappa_ci_high": (pair["kappa_ci95"] or [None, None])[1], "percent_agreement": pair["percent_agreement"],
         "notes": "; ".join(pair["notes"])}
        for pair in report["agreement"]["pairs"]
    ]
    if judges["judges"] >= 2:
        agreement.append({
            "first": f"all {judges['judges']} judges", "second": "", "statistic": "Fleiss' kappa", "n": judges["n"],
            "kappa": judges["kappa"], "kappa_ci_low": (judges["ci95"] or [None])[0],
            "kappa_ci_high": (judges["ci95"] or [None, None])[1], "percent_agreement": judges["percent_agreement"],
            "notes": "; ".join(judges["notes"]),
        })
    return {
        "completion": Table("completion", "Goal completion per model and perspective", ("view", "model", *CELL_COLUMNS),
                            completion),
        "by-erg": Table("by-erg", f"Goal completion per ERG need ({primary}; unit: goal)",
                        ("model", "erg", *CELL_COLUMNS), list(_nested(report["completion_by_erg"], "erg"))),
        "by-goal-type": Table("by-goal-type", f"Goal completion per goal type ({primary}; unit: goal)",
                              ("model", "goal_type", *CELL_COLUMNS),
                              list(_nested(report["completion_by_goal_type"], "goal_type"))),
        "by-category": Table("by-category", f"Goal completion per scenario category ({primary})",
                             ("model", "category", *CELL_COLUMNS),
                             list(_nested(report["completion_by_category"], "category"))),
        "overestimation": Table("overestimation", "Agents' view minus the judges' majority, per character",
                                ("comparison", "model", *CELL_COLUMNS), overestimation),
        "reasoning": Table("reasoning", "Implicit reasoning: attackers, defenders and the blind test",
                           ("measure", "model", *CELL_COLUMNS), reasoning),
        "psi": Table("psi", "Profile sensitivity index (lower is steadier)",
                     ("metric", "model", "psi", "ci_low", "ci_high", "templates", "scenarios", "notes"), psi),
        "pairings": Table("pairings", f"Sender × receiver models ({primary})",
                          ("sender_model", "receiver_model", "characters", *CELL_COLUMNS), pairings),
        "agreement": Table("agreement", "Agreement between perspectives",
                           ("first", "second", "statistic", "n", "kappa", "kappa_ci_low", "kappa_ci_high",
                            "percent_agreement", "notes"), agreement),
    }


def _metric_label(metric: str) -> str:
    if metric.startswith("goal_completion."):
        return f"goal completion, {view_label(metric[len('goal_completion.'):])}"
    return ROLE_LABELS.get(metric, metric)


RECORD_TABLES = ("goal-answers", "probe-answers")
CSV_TABLES = ("completion", "by-erg", "by-goal-type", "by-category", "overestimation", "reasoning", "psi",
              "pairings", "agreement", *RECORD_TABLES)


def _frame_csv(frame: pd.DataFrame) -> str:
    def blank_nan(value: Any) -> Any:
        return None if isinstance(value, float) and math.isnan(value) else value

    rows = ([blank_nan(value) for value in row] for row in frame.itertuples(index=False, name=None))
    return csv_text([str(column) for column in frame.columns], rows)


def csv_table(name: str, report: Mapping[str, Any], goals: pd.DataFrame, probes: pd.DataFrame) -> str:
    """One of ``CSV_TABLES`` as CSV text."""
    if name == "goal-answers":
        return _frame_csv(goals)
    if name == "probe-answers":
        return _frame_csv(probes)
    tables = report_tables(report)
    if name not in tables:
        raise ValueError(f"unknown table {name!r}; choose one of {', '.join(CSV_TABLES)}")
    table = tables[name]
    return csv_text(table.columns, ([row[column] for column in table.columns] for row in table.rows))


def number_text(value: Any, digits: int = 3) -> str:
    """A number rounded for reading; '—' for a missing one."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    return f"{value:.{digits}f}"


def display_rows(table: Table) -> list[list[str]]:
    """The rows as rounded text, the confidence limits joined as '[low, high]'."""
    rows = []
    for row in table.rows:
        cells = []
        for column in display_columns(table):
            if column.endswith("95% CI"):
                prefix = "kappa_" if column.startswith("kappa") else ""
                low, high = row[f"{prefix}ci_low"], row[f"{prefix}ci_high"]
                cells.append("—" if low is None else f"[{low:.3f}, {high:.3f}]")
            else:
                cells.append(number_text(row[column]))
        rows.append(cells)
    return rows


def display_columns(table: Table) -> list[str]:
    """The columns as shown: each pair of confidence limits becomes one '95% CI' column."""
    columns: list[str] = []
    for column in table.columns:
        if column in ("ci_low", "kappa_ci_low"):
            columns.append("kappa 95% CI" if column.startswith("kappa") else "95% CI")
        elif column not in ("ci_high", "kappa_ci_high"):
            columns.append(column)
    return columns


def text_report(report: Mapping[str, Any]) -> str:
    """Every table as plain text, with the counts, notes and how each number is computed."""
    counts = report["counts"]
    lines = [
        f"AgentSense results: {counts['episodes']} episode(s), {counts['scenarios']} scenario(s), "
        f"{counts['characters']} character(s); {counts['goal_answers']} goal answer(s), "
        f"{counts['probe_answers']} probe answer(s). 95% CIs: {report['resamples']} bootstrap resamples of "
        f"scenarios, seed {report['seed']}.",
        "",
    ]
    for table in report_tables(report).values():
        lines.append(table.title)
        lines += ["", *text_grid(display_columns(table), display_rows(table))] if table.rows else ["  (none)"]
        lines.append("")
    lines += [f"Note: {note}" for note in report["notes"]]
    return "\n".join(lines).rstrip() + "\n"


def methods(report: Mapping[str, Any]) -> Sequence[tuple[str, str]]:
    """(name, how it is computed) for the page's methods list."""
    return [(name.replace("_", " ").capitalize(), text) for name, text in report["methods"].items()]
