"""Figures drawn server-side with matplotlib as inline SVG: the shared primitives and the results figures.

Every chart returns a :class:`Figure` whose ``svg`` is an ``<svg>`` element ready for a page (no
XML prolog), with a ``<title>`` and a ``<desc>`` for screen readers and ids prefixed by the
figure's name, so several figures share one page. Figures never rest on colour alone: values are
written on bars and cells, series differ in hatching or marker too. matplotlib is imported on
first use (it is slow to import and most requests never draw), and only through its object
interface with the Agg backend, so drawing is safe off the main thread. Text is never parsed as
maths (``PLAIN_TEXT``): labels come from users, and ``$...$`` in a barrier's name is just text.

The primitives (``new_figure``, ``to_svg``, ``style_axes``, ``wrap``, ``fmt``, ``whiskers``) are
used by the agreement report's figures in ``annotator.figures`` as well. The results figures below
take parts of the dict ``benchmark.results.build.build_results`` returns (docs/results-schema.md).
"""

from __future__ import annotations

import html
import io
import re
import textwrap
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

HUMAN_COLOUR = "#1f4fa8"
JUDGE_COLOUR = "#c2410c"
OVERALL_COLOUR = "#163a7d"
CHANCE_COLOUR = "#4a5263"
FONT_SIZE = 9
RASTER_POINTS = 500

# One colour and one hatch per series (condition or model), so print in grey still tells them apart.
SERIES_COLOURS = ("#4a5263", "#1f4fa8", "#c2410c", "#2f7d32", "#7b3fa0", "#a15c00", "#00838f", "#ad1457")
SERIES_HATCHES = ("", "//", "\\\\", "..", "xx", "--", "++", "oo")

# Short row labels of the correlation heat map (the report's feature_labels are the long form).
FEATURE_SHORT = {
    "vague_pronouns": "vague pronouns / word", "hedges": "hedges / word", "self_focus": "self-focus / word",
    "sentiment": "sentiment (VADER)",
}
SOURCE_SHORT = {"barrier_speech": "barrier seat", "transcript": "transcript"}

# rcParams are process-wide: hold the lock while a figure is saved with its own settings.
_SAVING = threading.Lock()

# Labels are user text (barrier, model, category and question names): a name such as "$\foo$"
# must be drawn as written, never parsed as mathtext or TeX (which fails and would answer 500).
# Every text artist takes this from rcParams when it is created, tick labels even while the figure
# is saved, so it is set process-wide, once, before any figure exists (see ``_matplotlib``).
PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}


@dataclass
class Figure:
    """One drawn figure: its file name in a bundle (``figures/<name>``), title and SVG markup."""

    name: str
    title: str
    description: str
    svg: str


def _matplotlib() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update(PLAIN_TEXT)
    from matplotlib.figure import Figure as MatplotlibFigure

    return MatplotlibFigure


def new_figure(width: float, height: float) -> Any:
    """A matplotlib Figure (not pyplot: no global state) of the given size in inches, laid out by constraints."""
    return _matplotlib()(figsize=(width, height), layout="constrained")


def to_svg(figure: Any, name: str, title: str, description: str) -> str:
    """The figure as an accessible inline ``<svg>``: text kept as text, ids unique to the figure."""
    import matplotlib

    buffer = io.StringIO()
    with _SAVING, matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": name}):
        figure.savefig(buffer, format="svg", metadata={"Date": None}, dpi=150)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    # matplotlib numbers its ids (figure_1, axes_1, ...) the same in every figure: prefix them and
    # every reference to them, so several figures can share one HTML page.
    text = re.sub(r'\bid="([^"]+)"', rf'id="{slug}-\1"', text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{slug}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{slug}-\1)", text)
    labelled = (
        f'<svg role="img" aria-labelledby="{slug}-title {slug}-desc" class="report-figure__svg"'
    )
    text = text.replace("<svg", labelled, 1)
    opening_end = text.index(">") + 1
    accessible = (
        f'<title id="{slug}-title">{html.escape(title)}</title>'
        f'<desc id="{slug}-desc">{html.escape(description)}</desc>'
    )
    return text[:opening_end] + accessible + text[opening_end:]


def style_axes(axes: Any) -> None:
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(labelsize=FONT_SIZE)


def wrap(text: str, width: int = 14) -> str:
    """A label broken into lines of about ``width`` characters."""
    return "\n".join(textwrap.wrap(text, width)) or text


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def whiskers(values: Sequence[float], intervals: Sequence[Sequence[float] | None]) -> list[list[float]]:
    """Asymmetric error bars (below, above) for matplotlib; no interval draws no whisker."""
    below, above = [], []
    for value, interval in zip(values, intervals, strict=True):
        if interval is None or value is None:
            below.append(0.0)
            above.append(0.0)
        else:
            below.append(max(value - interval[0], 0.0))
            above.append(max(interval[1] - value, 0.0))
    return [below, above]


# --- results figures ---------------------------------------------------------------------------


