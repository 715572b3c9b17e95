"""The SHREC report as flat tables: the CSV downloads, the command's text and the page's grids.

Everything comes from the report dict (``build.build_shrec``). CSV numbers are unrounded and go through the
one CSV writer (``benchmark.csv_output``: a model or source named like a formula is quoted); the text and
the page round to two decimals. A model row's cell reads ``mean ± SD`` over the task's subsets (``mean``
alone with one subset, ``—`` when the row answered no item of the task); the Human row's the pooled value
over every person's answer. Each task's ``n`` column gives the answers per subset (``2/2/2``) or, for the
Human row, all answers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...csv_output import csv_text
from ..tables import text_grid

CSV_TABLES = ("table1", "table2", "subsets", "attributes", "people", "dataset")
CELL_COLUMNS = (
    "row", "kind", "model", "variant", "task", "metric", "column", "mean", "sd", "subsets", "n_per_subset",
    "answered", "unparsed", "pooled", "ci_low", "ci_high", "chance",
)
COLUMNS = {
    "table1": CELL_COLUMNS,
    "table2": CELL_COLUMNS,
    "subsets": ("row", "task", "subset", "n", "metric", "value"),
    "attributes": ("row", "panel", "attribute", "name", "n", "f1"),
    "people": ("person", "task", "metric", "value", "n", "unparsed"),
    "dataset": ("scope", "statistic", "category", "value"),
}
EMPTY = "—"


def _rows_with_human(report: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for row in report["rows"]:
        yield "model", row
    if report.get("human"):
        yield "human", report["human"]


def _chance(report: Mapping[str, Any], task: str) -> float | None:
    return next((entry["chance"] for entry in report["tasks"] if entry["key"] == task), None)


def cell_rows(report: Mapping[str, Any], table: str) -> Iterator[dict[str, Any]]:
    """One CSV row per table row × column: every number behind a cell."""
    for kind, row in _rows_with_human(report):
        for column in report[table]:
            cell = row["tasks"][column["task"]]
            value = cell["metrics"][column["metric"]]
            interval = value["ci95"] or (None, None)
            yield {
                "row": row["label"],
                "kind": kind,
                "model": row.get("model", ""),
                "variant": row.get("variant", ""),
                "task": column["task"],
                "metric": column["metric"],
                "column": column["label"],
                "mean": value["mean"],
                "sd": value["sd"],
                "subsets": value["subsets"],
                "n_per_subset": "/".join(str(n) for n in cell["n_per_subset"]),
                "answered": cell["answered"],
                "unparsed": cell["unparsed"],
                "pooled": value["pooled"],
                "ci_low": interval[0],
                "ci_high": interval[1],
                "chance": _chance(report, column["task"]),
            }


def subset_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for _, row in _rows_with_human(report):
        for task, cell in row["tasks"].items():
            for entry in cell["per_subset"]:
                for metric, value in entry["metrics"].items():
                    yield {"row": row["label"], "task": task, "subset": entry["subset"], "n": entry["n"],
                           "metric": metric, "value": value}


def attribute_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    panel = report["per_attribute"]
    names = {entry["key"]: entry["name"] for entry in panel["attributes"]}
    for label, entry in panel["attribute_f1"].items():
        for key, f1 in entry["f1"].items():
            yield {"row": label, "panel": "attribute identification F1", "attribute": key, "name": names[key],
                   "n": entry["n"], "f1": f1}
    for label, by_attribute in panel["error_f1"].items():
        for key, entry in by_attribute.items():
            yield {"row": label, "panel": "error detection macro-F1", "attribute": key, "name": names[key],
                   "n": entry["n"], "f1": entry["f1"]}


def people_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    human = report.get("human")
    if not human:
        return
    scopes = [*human["per_person"].items(), ("majority", human["majority"])]
    for person, tasks in scopes:
        for task, entry in tasks.items():
            for metric, value in entry["metrics"].items():
                yield {"person": person, "task": task, "metric": metric, "value": value, "n": entry["n"],
                       "unparsed": entry["unparsed"]}


def _dataset_scopes(report: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    panel = report["dataset"]
    if panel["overall"]:
        yield "all", panel["overall"]
    yield from panel["by_source"].items()


SCALARS = ("videos", "annotators", "annotations", "paired_annotations", "overlap", "pairs", "agreed_pairs",
           "agreement", "mean_agreed_attributes")


def dataset_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for scope, entry in _dataset_scopes(report):
        for name in SCALARS:
            yield {"scope": scope, "statistic": name, "category": "", "value": entry[name]}
        for name in ("labels", "channels", "attributes"):
            for category, count in entry[name].items():
                yield {"scope": scope, "statistic": name, "category": category, "value": count}
    for task, entry in report["dataset"]["items"].items():
        yield {"scope": f"items: {task}", "statistic": "items", "category": "", "value": entry["items"]}
        for source, count in entry["by_source"].items():
            yield {"scope": f"items: {task}", "statistic": "source", "category": source, "value": count}
        for label, count in entry["by_label"].items():
            yield {"scope": f"items: {task}", "statistic": "label", "category": label, "value": count}


def _rows(name: str, report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    if name in ("table1", "table2"):
        return cell_rows(report, name)
    return {"subsets": subset_rows, "attributes": attribute_rows, "people": people_rows,
            "dataset": dataset_rows}[name](report)


def csv_table(name: str, report: Mapping[str, Any]) -> str:
    """One of ``CSV_TABLES`` as CSV text."""
    if name not in COLUMNS:
        raise ValueError(f"unknown table {name!r}; choose one of {', '.join(CSV_TABLES)}")
    columns = COLUMNS[name]
    return csv_text(columns, ([row[column] for column in columns] for row in _rows(name, report)))


# --- text and page ------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    return EMPTY if value is None else f"{value:.2f}"


def cell_text(value: Mapping[str, Any], *, human: bool = False) -> str:
    """``mean ± SD`` over subsets (a model row), or the pooled value (the Human row)."""
    if human:
        return _number(value["pooled"])
    if value["mean"] is None:
        return EMPTY
    return _number(value["mean"]) + ("" if value["sd"] is None else f" ± {value['sd']:.2f}")


def _tasks_in(columns: Sequence[Mapping[str, str]]) -> list[str]:
    return list(dict.fromkeys(column["task"] for column in columns))


def _n_text(cell: Mapping[str, Any], *, human: bool) -> str:
    if human:
        return str(cell["answered"])
    if not cell["answered"]:
        return "0"
    return "/".join(str(n) for n in cell["n_per_subset"])


TASK_SHORT = {"detection": "EC3", "error": "Err", "attributes": "Attr", "multiple": "Multi", "pre": "Pre",
              "post": "Post", "rationale": "Rationale", "correction": "Correction"}


def table_grid(report: Mapping[str, Any], table: str) -> tuple[list[str], list[list[str]]]:
    """Table 1 or 2 as the paper lays it out: a row per model (Human last), after each task its n."""
    columns = report[table]
    header = ["model"]
    for task in _tasks_in(columns):
        header += [column["label"] for column in columns if column["task"] == task]
        header.append(f"{TASK_SHORT.get(task, task)} n")
    rows = []
    for kind, row in _rows_with_human(report):
        human = kind == "human"
        cells = [row["label"]]
        for task in _tasks_in(columns):
            cell = row["tasks"][task]
            cells += [cell_text(cell["metrics"][c["metric"]], human=human) for c in columns if c["task"] == task]
            cells.append(_n_text(cell, human=human))
        rows.append(cells)
    return header, rows


def chance_text(report: Mapping[str, Any]) -> str:
    return "Chance: " + ", ".join(f"{entry['label']} {entry['chance']:.3f}" for entry in report["tasks"]) + "."


def _percent(value: float | None) -> str:
    return "not recorded" if value is None else f"{100 * value:.1f}%"


def dataset_lines(report: Mapping[str, Any]) -> list[str]:
    panel = report["dataset"]
    if not panel["recorded"]:
        return [f"  {panel['note']}."]
    lines = []
    for scope, entry in _dataset_scopes(report):
        labels = ", ".join(f"{key} {count}" for key, count in entry["labels"].items()) or "not recorded"
        channels = ", ".join(f"{key or 'not given'} {count}" for key, count in entry["channels"].items() if count)
        lines.append(
            f"  {scope}: {entry['annotations'] if entry['annotations'] is not None else '?'} span(s) in "
            f"{entry['videos'] if entry['videos'] is not None else '?'} video(s); "
            f"overlap {_percent(entry['overlap'])}, agreement among pairs {_percent(entry['agreement'])}; "
            f"labels {labels}; channels {channels or 'not recorded'}"
        )
    return lines


def attribute_grid(report: Mapping[str, Any], panel: str) -> tuple[list[str], list[list[str]]]:
    """Per-attribute F1 (``attribute_f1``: identification; ``error_f1``: error detection), a row per model."""
    attributes = report["per_attribute"]["attributes"]
    header = ["model", *(entry["name"] for entry in attributes)]
    rows = []
    for label, entry in report["per_attribute"][panel].items():
        if panel == "attribute_f1":
            rows.append([label, *(_number(entry["f1"][a["key"]]) for a in attributes)])
        else:
            rows.append([label, *(f"{_number(entry[a['key']]['f1'])} (n={entry[a['key']]['n']})"
                                  for a in attributes)])
    return header, rows


def _block(title: str, grid: tuple[list[str], list[list[str]]], empty: str) -> list[str]:
    header, rows = grid
    return [title, "", *(text_grid(header, rows) if rows else [empty]), ""]


def text_report(report: Mapping[str, Any]) -> str:
    """Both tables, the per-attribute scores and the dataset statistics as plain text, with legend and notes."""
    task_set = report["task_set"]
    human = report.get("human")
    lines = [
        f"SHREC results for the task set {task_set['name']} (seed {task_set['seed']}, {task_set['items']} item(s)"
        + (f", spans from {task_set['spans_from']}" if task_set["spans_from"] else "")
        + f"): {len(report['rows'])} model row(s)"
        + (f", {human['people']} person(s) in the Human row" if human else ", no human answers")
        + f". 95% CIs (JSON): {report['resamples']} bootstrap resamples of videos, seed {report['seed']}.",
        "",
        *_block("Table 1: detection and attributes (mean ± SD over subsets; n = answers per subset)",
                table_grid(report, "table1"), "  (no answers)"),
        *_block("Table 2: pre-condition, post-condition, rationale, correction (accuracy)",
                table_grid(report, "table2"), "  (no answers)"),
        chance_text(report),
        "",
        *_block("Attribute identification: F1 per attribute", attribute_grid(report, "attribute_f1"),
                "  (no answers to the attribute task)"),
        *_block("Error detection: macro-F1 within the items whose segment carries each attribute",
                attribute_grid(report, "error_f1"), "  (no answers to the error task)"),
        "Dataset statistics (recorded when the task set was built)",
        *dataset_lines(report),
        "",
        "Legend",
        *(f"  {text}" for text in report["legend"].values()),
    ]
    lines += [f"Note: {note}" for note in report["notes"]]
    return "\n".join(lines).rstrip() + "\n"
