"""The per-question agreement report, computed from one long-format table.

Input columns: `item`, `annotator`, `question`, `value`, and optionally `cluster` (e.g. the
scenario), `truth` (the known answer, e.g. the injected barrier), `condition` (e.g. the barrier
type) and `judge` (the automated judge's score for that item and question). Every question gets
the statistics that fit its type; every key is present in every question, null when it does not
apply or is undefined, with the reason in the question's `notes`. The shape is documented in
docs/report-schema.md.
"""

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from . import coded_question, interpretation
from .alignment import MEANS_METHOD, judge_alignment, means_by_condition
from .alpha import METHOD as ALPHA_METHOD
from .alpha import krippendorff_alpha_from_counts
from .bootstrap import DEFAULT_RESAMPLES
from .coded import CodedRatings, from_frame
from .icc import crossed_matrix, icc_oneway_from_codes, icc_twoway_from_matrix
from .kappa import (
    AGREEMENT_METHOD,
    BINNED_METHOD,
    COHEN_METHOD,
    RANDOLPH_METHOD,
    binned_kappas_from_codes,
    cohen_kappa,
    fleiss_kappa_from_counts,
    percent_agreement_from_counts,
    randolph_kappa_from_counts,
)
from .plain import plain_report
from .spans import DEFAULT_MIN_IOU, span_agreement
from .tables import (
    ANNOTATOR,
    ITEM,
    JUDGE,
    QUESTION,
    VALUE,
    count_matrix,
    exclusion_note,
)
from .unitizing import study_unitizing_alpha

DEFAULT_SEED = 0
DEFAULT_BINS = (3, 4, 5)
NUMERIC, CATEGORICAL, SPANS = "numeric", "categorical", "spans"
CLUSTERS_IGNORED = {
    "icc": "the 95% CIs assume independent items; they do not account for the clusters",
    "by_condition": "the t intervals assume independent items; they do not account for the clusters",
    "judge_by_condition": "the t intervals assume independent items; they do not account for the clusters",
    "alignment": "the Fisher-z interval assumes independent items; it does not account for the clusters",
}
CLUSTERS_METHOD = (
    "items of one cluster (column cluster) are not independent: the bootstrap intervals of accuracy "
    "and Fleiss' kappa resample whole clusters; the F-based ICC intervals, the t intervals of the "
    "means per condition and the Fisher-z interval of the alignment treat items as independent and "
    "do not account for the clusters, so they may be too narrow"
)
BLANK_QUESTION_NOTE = "answers: every value of this question is blank; there is nothing to compute"


def _require(table: pd.DataFrame, *columns: str) -> None:
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise ValueError(f"the ratings table has no column {', '.join(missing)}")


def _blank(kind: str) -> dict[str, Any]:
    return {
        "type": kind,
        "n_items": 0,
        "n_ratings": 0,
        "excluded_items": 0,
        "n_annotators": 0,
        "percent_agreement": None,
        "krippendorff_alpha": None,
        "icc": None,
        "fleiss_kappa": None,
        "randolph_kappa": None,
        "cohen_kappa": None,
        "binned_kappa": None,
        "accuracy": None,
        "by_condition": None,
        "judge_by_condition": None,
        "alignment": None,
        "spans": None,
        "interpretation": {},
        "methods": {},
        "notes": [],
    }


def _number(value: float) -> str:
    """A number in a note: every digit that matters (1000000001, not 1e+09), none that does not."""
    return f"{value:.15g}"


def _note(report: dict[str, Any], key: str, notes: Sequence[str]) -> None:
    for note in notes:
        text = f"{key}: {note}"
        if text not in report["notes"]:
            report["notes"].append(text)


