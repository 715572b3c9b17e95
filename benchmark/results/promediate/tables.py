"""The ProMediate report as flat tables: the CSV downloads, the command's text and the page's grids.

Every table comes from the report dict (``build.build_promediate``) except ``conversations``, the
per-conversation table behind it. CSV numbers are unrounded and go through the one CSV writer
(``benchmark.csv_output``: a scenario or model named like a formula is quoted); the text and the page
round. In the text and on the page a cell reads ``mean ± SE [CI] n``, ``-`` where the metric is not
defined without a mediator, and ``missing`` where no conversation ran in that mode and condition.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from ...csv_output import csv_text
from ..tables import text_grid

CSV_TABLES = ("table1", "table2", "table3", "me-mi", "human", "conversations")
CELL_COLUMNS = ("mean", "se", "ci_low", "ci_high", "n", "excluded", "scenarios", "notes")
NOT_DEFINED, MISSING = "-", "missing"


def _interval(cell: Mapping[str, Any]) -> tuple[float | None, float | None]:
    interval = cell.get("ci95") or (None, None)
    return interval[0], interval[1]


def _cell_row(cell: Mapping[str, Any]) -> dict[str, Any]:
    low, high = _interval(cell)
    return {
        "mean": cell["mean"],
        "se": cell["se"],
        "ci_low": low,
        "ci_high": high,
        "n": cell["n"],
        "excluded": cell["excluded"],
        "scenarios": cell["clusters"],
        "notes": "; ".join(cell["notes"]),
    }


def _metrics(report: Mapping[str, Any]) -> Iterator[Mapping[str, str]]:
    yield from report["metrics"]


def condition_label(report: Mapping[str, Any], condition: str) -> str:
    return report["condition_labels"].get(condition, condition)


def table1_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    table = report["table1"]
    for metric in _metrics(report):
        for mode in table["modes"]:
            for condition in table["conditions"]:
                cell = table["cells"][metric["key"]][mode][condition]
                yield {
                    "metric": metric["label"],
                    "unit": metric["unit"],
                    "mode": mode,
                    "condition": condition_label(report, condition),
                    "defined": cell["defined"],
                    "missing": cell["missing"],
                    **_cell_row(cell),
                }


def table2_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    table = report["table2"]
    for metric in _metrics(report):
        for model in table["models"]:
            yield {
                "metric": metric["label"],
                "unit": metric["unit"],
                "mediator_model": model,
                **_cell_row(table["cells"][metric["key"]][model]),
            }


def table3_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    table = report["table3"]
    if not table.get("loadings"):
        return
    for metric, loadings, salient, uniqueness in zip(
        table["metrics"], table["loadings"], table["salient"], table["uniquenesses"], strict=True
    ):
        yield {
            "metric": metric,
            "factor_1": loadings[0],
            "factor_2": loadings[1],
            "salient_1": salient[0],
            "salient_2": salient[1],
            "uniqueness": uniqueness,
        }


COLUMNS = {
    "table1": ("metric", "unit", "mode", "condition", "defined", "missing", *CELL_COLUMNS),
    "table2": ("metric", "unit", "mediator_model", *CELL_COLUMNS),
    "table3": ("metric", "factor_1", "factor_2", "salient_1", "salient_2", "uniqueness"),
    "me-mi": ("statistic", "rho", "p", "n", "note"),
    "human": ("check", "scope", "statistic", "value", "n"),
}


def _rows(name: str, report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    if name == "table1":
        yield from table1_rows(report)
    elif name == "table2":
        yield from table2_rows(report)
    elif name == "table3":
        yield from table3_rows(report)
    elif name == "human":
        yield from human_rows(report.get("human"))
    elif name == "me-mi":
        entry = report["me_mi"]
        yield {
            "statistic": "Spearman ME × MI per intervention",
            "rho": entry.get("rho"),
            "p": entry.get("p"),
            "n": entry.get("n"),
            "note": entry.get("note", ""),
        }


def _frame_csv(frame: pd.DataFrame) -> str:
    def blank(value: Any) -> Any:
        return None if isinstance(value, float) and (math.isnan(value) or math.isinf(value)) else value

    return csv_text(
        [str(column) for column in frame.columns],
        ([blank(value) for value in row] for row in frame.itertuples(index=False, name=None)),
    )


def csv_table(name: str, report: Mapping[str, Any], frame: pd.DataFrame) -> str:
    """One of ``CSV_TABLES`` as CSV text."""
    if name == "conversations":
        return _frame_csv(frame)
    if name not in COLUMNS:
        raise ValueError(f"unknown table {name!r}; choose one of {', '.join(CSV_TABLES)}")
    columns = COLUMNS[name]
    return csv_text(columns, ([row[column] for column in columns] for row in _rows(name, report)))


# --- text and page ------------------------------------------------------------------------------


def _number(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def cell_text(cell: Mapping[str, Any], unit: str = "") -> str:
    """A cell as people read it: ``mean ± SE [low, high] n=…`` (``-`` undefined, ``missing`` no conversation)."""
    if not cell["defined"]:
        return NOT_DEFINED
    if cell["missing"]:
        return MISSING
    if cell["mean"] is None:
        return f"— (n=0, {cell['excluded']} undefined)"
    digits = 3 if unit == "1–5" else 2
    text = _number(cell["mean"], digits)
    if cell["se"] is not None:
        text += f" ± {_number(cell['se'], digits)}"
    low, high = _interval(cell)
    if low is not None:
        text += f" [{_number(low, digits)}, {_number(high, digits)}]"
    text += f" n={cell['n']}"
    if cell["excluded"]:
        text += f" ({cell['excluded']} undefined)"
    return text


def table1_grid(report: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Table 1 as the paper lays it out: one row per metric, one column per mode × condition."""
    table = report["table1"]
    header = ["metric"] + [
        f"{mode} / {condition_label(report, condition)}" for mode in table["modes"] for condition in table["conditions"]
    ]
    rows = [
        [f"{metric['label']} ({metric['unit']})"]
        + [
            cell_text(table["cells"][metric["key"]][mode][condition], metric["unit"])
            for mode in table["modes"]
            for condition in table["conditions"]
        ]
        for metric in _metrics(report)
    ]
    return header, rows


