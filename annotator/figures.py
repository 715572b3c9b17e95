"""The agreement report's figures, drawn server-side with matplotlib as SVG text.

Each chart takes the part of the report dict it shows and returns a :class:`Figure` whose ``svg``
is an ``<svg>`` element ready to be placed in a page. The figures never depend on colour alone:
values are written on bars and cells, the chance level is a labelled dashed line, and the judge's
bars are hatched as well as coloured. The drawing primitives (accessible SVG output, axes style,
whiskers, number format) are shared with the benchmark results and live in ``benchmark.results.figures``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.results.figures import (
    CHANCE_COLOUR,
    FONT_SIZE,
    HUMAN_COLOUR,
    JUDGE_COLOUR,
    OVERALL_COLOUR,
    RASTER_POINTS,
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

__all__ = ["AGENTSENSE", "Figure", "accuracy_chart", "agentsense_chart", "condition_chart", "confusion_chart",
           "judge_scatter", "question_figures", "report_figures"]

# The key of the AgentSense section's figures in ``report_figures``: not a slug, so no question key can take it.
AGENTSENSE = "(agentsense)"
# Bar styles by perspective or measure, so that neither colour nor hatch alone tells them apart.
_BAR_STYLES = {
    name: (SERIES_COLOURS[index], SERIES_HATCHES[index])
    for index, name in enumerate(("self", "other", "external", "humans", "attacker", "blind"))
}


def accuracy_chart(name: str, accuracy: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> Figure:
    """Bars of accuracy, overall and per true class, with 95% CI whiskers and the chance level."""
    labels = labels or {}
    names = ["Overall"]
    values = [accuracy["overall"]["value"]]
    intervals = [accuracy["overall"]["ci95"]]
    for key, entry in accuracy["by_class"].items():
        names.append(f"{wrap(labels.get(key, key))}\n(n = {entry['n']})")
        values.append(entry["value"])
        intervals.append(entry["ci95"])
    chance = accuracy.get("chance")

    figure = new_figure(max(4.0, 1.1 * len(names) + 1.5), 3.4)
    axes = figure.add_subplot()
    positions = range(len(names))
    heights = [value or 0.0 for value in values]
    colours = [OVERALL_COLOUR] + [HUMAN_COLOUR] * (len(names) - 1)
    axes.bar(positions, heights, color=colours, width=0.6, edgecolor="black", linewidth=0.6,
             hatch=["//"] + [""] * (len(names) - 1))
    axes.errorbar(positions, heights, yerr=whiskers(heights, intervals), fmt="none", ecolor="black",
                  elinewidth=1, capsize=4)
    for position, value, interval in zip(positions, values, intervals, strict=True):
        top = interval[1] if interval else (value or 0.0)
        axes.text(position, min(top + 0.03, 1.08), fmt(value), ha="center", va="bottom", fontsize=FONT_SIZE)
    if chance is not None:
        axes.axhline(chance, color=CHANCE_COLOUR, linestyle="--", linewidth=1, label=f"chance = {chance:.3f}")
        axes.legend(fontsize=FONT_SIZE - 1, loc="upper right", frameon=True, framealpha=1)
    axes.set_xticks(list(positions), names)
    axes.set_ylim(0, 1.25)
    axes.set_ylabel("Accuracy (share of answers right)", fontsize=FONT_SIZE)
    axes.set_xlabel("True class", fontsize=FONT_SIZE)
    title = f"{name}: accuracy with 95% cluster-bootstrap CIs"
    axes.set_title(title, fontsize=FONT_SIZE + 1)
    style_axes(axes)
    parts = [f"{' '.join(n.splitlines()[:-1]) or n} {fmt(v)}" for n, v in zip(names, values, strict=True)]
    description = "Accuracy: " + ", ".join(parts) + (f"; chance {chance:.3f}." if chance is not None else ".")
    return Figure(f"{name}-accuracy.svg", title, description, to_svg(figure, f"{name}-accuracy", title, description))


def confusion_chart(name: str, confusion: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> Figure:
    """A heat map of the confusion matrix: shade by share of the row, every cell's count written in it."""
    import numpy as np

    labels = labels or {}
    keys = list(confusion["labels"])
    matrix = np.asarray(confusion["matrix"], dtype=float).reshape(len(keys), len(keys))
    totals = matrix.sum(axis=1, keepdims=True)
    shares = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
    names = [labels.get(key, key) for key in keys]

    size = max(3.6, 0.9 * len(keys) + 2.2)
    figure = new_figure(size + 0.8, size)
    axes = figure.add_subplot()
    image = axes.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    for row in range(len(keys)):
        for column in range(len(keys)):
            count = int(matrix[row, column])
            colour = "white" if shares[row, column] > 0.55 else "black"
            weight = "bold" if row == column else "normal"
            axes.text(column, row, str(count), ha="center", va="center", color=colour, fontsize=FONT_SIZE + 1,
                      fontweight=weight)
    axes.set_xticks(range(len(keys)), names, rotation=30, ha="right")
    axes.set_yticks(range(len(keys)), names)
    axes.set_xlabel("Annotators' answer", fontsize=FONT_SIZE)
    axes.set_ylabel("True class", fontsize=FONT_SIZE)
    title = f"{name}: confusion matrix (counts; shade = share of the row)"
    axes.set_title(title, fontsize=FONT_SIZE + 1)
    axes.tick_params(labelsize=FONT_SIZE)
    bar = figure.colorbar(image, ax=axes, shrink=0.8)
    bar.set_label("Share of the true class's answers", fontsize=FONT_SIZE)
    bar.ax.tick_params(labelsize=FONT_SIZE)
    rows = [
        f"{names[r]}: " + ", ".join(f"{int(matrix[r, c])} answered {names[c]}" for c in range(len(keys)))
        for r in range(len(keys))
    ]
    description = "Rows are true classes. " + "; ".join(rows) + "."
    return Figure(f"{name}-confusion.svg", title, description, to_svg(figure, f"{name}-confusion", title, description))


