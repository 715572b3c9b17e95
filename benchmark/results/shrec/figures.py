"""The SHREC figures (SH-17, SH-18), drawn with the results figures' primitives (``benchmark.results.figures``).

- **radar**: one small radar per model row over the eight tasks' primary metric (mean over subsets), the
  Human row dashed on each (the paper's Fig. 4); the attribute axis is partial match (``build.RADAR_METRIC``,
  stated in the title) and chance is drawn dotted;
- **attribute-f1**: attribute identification F1 per attribute, a bar per row (Fig. 8);
- **error-f1**: error-detection macro-F1 within the items whose segment carries each attribute (Figs. 6–7);
- **dataset**: the dataset statistics the task set recorded: overlap and agreement per source, and the
  label, channel and attribute distributions (Fig. 2, Figs. 13–14).

Model names and sources are user text: drawn as written (never parsed as maths, see ``PLAIN_TEXT``) and
escaped in the SVG's title and description. Series differ in hatching or line style as well as colour.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...caching import cached
from ..figures import (
    CHANCE_COLOUR,
    FONT_SIZE,
    HUMAN_COLOUR,
    SERIES_COLOURS,
    SERIES_HATCHES,
    Figure,
    fmt,
    new_figure,
    style_axes,
    to_svg,
    wrap,
)
from .build import HUMAN, METRIC_LABELS

SHORT_TASKS = {
    "detection": "EC3", "error": "Err", "attributes": "Attr", "multiple": "Multi", "pre": "Pre", "post": "Post",
    "rationale": "Rat.", "correction": "Corr.",
}


def _primary(row: Mapping[str, Any], task: Mapping[str, Any], *, human: bool) -> float | None:
    value = row["tasks"][task["key"]]["metrics"][task["primary"]]
    return value["pooled"] if human else value["mean"]


def _closed(values: Sequence[float | None]) -> list[float]:
    points = [math.nan if value is None else value for value in values]
    return points + points[:1]


def radar(report: Mapping[str, Any], name: str = "shrec-radar") -> Figure | None:
    """A radar per model row over the eight tasks, with the Human row dashed and chance dotted."""
    rows = report["rows"]
    if not rows:
        return None
    tasks = report["tasks"]
    human = report.get("human")
    angles = [2 * math.pi * index / len(tasks) for index in range(len(tasks))]
    closed_angles = angles + angles[:1]
    columns = min(3, len(rows))
    count = -(-len(rows) // columns)
    figure = new_figure(max(6.0, 3.0 * columns), 3.0 * count + 0.9)
    attribute_metric = METRIC_LABELS[next(t["primary"] for t in tasks if t["key"] == "attributes")]
    parts = []
    human_values = [_primary(human, task, human=True) for task in tasks] if human else None
    for index, row in enumerate(rows):
        axes = figure.add_subplot(count, columns, index + 1, projection="polar")
        values = [_primary(row, task, human=False) for task in tasks]
        axes.plot(closed_angles, _closed([task["chance"] for task in tasks]), color=CHANCE_COLOUR, linestyle=":",
                  linewidth=0.8, label="chance" if index == 0 else None)
        if human_values:
            axes.plot(closed_angles, _closed(human_values), color=HUMAN_COLOUR, linestyle="--", linewidth=1.2,
                      label=HUMAN if index == 0 else None)
        colour = SERIES_COLOURS[2]
        axes.plot(closed_angles, _closed(values), color=colour, linewidth=1.4, marker="o", markersize=2.5,
                  label="model" if index == 0 else None)
        axes.fill(closed_angles, [0 if math.isnan(v) else v for v in _closed(values)], color=colour, alpha=0.12)
        axes.set_ylim(0, 1)
        axes.set_xticks(angles, [SHORT_TASKS.get(task["key"], task["key"]) for task in tasks], fontsize=FONT_SIZE - 2)
        axes.set_yticks([0.25, 0.5, 0.75, 1.0], ["", "0.5", "", "1"], fontsize=FONT_SIZE - 3)
        axes.set_title(wrap(row["label"], 30), fontsize=FONT_SIZE - 1)
        parts.append(f"{row['label']}: " + ", ".join(
            f"{task['label']} {fmt(value, 2)}" for task, value in zip(tasks, values, strict=True)))
    if human_values:
        parts.append(f"{HUMAN}: " + ", ".join(
            f"{task['label']} {fmt(value, 2)}" for task, value in zip(tasks, human_values, strict=True)))
    title = f"Each task's primary metric per model (accuracy; attributes: {attribute_metric})"
    figure.suptitle(wrap(title, 70), fontsize=FONT_SIZE + 1)
    figure.legend(fontsize=FONT_SIZE - 1, loc="outside lower center", ncols=3, frameon=False)
    description = "; ".join(parts) + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def _grouped_bars(
    axes: Any, categories: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]
) -> list[str]:
    """Bars per category, one per series (hatched and coloured), values written above; returns the description."""
    width = 0.8 / max(1, len(series))
    parts = []
    for s, (label, values) in enumerate(series):
        positions = [c + (s - (len(series) - 1) / 2) * width for c in range(len(categories))]
        heights = [0.0 if value is None else value for value in values]
        colour = HUMAN_COLOUR if label == HUMAN else SERIES_COLOURS[(s + 2) % len(SERIES_COLOURS)]
        axes.bar(positions, heights, width=width * 0.95, color=colour, hatch=SERIES_HATCHES[s % len(SERIES_HATCHES)],
                 edgecolor="black", linewidth=0.5, label=wrap(label, 30))
        for position, value in zip(positions, values, strict=True):
            axes.text(position, 0.0 if value is None else value, "n/a" if value is None else f"{value:.2f}",
                      ha="center", va="bottom", fontsize=FONT_SIZE - 3, rotation=90)
        parts.append(f"{label}: " + ", ".join(
            f"{category} {fmt(value, 2)}" for category, value in zip(categories, values, strict=True)))
    axes.set_xticks(range(len(categories)), [wrap(category, 14) for category in categories], fontsize=FONT_SIZE - 2)
    style_axes(axes)
    axes.tick_params(labelsize=FONT_SIZE - 2)
    return parts


def attribute_bars(report: Mapping[str, Any], panel: str, name: str | None = None) -> Figure | None:
    """Per-attribute F1, a bar per row: ``attribute_f1`` (identification) or ``error_f1`` (error detection)."""
    entries = report["per_attribute"][panel]
    if not entries:
        return None
    attributes = report["per_attribute"]["attributes"]
    if panel == "attribute_f1":
        series = [(label, [entry["f1"][a["key"]] for a in attributes]) for label, entry in entries.items()]
        title = "Attribute identification: F1 per attribute"
        ylabel = "F1 (pooled items)"
    else:
        series = [(label, [entry[a["key"]]["f1"] for a in attributes]) for label, entry in entries.items()]
        title = "Error detection: macro-F1 within the items whose segment carries each attribute"
        ylabel = "macro-F1 (error task)"
    name = name or f"shrec-{panel.replace('_', '-')}"
    figure = new_figure(max(7.0, 0.9 * len(attributes) * max(1, len(series)) ** 0.5), 3.8)
    axes = figure.add_subplot()
    parts = _grouped_bars(axes, [a["name"] for a in attributes], series)
    axes.set_ylim(0, 1.15)
    axes.set_ylabel(ylabel, fontsize=FONT_SIZE - 1)
    axes.set_title(title, fontsize=FONT_SIZE)
    figure.legend(fontsize=FONT_SIZE - 2, loc="outside right center", frameon=False)
    description = "; ".join(parts) + "; n/a: no item with that attribute."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def _distribution(axes: Any, scopes: Mapping[str, Mapping[str, Any]], key: str, title: str) -> list[str]:
    categories = sorted({category for entry in scopes.values() for category in entry[key]})
    if not categories:
        axes.set_visible(False)
        return []
    series = []
    for scope, entry in scopes.items():
        total = sum(entry[key].values())
        series.append((scope, [entry[key].get(c, 0) / total if total else None for c in categories]))
    parts = _grouped_bars(axes, [c or "not given" for c in categories], series)
    axes.set_ylim(0, 1.15)
    axes.set_title(title, fontsize=FONT_SIZE)
    return [f"{title}: {part}" for part in parts]


def dataset_figure(report: Mapping[str, Any], name: str = "shrec-dataset") -> Figure | None:
    """The dataset panel: overlap and agreement per source, then the label, channel and attribute shares."""
    panel = report["dataset"]
    if not panel["recorded"] or not panel["overall"]:
        return None
    scopes = {"all": panel["overall"], **panel["by_source"]}
    figure = new_figure(9.6, 6.4)
    grid = figure.subplots(2, 2, squeeze=False)
    parts = _grouped_bars(
        grid[0][0], ["overlap", "agreement"], [(scope, [e["overlap"], e["agreement"]]) for scope, e in scopes.items()]
    )
    grid[0][0].set_ylim(0, 1.15)
    grid[0][0].set_title("Overlapping annotations; label agreement among pairs", fontsize=FONT_SIZE)
    parts += _distribution(grid[0][1], scopes, "labels", "Labels (share of annotations)")
    parts += _distribution(grid[1][0], scopes, "channels", "Channels (share of annotations)")
    parts += _distribution(grid[1][1], scopes, "attributes", "Attributes (share of attribute ticks)")
    handles, labels = grid[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, fontsize=FONT_SIZE - 1, loc="outside lower center", ncols=min(6, len(labels)),
                  frameon=False, title="Source", title_fontsize=FONT_SIZE - 1)
    title = "Dataset statistics of the spans the task set was built from" + (
        f" (pairing: {panel['pairing']})" if panel["pairing"] else ""
    )
    figure.suptitle(title, fontsize=FONT_SIZE + 1)
    description = "; ".join(parts) + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def shrec_figures(report: Mapping[str, Any]) -> dict[str, Figure | None]:
    """The page's figures by short name; None for one without data."""
    return {
        "radar": radar(report),
        "attribute-f1": attribute_bars(report, "attribute_f1"),
        "error-f1": attribute_bars(report, "error_f1"),
        "dataset": dataset_figure(report),
    }


def cached_figures(report: Mapping[str, Any]) -> dict[str, Figure | None]:
    """``shrec_figures(report)``, drawn once per report content (the page, its ZIP, a reload)."""
    return cached(lambda: shrec_figures(report), "shrec-figures", json.dumps(report, sort_keys=True))