def table2_title(report: Mapping[str, Any]) -> str:
    """Table 2's title, naming the scenarios it covers (the paper's is one chosen scenario)."""
    scenarios = report["table2"]["scenarios"]
    if not scenarios:
        return "Table 2: the Social mediator per mediator model"
    covered = scenarios[0] if len(scenarios) == 1 else f"{len(scenarios)} scenarios"
    return f"Table 2: the Social mediator per mediator model ({covered})"


def table2_grid(report: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    table = report["table2"]
    header = ["metric", *table["models"]]
    rows = [
        [f"{metric['label']} ({metric['unit']})"]
        + [cell_text(table["cells"][metric["key"]][model], metric["unit"]) for model in table["models"]]
        for metric in _metrics(report)
    ]
    return header, rows


def table3_grid(report: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Loadings with a star on the salient ones (|λ| ≥ 0.40)."""
    header = ["metric", "factor 1", "factor 2", "uniqueness"]
    rows = [
        [
            row["metric"],
            *(f"{row[f'factor_{i}']:.3f}{'*' if row[f'salient_{i}'] else ''}" for i in (1, 2)),
            f"{row['uniqueness']:.3f}",
        ]
        for row in table3_rows(report)
    ]
    return header, rows


def me_mi_text(report: Mapping[str, Any]) -> str:
    entry = report["me_mi"]
    if entry.get("rho") is None:
        return (
            f"ME × MI (per intervention): not computed, {entry.get('note') or 'too few interventions'} "
            f"(n={entry.get('n', 0)})."
        )
    return f"ME × MI (per intervention): Spearman ρ = {entry['rho']:.3f}, p = {entry['p']:.4f}, n = {entry['n']}."


GROUPED = (
    ("exact", "exact agreement"),
    ("three_groups", "accuracy {1–2},{3},{4–5}"),
    ("two_groups", "accuracy {1–2},{3–5}"),
)
QUALITY = (("naturalness", "naturalness"), ("mode_expression", "mode expression"))


def human_rows(human: Mapping[str, Any] | None) -> Iterator[dict[str, Any]]:
    """The human-validation numbers (PM-27) as rows of (check, scope, statistic, value, n)."""
    if not human:
        return
    quality = human.get("quality") or {}
    for key, label in QUALITY:
        entry = quality.get(key) or {}
        yield {
            "check": "conversation quality",
            "scope": "all",
            "statistic": f"mean {label} (1–5)",
            "value": entry.get("mean"),
            "n": entry.get("n", 0),
        }
        for mode, by_mode in (entry.get("by_mode") or {}).items():
            yield {
                "check": "conversation quality",
                "scope": mode,
                "statistic": f"mean {label} (1–5)",
                "value": by_mode.get("mean"),
                "n": by_mode.get("n", 0),
            }
    snippets = human.get("snippets") or {}
    if snippets:
        yield {
            "check": "snippet comparison",
            "scope": "every annotation",
            "statistic": "Cohen's κ vs tracker",
            "value": snippets.get("kappa"),
            "n": snippets.get("n", 0),
        }
        majority = snippets.get("majority") or {}
        yield {
            "check": "snippet comparison",
            "scope": "annotators' majority",
            "statistic": "Cohen's κ vs tracker",
            "value": majority.get("kappa"),
            "n": majority.get("n", 0),
        }
        for name, entry in (snippets.get("per_annotator") or {}).items():
            yield {
                "check": "snippet comparison",
                "scope": f"annotator {name}",
                "statistic": "Cohen's κ vs tracker",
                "value": entry.get("kappa"),
                "n": entry.get("n", 0),
            }
    interventions = human.get("interventions") or {}
    if interventions:
        scopes = [("all dimensions", interventions), *(interventions.get("per_dimension") or {}).items()]
        for scope, entry in scopes:
            for key, label in GROUPED:
                yield {
                    "check": "mediator intelligence",
                    "scope": scope.replace("_", " "),
                    "statistic": f"{label} vs the MI judge",
                    "value": entry.get(key),
                    "n": entry.get("n", 0),
                }


def human_grid(report: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    header = ["check", "scope", "statistic", "value", "n"]
    rows = [
        [row["check"], row["scope"], row["statistic"], _number(row["value"], 3), str(row["n"])]
        for row in human_rows(report.get("human"))
    ]
    return header, rows


def _block(title: str, grid: tuple[list[str], list[list[str]]], empty: str = "  (none)") -> list[str]:
    header, rows = grid
    return [title, "", *(text_grid(header, rows) if rows and len(header) > 1 else [empty]), ""]


def text_report(report: Mapping[str, Any]) -> str:
    """Every table as plain text, with the counts, method notes and notes."""
    counts = report["counts"]
    lines = [
        f"ProMediate results: {counts['episodes']} conversation(s), {counts['scenarios']} scenario(s), consensus "
        f"read by {', '.join(counts['judges']) or 'no judge'}; metric preset {report['preset']}. 95% CIs: "
        f"{report['resamples']} bootstrap resamples of scenarios, seed {report['seed']}.",
        "",
        *_block(
            "Table 1: metrics per conflict mode and mediator condition (mean ± SE [95% CI] n)", table1_grid(report)
        ),
        *_block(
            table2_title(report),
            table2_grid(report),
            "  (no Social mediator conversations)",
        ),
        *_block(
            "Table 3: factor loadings (varimax; * = |loading| ≥ 0.40)",
            table3_grid(report),
            f"  {report['table3'].get('note') or 'not computed'}",
        ),
        me_mi_text(report),
        "",
        *_block("Human validation", human_grid(report), "  (no human validation studies over these episodes)"),
        "Methods",
        *(f"  {name.replace('_', ' ')}: {text}" for name, text in report["methods"].items()),
    ]
    lines += [f"Note: {note}" for note in report["notes"]]
    return "\n".join(lines).rstrip() + "\n"


def methods(report: Mapping[str, Any]) -> Sequence[tuple[str, str]]:
    return [(name.replace("_", " ").capitalize(), text) for name, text in report["methods"].items()]