def judge_scatter(
    name: str,
    scores: Mapping[str, Sequence[Any]],
    alignment: Mapping[str, Any] | None,
    *,
    evaluator: str,
    scale: Sequence[float] | None = None,
) -> Figure:
    """Mean human rating per unit against the judge's score, with the least-squares line and r."""
    import numpy as np

    judge = np.asarray(scores["judge"], dtype=float)
    human = np.asarray(scores["human_mean"], dtype=float)
    figure = new_figure(5.2, 4.2)
    axes = figure.add_subplot()
    # Ratings on a scale coincide a lot: draw each distinct (judge, human) point once, its area
    # growing with the number of units there. Past RASTER_POINTS markers, they become one image,
    # or the SVG would weigh megabytes.
    pairs, counts = np.unique(np.column_stack([judge, human]), axis=0, return_counts=True)
    stacked = bool((counts > 1).any())
    sizes = 16 + 260 * np.sqrt(counts / counts.max()) if stacked else 28
    label = "units (marker area grows with their number)" if stacked else "one rated unit"
    axes.scatter(pairs[:, 0], pairs[:, 1], s=sizes, color=HUMAN_COLOUR, alpha=0.7, edgecolor="black", linewidth=0.4,
                 label=label, rasterized=len(pairs) > RASTER_POINTS)
    r = (alignment or {}).get("pearson_r")
    if len(judge) >= 2 and np.ptp(judge) > 0:
        slope, intercept = np.polyfit(judge, human, 1)
        xs = np.array([judge.min(), judge.max()])
        axes.plot(xs, slope * xs + intercept, color=JUDGE_COLOUR, linestyle="--", linewidth=1.2,
                  label=f"least-squares line (slope {slope:.2f})")
    if scale is not None:
        pad = (scale[1] - scale[0]) * 0.05
        axes.set_xlim(scale[0] - pad, scale[1] + pad)
        axes.set_ylim(scale[0] - pad, scale[1] + pad)
    ci = (alignment or {}).get("ci95")
    summary = f"r = {fmt(r)}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "") + f", n = {len(judge)}"
    axes.set_title(summary, fontsize=FONT_SIZE)
    axes.set_xlabel(f"Judge's score ({evaluator})", fontsize=FONT_SIZE)
    axes.set_ylabel("Mean human rating", fontsize=FONT_SIZE)
    title = f"{name}: humans vs judge"
    figure.suptitle(title, fontsize=FONT_SIZE + 1)
    figure.legend(fontsize=FONT_SIZE - 1, loc="outside lower center", frameon=False, ncols=2)
    style_axes(axes)
    description = f"Scatter of the mean human rating against the judge's score for each rated unit; {summary}."
    return Figure(f"{name}-judge.svg", title, description, to_svg(figure, f"{name}-judge", title, description))


