"""The ProMediate report (spec §1.7, PM-22 to PM-27): the paper's three tables, the ME–MI correlation, the
series behind the figures, the human validation and the method notes, as one plain dict.

Each conversation's metrics come from ``benchmark.stats.promediate.episode_metrics`` under one preset of
metric options (``upstream``, the default, or ``paper``). CC, TLE, ME, frequency and success rates are
fractions there and percentages here (× 100 per conversation, so means and intervals are in % too); RL
is in turns, and in seconds where the turns carry real times; MI on the 1–5 scale.

**Table 1** (PM-22): one cell per metric × conflict mode × mediator condition, the mean over conversations
with n, SE and a 95% percentile CI from a bootstrap that resamples scenarios (``stats.promediate_tables.table_cell``
over ``stats.bootstrap``). A conversation whose value is undefined (CC with under 10 points, RL with no
drop event, ME with no scorable intervention, ...) is left out of its cell and counted in ``excluded``. A
mediator metric is not defined without a mediator: those cells are ``defined: false`` ("-" in the paper).
A mode × condition with no conversation is still a column, its cells ``missing``.
**Table 2** (PM-23): the Social mediator's metrics per mediator model (the scenarios the filters select).
**Table 3** (PM-24): two-factor EFA (varimax) over the conversations with all five metrics defined.
**ME–MI** (PM-25): Spearman's ρ over interventions with both an ME value and an MI score.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
from django.db.models import QuerySet

from ...models import Episode
from ...stats import promediate as stats
from ...stats import promediate_tables
from ...stats.bootstrap import DEFAULT_RESAMPLES
from ...stats.factors import factor_analysis
from ...stats.plain import plain_report
from .traces import NO_MEDIATOR, EpisodeRecord, ProMediateFilters, load_records

SCHEMA_VERSION = 1
# (key, label, unit, scale): the rows of Table 1 in the paper's order, then the code-only measures.
METRICS = (
    ("consensus_change", "CC", "%", 100.0),
    ("topic_level_efficiency", "TLE", "%", 100.0),
    ("response_latency", "RL", "turns", 1.0),
    ("response_latency_seconds", "RL", "s", 1.0),
    ("mediator_effectiveness", "ME", "%", 100.0),
    ("mediator_intelligence", "MI", "1–5", 1.0),
    ("intervention_frequency", "frequency", "%", 100.0),
    ("success_rate", "success", "%", 100.0),
    ("success_rate_max", "success (max)", "%", 100.0),
)
METRIC_KEYS = tuple(key for key, *_ in METRICS)
MEDIATOR_METRICS = frozenset(
    {
        "response_latency",
        "response_latency_seconds",
        "mediator_effectiveness",
        "mediator_intelligence",
        "intervention_frequency",
    }
)
FACTOR_METRICS = (
    "consensus_change",
    "topic_level_efficiency",
    "mediator_effectiveness",
    "response_latency",
    "mediator_intelligence",
)
# The paper's column order (Easy, Easy, Medium, Hard), then the modes it did not report.
MODE_ORDER = ("accommodating", "avoiding", "general", "competing", "compromising", "collaborating")
CONDITION_ORDER = (NO_MEDIATOR, "generic", "social")
CONDITION_LABELS = {
    NO_MEDIATOR: "NoAgent",
    "generic": "Generic",
    "social": "Social",
    "innerthought": "InnerThought",
    "human": "Human mediator",  # a participant mediating in a chat (chat.negotiation)
}
SOCIAL = "social"
# Gives the human-validation numbers (PM-27) of the studies over some episodes, or None when there are none.
HumanValidation = Callable[[QuerySet[Episode]], Mapping[str, Any] | None]
_HUMAN_VALIDATION: list[HumanValidation] = []


def register_human_validation(source: HumanValidation) -> None:
    """Let an app supply the human-validation section (the annotator app, from ``AppConfig.ready``): the
    benchmark app cannot read the annotator app's studies itself."""
    if source not in _HUMAN_VALIDATION:
        _HUMAN_VALIDATION.append(source)


class ProMediateProblem(ValueError):
    """Filters or options that cannot make a report (an unknown preset, say)."""


def _ordered(values: set[str], order: Sequence[str]) -> list[str]:
    return [value for value in order if value in values] + sorted(values - set(order))


