"""The AgentSense figures, drawn with the results figures' primitives (``benchmark.results.figures``).

Goal completion per model and perspective (Table 2 as bars), by ERG need and scenario category
(Figure 6's shape), attackers against defenders (Figure 5(b)) and the sender × receiver heat map
(Figure 5(a)). Bars carry their value and 95% whiskers; series differ in hatching as well as
colour; every label is user text drawn as written. A bar's value is written above its whisker, not
on it, and the legend takes as many columns as fit the figure's width, so long model and judge
names are neither struck through nor cut off.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..figures import (
    FONT_SIZE,
    SERIES_COLOURS,
    SERIES_HATCHES,
    Figure,
    fmt,
    new_figure,
    style_axes,
    to_svg,
    whiskers,
    wrap,
)
from .tables import ROLE_LABELS, view_label

LEGEND_LABEL_WIDTH = 40  # characters on one line of a legend entry
CellOf = Callable[[str, str], Mapping[str, Any] | None]


def _grouped_bars(
    axes: Any,
    groups: Sequence[str],
    series: Sequence[str],
    cell_of: CellOf,
    labels: Mapping[str, str] | None,
    parts: list[str],
    ticks: Sequence[str] | None = None,
) -> None:
    """One cluster of bars per group, one bar per series: mean with its 95% CI, the value written on top.

    ``labels`` name the series in the figure's legend; None leaves this panel's bars out of it (a
    second panel with the same series).
    """
    width = 0.8 / max(1, len(series))
    for s, name in enumerate(series):
        positions, heights, intervals = [], [], []
        for g, group in enumerate(groups):
            cell = cell_of(group, name)
            if not cell or cell.get("mean") is None:
                continue
            positions.append(g + (s - (len(series) - 1) / 2) * width)
            heights.append(cell["mean"])
            intervals.append(cell.get("ci95"))
            ci = cell.get("ci95")
            parts.append(f"{group}, {(labels or {}).get(name, name)}: {fmt(cell['mean'], 2)}"
                         + (f" [{fmt(ci[0], 2)}, {fmt(ci[1], 2)}]" if ci else ""))
        if not positions:
            continue
        axes.bar(positions, heights, width=width * 0.95, color=SERIES_COLOURS[s % len(SERIES_COLOURS)],
                 hatch=SERIES_HATCHES[s % len(SERIES_HATCHES)], edgecolor="black", linewidth=0.5,
                 yerr=whiskers(heights, intervals), error_kw={"elinewidth": 0.8, "capsize": 2},
                 label=labels.get(name, name) if labels is not None else "_nolegend_")
        for position, height, interval in zip(positions, heights, intervals, strict=True):
            top = max(height, interval[1]) if interval else height  # above the whisker, which would cross it
            axes.text(position, top + 0.02, f"{height:.2f}", ha="center", va="bottom", fontsize=FONT_SIZE - 3)
    axes.set_xticks(range(len(groups)), [wrap(tick, 16) for tick in ticks or groups], fontsize=FONT_SIZE - 2)
    axes.set_ylim(0, 1.15)
    style_axes(axes)


def _legend(figure: Any, title: str, entries: int) -> None:
    """The series' legend under the plot, in as many columns (at most four) as fit the figure's width."""
    handles, labels = [], []
    for axes in figure.axes:
        for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
            handles.append(handle)
            labels.append(wrap(label, LEGEND_LABEL_WIDTH))
    renderer = figure._get_renderer()
    for columns in range(min(entries, 4), 0, -1):
        legend = figure.legend(handles, labels, fontsize=FONT_SIZE - 1, loc="outside lower center", ncols=columns,
                               frameon=False, title=title, title_fontsize=FONT_SIZE - 1)
        if columns == 1 or legend.get_window_extent(renderer).width <= figure.bbox.width:
            return
        legend.remove()


def _finish(figure: Any, name: str, title: str, parts: list[str], legend_title: str, entries: int) -> Figure:
    figure.suptitle(title, fontsize=FONT_SIZE + 1)
    if entries:
        _legend(figure, legend_title, entries)
    description = "Bars with 95% CIs: " + ("; ".join(parts) if parts else "none") + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def completion_bars(report: Mapping[str, Any], name: str = "agentsense-completion") -> Figure:
    """Goal completion per model (groups) and perspective (series)."""
    views = list(report["completion"])
    models = [model for model in report["models"] if any(model in report["completion"][v] for v in views)]
    figure = new_figure(max(5.0, 1.3 * len(models) * max(1, len(views)) / 3 + 2), 3.6)
    axes = figure.add_subplot()
    parts: list[str] = []
    _grouped_bars(axes, models, views, lambda model, view: report["completion"][view].get(model),
                  {view: view_label(view) for view in views}, parts)
    axes.set_ylabel("Goal completion (share of goals)", fontsize=FONT_SIZE - 1)
    return _finish(figure, name, "Goal completion per model and perspective", parts, "Perspective", len(views))


def label_bars(report: Mapping[str, Any], name: str = "agentsense-by-label") -> Figure:
    """Two panels: completion per ERG need and per scenario category, one bar per model (Figure 6's shape)."""
    models = list(report["models"])
    figure = new_figure(9.0, 3.6)
    left, right = figure.subplots(1, 2)
    parts: list[str] = []
    labels = {model: model for model in models}
    _grouped_bars(left, report["erg_needs"], models,
                  lambda need, model: report["completion_by_erg"].get(model, {}).get(need), labels, parts)
    left.set_title("By ERG need (unit: goal)", fontsize=FONT_SIZE)
    _grouped_bars(right, report["categories"], models,
                  lambda category, model: report["completion_by_category"].get(model, {}).get(category), None, [],
                  ticks=[category.replace("_", " ") for category in report["categories"]])
    right.set_title("By scenario category (unit: character)", fontsize=FONT_SIZE)
    left.set_ylabel("Goal completion", fontsize=FONT_SIZE - 1)
    title = f"Goal completion by goal need and scenario category ({view_label(report['primary_view'] or '')})"
    return _finish(figure, name, title, parts, "Model", len(models))


def reasoning_bars(report: Mapping[str, Any], name: str = "agentsense-reasoning") -> Figure:
    """Attacker accuracy, defender score and blind accuracy per model (Figure 5(b))."""
    roles = [role for role, cells in report["reasoning"].items() if cells]
    models = [model for model in report["models"] if any(model in report["reasoning"][r] for r in roles)]
    figure = new_figure(max(5.0, 1.2 * len(models) + 2), 3.6)
    axes = figure.add_subplot()
    parts: list[str] = []
    _grouped_bars(axes, models, roles, lambda model, role: report["reasoning"][role].get(model), ROLE_LABELS, parts)
    axes.set_ylabel("Share", fontsize=FONT_SIZE - 1)
    return _finish(figure, name, "Implicit reasoning: attackers and defenders", parts, "Measure", len(roles))


def pairing_heatmap(report: Mapping[str, Any], name: str = "agentsense-pairings") -> Figure:
    """Completion of every character per sender model (rows) and receiver model (columns), value in each cell."""
    import numpy as np

    pairings = report["pairings"]
    senders, receivers = pairings["senders"], pairings["receivers"]
    lookup = {(c["sender_model"], c["receiver_model"]): c["all"] for c in pairings["cells"]}
    matrix = np.full((len(senders), len(receivers)), np.nan)
    figure = new_figure(1.1 * len(receivers) + 3.2, 0.6 * len(senders) + 2.0)
    axes = figure.add_subplot()
    parts = []
    for i, sender in enumerate(senders):
        for j, receiver in enumerate(receivers):
            cell = lookup.get((sender, receiver))
            if cell and cell["mean"] is not None:
                matrix[i, j] = cell["mean"]
            text = "n/a" if not cell or cell["mean"] is None else f"{cell['mean']:.2f}\n(n={cell['n']})"
            axes.text(j, i, text, ha="center", va="center", fontsize=FONT_SIZE - 2,
                      color="white" if cell and cell["mean"] is not None and cell["mean"] > 0.7 else "black")
            parts.append(f"sender {sender}, receiver {receiver}: {text.replace(chr(10), ' ')}")
    image = axes.imshow(np.ma.masked_invalid(matrix), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    axes.set_xticks(range(len(receivers)), [wrap(r, 14) for r in receivers], fontsize=FONT_SIZE - 2)
    axes.set_yticks(range(len(senders)), [wrap(s, 18) for s in senders], fontsize=FONT_SIZE - 2)
    axes.set_xlabel("Receiver model", fontsize=FONT_SIZE - 1)
    axes.set_ylabel("Sender model", fontsize=FONT_SIZE - 1)
    title = f"Goal completion by sender and receiver model ({view_label(pairings['view'] or '')})"
    axes.set_title(title, fontsize=FONT_SIZE)
    figure.colorbar(image, ax=axes, shrink=0.8).ax.tick_params(labelsize=FONT_SIZE - 2)
    description = "Cells: " + ("; ".join(parts) if parts else "none") + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def agentsense_figures(report: Mapping[str, Any]) -> dict[str, Figure | None]:
    """The page's figures; None for one without data."""
    has_labels = bool(report["completion_by_erg"] or report["completion_by_category"])
    return {
        "completion": completion_bars(report) if report["completion"] else None,
        "labels": label_bars(report) if has_labels else None,
        "reasoning": reasoning_bars(report) if any(report["reasoning"].values()) else None,
        "pairings": pairing_heatmap(report) if report["pairings"]["cells"] else None,
    }
