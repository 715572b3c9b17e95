"""The report as the page shows it: formatted rows, tables and figures, ready for a template.

Numbers are rounded to three decimals here (the JSON and CSV keep every digit); a value that is
undefined shows as a dash, and the question's notes say why. Templates only loop over what this
module returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import figures as report_figures
from .tables import statistic_rows

DASH = "—"
TYPE_NAMES = {"categorical": "categorical", "numeric": "numeric", "spans": "spans"}
COUNT_KEYS = ("n_items", "n_ratings", "excluded_items", "n_annotators")
SPAN_COUNT_LABELS = {
    "n_items": "Items with two or more annotators",
    "n_ratings": "Spans marked",
    "excluded_items": "Items excluded (fewer than two annotators)",
}
# Notes that only say a statistic does not fit the question's type: listed once, not as warnings.
NOT_APPLICABLE = (
    "applies to numeric questions",
    "applies to categorical questions; see binned_kappa",
    "no truth given",
    "no condition given",
    "no judge scores",
    "does not apply to span questions",
    "applies to span questions",
)


def number(value: Any, digits: int = 3) -> str:
    """A value as shown: whole numbers as they are, other numbers to ``digits`` decimals, None as a dash."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def degrees(value: float | None) -> str:
    """Degrees of freedom: whole numbers without decimals, others (unequal designs) to two."""
    if value is None:
        return DASH
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def interval(ci: Sequence[float] | None) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def p_value(p: float | None) -> str:
    """'p < 0.001' or 'p = 0.012' (a dash when undefined)."""
    if p is None:
        return f"p {DASH}"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


@dataclass
class Row:
    label: str
    value: str
    ci: str = ""
    reading: str = ""


@dataclass
class Table:
    """A small table with a caption; the first cell of each row is its header cell."""

    caption: str
    header: list[str]
    rows: list[list[str]]


@dataclass
class Panel:
    """A figure with the table that carries the same numbers in text."""

    title: str
    figure: report_figures.Figure | None
    table: Table | None
    text: str = ""


@dataclass
class QuestionView:
    key: str
    prompt: str
    kind: str
    type: str
    unit: str
    counts: list[Row]
    statistics: list[Row]
    judge: str = ""
    panels: list[Panel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)
    methods: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ReportView:
    empty: bool
    counts: list[Row]
    notes: list[str]
    methods: list[tuple[str, str]]
    questions: list[QuestionView]
    skipped: list[tuple[str, str]]
    goal_rows: list[list[str]] = field(default_factory=list)  # AgentSense: human majority vs each perspective
    probe_rows: list[list[str]] = field(default_factory=list)  # AgentSense: probe accuracy, humans and agents
    goal_agreement: list[Row] = field(default_factory=list)  # AgentSense: the annotators' own agreement on goals
    agentsense_figure: report_figures.Figure | None = None  # both of them as bars
    annotator_rows: list[list[str]] = field(default_factory=list)  # each annotator's agreement, per question


def report_view(
    report: Mapping[str, Any], drawn: Mapping[str, Mapping[str, report_figures.Figure]] | None = None
) -> ReportView:
    """Everything the report page and the standalone HTML show, from the report dict.

    ``drawn`` are the figures by question (``figures.report_figures``), when already drawn.
    """
    if drawn is None:
        drawn = report_figures.report_figures(report)
    counts = report["counts"]
    excluded = counts["excluded_annotations"]
    study_counts = [
        Row("Regular items", number(counts["items"])),
        Row("Items with a submitted annotation", number(counts["items_rated"])),
        Row("Submitted annotations used", number(counts["annotations"])),
        Row("Annotators with a submitted annotation", number(counts["annotators"])),
        Row("Left out: gold items", f"{excluded['gold']} annotations"),
        Row("Left out: attention checks", f"{excluded['attention']} annotations"),
    ]
    conditions = report.get("conditions", {})
    questions = []
    for key, entry in report["questions"].items():
        questions.append(_question(key, entry, conditions, drawn.get(key, {})))
    empty = not report["counts"]["annotations"]
    return ReportView(
        empty=empty,
        counts=study_counts,
        # The empty page says so in words of its own; the JSON keeps the note.
        notes=[note for note in report.get("notes", []) if not (empty and "nothing to report" in note)],
        methods=[(name.capitalize(), text) for name, text in report.get("methods", {}).items()],
        questions=questions,
        skipped=list(report.get("skipped_questions", {}).items()),
        **_agentsense_rows(report.get("agentsense") or {}),
        agentsense_figure=drawn.get(report_figures.AGENTSENSE, {}).get("comparison"),
        annotator_rows=_annotator_rows(report.get("annotators") or {}),
    )


