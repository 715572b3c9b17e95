"""The ProMediate figures (PM-26), drawn with the results figures' primitives (``benchmark.results.figures``).

- **trajectory**: one conversation's consensus per topic and overall, with a grey vertical line at each
  mediator intervention (the paper's Fig. 3);
- **me-mi**: ME against MI, one point per intervention, with Spearman's ρ (Fig. 4);
- **mean-trajectories**: the mean overall consensus per point, one line per mode × mediator condition.

Topic titles, scenario and model names are user text: drawn as written (never parsed as maths, see
``PLAIN_TEXT``) and escaped in the SVG's title and description. Lines differ in style and marker as well
as colour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..figures import FONT_SIZE, SERIES_COLOURS, Figure, fmt, new_figure, style_axes, to_svg, wrap

LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
MEDIATOR_LINE = "#9aa0a6"


def _style(index: int) -> dict[str, Any]:
    return {
        "color": SERIES_COLOURS[index % len(SERIES_COLOURS)],
        "linestyle": LINE_STYLES[index % len(LINE_STYLES)],
        "marker": MARKERS[index % len(MARKERS)],
        "markevery": 5,
        "markersize": 3,
        "linewidth": 1.1,
    }


def trajectory(report: Mapping[str, Any], name: str = "promediate-trajectory") -> Figure | None:
    """One conversation's per-topic consensus with its mediator's interventions as vertical lines."""
    single = report["trajectories"].get("single")
    if not single:
        return None
    figure = new_figure(7.6, 3.8)
    axes = figure.add_subplot()
    for point in single["mediator_points"]:
        axes.axvline(point, color=MEDIATOR_LINE, linewidth=0.8, zorder=0)
    parts = []
    for index, (topic, series) in enumerate(single["topics"].items()):
        axes.plot(range(len(series)), series, label=wrap(topic, 40), **_style(index))
        parts.append(f"{topic}: from {fmt(series[0], 2)} to {fmt(series[-1], 2)}")
    overall = single["overall"]
    axes.plot(range(len(overall)), overall, color="black", linewidth=2, label="overall")
    parts.append(f"overall: from {fmt(overall[0], 2)} to {fmt(overall[-1], 2)}")
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel(
        "Point (0 = starting attitudes; k + 1 = after turn k); grey lines: mediator interventions",
        fontsize=FONT_SIZE - 1,
    )
    axes.set_ylabel("Consensus", fontsize=FONT_SIZE - 1)
    style_axes(axes)
    condition = report["condition_labels"].get(single["condition"], single["condition"])
    title = (
        f"Consensus per topic: episode {single['episode']} ({single['scenario']}, {single['mode']}, {condition}"
        + (f", {single['mediator_model']}" if single["mediator_model"] else "")
        + ")"
    )
    axes.set_title(title, fontsize=FONT_SIZE)
    figure.legend(fontsize=FONT_SIZE - 2, loc="outside right center", frameon=False)
    description = (
        f"{len(single['mediator_points'])} intervention(s) at points "
        f"{', '.join(map(str, single['mediator_points'])) or 'none'}. " + "; ".join(parts) + "."
    )
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def me_mi_scatter(report: Mapping[str, Any], name: str = "promediate-me-mi") -> Figure | None:
    """ME (%) against MI (1–5) per intervention."""
    points = report["me_mi"].get("points") or []
    if not points:
        return None
    figure = new_figure(5.0, 3.6)
    axes = figure.add_subplot()
    axes.scatter(
        [mi for _, mi in points],
        [me for me, _ in points],
        s=14,
        color=SERIES_COLOURS[1],
        edgecolor="black",
        linewidth=0.4,
        marker="o",
    )
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_xlabel("Mediator intelligence (1–5)", fontsize=FONT_SIZE - 1)
    axes.set_ylabel("Mediator effectiveness (%)", fontsize=FONT_SIZE - 1)
    style_axes(axes)
    entry = report["me_mi"]
    rho = "ρ not computed" if entry.get("rho") is None else f"Spearman ρ = {entry['rho']:.3f}, p = {entry['p']:.3f}"
    title = f"ME against MI per intervention ({rho}, n = {len(points)})"
    axes.set_title(title, fontsize=FONT_SIZE)
    description = (
        f"{len(points)} interventions: "
        + "; ".join(f"MI {fmt(mi, 2)}, ME {fmt(me, 2)}%" for me, mi in points[:60])
        + "."
    )
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def mean_trajectories(report: Mapping[str, Any], name: str = "promediate-mean-trajectories") -> Figure | None:
    """The mean overall consensus per point, one line per mode × condition."""
    means = report["trajectories"].get("means") or []
    if not means:
        return None
    figure = new_figure(7.6, 3.8)
    axes = figure.add_subplot()
    parts = []
    for index, entry in enumerate(means):
        condition = report["condition_labels"].get(entry["condition"], entry["condition"])
        label = f"{entry['mode']} / {condition} (n={entry['conversations']})"
        axes.plot(range(len(entry["mean"])), entry["mean"], label=label, **_style(index))
        parts.append(f"{label}: from {fmt(entry['mean'][0], 2)} to {fmt(entry['mean'][-1], 2)}")
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("Point (mean over the conversations that reach it)", fontsize=FONT_SIZE - 1)
    axes.set_ylabel("Mean overall consensus", fontsize=FONT_SIZE - 1)
    style_axes(axes)
    title = "Mean consensus trajectory per conflict mode and mediator condition"
    axes.set_title(title, fontsize=FONT_SIZE)
    figure.legend(fontsize=FONT_SIZE - 2, loc="outside right center", frameon=False)
    description = "; ".join(parts) + "."
    return Figure(f"{name}.svg", title, description, to_svg(figure, name, title, description))


def promediate_figures(report: Mapping[str, Any]) -> dict[str, Figure | None]:
    """The page's figures by short name; None for one without data."""
    return {
        "trajectory": trajectory(report),
        "me-mi": me_mi_scatter(report),
        "mean-trajectories": mean_trajectories(report),
    }
