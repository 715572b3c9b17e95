"""A results report as flat tables: CSV downloads, the command's text table, and the page's rows.

Every table is built from the report dict (``benchmark.results.build.build_results``) except
``episodes``, which is the results table itself (one row per episode and seat), so a researcher
can re-run any analysis elsewhere. CSV numbers are unrounded; the text and the page round. A
model, scenario or barrier named like a formula (``=...``) gets a leading quote in the CSV, as in
every CSV Parley writes (``benchmark.csv_output``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from ..csv_output import csv_text

CSV_TABLES = ("means", "deviations", "correlations", "episodes")
# Column headings of the text table, short as in SocialVeil's Table 2 so nine dimensions fit a terminal.
SHORT_LABELS = {
    "goal": "GOAL", "believability": "BEL", "relationship": "REL", "knowledge": "KNO", "secret": "SEC",
    "social_rules": "SOC", "financial": "FIN", "unresolved_confusion": "CONF", "mutual_understanding": "MUTU",
}

MEANS_COLUMNS = ("split", "model", "condition", "dimension", "n", "mean", "sd", "se", "percent_change", "notes")
DEVIATION_COLUMNS = (
    "model", "barrier", "dimension", "scenarios", "barrier_mean", "others_mean", "deviation", "deviation_ci_low",
    "deviation_ci_high", "deviation_percent", "deviation_percent_ci_low", "deviation_percent_ci_high",
    "ci_excludes_zero", "other_barriers",
    "notes",
)
CORRELATION_COLUMNS = (
    "scope", "feature", "dimension", "n", "pearson_r", "pearson_p", "spearman_rho", "spearman_p", "notes",
)


def report_json(report: Mapping[str, Any]) -> str:
    """The report as JSON text; NaN is refused, never written."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _splits(report: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield "all", report["means"]
    yield from report["means_by_difficulty"].items()


def means_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """One row per split (all, then each difficulty), model, condition and dimension."""
    for split, means in _splits(report):
        for model, by_condition in means.items():
            for condition, cells in by_condition.items():
                for dimension, cell in cells.items():
                    yield {"split": split, "model": model, "condition": condition, "dimension": dimension,
                           **{key: cell[key] for key in ("n", "mean", "sd", "se", "percent_change")},
                           "notes": "; ".join(cell["notes"])}


def _interval(value: Sequence[float] | None) -> tuple[float | None, float | None]:
    return (value[0], value[1]) if value else (None, None)


def deviation_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for entry in report["deviations"]:
        low, high = _interval(entry["deviation_ci95"])
        percent_low, percent_high = _interval(entry["deviation_percent_ci95"])
        yield {
            **{key: entry[key] for key in ("model", "barrier", "dimension", "scenarios", "barrier_mean",
                                            "others_mean", "deviation", "deviation_percent", "ci_excludes_zero")},
            "deviation_ci_low": low, "deviation_ci_high": high,
            "deviation_percent_ci_low": percent_low, "deviation_percent_ci_high": percent_high,
            "other_barriers": " ".join(entry["other_barriers"]), "notes": "; ".join(entry["notes"]),
        }