def condition_chart(
    name: str,
    humans: Mapping[str, Any],
    judge: Mapping[str, Any] | None,
    *,
    labels: Mapping[str, str] | None = None,
    scale: Sequence[float] | None = None,
) -> Figure:
    """Mean rating per condition with 95% CI whiskers: humans (circles) and the judge (squares) side by side.

    Points rather than bars, because a rating scale has no natural zero for a bar to start from.
    """
    labels = labels or {}
    keys = list(humans)
    judge = judge or {}
    has_judge = any(judge.get(key, {}).get("mean") is not None for key in keys)
    figure = new_figure(max(4.4, 1.3 * len(keys) + 1.8), 3.4)
    axes = figure.add_subplot()
    series = [("Humans (mean of units)", humans, HUMAN_COLOUR, "o")]
    if has_judge:
        series.append(("Judge", judge, JUDGE_COLOUR, "s"))
    extremes = list(scale) if scale else []
    for offset, (label, data, colour, marker) in enumerate(series):
        shift = (offset - (len(series) - 1) / 2) * 0.3
        shown = [
            (index + shift, data[key]) for index, key in enumerate(keys) if data.get(key, {}).get("mean") is not None
        ]
        if not shown:
            continue
        positions = [position for position, _ in shown]
        means = [entry["mean"] for _, entry in shown]
        intervals = [entry.get("ci95") for _, entry in shown]
        axes.errorbar(positions, means, yerr=whiskers(means, intervals), fmt=marker, color=colour, ecolor=colour,
                      markeredgecolor="black", markersize=7, elinewidth=1.2, capsize=4, label=label)
        for position, mean in zip(positions, means, strict=True):
            axes.text(position + 0.06, mean, fmt(mean), ha="left", va="center", fontsize=FONT_SIZE - 1)
        extremes += [value for interval in intervals if interval for value in interval]
    axes.set_xticks(range(len(keys)), [wrap(labels.get(key, key)) for key in keys])
    axes.set_xlim(-0.6, len(keys) - 0.4)
    if extremes:
        low, high = min(extremes), max(extremes)
        pad = (high - low) * 0.08 or 0.5
        axes.set_ylim(low - pad, high + pad)
    axes.set_ylabel("Mean rating (95% CI)", fontsize=FONT_SIZE)
    axes.set_xlabel("Condition (the episode's barrier)", fontsize=FONT_SIZE)
    title = f"{name}: mean per condition" + (", humans and judge" if has_judge else "")
    figure.suptitle(title, fontsize=FONT_SIZE + 1)
    figure.legend(fontsize=FONT_SIZE - 1, frameon=False, loc="outside lower center", ncols=len(series))
    axes.grid(axis="y", color="#d5d9e2", linewidth=0.6)
    axes.set_axisbelow(True)
    style_axes(axes)
    parts = []
    for key in keys:
        text = f"{labels.get(key, key)}: humans {fmt(humans[key].get('mean'))}"
        if has_judge:
            text += f", judge {fmt(judge.get(key, {}).get('mean'))}"
        parts.append(text)
    description = "Mean rating per condition. " + "; ".join(parts) + "."
    svg = to_svg(figure, f"{name}-conditions", title, description)
    return Figure(f"{name}-conditions.svg", title, description, svg)