def options_for(preset: str) -> stats.MetricOptions:
    try:
        return stats.PRESETS[preset]
    except KeyError:
        raise ProMediateProblem(f"unknown metric preset {preset!r}; choose one of {', '.join(stats.PRESETS)}") from None


def _scaled(value: stats.Value, scale: float) -> float | None:
    if value.value is None:
        return None
    return value.value if math.isinf(value.value) else value.value * scale


def episode_frame(records: Sequence[EpisodeRecord], options: stats.MetricOptions) -> tuple[pd.DataFrame, dict]:
    """One row per conversation: its labels and every metric (scaled, None when undefined, with the note),
    and the per-intervention ME and MI values for PM-25."""
    rows, interventions = [], {"me": [], "mi": [], "episodes": []}
    for record in records:
        values = stats.episode_metrics(record.trace, options)
        row: dict[str, Any] = {
            "episode": record.episode_id,
            "scenario": record.scenario,
            "mode": record.mode,
            "condition": record.condition,
            "mediator_model": record.mediator_model,
            "run_id": record.run_id,
            "judge": record.judge,
            "prompt_version": record.prompt_version,
            "utterances": len(record.trace.utterances),
        }
        for key, _, _, scale in METRICS:
            row[key] = _scaled(values[key], scale)
            row[f"{key}_note"] = values[key].note
        rows.append(row)
        me_parts, mi_parts = values["mediator_effectiveness"].parts, values["mediator_intelligence"].parts
        if len(me_parts) == len(mi_parts):
            interventions["me"] += [None if part is None else part * 100.0 for part in me_parts]
            interventions["mi"] += list(mi_parts)
            interventions["episodes"] += [record.episode_id] * len(me_parts)
    columns = [
        "episode",
        "scenario",
        "mode",
        "condition",
        "mediator_model",
        "run_id",
        "judge",
        "prompt_version",
        "utterances",
        *(name for key in METRIC_KEYS for name in (key, f"{key}_note")),
    ]
    return pd.DataFrame(rows, columns=columns), interventions


def _cell(frame: pd.DataFrame, key: str, *, resamples: int, seed: int) -> dict[str, Any]:
    values = [
        None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        for value in frame[key].tolist()
    ]
    infinite = sum(1 for value in values if value is not None and math.isinf(value))
    cell = promediate_tables.table_cell(values, frame["scenario"].tolist(), resamples=resamples, seed=seed)
    notes = sorted({note for note, value in zip(frame[f"{key}_note"], values, strict=True) if note and value is None})
    if infinite:
        notes.append(f"{infinite} conversation(s) with a drop the mediator never answered (RL = ∞) left out")
    return {**cell, "defined": True, "missing": False, "conversations": len(values), "notes": notes}


def _empty(note: str, *, defined: bool) -> dict[str, Any]:
    """A cell with no value: no conversation ran in it (``defined``), or its metric needs a mediator (not)."""
    return {
        "mean": None, "n": 0, "se": None, "ci95": None, "clusters": 0, "excluded": 0, "defined": defined,
        "missing": defined, "conversations": 0, "notes": [note],
    }


def table_one(frame: pd.DataFrame, *, resamples: int, seed: int) -> dict[str, Any]:
    """Metric -> mode -> condition -> cell, with the modes and conditions in column order."""
    modes = _ordered(set(frame["mode"]), MODE_ORDER)
    conditions = _ordered(set(frame["condition"]) | set(CONDITION_ORDER), CONDITION_ORDER)
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for key in METRIC_KEYS:
        cells[key] = {}
        for mode in modes:
            cells[key][mode] = {}
            for condition in conditions:
                part = frame[(frame["mode"] == mode) & (frame["condition"] == condition)]
                if condition == NO_MEDIATOR and key in MEDIATOR_METRICS:
                    cells[key][mode][condition] = _empty("not defined without a mediator", defined=False)
                elif part.empty:
                    cells[key][mode][condition] = _empty("no conversation in this mode and condition", defined=True)
                else:
                    cells[key][mode][condition] = _cell(part, key, resamples=resamples, seed=seed)
    return {"modes": modes, "conditions": conditions, "cells": cells}