def correlation_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Rows for all models pooled (scope 'all'), then per model (scope 'model:<name>')."""
    scopes = [("all", report["correlations"]["all"])]
    scopes += [(f"model:{model}", entries) for model, entries in report["correlations"]["by_model"].items()]
    for scope, entries in scopes:
        for entry in entries:
            yield {"scope": scope, **{key: entry[key] for key in CORRELATION_COLUMNS[1:-1]},
                   "notes": "; ".join(entry["notes"])}


def _csv(columns: Sequence[str], rows: Iterator[dict[str, Any]]) -> str:
    return csv_text(columns, ([row[column] for column in columns] for row in rows))


def _table_csv(table: pd.DataFrame) -> str:
    """A DataFrame as CSV through the shared writer: no index, NaN as an empty cell."""

    def blank_nan(value: Any) -> Any:
        return None if isinstance(value, float) and math.isnan(value) else value

    rows = ([blank_nan(value) for value in row] for row in table.itertuples(index=False, name=None))
    return csv_text([str(column) for column in table.columns], rows)


def csv_table(name: str, report: Mapping[str, Any], table: pd.DataFrame | None = None) -> str:
    """One of CSV_TABLES as CSV text (``episodes`` needs the results table)."""
    if name == "means":
        return _csv(MEANS_COLUMNS, means_rows(report))
    if name == "deviations":
        return _csv(DEVIATION_COLUMNS, deviation_rows(report))
    if name == "correlations":
        return _csv(CORRELATION_COLUMNS, correlation_rows(report))
    if name == "episodes":
        if table is None:
            raise ValueError("the episodes table needs the results table")
        return _table_csv(table)
    raise ValueError(f"unknown table {name!r}; choose one of {', '.join(CSV_TABLES)}")


# --- text --------------------------------------------------------------------------------------


def mean_text(cell: Mapping[str, Any] | None) -> str:
    """'7.83 ± 0.42' (mean ± SE), or the mean alone without an SE, or '—' without scores."""
    if not cell or cell["mean"] is None:
        return "—"
    if cell["se"] is None:
        return f"{cell['mean']:.2f}"
    return f"{cell['mean']:.2f} ± {cell['se']:.2f}"


def percent_note(notes: Sequence[str], prefix: str) -> str:
    """The reason a percent is missing: the first note starting with ``prefix`` (``percent_change:`` or
    ``deviation_percent:``), without it."""
    return next((note[len(prefix):].strip() for note in notes if note.startswith(prefix)), "")


def change_text(cell: Mapping[str, Any] | None) -> str:
    """'+5.0%', '—' when a condition's change is undefined (the note says why), '' for the baseline itself."""
    if not cell or cell["percent_change"] is not None:
        return "" if not cell else f"{cell['percent_change']:+.1f}%"
    note = percent_note(cell["notes"], "percent_change:")
    return "" if not note or note == "this is the baseline" else "—"


def deviation_percent_interval(entry: Mapping[str, Any]) -> str:
    """A signature's percent interval, or '—' where the percent itself is."""
    return "—" if entry["deviation_percent"] is None else interval_text(entry["deviation_percent_ci95"], 1, "%")


def deviation_percent_text(entry: Mapping[str, Any]) -> str:
    """A signature's percent, or '—' when its baseline is 0 or near it (the entry's notes say why)."""
    return "—" if entry["deviation_percent"] is None else f"{entry['deviation_percent']:+.1f}%"


def interval_text(interval: Sequence[float] | None, digits: int = 2, suffix: str = "") -> str:
    if not interval:
        return "n/a"
    return f"[{interval[0]:+.{digits}f}{suffix}, {interval[1]:+.{digits}f}{suffix}]"


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