def _annotator_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row per question and annotator (as ``annotators.csv``): answers; agreement with the others and its
    kappa or mean absolute difference; with gold likewise (and on how many items); MACE competence."""
    rows = []
    for key, entry in (section.get("questions") or {}).items():
        spread = "mean_abs_difference" if entry["type"] == "numeric" else "kappa"
        for annotator, figures in entry["annotators"].items():
            others, gold = figures["others"], figures["gold"]
            rows.append([
                key, annotator, str(figures["answers"]), number(others["agreement"]), number(others.get(spread)),
                f"{number(gold['agreement'])} ({gold['items']})" if gold["items"] else DASH, number(gold.get(spread)),
                number(figures.get("competence")),
            ])
    return rows


def _agentsense_rows(section: Mapping[str, Any]) -> dict[str, list[list[str]]]:
    """The goal comparison (one row per perspective, pooled then per respondent), the annotators' agreement on
    goals (as in ``agentsense_annotators.csv``) and the probes' accuracies."""
    goals = section.get("goals") or {}
    goal_rows = [
        [
            row["perspective"],
            "all" if row["respondent"] is None else f"{row['respondent']} ({row['respondent_kind']})",
            number(row["accuracy"]), str(row["n"]), str(row["goals"]), number(row["kappa"]),
            f"{number(row['yes_share'])} vs {number(row['human_yes_share'])}",
        ]
        for row in goals.get("perspectives", [])
    ]
    agreement = []
    if goals:
        annotators = goals["annotators"]
        fleiss = annotators["fleiss_kappa"]
        agreement = [
            Row("Goals answered", str(goals["goals"])),
            Row("Goals with a majority", str(goals["goals_with_majority"])),
            Row("Ties (no majority)", str(goals["ties"])),
            Row("Ratings", str(annotators["ratings"])),
            Row("Fleiss' kappa", number(fleiss["value"]), interval(fleiss["ci95"])),
            Row("Percent agreement", number(annotators["percent_agreement"])),
        ]
    probes = section.get("probes") or {}
    probe_rows = []
    if probes:
        humans = probes["humans"]
        probe_rows.append(["annotators", "humans", number(humans["accuracy"]), str(humans["n"])])
        probe_rows.extend(
            [row["measure"], row["model"], number(row["accuracy"]), str(row["n"])] for row in probes["agents"]
        )
    return {"goal_rows": goal_rows, "probe_rows": probe_rows, "goal_agreement": agreement}


def _question(
    key: str, entry: Mapping[str, Any], conditions: Mapping[str, str], drawn: Mapping[str, report_figures.Figure]
) -> QuestionView:
    info = entry.get("question") or {}
    statistics = statistic_rows(entry)
    labels = SPAN_COUNT_LABELS if entry["type"] == "spans" else {}
    counts = [Row(labels.get(s.key, s.label), number(s.value)) for s in statistics if s.key in COUNT_KEYS]
    rows = []
    for stat in statistics:
        if stat.key in COUNT_KEYS or stat.key in ("icc.df1", "icc.df2", "icc.p"):
            continue
        if stat.key == "icc.F":
            icc = entry.get("icc") or {}
            if stat.value is not None:
                rows.append(Row(
                    "F test (one-way ANOVA)",
                    f"F({degrees(icc.get('df1'))}, {degrees(icc.get('df2'))}) = {stat.value:.3f}",
                    reading=p_value(icc.get("p")),
                ))
            continue
        rows.append(Row(stat.label, number(stat.value), interval(stat.ci95), stat.interpretation or ""))
    view = QuestionView(
        key=key,
        prompt=info.get("prompt", ""),
        kind=info.get("kind", ""),
        type=TYPE_NAMES.get(entry["type"], entry["type"]),
        unit={"item:seat": "each (item, seat) pair", "item:turn": "each (item, turn) pair"}.get(
            info.get("unit", ""), "each item"),
        counts=counts,
        statistics=rows,
        methods=[(name.replace("_", " ").capitalize(), text) for name, text in entry.get("methods", {}).items()],
    )
    for note in entry.get("notes", []):
        key, _, reason = note.partition(": ")
        if reason in NOT_APPLICABLE:
            view.not_applicable.append(key.replace("_", " "))
        else:
            view.notes.append(note)
    labels = {**conditions, **(info.get("labels") or {})}
    _alignment_rows(view, entry)
    _accuracy_panels(view, entry, labels, drawn)
    _numeric_panels(view, entry, conditions, drawn)
    _span_panels(view, entry)
    return view


def _alignment_rows(view: QuestionView, entry: Mapping[str, Any]) -> None:
    alignment, judge = entry.get("alignment"), entry.get("judge")
    if not judge:
        return
    name = judge["evaluator"] + (f" (prompt {judge['prompt_version']})" if judge.get("prompt_version") else "")
    view.judge = f"{name}, with {judge['scores']} scores of {judge['dimension']}"
    others = judge.get("other_evaluators") or []
    if others:
        view.judge += "; not used: " + ", ".join(f"{o['evaluator']} ({o['scores']} scores)" for o in others)
    if alignment:
        view.statistics.append(Row(
            "Pearson r, human mean vs judge", number(alignment.get("pearson_r")), interval(alignment.get("ci95")),
            f"{p_value(alignment.get('p'))}, n = {alignment.get('n')}",
        ))
        view.statistics.append(Row("Spearman rho, human mean vs judge", number(alignment.get("spearman_rho"))))