def _stars(p: float | None) -> str:
    if p is None:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def condition_bars(report: Mapping[str, Any], *, name: str = "results-means", split: str = "all") -> Figure:
    """One panel per dimension: a bar per model and condition, mean with ±1 SE whiskers, value written on top."""
    means = report["means"] if split == "all" else report["means_by_difficulty"][split]
    models = [model for model in report["models"] if model in means]
    conditions = list(report["conditions"])
    labels = report.get("condition_labels", {})
    info = report.get("dimension_info", {})
    dimensions = list(report["dimensions"])
    columns = 3
    rows = max(1, -(-len(dimensions) // columns))
    figure = new_figure(3.3 * columns, 2.5 * rows + 0.6)
    panels = figure.subplots(rows, columns, squeeze=False)
    width = 0.8 / max(1, len(conditions))
    parts = []
    for index, key in enumerate(dimensions):
        axes = panels[index // columns][index % columns]
        for c, condition in enumerate(conditions):
            positions, heights, errors = [], [], []
            for m, model in enumerate(models):
                cell = means[model].get(condition, {}).get(key)
                if not cell or cell["mean"] is None:
                    continue
                positions.append(m + (c - (len(conditions) - 1) / 2) * width)
                heights.append(cell["mean"])
                errors.append(cell["se"] or 0.0)
                parts.append(f"{info.get(key, {}).get('label', key)}, {model}, {labels.get(condition, condition)}: "
                             f"{fmt(cell['mean'], 2)}" + (f" ± {fmt(cell['se'], 2)}" if cell["se"] is not None else ""))
            if not positions:
                continue
            axes.bar(positions, heights, width=width * 0.95, color=SERIES_COLOURS[c % len(SERIES_COLOURS)],
                     hatch=SERIES_HATCHES[c % len(SERIES_HATCHES)], edgecolor="black", linewidth=0.5,
                     yerr=errors, error_kw={"elinewidth": 0.8, "capsize": 2},
                     label=labels.get(condition, condition) if index == 0 else None)
            for position, height, error in zip(positions, heights, errors, strict=True):
                top = height + error if height >= 0 else height - error
                axes.text(position, top, f"{height:.1f}", ha="center", va="bottom" if height >= 0 else "top",
                          fontsize=FONT_SIZE - 2)
        dimension = info.get(key, {})
        if "low" in dimension:
            axes.set_ylim(min(dimension["low"], 0), max(dimension["high"], 0) * 1.08 or 0.5)
        axes.axhline(0, color="black", linewidth=0.6)
        axes.set_xticks(range(len(models)), [wrap(model, 16) for model in models], fontsize=FONT_SIZE - 2)
        axes.set_title(dimension.get("label", key), fontsize=FONT_SIZE)
        style_axes(axes)
        axes.tick_params(labelsize=FONT_SIZE - 2)
    for index in range(len(dimensions), rows * columns):
        panels[index // columns][index % columns].set_visible(False)
    scope = "all scenarios" if split == "all" else f"{split} scenarios"
    title = f"Mean score per model and condition ({scope}), whiskers ±1 SE"
    figure.suptitle(title, fontsize=FONT_SIZE + 1)
    if conditions and models:
        figure.legend(fontsize=FONT_SIZE - 1, loc="outside lower center", ncols=min(len(conditions), 6),
                      frameon=False, title="Condition", title_fontsize=FONT_SIZE - 1)
    description = "Bars: " + ("; ".join(parts) if parts else "no scores") + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def deviation_forest(report: Mapping[str, Any], model: str, *, name: str | None = None) -> Figure:
    """Each barrier's deviation from the other barriers in score points, per dimension, with 95% bootstrap CIs.

    Points, not percent: a percent over a near-zero baseline (relationship often averages about 0.1)
    runs to thousands and squashes every other point to the zero line. The label beside each point
    adds the percent where it is defined (benchmark.stats.results.percent_floor).
    """
    name = name or f"results-deviations-{model}"
    labels = report.get("condition_labels", {})
    info = report.get("dimension_info", {})
    entries = [e for e in report["deviations"] if e["model"] == model and e["deviation"] is not None]
    barriers = list(dict.fromkeys(e["barrier"] for e in entries))
    dimensions = [key for key in report["dimensions"] if any(e["dimension"] == key for e in entries)]
    height = 0.28 * max(1, len(entries)) + 0.5 * len(dimensions) + 1.4
    figure = new_figure(7.2, max(2.6, height))
    axes = figure.add_subplot()
    row, ticks, tick_labels, parts = 0.0, [], [], []
    markers = ("o", "s", "D", "^", "v", "P", "X", "*")
    for key in dimensions:
        for b, barrier in enumerate(barriers):
            entry = next((e for e in entries if e["dimension"] == key and e["barrier"] == barrier), None)
            if entry is None:
                continue
            interval = entry["deviation_ci95"]
            axes.errorbar([entry["deviation"]], [row], xerr=whiskers([entry["deviation"]], [interval]),
                          fmt=markers[b % len(markers)], color=SERIES_COLOURS[(b + 1) % len(SERIES_COLOURS)],
                          markeredgecolor="black", markersize=5, elinewidth=1, capsize=2,
                          label=labels.get(barrier, barrier) if key == dimensions[0] else None)
            star = "*" if entry["ci_excludes_zero"] else ""
            percent = "" if entry["deviation_percent"] is None else f" ({entry['deviation_percent']:+.1f}%)"
            axes.text(1.01, row, f"{entry['deviation']:+.2f}{percent}{star}", transform=axes.get_yaxis_transform(),
                      va="center", fontsize=FONT_SIZE - 2)
            ticks.append(row)
            tick_labels.append(f"{info.get(key, {}).get('label', key)} · {labels.get(barrier, barrier)}")
            ci = f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else ""
            parts.append(f"{tick_labels[-1]}: {entry['deviation']:+.2f} points{percent}{ci}")
            row -= 1
        row -= 0.6
    axes.axvline(0, color=CHANCE_COLOUR, linestyle="--", linewidth=0.8)
    axes.set_yticks(ticks, tick_labels, fontsize=FONT_SIZE - 2)
    axes.set_xlabel("Deviation from the other barriers, score points (95% bootstrap CI)", fontsize=FONT_SIZE - 1)
    title = f"Barrier signatures: {model}"
    axes.set_title(title + " (* CI excludes 0)", fontsize=FONT_SIZE)
    style_axes(axes)
    if barriers:
        figure.legend(fontsize=FONT_SIZE - 1, loc="outside lower center", ncols=min(len(barriers), 5), frameon=False)
    description = "Deviations in score points with 95% CIs: " + ("; ".join(parts) if parts else "none defined") + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def correlation_heatmap(
    report: Mapping[str, Any], *, model: str | None = None, name: str = "results-correlations"
) -> Figure:
    """Pearson r of each linguistic feature (rows) with each dimension (columns); r and stars in every cell."""
    import numpy as np

    entries = report["correlations"]["all"] if model is None else report["correlations"]["by_model"].get(model, [])
    features = list(report.get("features", []))
    dimensions = list(report["dimensions"])
    feature_labels = report.get("feature_labels", {})
    info = report.get("dimension_info", {})

    def short(feature: str) -> str:
        source, _, name = feature.partition(".")
        return f"{FEATURE_SHORT.get(name, name)}, {SOURCE_SHORT.get(source, source)}"

    lookup = {(e["feature"], e["dimension"]): e for e in entries}
    matrix = np.full((len(features), len(dimensions)), np.nan)
    for i, feature in enumerate(features):
        for j, key in enumerate(dimensions):
            r = lookup.get((feature, key), {}).get("pearson_r")
            if r is not None:
                matrix[i, j] = r
    figure = new_figure(0.95 * len(dimensions) + 3.4, 0.4 * len(features) + 2.0)
    axes = figure.add_subplot()
    image = axes.imshow(np.ma.masked_invalid(matrix), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    parts = []
    for i, feature in enumerate(features):
        for j, key in enumerate(dimensions):
            entry = lookup.get((feature, key), {})
            r = entry.get("pearson_r")
            text = "n/a" if r is None else f"{r:.2f}{_stars(entry.get('pearson_p'))}"
            colour = "white" if r is not None and abs(r) > 0.6 else "black"
            axes.text(j, i, text, ha="center", va="center", fontsize=FONT_SIZE - 2, color=colour)
            parts.append(f"{feature_labels.get(feature, feature)} with {key}: {text}")
    axes.set_xticks(range(len(dimensions)), [wrap(info.get(k, {}).get("label", k), 14) for k in dimensions],
                    fontsize=FONT_SIZE - 2, rotation=0)
    axes.set_yticks(range(len(features)), [short(f) for f in features], fontsize=FONT_SIZE - 2)
    scope = "all models" if model is None else model
    title = f"Linguistic features vs scores, Pearson r ({scope})"
    axes.set_title(title + "; * p < .05, ** p < .01, *** p < .001", fontsize=FONT_SIZE)
    bar = figure.colorbar(image, ax=axes, shrink=0.8)
    bar.set_label("Pearson r", fontsize=FONT_SIZE - 1)
    bar.ax.tick_params(labelsize=FONT_SIZE - 2)
    description = "Pearson r per feature and dimension: " + ("; ".join(parts) if parts else "none") + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


RESULTS_FIGURES = ("means", "deviations", "correlations")


def results_figures(report: Mapping[str, Any], names: Sequence[str] = RESULTS_FIGURES) -> dict[str, Any]:
    """The figures of a results page named in ``names``: ``means`` (all scenarios; the difficulty splits stay
    tables, since drawing costs about half a second a figure), ``deviations`` per model and ``correlations``
    (all models). None or empty when nothing was scored."""
    drawn: dict[str, Any] = {"means": None, "deviations": {}, "correlations": None}
    if not report.get("models"):
        return {name: drawn[name] for name in names}
    if "means" in names:
        drawn["means"] = condition_bars(report)
    if "deviations" in names:
        drawn["deviations"] = {
            model: deviation_forest(report, model, name=f"results-deviations-{index}")
            for index, model in enumerate(report["models"])
            if any(e["model"] == model and e["deviation"] is not None for e in report["deviations"])
        }
    if "correlations" in names and report.get("features"):
        drawn["correlations"] = correlation_heatmap(report)
    return {name: drawn[name] for name in names}