def text_grid(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A plain-text table: the header, a rule, then the rows, columns padded to their widest cell."""
    widths = [max(len(str(line)) for line in column) for column in zip(header, *rows, strict=True)]
    lines = [_row(header, widths), _row(["-" * width for width in widths], widths)]
    lines += [_row(row, widths) for row in rows]
    return lines


def _means_block(report: Mapping[str, Any], split: str, means: Mapping[str, Any]) -> list[str]:
    dimensions = report["dimensions"]
    header = ["model", "condition", *(SHORT_LABELS.get(key, key) for key in dimensions)]
    rows = []
    for model, by_condition in means.items():
        for condition, cells in by_condition.items():
            rows.append([model, condition, *(mean_text(cells.get(key)) for key in dimensions)])
            if condition != "none" and any(change_text(cells.get(key)) for key in dimensions):
                rows.append(["", "  change vs none", *(change_text(cells.get(key)) for key in dimensions)])
    scope = "all scenarios" if split == "all" else f"difficulty: {split}"
    return [f"Mean ± SE per {report['seat_role']} model and condition ({scope})", "", *text_grid(header, rows), ""]


def _legend(report: Mapping[str, Any]) -> str:
    info = report["dimension_info"]
    parts = [f"{SHORT_LABELS.get(key, key)} {info.get(key, {}).get('label', key).lower()} "
             f"[{info.get(key, {}).get('low')}, {info.get(key, {}).get('high')}]" for key in report["dimensions"]]
    return "Columns: " + "; ".join(parts) + ". SE = sample SD / sqrt(n)."


def _evaluator_text(entry: Mapping[str, Any]) -> str:
    if entry.get("members"):
        names = ", ".join(m["evaluator"] + (f" ({m['prompt_version']})" if m["prompt_version"] else "")
                          for m in entry["members"])
        return f"majority (median) of {names}, {entry['scores']} scores"
    return f"{entry['evaluator']} (prompt {entry['prompt_version'] or '-'}, {entry['scores']} scores)"


def text_report(report: Mapping[str, Any]) -> str:
    """A readable plain-text rendering: the header, Table 2 per split, barrier signatures, correlations."""
    judge = report["evaluator"]
    kind = report.get("respondent_kind", "judge")
    filters = ", ".join(
        f"{key.replace('_', ' ')} {value}" for key, value in report["filters"].items()
        if key != "seat_role" and value not in ("", None)
    )
    counts = report["counts"]
    lines = [
        "Benchmark results",
        f"{kind}: {_evaluator_text(judge)}" if judge else f"{kind}: none",
        f"filters: {filters or 'none'}; analysed seat: {report['seat_role']}",
        f"{counts['episodes']} episodes, {counts['scenarios']} scenarios; bootstrap {report['resamples']} "
        f"resamples, seed {report['seed']}",
        "",
    ]
    if not report["models"]:
        return "\n".join([*lines, *report["notes"]]) + "\n"
    lines += [_legend(report), ""]
    for split, means in _splits(report):
        lines += _means_block(report, split, means)
    deviations = [e for e in report["deviations"] if e["deviation"] is not None]
    if deviations:
        header = ["model", "barrier", "dimension", "scenarios", "deviation (points)", "95% CI", "deviation (%)",
                  "95% CI"]
        rows = [[e["model"], e["barrier"], e["dimension"], str(e["scenarios"]),
                 f"{e['deviation']:+.2f}" + ("*" if e["ci_excludes_zero"] else ""),
                 interval_text(e["deviation_ci95"]), deviation_percent_text(e),
                 deviation_percent_interval(e)] for e in deviations]
        lines += ["Barrier signatures: deviation from the other barriers on the same scenarios, in score points "
                  "(* CI excludes 0)", "", *text_grid(header, rows),
                  "Percent only where |mean of the other barriers| >= 10% of the dimension's scale range; "
                  "— otherwise (the JSON notes say why).", ""]
    correlations = [e for e in report["correlations"]["all"] if e["pearson_r"] is not None]
    if correlations:
        header = ["feature", "dimension", "n", "pearson r", "p", "spearman rho", "p"]
        rows = [[e["feature"], e["dimension"], str(e["n"]), f"{e['pearson_r']:+.3f}", f"{e['pearson_p']:.3g}",
                 f"{e['spearman_rho']:+.3f}", f"{e['spearman_p']:.3g}"] for e in correlations]
        lines += ["Linguistic features vs scores (all models pooled)", "", *text_grid(header, rows), ""]
    undefined = len(report["correlations"]["all"]) - len(correlations)
    if undefined:
        lines += [f"{undefined} feature-score pairs have no correlation (a value does not vary, or fewer than "
                  "three episodes have both); the JSON says which and why.", ""]
    if len(report.get("evaluators", [])) > 1:
        compared = evaluators_display(report)
        header = ["evaluator", "condition", *(column["short"] for column in compared["header"])]
        rows = [[row["evaluator"] + (" *" if row["chosen"] and row["first"] else ""), row["condition"], *row["cells"]]
                for row in compared["rows"]]
        lines += [f"Every {kind} and their majority (median): mean ± SE over all "
                  "models (* the one reported above)", "", *text_grid(header, rows), ""]
    if report["notes"]:
        lines += ["Notes", *(f"- {note}" for note in report["notes"]), ""]
    return "\n".join(lines)


# --- page rows ---------------------------------------------------------------------------------


def means_display(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per split (all, then each difficulty): a caption, the dimension headings and one row per model and condition.

    Each cell holds the rounded 'mean ± SE' text and the change from ``none`` as text.
    """
    info = report["dimension_info"]
    dimensions = report["dimensions"]
    labels = report["condition_labels"]
    blocks = []
    for split, means in _splits(report):
        rows = []
        for model, by_condition in means.items():
            for condition, cells in by_condition.items():
                rows.append({
                    "model": model,
                    "condition": labels.get(condition, condition),
                    "baseline": condition == "none",
                    "cells": [
                        {"mean": mean_text(cells.get(key)), "change": change_text(cells.get(key)),
                         "change_note": percent_note((cells.get(key) or {}).get("notes", []), "percent_change:"),
                         "n": (cells.get(key) or {}).get("n", 0)}
                        for key in dimensions
                    ],
                })
        scope = "all scenarios" if split == "all" else f"{split} scenarios only"
        blocks.append({
            "split": split,
            "caption": f"Mean ± SE per {report['seat_role']} model and condition, {scope}",
            "header": [{"key": key, "short": SHORT_LABELS.get(key, key), "label": info.get(key, {}).get("label", key),
                        "range": f"{info.get(key, {}).get('low')} to {info.get(key, {}).get('high')}"}
                       for key in dimensions],
            "rows": rows,
        })
    return blocks


def evaluators_display(report: Mapping[str, Any]) -> dict[str, Any]:
    """Every evaluator of the report's kind (and their majority) side by side: per condition, the mean
    ± SE of each dimension over all models, the evaluator used by the report marked."""
    info, labels = report["dimension_info"], report["condition_labels"]
    dimensions = report["dimensions"]
    chosen = report["evaluator"]
    rows = []
    for entry in report.get("evaluators", []):
        name = entry["evaluator"]
        if entry["members"]:
            name = f"majority of {len(entry['members'])}"
        for number, (condition, cells) in enumerate(entry["means"].items()):
            rows.append({
                "evaluator": name if number == 0 else "",
                "prompt_version": entry["prompt_version"] if number == 0 else "",
                "first": number == 0,
                "chosen": chosen is not None and entry["evaluator"] == chosen["evaluator"]
                and entry["prompt_version"] == chosen["prompt_version"],
                "condition": labels.get(condition, condition),
                "cells": [mean_text(cells.get(key)) for key in dimensions],
            })
    return {
        "header": [{"short": SHORT_LABELS.get(key, key), "label": info.get(key, {}).get("label", key)}
                   for key in dimensions],
        "rows": rows,
        "several": len(report.get("evaluators", [])) > 1,
    }


def deviations_display(report: Mapping[str, Any]) -> list[dict[str, str | bool]]:
    """One row per defined deviation: rounded points and percent, CIs as text, whether the CI excludes zero,
    and why the percent is '—' when its baseline is near zero."""
    labels, info = report["condition_labels"], report["dimension_info"]
    return [
        {
            "model": e["model"],
            "barrier": labels.get(e["barrier"], e["barrier"]),
            "dimension": info.get(e["dimension"], {}).get("label", e["dimension"]),
            "scenarios": str(e["scenarios"]),
            "deviation": f"{e['deviation']:+.2f}",
            "deviation_ci": interval_text(e["deviation_ci95"]),
            "deviation_percent": deviation_percent_text(e),
            "deviation_percent_ci": deviation_percent_interval(e),
            "deviation_percent_note": percent_note(e["notes"], "deviation_percent:"),
            "significant": bool(e["ci_excludes_zero"]),
        }
        for e in report["deviations"] if e["deviation"] is not None
    ]


def correlations_display(report: Mapping[str, Any]) -> list[dict[str, str | bool]]:
    """One row per (feature, dimension) over all models: rounded r, rho and p, or the reason there is none."""
    labels, info = report["feature_labels"], report["dimension_info"]
    rows = []
    for e in report["correlations"]["all"]:
        defined = e["pearson_r"] is not None
        rows.append({
            "feature": labels.get(e["feature"], e["feature"]),
            "dimension": info.get(e["dimension"], {}).get("label", e["dimension"]),
            "n": str(e["n"]),
            "pearson": f"{e['pearson_r']:+.3f}" if defined else "n/a",
            "pearson_p": f"{e['pearson_p']:.3g}" if defined else "",
            "spearman": f"{e['spearman_rho']:+.3f}" if defined else "n/a",
            "spearman_p": f"{e['spearman_p']:.3g}" if defined else "",
            "significant": defined and e["pearson_p"] < 0.05,
            "note": "; ".join(e["notes"]),
        })
    return rows