def _accuracy_panels(
    view: QuestionView, entry: Mapping[str, Any], labels: Mapping[str, str], drawn: Mapping[str, Any]
) -> None:
    accuracy = entry.get("accuracy")
    if not accuracy:
        return
    overall = accuracy["overall"]
    rows = [["Overall", number(overall["value"]), interval(overall["ci95"]), number(accuracy.get("n_ratings"))]]
    for label, result in accuracy.get("by_class", {}).items():
        rows.append([labels.get(label, label), number(result["value"]), interval(result["ci95"]), str(result["n"])])
    chance = accuracy.get("chance")
    text = (
        f"Chance ({accuracy.get('chance_method', '1 / number of classes')}): {number(chance)}. "
        f"CIs resample {accuracy.get('n_clusters')} {accuracy.get('cluster')}s "
        f"{accuracy.get('resamples')} times."
    )
    view.panels.append(Panel(
        "Accuracy against the truth", drawn.get("accuracy"),
        Table("Accuracy by true class", ["Class", "Accuracy", "95% CI", "Answers"], rows), text,
    ))
    confusion = accuracy.get("confusion") or {}
    if confusion.get("matrix"):
        names = [labels.get(label, label) for label in confusion["labels"]]
        matrix_rows = [
            [name, *[str(count) for count in counts]]
            for name, counts in zip(names, confusion["matrix"], strict=True)
        ]
        view.panels.append(Panel(
            "Confusion matrix", drawn.get("confusion"),
            Table("Answers (columns) per true class (rows)", ["True class \\ answer", *names], matrix_rows),
        ))


def _numeric_panels(
    view: QuestionView, entry: Mapping[str, Any], conditions: Mapping[str, str], drawn: Mapping[str, Any]
) -> None:
    binned = entry.get("binned_kappa")
    if binned:
        rows = [
            [f"{bins} bins", number(k.get("fleiss")), number(k.get("randolph")), number(k.get("percent_agreement"))]
            for bins, k in binned.items()
        ]
        view.panels.append(Panel(
            "Kappas on a binned scale", None,
            Table("Agreement after cutting the scale into equal-width bins",
                  ["Bins", "Fleiss' kappa", "Randolph's kappa", "Percent agreement"], rows),
        ))
    if "judge" in drawn:
        scores = entry.get("judge_scores") or {}
        view.panels.append(Panel(
            "Humans against the judge", drawn["judge"], None,
            f"{len(scores.get('units', []))} rated units with a judge score; the JSON and judge_scores.csv list them.",
        ))
    humans = entry.get("by_condition")
    if humans:
        judge = entry.get("judge_by_condition") or {}
        rows = []
        for condition, summary in humans.items():
            theirs = judge.get(condition, {})
            rows.append([
                conditions.get(condition, condition),
                number(summary.get("mean")), interval(summary.get("ci95")), str(summary.get("n")),
                number(theirs.get("mean")), interval(theirs.get("ci95")), str(theirs.get("n", DASH)),
            ])
        view.panels.append(Panel(
            "Means per condition", drawn.get("conditions"),
            Table("Mean rating per condition (the episode's barrier), units as the sample",
                  ["Condition", "Humans", "Humans' 95% CI", "Units", "Judge", "Judge's 95% CI", "Units"], rows),
        ))


def _span_panels(view: QuestionView, entry: Mapping[str, Any]) -> None:
    spans = entry.get("spans")
    if not spans:
        return
    attributes = spans.get("attributes") or {}
    view.statistics.extend([
        Row("Overlapping pairs", number(spans.get("n_pairs")), reading=f"IoU >= {spans.get('min_iou')}"),
        Row("Share of spans that overlap another annotator's", number(spans.get("overlap_share"))),
        Row("Disagreement share (paired with the other label)", number(spans.get("disagreement_share"))),
        Row("Attribute F1 of paired spans", number(attributes.get("f1"))),
        Row("Attribute partial match", number(attributes.get("partial_match"))),
        Row("Attribute exact match", number(attributes.get("exact_match")),
            reading=f"{attributes.get('n_pairs', 0)} pairs with attributes"),
    ])
    for coordinate, alpha in (spans.get("unitizing_alpha") or {}).items():
        if alpha:
            view.statistics.append(Row(
                f"Unitizing alpha (αu) on {coordinate}", number(alpha.get("alpha")),
                reading=f"{alpha.get('n_items')} items, {alpha.get('n_coders')} annotators each, no pairing",
            ))
    per_attribute = spans.get("per_attribute") or {}
    if per_attribute:
        rows = [
            [name, str(counts.get("spans")), str(counts.get("pairs_both")), number(counts.get("f1"))]
            for name, counts in per_attribute.items()
        ]
        view.panels.append(Panel(
            "Social attributes", None,
            Table("Spans and paired agreement per attribute", ["Attribute", "Spans", "Pairs with it on both", "F1"],
                  rows),
        ))