def table_two(frame: pd.DataFrame, *, resamples: int, seed: int) -> dict[str, Any]:
    """Metric -> mediator model -> cell, for the Social mediator's conversations."""
    social = frame[frame["condition"] == SOCIAL]
    models = sorted(set(social["mediator_model"]))
    cells = {
        key: {
            model: _cell(social[social["mediator_model"] == model], key, resamples=resamples, seed=seed)
            for model in models
        }
        for key in METRIC_KEYS
    }
    return {"models": models, "scenarios": sorted(set(social["scenario"])), "cells": cells}


def table_three(frame: pd.DataFrame) -> dict[str, Any]:
    """The EFA of the five metrics over conversations (those with a mediator have all five), or why not."""
    result = factor_analysis(frame[list(FACTOR_METRICS)].astype(float), n_factors=2, rotation="varimax", salient=0.40)
    table = {
        "metrics": list(result.metrics),
        "loadings": result.loadings,
        "salient": result.salient,
        "uniquenesses": result.uniquenesses,
        "method": result.method,
        "n": result.n,
        "excluded": result.excluded,
        "notes": list(result.notes),
        "note": "",
    }
    if result.loadings is None:
        table["note"] = "not computed: " + "; ".join(result.notes)
    return table


def _trajectories(records: Sequence[EpisodeRecord], options: stats.MetricOptions, chosen: int | None) -> dict:
    """The mean overall consensus per point, per mode × condition (over the conversations long enough to reach
    the point), and one conversation's per-topic series with its mediator turns (Fig. 3)."""
    sums: dict[tuple[str, str], list[list[float]]] = defaultdict(list)
    single = None
    pick = next((r for r in records if r.episode_id == chosen), None) if chosen else None
    pick = pick or next((r for r in records if r.mediator_turns), records[0] if records else None)
    for record in records:
        series = stats.episode_series(record.trace, options)
        sums[record.mode, record.condition].append(list(series.overall))
        if record is pick:
            single = {
                "episode": record.episode_id,
                "scenario": record.scenario,
                "mode": record.mode,
                "condition": record.condition,
                "mediator_model": record.mediator_model,
                "topics": {
                    record.topic_titles.get(topic, topic): list(values) for topic, values in series.topics.items()
                },
                "overall": list(series.overall),
                # the utterance k ends at point k + 1: a mediator's utterance is drawn where its effect starts
                "mediator_points": [index + 1 for index in record.mediator_turns],
            }
    means = []
    for (mode, condition), all_series in sums.items():
        length = max(len(series) for series in all_series)
        mean, counts = [], []
        for point in range(length):
            reached = [series[point] for series in all_series if point < len(series)]
            mean.append(sum(reached) / len(reached))
            counts.append(len(reached))
        means.append(
            {"mode": mode, "condition": condition, "conversations": len(all_series), "mean": mean, "n": counts}
        )
    means.sort(key=lambda entry: (_rank(entry["mode"], MODE_ORDER), _rank(entry["condition"], CONDITION_ORDER)))
    return {"single": single, "means": means}


def _rank(value: str, order: Sequence[str]) -> tuple[int, str]:
    return (order.index(value) if value in order else len(order), value)


