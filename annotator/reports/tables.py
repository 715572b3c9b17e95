"""The report as CSV tables, one file per kind of result, every number unrounded.

Each table is long-format with a ``question`` column, so one file covers every question:

- ``statistics.csv``: question, type, statistic, value, ci95_low, ci95_high, interpretation;
- ``accuracy.csv``: question, class (``overall`` or a true class), value, ci95_low, ci95_high, n,
  chance, cluster, n_clusters, resamples;
- ``confusion.csv``: question, truth, answer, count;
- ``binned_kappa.csv``: question, bins, fleiss, randolph, percent_agreement;
- ``alignment.csv``: question, evaluator, prompt_version, dimension, pearson_r, ci95_low, ci95_high,
  p, spearman_rho, n;
- ``judge_scores.csv``: question, unit, human_mean, ratings, judge;
- ``by_condition.csv``: question, condition, rater (humans or judge), mean, ci95_low, ci95_high, n;
- ``spans.csv`` and ``span_attributes.csv``: span agreement, and counts and F1 per attribute;
- ``notes.csv``: question (empty for the whole study), note;
- ``annotators.csv``: question, type, annotator, answers, and each annotator's agreement with the others
  (others_items, others_pairs, others_agreement, others_kappa, others_mean_abs_difference), with gold
  (gold_items, gold_agreement, gold_kappa, gold_mean_abs_difference) and MACE competence
  (``reports.annotators``; kappas and competence empty for numeric questions, differences for nominal ones).

A study that asks AgentSense's goal or probe questions (``report["agentsense"]``) adds:

- ``agentsense_goals.csv``: perspective (self, other, external), respondent_kind, respondent,
  prompt_version (all three empty on a perspective's pooled row), accuracy, n, goals, kappa,
  yes_share, human_yes_share;
- ``agentsense_annotators.csv``: statistic, value, ci95_low, ci95_high: the goals asked, those
  with a human majority, ties, ratings, and the annotators' Fleiss kappa and percent agreement;
- ``agentsense_probes.csv``: measure (humans, attacker, blind), who, n, correct, accuracy.

Every file is always there (with its header alone when nothing applies; the AgentSense ones in
every report that has that section), so scripts can rely on the names. Text that a spreadsheet
would run as a formula (a category, an item or a judge named ``=...``) gets a leading quote, as in
every CSV Parley writes (``benchmark.csv_output``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmark.csv_output import csv_text
from benchmark.stats.interpretation import cicchetti

COLUMNS: dict[str, tuple[str, ...]] = {
    "statistics.csv": ("question", "type", "statistic", "value", "ci95_low", "ci95_high", "interpretation"),
    "accuracy.csv": (
        "question", "class", "value", "ci95_low", "ci95_high", "n", "chance", "cluster", "n_clusters", "resamples",
    ),
    "confusion.csv": ("question", "truth", "answer", "count"),
    "binned_kappa.csv": ("question", "bins", "fleiss", "randolph", "percent_agreement"),
    "alignment.csv": (
        "question", "evaluator", "prompt_version", "dimension", "pearson_r", "ci95_low", "ci95_high", "p",
        "spearman_rho", "n",
    ),
    "judge_scores.csv": ("question", "unit", "human_mean", "ratings", "judge"),
    "by_condition.csv": ("question", "condition", "rater", "mean", "ci95_low", "ci95_high", "n"),
    "spans.csv": (
        "question", "n_spans", "n_pairs", "overlap_share", "label_agreement", "disagreement_share", "attribute_f1",
        "attribute_partial_match", "attribute_exact_match", "attribute_pairs", "min_iou", "unitizing_alpha_turns",
        "unitizing_alpha_seconds",
    ),
    "span_attributes.csv": ("question", "attribute", "spans", "pairs_both", "f1"),
    "notes.csv": ("question", "note"),
    "annotators.csv": (
        "question", "type", "annotator", "answers", "others_items", "others_pairs", "others_agreement",
        "others_kappa", "others_mean_abs_difference", "gold_items", "gold_agreement", "gold_kappa",
        "gold_mean_abs_difference", "competence",
    ),
}
AGENTSENSE_COLUMNS: dict[str, tuple[str, ...]] = {
    "agentsense_goals.csv": (
        "perspective", "respondent_kind", "respondent", "prompt_version", "accuracy", "n", "goals", "kappa",
        "yes_share", "human_yes_share",
    ),
    "agentsense_annotators.csv": ("statistic", "value", "ci95_low", "ci95_high"),
    "agentsense_probes.csv": ("measure", "who", "n", "correct", "accuracy"),
}

LABELS = {
    "n_items": "Rated units with two or more ratings",
    "n_ratings": "Ratings",
    "excluded_items": "Units excluded (fewer than two ratings)",
    "n_annotators": "Annotators of those units",
    "percent_agreement": "Percent agreement",
    "fleiss_kappa": "Fleiss' kappa",
    "randolph_kappa": "Randolph's free-marginal kappa",
    "cohen_kappa": "Cohen's kappa (two annotators)",
    "krippendorff_alpha.nominal": "Krippendorff's alpha, nominal",
    "krippendorff_alpha.ordinal": "Krippendorff's alpha, ordinal",
    "krippendorff_alpha.interval": "Krippendorff's alpha, interval",
    "icc1": "ICC(1,1), one rating",
    "icc1k": "ICC(1,k), mean of k ratings",
    "icc.F": "F (one-way ANOVA)",
    "icc.df1": "df1",
    "icc.df2": "df2",
    "icc.p": "p of F",
    "icc.k": "k used for ICC(1,k)",
    "icc2": "ICC(2,1), two-way random",
    "icc2k": "ICC(2,k), two-way random",
    "icc3": "ICC(3,1), two-way mixed",
    "icc3k": "ICC(3,k), two-way mixed",
    "span_label_agreement": "Label agreement of overlapping spans",
}


@dataclass
class Statistic:
    """One statistic of one question, as a row: key, label, value, 95% CI and its verbal reading."""

    key: str
    label: str
    value: float | None
    ci95: Sequence[float] | None = None
    interpretation: str | None = None


def statistic_rows(entry: Mapping[str, Any]) -> list[Statistic]:
    """The scalar statistics of one question that apply to its type, null ones included."""
    readings = entry.get("interpretation") or {}

    def row(key: str, value: Any, ci: Sequence[float] | None = None, label_key: str | None = None) -> Statistic:
        return Statistic(key, LABELS[label_key or key], value, ci, readings.get(key))

    rows = [row(key, entry.get(key)) for key in ("n_items", "n_ratings", "excluded_items", "n_annotators")]
    own = entry.get("own_statistics")
    if own is not None:  # a kind's own agreement statistic names its rows (``QuestionKind.agreement_statistic``)
        return rows + [Statistic(s["key"], s["label"], s["value"], s.get("ci95"), s.get("interpretation")) for s in own]
    kind = entry.get("type")
    if kind == "spans":
        rows.append(row("percent_agreement", entry.get("percent_agreement"), label_key="span_label_agreement"))
        return rows
    rows.append(row("percent_agreement", entry.get("percent_agreement")))
    alphas = entry.get("krippendorff_alpha") or {}
    if kind == "categorical":
        fleiss = entry.get("fleiss_kappa") or {}
        rows.append(row("fleiss_kappa", fleiss.get("value"), fleiss.get("ci95")))
        rows.append(row("randolph_kappa", entry.get("randolph_kappa")))
        rows.append(row("cohen_kappa", entry.get("cohen_kappa")))
        rows.append(row("krippendorff_alpha.nominal", alphas.get("nominal")))
        return rows
    icc = entry.get("icc") or {}
    rows.append(row("icc1", icc.get("icc1"), icc.get("icc1_ci95")))
    rows.append(row("icc1k", icc.get("icc1k"), icc.get("icc1k_ci95")))
    for key in ("F", "df1", "df2", "p", "k"):
        rows.append(row(f"icc.{key}", icc.get(key)))
    twoway = icc.get("twoway") or {}
    for key in ("icc2", "icc2k", "icc3", "icc3k"):
        if key in twoway:
            rows.append(Statistic(key, LABELS[key], twoway[key], twoway.get(f"{key}_ci95"), cicchetti(twoway[key])))
    for level in ("nominal", "ordinal", "interval"):
        rows.append(row(f"krippendorff_alpha.{level}", alphas.get(level)))
    return rows


def _low(ci: Sequence[float] | None) -> float | None:
    return ci[0] if ci else None


def _high(ci: Sequence[float] | None) -> float | None:
    return ci[1] if ci else None


def _rows(report: Mapping[str, Any]) -> dict[str, list[Sequence[Any]]]:
    tables: dict[str, list[Sequence[Any]]] = {name: [] for name in COLUMNS}
    for note in report.get("notes", []):
        tables["notes.csv"].append(("", note))
    for key, entry in report.get("questions", {}).items():
        for stat in statistic_rows(entry):
            tables["statistics.csv"].append(
                (key, entry["type"], stat.key, stat.value, _low(stat.ci95), _high(stat.ci95), stat.interpretation)
            )
        _accuracy_rows(tables, key, entry.get("accuracy"))
        for bins, kappas in (entry.get("binned_kappa") or {}).items():
            tables["binned_kappa.csv"].append(
                (key, bins, kappas.get("fleiss"), kappas.get("randolph"), kappas.get("percent_agreement"))
            )
        alignment, judge = entry.get("alignment"), entry.get("judge") or {}
        if alignment:
            ci = alignment.get("ci95")
            tables["alignment.csv"].append((
                key, judge.get("evaluator"), judge.get("prompt_version"), judge.get("dimension"),
                alignment.get("pearson_r"), _low(ci), _high(ci), alignment.get("p"), alignment.get("spearman_rho"),
                alignment.get("n"),
            ))
        scores = entry.get("judge_scores") or {}
        for unit, human, ratings, score in zip(
            scores.get("units", []), scores.get("human_mean", []), scores.get("ratings", []), scores.get("judge", []),
            strict=True,
        ):
            tables["judge_scores.csv"].append((key, unit, human, ratings, score))
        for rater, means in (("humans", entry.get("by_condition")), ("judge", entry.get("judge_by_condition"))):
            for condition, summary in (means or {}).items():
                ci = summary.get("ci95")
                tables["by_condition.csv"].append(
                    (key, condition, rater, summary.get("mean"), _low(ci), _high(ci), summary.get("n"))
                )
        _span_rows(tables, key, entry.get("spans"))
        for note in entry.get("notes", []):
            tables["notes.csv"].append((key, note))
    for key, entry in ((report.get("annotators") or {}).get("questions") or {}).items():
        for annotator, figures in entry["annotators"].items():
            others, gold = figures["others"], figures["gold"]
            tables["annotators.csv"].append((
                key, entry["type"], annotator, figures["answers"], others["items"], others["pairs"],
                others["agreement"], others.get("kappa"), others.get("mean_abs_difference"), gold["items"],
                gold["agreement"], gold.get("kappa"), gold.get("mean_abs_difference"), figures.get("competence"),
            ))
    return tables


def _accuracy_rows(tables: dict[str, list[Sequence[Any]]], key: str, accuracy: Mapping[str, Any] | None) -> None:
    if not accuracy:
        return
    shared = (accuracy.get("chance"), accuracy.get("cluster"), accuracy.get("n_clusters"), accuracy.get("resamples"))
    overall = accuracy["overall"]
    tables["accuracy.csv"].append(
        (key, "overall", overall["value"], _low(overall["ci95"]), _high(overall["ci95"]), accuracy.get("n_ratings"),
         *shared)
    )
    for label, entry in accuracy.get("by_class", {}).items():
        tables["accuracy.csv"].append(
            (key, label, entry["value"], _low(entry["ci95"]), _high(entry["ci95"]), entry["n"], *shared)
        )
    confusion = accuracy.get("confusion") or {}
    labels = confusion.get("labels", [])
    for truth, counts in zip(labels, confusion.get("matrix", []), strict=False):
        for answer, count in zip(labels, counts, strict=True):
            tables["confusion.csv"].append((key, truth, answer, count))


def _span_rows(tables: dict[str, list[Sequence[Any]]], key: str, spans: Mapping[str, Any] | None) -> None:
    if not spans:
        return
    attributes = spans.get("attributes") or {}
    tables["spans.csv"].append((
        key, spans.get("n_spans"), spans.get("n_pairs"), spans.get("overlap_share"), spans.get("label_agreement"),
        spans.get("disagreement_share"), attributes.get("f1"), attributes.get("partial_match"),
        attributes.get("exact_match"), attributes.get("n_pairs"), spans.get("min_iou"),
        *(_unitizing(spans, coordinate) for coordinate in ("turns", "seconds")),
    ))
    for name, counts in (spans.get("per_attribute") or {}).items():
        tables["span_attributes.csv"].append(
            (key, name, counts.get("spans"), counts.get("pairs_both"), counts.get("f1"))
        )


def _unitizing(spans: Mapping[str, Any], coordinate: str) -> float | None:
    """The spans' unitizing alpha on ``coordinate`` (turns, seconds); None when it was not computed."""
    return ((spans.get("unitizing_alpha") or {}).get(coordinate) or {}).get("alpha")