def question_report(
    table: pd.DataFrame | CodedRatings,
    *,
    kind: str | None = None,
    categories: Sequence[Any] | None = None,
    scale: tuple[float, float] | None = None,
    bins: Sequence[int] = DEFAULT_BINS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Every statistic that fits one question's long table (columns as in the module docstring).

    `kind` is "numeric" or "categorical" (default: numeric when every value is a number).
    `categories` are the options annotators had (fixes q for Randolph's kappa and the category
    order); `scale` the (low, high) of a numeric scale for binning (default: the observed range).
    The table may come coded already (`coded.CodedRatings`); else it is coded once here.
    """
    if isinstance(table, pd.DataFrame):
        _require(table, ITEM, VALUE)
        table = from_frame(table)
    rows = len(table)
    table = table.take((table.item >= 0) & (table.value >= 0))
    numeric = bool(np.isfinite(table.number).all()) or not len(table)
    if kind is None:
        kind = NUMERIC if numeric else CATEGORICAL
    if kind == NUMERIC and not numeric:
        raise ValueError("a numeric question needs numeric values")
    report = _blank(kind)
    if rows and not len(table):
        report["notes"].append(BLANK_QUESTION_NOTE)
    usable, excluded = coded_question.usable(table)
    kept = table.take(usable)
    report["n_items"] = len(coded_question.distinct(kept.item, len(kept.labels[ITEM])))
    report["n_ratings"] = len(kept)
    report["excluded_items"] = excluded
    if kept.annotator is not None:
        named = kept.annotator[kept.annotator >= 0]
        report["n_annotators"] = len(coded_question.distinct(named, len(kept.labels[ANNOTATOR])))
    _note(report, "items", exclusion_note(excluded))

    items, n_items = coded_question.first_appearance(kept.item)
    codes, labels = coded_question.category_codes(kept, kind == NUMERIC, categories if kind == CATEGORICAL else None)
    counts = count_matrix(items, codes, n_items, len(labels))
    report["percent_agreement"] = percent_agreement_from_counts(counts)
    report["methods"]["percent_agreement"] = AGREEMENT_METHOD + "; exact equality of answers"
    if report["percent_agreement"] is None:
        _note(report, "percent_agreement", ["no item has two or more ratings"])

    if kind == CATEGORICAL:
        _categorical(report, kept, items, n_items, codes, counts, labels, categories, resamples, seed)
    else:
        _numeric(report, table, kept, counts, labels, items, n_items, scale, bins)

    if table.truth is not None and (table.truth >= 0).any():
        accuracy = coded_question.accuracy(
            table, kind == NUMERIC, categories if kind == CATEGORICAL else None, resamples, seed
        )
        report["accuracy"] = accuracy.to_dict()
        _note(report, "accuracy", accuracy.notes)
    else:
        _note(report, "accuracy", ["no truth given"])
    if coded_question.has_clusters(table):
        report["methods"]["clusters"] = CLUSTERS_METHOD
    _note(report, "spans", ["applies to span questions"])
    _interpret(report)
    return plain_report(report)


def _categorical(
    report: dict[str, Any],
    kept: CodedRatings,
    items: np.ndarray,
    n_items: int,
    codes: np.ndarray,
    counts: np.ndarray,
    labels: list[Any],
    categories: Sequence[Any] | None,
    resamples: int,
    seed: int,
) -> None:
    clusters = coded_question.item_clusters(kept, items, n_items) if coded_question.has_clusters(kept) else None
    fleiss = fleiss_kappa_from_counts(counts, resamples=resamples, seed=seed, clusters=clusters)
    report["fleiss_kappa"] = fleiss.to_dict() if fleiss.value is not None else None
    _note(report, "fleiss_kappa", fleiss.notes)
    randolph = randolph_kappa_from_counts(counts, len(labels))
    report["randolph_kappa"] = randolph.value
    report["methods"]["randolph_kappa"] = RANDOLPH_METHOD
    _note(report, "randolph_kappa", randolph.notes)
    if categories is None and randolph.value is not None:
        _note(report, "randolph_kappa", [f"q = {len(labels)}, the number of categories observed"])
    pairs = coded_question.cohen_table(kept, codes)
    if pairs is None:
        cohen = cohen_kappa(pd.DataFrame({ITEM: [], VALUE: []}))
    else:
        cohen = cohen_kappa(pairs, categories=range(len(labels)))
    report["cohen_kappa"] = cohen.value
    report["methods"]["cohen_kappa"] = COHEN_METHOD
    _note(report, "cohen_kappa", cohen.notes)
    nominal, reason = krippendorff_alpha_from_counts(counts, level="nominal")
    report["krippendorff_alpha"] = {"nominal": nominal}
    report["methods"]["krippendorff_alpha"] = ALPHA_METHOD
    _note(report, "krippendorff_alpha", [reason] if reason else [])
    for key in ("icc", "binned_kappa", "by_condition", "judge_by_condition", "alignment"):
        _note(report, key, ["applies to numeric questions"])


def _numeric(
    report: dict[str, Any],
    table: CodedRatings,
    kept: CodedRatings,
    counts: np.ndarray,
    labels: list[Any],
    items: np.ndarray,
    n_items: int,
    scale: tuple[float, float] | None,
    bins: Sequence[int],
) -> None:
    values = kept.number
    icc = icc_oneway_from_codes(values, items, n_items)
    report["icc"] = icc.to_dict()
    _note(report, "icc", icc.notes)
    n_annotators = report["n_annotators"]
    crossed = kept.annotator is not None and len(kept) == n_items * n_annotators
    matrix = crossed_matrix(coded_question.crossed_table(kept)) if crossed else None
    if matrix is not None:
        twoway = icc_twoway_from_matrix(matrix)
        report["icc"]["twoway"] = twoway.to_dict()
        _note(report, "icc.twoway", twoway.notes)
    else:
        report["icc"]["twoway"] = None
        if not len(kept):
            _note(report, "icc.twoway", ["no item has two or more ratings"])
        elif kept.annotator is None:
            _note(report, "icc.twoway", ["needs to know which annotator gave each rating"])
        else:
            _note(report, "icc.twoway", ["the design is not fully crossed (not every annotator rated every item)"])

    alphas: dict[str, float | None] = {}
    for level in ("nominal", "ordinal", "interval"):
        alphas[level], reason = krippendorff_alpha_from_counts(counts, level=level, domain=labels)
        _note(report, f"krippendorff_alpha.{level}", [reason] if reason else [])
    report["krippendorff_alpha"] = alphas
    report["methods"]["krippendorff_alpha"] = ALPHA_METHOD

    if not len(values):
        _note(report, "binned_kappa", ["no item has two or more ratings"])
    else:
        low, high = scale if scale is not None else (float(values.min()), float(values.max()))
        if high > low:
            if scale is None:
                observed = f"bins span the observed range [{_number(low)}, {_number(high)}]; pass the scale to fix it"
                _note(report, "binned_kappa", [observed])
            binned, binned_notes = binned_kappas_from_codes(values, items, n_items, bins=bins, low=low, high=high)
            report["binned_kappa"] = binned
            for note in binned_notes:
                key, _, reason = note.partition(": ")
                _note(report, f"binned_kappa.{key}", [reason])
            report["methods"]["binned_kappa"] = BINNED_METHOD
        elif scale is None:
            same = f"every rating is {_number(low)}, so there is no range to cut into bins; pass the scale"
            _note(report, "binned_kappa", [same])
        else:
            _note(report, "binned_kappa", ["the scale has no width"])

    for key in ("fleiss_kappa", "randolph_kappa", "cohen_kappa"):
        _note(report, key, ["applies to categorical questions; see binned_kappa"])

    # Means and correlations use every rated item: one rating is still a score.
    judged = table.judge is not None and bool(np.isfinite(table.judge).any())
    _means_by_condition(report, table, judged)
    if judged:
        alignment = judge_alignment(coded_question.condition_table(table))
        report["alignment"] = alignment.to_dict()
        _note(report, "alignment", alignment.notes)
    else:
        _note(report, "alignment", ["no judge scores"])

    # Only accuracy's and Fleiss' bootstraps resample clusters; say so next to every other interval.
    if coded_question.has_clusters(table):
        for key, reason in CLUSTERS_IGNORED.items():
            if report[key] is not None:
                _note(report, key, [reason])


def _means_by_condition(report: dict[str, Any], table: CodedRatings, judged: bool) -> None:
    """`by_condition` and `judge_by_condition`, each null with a note when it cannot be computed."""
    if not judged:
        _note(report, "judge_by_condition", ["no judge scores"])
    if table.condition is None or not (table.condition >= 0).any():
        reason = "no condition given" if table.condition is None else "no rated item has a condition"
        _note(report, "by_condition", [reason])
        if judged:
            _note(report, "judge_by_condition", [reason])
        return
    coded_means = means_by_condition(coded_question.condition_table(table), judge=JUDGE if judged else None)
    means = coded_question.condition_names(table, coded_means)
    report["methods"]["by_condition"] = MEANS_METHOD
    for key, side in (("by_condition", "human"), ("judge_by_condition", "judge")):
        if key == "judge_by_condition" and not judged:
            continue
        report[key] = means[side] or None
        if not means[side]:
            _note(report, key, ["no rated item has a condition"])
        for condition, summary in means[side].items():
            if summary["n"] == 0:
                _note(report, f"{key}.{condition}", ["no item of this condition has a judge score"])
            elif summary["ci95"] is None:
                _note(report, f"{key}.{condition}.ci95", ["one item: a t interval needs two or more"])


def _interpret(report: dict[str, Any]) -> None:
    labels = report["interpretation"]
    icc = report["icc"] or {}
    for key in ("icc1", "icc1k"):
        labels[key] = interpretation.cicchetti(icc.get(key))
    if report["fleiss_kappa"]:
        labels["fleiss_kappa"] = interpretation.landis_koch(report["fleiss_kappa"]["value"])
    for key in ("randolph_kappa", "cohen_kappa"):
        labels[key] = interpretation.landis_koch(report[key])
    for level, value in (report["krippendorff_alpha"] or {}).items():
        labels[f"krippendorff_alpha.{level}"] = interpretation.landis_koch(value)
    report["interpretation"] = {key: label for key, label in labels.items() if label is not None}
    report["methods"]["interpretation"] = (
        f"kappa and alpha: {interpretation.LANDIS_KOCH}; ICC: {interpretation.CICCHETTI}"
    )


def span_question_report(
    spans: pd.DataFrame,
    *,
    min_iou: float = DEFAULT_MIN_IOU,
    end_inclusive: bool = False,
    coders: pd.DataFrame | None = None,
    continua: Mapping[Any, Mapping[str, float | None]] | None = None,
) -> dict[str, Any]:
    """The report of a span question (columns item, annotator, start, end, label, attributes, and
    optionally start_s, end_s: seconds into the item's recording).

    `continua` gives each item's continuum length ({item: {"turns": ..., "seconds": ...}}); with it
    the spans section also holds Krippendorff's unitizing alpha on turns and, for timed spans, on
    seconds (`unitizing_alpha`)."""
    report = _blank(SPANS)
    report["methods"]["percent_agreement"] = "label agreement among overlapping span pairs"
    agreement = span_agreement(spans, min_iou=min_iou, end_inclusive=end_inclusive, coders=coders)
    report["n_items"] = agreement.n_items
    report["n_ratings"] = agreement.n_spans
    report["excluded_items"] = agreement.excluded_items
    report["n_annotators"] = int(spans[ANNOTATOR].nunique()) if len(spans) else 0
    report["spans"] = agreement.to_dict()
    report["percent_agreement"] = agreement.label_agreement
    _note(report, "spans", agreement.notes)
    if report["percent_agreement"] is None:
        _note(report, "percent_agreement", ["label agreement is undefined (see the spans notes)"])
    for key in (
        "krippendorff_alpha", "icc", "fleiss_kappa", "randolph_kappa", "cohen_kappa", "binned_kappa", "accuracy",
        "by_condition", "judge_by_condition", "alignment",
    ):
        _note(report, key, ["does not apply to span questions"])
    _unitizing_alphas(report, spans, continua, coders, end_inclusive)  # its notes after the older ones
    return plain_report(report)


# Positions are rounded to a hundredth of a turn and to ten milliseconds.
UNITIZING_RESOLUTION = {"turns": 0.01, "seconds": 0.01}


def _unitizing_alphas(
    report: dict[str, Any],
    spans: pd.DataFrame,
    continua: Mapping[Any, Mapping[str, float | None]] | None,
    coders: pd.DataFrame | None,
    end_inclusive: bool,
) -> None:
    """alpha_U of the spans on turns and on seconds into `report["spans"]`; a null says why in the notes."""
    out: dict[str, Any] = {"turns": None}  # "seconds" only when some span has times
    report["spans"]["unitizing_alpha"] = out
    key = "spans.unitizing_alpha"
    if continua is None:
        _note(report, key, ["needs each item's length in turns or seconds, which only a study's report has"])
        return
    if spans.empty:
        _note(report, key, ["no spans"])
        return
    on_turns = spans.assign(end=spans["end"] + 1) if end_inclusive else spans
    columns = {"turns": ("start", "end"), "seconds": ("start_s", "end_s")}
    for coordinate, (start, end) in columns.items():
        if start not in spans.columns or spans[start].isna().all():
            continue  # spans on the text alone have no alpha on seconds (no key, so no null to explain)
        lengths = {item: sizes.get(coordinate) for item, sizes in continua.items()}
        result = study_unitizing_alpha(
            on_turns, lengths, coders=coders, start=start, end=end,
            resolution=UNITIZING_RESOLUTION[coordinate], coordinate=coordinate,
        )
        out[coordinate] = result.to_dict()
        if result.alpha is None or result.observed is None:
            _note(report, f"{key}.{coordinate}", result.notes or ["undefined"])
        undefined = [label for label, cell in result.by_category.items() if cell["alpha"] is None]
        if undefined:
            _note(report, f"{key}.{coordinate}.by_label", [f"undefined for {', '.join(undefined)}: no unit fits a gap"])


def agreement_report(
    table: pd.DataFrame | CodedRatings,
    *,
    categorical: Collection[str] = (),
    categories: Mapping[str, Sequence[Any]] | None = None,
    scales: Mapping[str, tuple[float, float]] | None = None,
    spans: pd.DataFrame | None = None,
    min_iou: float = DEFAULT_MIN_IOU,
    end_inclusive: bool = False,
    bins: Sequence[int] = DEFAULT_BINS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    blank_questions: Collection[str] = (),
) -> dict[str, Any]:
    """{"questions": {question: question_report}} for a long table with a `question` column.

    Questions whose values are all numbers are numeric unless listed in `categorical`. Span
    questions come from `spans` (same columns as `span_question_report`, plus `question`).
    `blank_questions` were asked but every answer was blank (so the table has no row of them):
    each is reported with no statistic and a note saying why, rather than left out in silence.
    """
    if isinstance(table, pd.DataFrame):
        _require(table, ITEM, QUESTION, VALUE)
        table = from_frame(table)
    categories = categories or {}
    scales = scales or {}
    questions: dict[str, Any] = {}
    names = [str(name) for name in table.labels[QUESTION]]
    order = np.argsort(table.question, kind="stable")
    starts = np.searchsorted(table.question[order], np.arange(len(names) + 1))
    groups = {names[code]: order[starts[code] : starts[code + 1]] for code in range(len(names))}
    groups = {name: np.sort(rows) for name, rows in groups.items() if len(rows)}
    raw = {str(label): label for label in table.labels[QUESTION]}
    try:
        ordered = sorted(groups, key=lambda name: raw[name])
    except TypeError:
        ordered = sorted(groups)
    unanswered = sorted(set(blank_questions) - set(groups))
    if unanswered:
        ordered = sorted([*ordered, *unanswered])
    for name in ordered:
        rows = table.take(groups.get(name, np.zeros(0, dtype=np.intp)))
        kind = CATEGORICAL if name in categorical else None
        questions[name] = question_report(
            rows,
            kind=kind,
            categories=categories.get(name),
            scale=scales.get(name),
            bins=bins,
            resamples=resamples,
            seed=seed,
        )
        if not len(rows):
            questions[name]["notes"].insert(0, BLANK_QUESTION_NOTE)
    if spans is not None and len(spans):
        for question, rows in spans.groupby(QUESTION, sort=True):
            questions[str(question)] = span_question_report(rows, min_iou=min_iou, end_inclusive=end_inclusive)
    return {"questions": questions}