def method_notes(options: stats.MetricOptions, preset: str, records: Sequence[EpisodeRecord]) -> dict[str, str]:
    """How each number is computed under these options, naming the differences from the paper (spec §2.1)."""
    notes = {
        "metric_options": f"preset {preset}: "
        + ", ".join(
            f"{name}={getattr(options, name)}" for name in ("pair_score", "me_slope", "rl_no_reply", "mi_all_na")
        )
        + ".",
        "consensus": "pair score = "
        + (
            "the judge's own overall consensus score (upstream), not the mean of the five dimensions the paper names"
            if options.pair_score == "llm_overall"
            else "the mean of the five dimensions (paper)"
        )
        + "; a pair never scored or scored null counts as 0 in its topic's mean; attitudes and pair scores "
        "carry forward between the turns that change them.",
        "consensus_change": "mean overall consensus of the last 10 points minus that of the first 10 (the "
        "starting attitudes are point 0); undefined under 10 points; the windows overlap "
        "under 20 points.",
        "topic_level_efficiency": "per topic, over the points after the turns that mention it (n): the mean of the "
        "last ⌊n/5⌋ minus the mean of the first ⌊n/5⌋, divided by n (0 when n < 5; "
        "upstream windows, the paper gives no formula); mean over topics.",
        "response_latency": "a drop event at each point whose consensus is more than 0.1 below that 10 points "
        "earlier; latency = turns until the mediator next speaks; "
        + (
            "events the mediator never answers are skipped (upstream)"
            if options.rl_no_reply == "skip"
            else "an event never answered counts as ∞ (the paper) and its conversation is left out of the cell"
        )
        + "; in seconds from the turns' times where they were recorded (simulated and chat "
        "episodes; imported runs have none). The paper labels its turn counts 's'.",
        "mediator_effectiveness": (
            "per intervention after the opening, on each topic it addresses (topic tagger J5): "
            + (
                "the end-point change over the 5 points after minus that over the 5 before, each divided by 5 "
                "(upstream; the paper says a fitted trend)"
                if options.me_slope == "endpoint"
                else "the least-squares slope over the 5 points after minus that over the 5 before (paper)"
            )
            + "; interventions within 5 turns of either end, or addressing no topic, are left out."
        ),
        "mediator_intelligence": "the MI judge's four scores (1–5) per intervention, not-applicable dimensions "
        "left out; an intervention with every dimension not applicable "
        + ("scores 0 (upstream)" if options.mi_all_na == "zero" else "is left out (paper)")
        + "; mean over interventions.",
        "intervention_frequency": "mediator turns after the opening divided by all turns (code only).",
        "success_rate": "share of topics whose last 10 points average at least 0.9 (max: whose maximum does; "
        "code only).",
        "aggregation": "each cell: mean over conversations, SE = SD/√n, 95% percentile CI from a bootstrap that "
        "resamples scenarios; undefined conversation values left out and counted (the paper does "
        "not say how it treated them).",
        "factor_analysis": "maximum-likelihood extraction of two factors from the standardised per-conversation "
        "CC, TLE, ME, RL and MI, varimax rotation; |loading| ≥ 0.40 is salient.",
    }
    if any(record.judge == "upstream" for record in records):
        notes["imported_runs"] = (
            "imported upstream runs are scored from their own pair scores with Parley's unordered pair keys; "
            "upstream's own series differ only at points where some pair of a topic had not yet been rescored "
            "since the start (its pair slots follow the case's config order)."
        )
    return notes


def human_validation(episodes: QuerySet[Episode]) -> Mapping[str, Any] | None:
    """The human-validation numbers (PM-27) from the registered source, if an app registered one."""
    for source in _HUMAN_VALIDATION:
        found = source(episodes)
        if found is not None:
            return dict(found)
    return None


def build_promediate(
    filters: ProMediateFilters,
    episodes: QuerySet[Episode],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The report for the filtered episodes, and the per-conversation table behind it."""
    options = options_for(filters.preset)
    records, skipped = load_records(episodes, filters)
    frame, interventions = episode_frame(records, options)
    notes = [f"{count} episode(s) left out: {reason}" for reason, count in sorted(skipped.items())]
    pairs = [
        (me, mi)
        for me, mi in zip(interventions["me"], interventions["mi"], strict=True)
        if me is not None and mi is not None
    ]
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "filters": filters.to_dict(),
        "preset": filters.preset,
        "resamples": resamples,
        "seed": seed,
        "metrics": [{"key": key, "label": label, "unit": unit} for key, label, unit, _ in METRICS],
        "condition_labels": CONDITION_LABELS,
        "counts": {
            "episodes": len(records),
            "scenarios": len(set(frame["scenario"])),
            "left_out": sum(skipped.values()),
            "judges": sorted({f"{r.judge} {r.prompt_version}".strip() for r in records}),
        },
        "table1": table_one(frame, resamples=resamples, seed=seed),
        "table2": table_two(frame, resamples=resamples, seed=seed),
        "table3": table_three(frame[frame["condition"] != NO_MEDIATOR]),
        "me_mi": {
            **promediate_tables.me_mi_spearman(interventions["me"], interventions["mi"]),
            "points": [list(pair) for pair in pairs],
        },
        "trajectories": _trajectories(records, options, filters.episode),
        "human": human_validation(filters.apply(episodes)),
        "methods": method_notes(options, filters.preset, records),
        "notes": notes,
    }
    return plain_report(report), frame