def question_figures(key: str, entry: Mapping[str, Any], conditions: Mapping[str, str]) -> dict[str, Figure]:
    """Every figure that fits one question of a report, by kind: accuracy, confusion, judge, conditions."""
    figures: dict[str, Figure] = {}
    question = entry.get("question") or {}
    accuracy = entry.get("accuracy")
    if accuracy and accuracy.get("overall", {}).get("value") is not None:
        choices = {**conditions, **(question.get("labels") or {})}
        figures["accuracy"] = accuracy_chart(key, accuracy, labels=choices)
        if accuracy.get("confusion", {}).get("matrix"):
            figures["confusion"] = confusion_chart(key, accuracy["confusion"], labels=choices)
    scale = question.get("scale")
    scores = entry.get("judge_scores")
    if scores and scores.get("units"):
        figures["judge"] = judge_scatter(
            key, scores, entry.get("alignment"), evaluator=(entry.get("judge") or {}).get("evaluator", "judge"),
            scale=scale,
        )
    if entry.get("by_condition"):
        figures["conditions"] = condition_chart(
            key, entry["by_condition"], entry.get("judge_by_condition"), labels=conditions, scale=scale
        )
    return figures


def agentsense_chart(section: Mapping[str, Any]) -> Figure | None:
    """Horizontal bars: each perspective's agreement with the human goal majority, and probe accuracy.

    One panel per part the section has: goals (a perspective's pooled row, then each respondent's)
    and probes (the annotators, then each model as attacker and blind). Every bar carries its value
    and n; None when neither part has a number to draw.
    """
    goals = [
        (row["perspective"], f"{row['perspective']}: " + ("all" if row["respondent"] is None else row["respondent"]),
         row["accuracy"], row["n"])
        for row in (section.get("goals") or {}).get("perspectives", []) if row["accuracy"] is not None
    ]
    probes = section.get("probes") or {}
    probe_bars = []
    if probes and probes["humans"]["accuracy"] is not None:
        probe_bars.append(("humans", "annotators", probes["humans"]["accuracy"], probes["humans"]["n"]))
    probe_bars += [(row["measure"], f"{row['measure']}: {row['model']}", row["accuracy"], row["n"])
                   for row in probes.get("agents", [])]
    panels = [(title, bars) for title, bars in (
        ("Goals: share agreeing with the human majority", goals), ("Probes: share answered correctly", probe_bars),
    ) if bars]
    if not panels:
        return None
    rows = max(len(bars) for _, bars in panels)
    figure = new_figure(4.6 * len(panels) + 0.6, 0.42 * rows + 1.4)
    for index, (title, bars) in enumerate(panels, start=1):
        axes = figure.add_subplot(1, len(panels), index)
        positions = list(range(len(bars)))[::-1]  # the first bar on top
        styles = [_BAR_STYLES.get(kind, (OVERALL_COLOUR, "")) for kind, _, _, _ in bars]
        axes.barh(positions, [value for _, _, value, _ in bars], color=[colour for colour, _ in styles],
                  hatch=[hatch for _, hatch in styles], edgecolor="black", linewidth=0.6, height=0.6)
        for position, (_, _, value, n) in zip(positions, bars, strict=True):
            axes.text(value + 0.02, position, f"{fmt(value)} (n = {n})", va="center", fontsize=FONT_SIZE - 1)
        axes.set_yticks(positions, [wrap(label, 30) for _, label, _, _ in bars])
        axes.set_xlim(0, 1.35)
        axes.set_xticks([0, 0.25, 0.5, 0.75, 1])
        axes.set_ylim(len(bars) - rows - 0.5, len(bars) - 0.5)  # bars as tall in both panels, from the top
        axes.set_xlabel("Share of answers", fontsize=FONT_SIZE)
        axes.set_title(title, fontsize=FONT_SIZE)
        style_axes(axes)
    title = "Goals and probes: humans against the models"
    figure.suptitle(title, fontsize=FONT_SIZE + 1)
    description = " ".join(
        f"{panel}: " + "; ".join(f"{label} {fmt(value)} (n = {n})" for _, label, value, n in bars) + "."
        for panel, bars in panels
    )
    name = "agentsense-comparison"
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def report_figures(report: Mapping[str, Any]) -> dict[str, dict[str, Figure]]:
    """The figures of every question of a report, by question key then figure kind; the AgentSense
    section's under ``AGENTSENSE``, kind ``comparison``, when the report has one to draw."""
    conditions = report.get("conditions", {})
    drawn = {key: question_figures(key, entry, conditions) for key, entry in report.get("questions", {}).items()}
    comparison = agentsense_chart(report["agentsense"]) if report.get("agentsense") else None
    if comparison is not None:
        drawn[AGENTSENSE] = {"comparison": comparison}
    return drawn