def _agentsense_rows(section: Mapping[str, Any]) -> dict[str, list[Sequence[Any]]]:
    """The goal comparison, the annotators' agreement on goals and the probes' accuracies, as rows."""
    tables: dict[str, list[Sequence[Any]]] = {name: [] for name in AGENTSENSE_COLUMNS}
    goals = section.get("goals")
    if goals:
        tables["agentsense_goals.csv"] = [
            (
                row["perspective"], row["respondent_kind"], row["respondent"], row["prompt_version"], row["accuracy"],
                row["n"], row["goals"], row["kappa"], row["yes_share"], row["human_yes_share"],
            )
            for row in goals["perspectives"]
        ]
        annotators = goals["annotators"]
        fleiss = annotators["fleiss_kappa"]
        tables["agentsense_annotators.csv"] = [
            ("goals", goals["goals"], None, None),
            ("goals_with_majority", goals["goals_with_majority"], None, None),
            ("ties", goals["ties"], None, None),
            ("ratings", annotators["ratings"], None, None),
            ("fleiss_kappa", fleiss["value"], _low(fleiss["ci95"]), _high(fleiss["ci95"])),
            ("percent_agreement", annotators["percent_agreement"], None, None),
        ]
    probes = section.get("probes")
    if probes:
        humans = probes["humans"]
        tables["agentsense_probes.csv"] = [("humans", "annotators", humans["n"], humans["correct"], humans["accuracy"])]
        tables["agentsense_probes.csv"] += [
            (row["measure"], row["model"], row["n"], row["correct"], row["accuracy"]) for row in probes["agents"]
        ]
    return tables


def report_tables(report: Mapping[str, Any]) -> dict[str, str]:
    """The report's CSV tables by file name (see the module docstring for the columns)."""
    rows = _rows(report)
    tables = {name: csv_text(columns, rows[name]) for name, columns in COLUMNS.items()}
    if report.get("agentsense"):
        agentsense = _agentsense_rows(report["agentsense"])
        tables.update({name: csv_text(columns, agentsense[name]) for name, columns in AGENTSENSE_COLUMNS.items()})
    return tables
