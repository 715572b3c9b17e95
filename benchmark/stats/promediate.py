"""ProMediate's consensus tracking and mediator metrics, as pure functions of an episode's trace.

The paper (Liu et al. 2025, "ProMediate", arXiv 2510.25224, §3.1, Algorithm 1, App. C) tracks each
party's free-text attitude per topic, scores every pair of parties per topic in [0, 1] and averages
pairs into a topic consensus c_T(k) and topics into the overall consensus c(k). The series has one
point before any utterance (k = 0, the starting attitudes) and one after each utterance: c(k+1) is
the state after utterance k, utterance 0 being the welcome line. Five metrics are read off it:
consensus change (CC), topic-level efficiency (TLE), response latency (RL), mediator effectiveness
(ME) and mediator intelligence (MI), plus two code-only ones (intervention frequency, success rate).

Where the public code (microsoft/ProMediate-Eval, `scripts/evaluation.py`) and the paper disagree,
each difference is a named option of `MetricOptions` (Parley's spec §2.1): the `UPSTREAM` preset is the
code's behaviour and the default, because the published numbers came from it; `PAPER` follows the
paper's wording. `UPSTREAM_EXACT` adds the code's accidental quirks (a negative NoAgent frequency,
plain left-to-right sums where a threshold is compared, the TLE duplicate-line lookup) so imported
upstream results can be reproduced bit for bit; they stay out of the default.

Undefined values are `None` with a note saying why, never the upstream sentinel −1; only
`upstream_results` writes the sentinels back, on purpose, to compare with `results_summary.csv`.

Parley's own code, because no library computes these metrics; the upstream script needs an LLM
inside its metric functions (the topic taggers), while here the tags are inputs.
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from .consensus import PAIR_SCORES, PairReading, Series, check_choice, consensus_series

ME_SLOPES = ("endpoint", "ols")
RL_NO_REPLY = ("skip", "infinite")
MI_ALL_NA = ("zero", "exclude")
MI_DIMENSIONS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")
RESULTS_COLUMNS = (
    "intervene_yield",
    "latency",
    "success_rate",
    "success_rate_max",
    "consensus_change",
    "frequency",
    "mean_topic_efficiency",
    "monitoring_score",
    "planning_score",
    "simple_score",
    "intervene_per_step",
    "topic_efficiencies",
)
# ---------------------------------------------------------------------------------------------------
# Episode trace and options


@dataclass(frozen=True)
class Utterance:
    """One utterance of an episode, with what the metrics need to know about it.

    `seconds`: when it was said (any origin), for RL in seconds. `mentions`: topics it mentions (the
    J4 tagger; None = not tagged). `addressed`: topics a mediator turn addresses (J5; an empty set is
    the tagger's "None" and excludes the turn from ME; None = not tagged). `mi`: the four MI scores
    (perception alignment, emotional dynamics, cognitive challenges, communication breakdowns), each
    1–5 or None for "not applicable"; None = not judged. `text`: the upstream summary line, only for
    the upstream TLE quirk.
    """

    speaker: str
    mediator: bool
    seconds: float | None = None
    mentions: frozenset[str] | None = None
    addressed: frozenset[str] | None = None
    mi: tuple[float | None, float | None, float | None, float | None] | None = None
    text: str | None = None


@dataclass(frozen=True)
class EpisodeTrace:
    """An episode as the metrics see it: utterance 0 is the welcome; NoAgent = no mediator utterance."""

    parties: tuple[str, ...]
    topics: tuple[str, ...]
    utterances: tuple[Utterance, ...]
    readings: tuple[PairReading, ...]


@dataclass(frozen=True)
class Value:
    """A metric's value, or None with `note` saying why; `n` counts what it averages; `parts` the pieces."""

    value: float | None
    note: str = ""
    n: int = 0
    parts: tuple = ()

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "note": self.note, "n": self.n, "parts": list(self.parts)}


@dataclass(frozen=True)
class MetricOptions:
    """The choices where paper and code differ (spec §2.1), and the fixed constants of the metrics.

    pair_score: `llm_overall` (judge's overall field, upstream) | `mean_of_dims` (paper).
    me_slope: `endpoint` ((c[m+5]−c[m])/5 − (c[m]−c[m−5])/5, upstream) | `ols` (least-squares slopes
    over the same two 6-point windows, the paper's "linear trend").
    rl_no_reply: `skip` (a drop never followed by the mediator is ignored, upstream) | `infinite`
    (the paper's +∞, making RL infinite).
    mi_all_na: `zero` (an intervention with no applicable dimension scores 0, upstream) | `exclude`.
    upstream_quirks: reproduce the code's accidents bit for bit (see the module docstring).
    """

    pair_score: str = "llm_overall"
    me_slope: str = "endpoint"
    rl_no_reply: str = "skip"
    mi_all_na: str = "zero"
    upstream_quirks: bool = False
    window: int = 10
    me_span: int = 5
    rl_drop: float = 0.1
    rl_window: int = 10
    tle_fraction: int = 5
    success_threshold: float = 0.9

    def __post_init__(self) -> None:
        check_choice("pair_score", self.pair_score, PAIR_SCORES)
        check_choice("me_slope", self.me_slope, ME_SLOPES)
        check_choice("rl_no_reply", self.rl_no_reply, RL_NO_REPLY)
        check_choice("mi_all_na", self.mi_all_na, MI_ALL_NA)
        for name in ("window", "me_span", "rl_window", "tle_fraction"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of turns ≥ 1; got {value!r}")

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


UPSTREAM = MetricOptions()
PAPER = MetricOptions(pair_score="mean_of_dims", me_slope="ols", rl_no_reply="infinite", mi_all_na="exclude")
UPSTREAM_EXACT = replace(UPSTREAM, upstream_quirks=True)
PRESETS = {"upstream": UPSTREAM, "paper": PAPER, "upstream_exact": UPSTREAM_EXACT}


def _mean(values: Sequence[float], options: MetricOptions) -> float:
    """Mean as upstream writes it (left-to-right sum / n) under the quirks, else correctly rounded.

    The difference is one unit in the last place, but it decides thresholds: five points of 0.95
    and five of 0.85 average 0.9 exactly, while upstream's sum / 10 is 0.8999999999999998, no success.
    """
    return sum(values) / len(values) if options.upstream_quirks else statistics.fmean(values)


def mediator_turns(utterances: Sequence[Utterance]) -> list[int]:
    """Indices k ≥ 1 of the mediator's utterances (the welcome, k = 0, is not an intervention)."""
    return [k for k, utterance in enumerate(utterances) if k >= 1 and utterance.mediator]


def _has_mediator(utterances: Sequence[Utterance]) -> bool:
    return any(utterance.mediator for utterance in utterances)


# ---------------------------------------------------------------------------------------------------
# Metrics (PM-11)


def consensus_change(overall: Sequence[float], options: MetricOptions = UPSTREAM) -> Value:
    """CC = mean of the last 10 points of c minus mean of the first 10 (paper §3.2; upstream as is).

    The series includes the starting point; with fewer than 20 points the windows overlap (upstream
    does not prevent it); with fewer than 10 the value is undefined.
    """
    w = options.window
    if len(overall) < w:
        return Value(None, f"needs at least {w} consensus points; has {len(overall)}", len(overall))
    points = list(overall)
    note = "first and last windows overlap" if len(points) < 2 * w else ""
    return Value(_mean(points[-w:], options) - _mean(points[:w], options), note, len(points))


def topic_level_efficiency(series: Series, utterances: Sequence[Utterance], options: MetricOptions = UPSTREAM) -> Value:
    """TLE = mean over topics of (mean(S[-w:]) − mean(S[:w])) / n, S = c_T after each utterance mentioning T.

    Upstream's reading of the paper's "change in agreement on a topic divided by the number of turns
    mentioning it" (spec §1.5): n mentioning utterances (welcome included), w = ⌊n/5⌋, a topic with
    w = 0 contributes 0. Under the upstream quirks a mentioning utterance whose `text` repeats an
    earlier one's takes the earlier one's score (upstream looks lines up with `list.index`).
    """
    untagged = sum(1 for utterance in utterances if utterance.mentions is None)
    if untagged:
        return Value(None, f"topic-mention tags missing for {untagged} of {len(utterances)} utterances", 0)
    first_index: dict[str, int] = {}
    for k, utterance in enumerate(utterances):
        if utterance.text is not None:
            first_index.setdefault(utterance.text, k)
    per_topic = []
    for topic in series.topics:
        c = series.topics[topic]
        picked = []
        for k, utterance in enumerate(utterances):
            if topic in utterance.mentions:
                index = first_index.get(utterance.text, k) if options.upstream_quirks else k
                picked.append(c[index + 1])
        n = len(picked)
        w = n // options.tle_fraction
        if w == 0:
            per_topic.append(0.0)
            continue
        if options.upstream_quirks:
            per_topic.append((sum(picked[-w:]) / w - sum(picked[:w]) / w) / n)
        else:
            per_topic.append((statistics.fmean(picked[-w:]) - statistics.fmean(picked[:w])) / n)
    if not per_topic:
        return Value(None, "no topics", 0)
    value = statistics.mean(per_topic) if options.upstream_quirks else statistics.fmean(per_topic)
    return Value(value, "", len(per_topic), tuple(per_topic))


def _drop_events(overall: Sequence[float], options: MetricOptions) -> list[int]:
    """Points i ≥ W where c[i−W] − c[i] > τ (strict, in floating point, as upstream compares)."""
    w = options.rl_window
    return [i for i in range(w, len(overall)) if overall[i - w] - overall[i] > options.rl_drop]


def response_latency(
    overall: Sequence[float],
    utterances: Sequence[Utterance],
    options: MetricOptions = UPSTREAM,
    *,
    unit: str = "turns",
) -> Value:
    """RL = mean over drop events of the delay until the mediator next speaks (paper §3.2, upstream).

    An event is every point i ≥ 10 with c(i−10) − c(i) > 0.1 (one sustained drop yields several
    events, as upstream counts them). Its reply is the first mediator utterance m > i (upstream's
    comparison of an utterance index with a point index, kept as is); latency in turns = m − i, in
    seconds = time of utterance m − time of utterance i−1 (the utterance after which the drop was
    seen). Events with no later mediator turn are skipped (upstream) or make RL infinite (paper).
    """
    check_choice("unit", unit, ("turns", "seconds"))
    if not _has_mediator(utterances):
        return Value(None, "no mediator in this episode")
    events = _drop_events(overall, options)
    if not events:
        return Value(None, "no drop in consensus larger than the threshold", 0)
    turns = mediator_turns(utterances)
    if unit == "seconds":
        needed = {i - 1 for i in events} | set(turns)
        if any(utterances[k].seconds is None for k in needed if k < len(utterances)):
            return Value(None, "utterance times not recorded", len(events))
    latencies, unanswered = [], 0
    for i in events:
        reply = next((m for m in turns if m > i), None)
        if reply is None:
            unanswered += 1
        elif unit == "turns":
            latencies.append(float(reply - i))
        else:
            latencies.append(float(utterances[reply].seconds - utterances[i - 1].seconds))
    if unanswered and options.rl_no_reply == "infinite":
        return Value(math.inf, f"no reply to {unanswered} of {len(events)} events", len(events))
    note = f"{unanswered} of {len(events)} events never answered, skipped" if unanswered else ""
    if not latencies:
        return Value(None, f"the mediator never spoke after any of the {len(events)} drop events", len(events))
    return Value(_mean(latencies, options), note, len(latencies))


def _slope(values: Sequence[float]) -> float:
    """Least-squares slope of `values` against 0, 1, …, per turn."""
    x = np.arange(len(values), dtype=float)
    y = np.asarray(values, dtype=float)
    dx = x - x.mean()
    return float((dx * (y - y.mean())).sum() / (dx * dx).sum())


def mediator_effectiveness(series: Series, utterances: Sequence[Utterance], options: MetricOptions = UPSTREAM) -> Value:
    """ME = mean over interventions of (slope after − slope before) on the topics the turn addresses.

    For a mediator turn m (5 < m < K−5) and each addressed topic T: endpoint slopes
    (c_T[m] − c_T[m−5])/5 and (c_T[m+5] − c_T[m])/5 (upstream), or least-squares slopes over
    c_T[m−5…m] and c_T[m…m+5] (paper's "linear trend"); the intervention's value is the mean over its
    topics. Turns too near either end, tagged "None", not tagged, or naming no known topic are
    excluded (None in `parts`, one entry per mediator turn after the welcome, for ME–MI correlation).
    """
    if not _has_mediator(utterances):
        return Value(None, "no mediator in this episode")
    k_total, span = len(utterances), options.me_span
    parts: list[float | None] = []
    reasons: dict[str, int] = {}
    for m in mediator_turns(utterances):
        addressed = utterances[m].addressed
        reason = None
        if m <= span or m >= k_total - span:
            reason = "too near the start or end"
        elif addressed is None:
            reason = "topics addressed not tagged"
        else:
            topics = [topic for topic in series.topics if topic in addressed]
            if not topics:
                reason = "addresses no topic"
        if reason:
            parts.append(None)
            reasons[reason] = reasons.get(reason, 0) + 1
            continue
        diffs = []
        for topic in topics:
            c = series.topics[topic]
            if options.me_slope == "endpoint":
                diffs.append((c[m + span] - c[m]) / span - (c[m] - c[m - span]) / span)
            else:
                diffs.append(_slope(c[m : m + span + 1]) - _slope(c[m - span : m + 1]))
        value = statistics.mean(diffs) if options.upstream_quirks else statistics.fmean(diffs)
        if options.upstream_quirks and value == -1:
            parts.append(None)
            reasons["equal to upstream's −1 sentinel"] = reasons.get("equal to upstream's −1 sentinel", 0) + 1
            continue
        parts.append(value)
    note = "; ".join(f"{count} excluded: {reason}" for reason, count in reasons.items())
    kept = [part for part in parts if part is not None]
    if not kept:
        if not parts:
            return Value(None, "the mediator never intervened after the welcome", 0, ())
        return Value(None, f"no intervention could be measured ({note})", 0, tuple(parts))
    value = statistics.mean(kept) if options.upstream_quirks else statistics.fmean(kept)
    return Value(value, note, len(kept), tuple(parts))


def mediator_intelligence(utterances: Sequence[Utterance], options: MetricOptions = UPSTREAM) -> Value:
    """MI = mean over interventions of the mean of the applicable dimensions' 1–5 scores (paper §3.2).

    An intervention with no applicable dimension counts 0 (upstream, `zero`) or is left out
    (`exclude`); one not judged is left out. `parts` has one entry per mediator turn after the
    welcome (None where left out), aligned with ME's parts.
    """
    if not _has_mediator(utterances):
        return Value(None, "no mediator in this episode")
    parts: list[float | None] = []
    not_judged = all_na = 0
    for m in mediator_turns(utterances):
        scores = utterances[m].mi
        if scores is None:
            parts.append(None)
            not_judged += 1
            continue
        if len(scores) != len(MI_DIMENSIONS):
            raise ValueError(f"utterance {m}: MI needs {len(MI_DIMENSIONS)} scores, got {len(scores)}")
        applicable = [float(score) for score in scores if score is not None]
        if applicable:
            parts.append(sum(applicable) / len(applicable))
        elif options.mi_all_na == "zero":
            parts.append(0.0)
            all_na += 1
        else:
            parts.append(None)
            all_na += 1
    notes = []
    if not_judged:
        notes.append(f"{not_judged} interventions not judged, left out")
    if all_na:
        verb = "counted as 0" if options.mi_all_na == "zero" else "left out"
        notes.append(f"{all_na} interventions with no applicable dimension {verb}")
    kept = [part for part in parts if part is not None]
    if not kept:
        why = "; ".join(notes) or "the mediator never intervened after the welcome"
        return Value(None, why, 0, tuple(parts))
    value = statistics.mean(kept) if options.upstream_quirks else statistics.fmean(kept)
    return Value(value, "; ".join(notes), len(kept), tuple(parts))


def intervention_frequency(utterances: Sequence[Utterance], options: MetricOptions = UPSTREAM) -> Value:
    """Share of utterances that are interventions: (mediator utterances − welcome) / K (upstream).

    Without a mediator the value is undefined; under the upstream quirks it is (0 − 1) / K, the
    negative number upstream writes for NoAgent runs.
    """
    k_total = len(utterances)
    if not k_total:
        return Value(None, "no utterances", 0)
    count = sum(1 for utterance in utterances if utterance.mediator)
    if count == 0 and not options.upstream_quirks:
        return Value(None, "no mediator in this episode", k_total)
    if options.upstream_quirks:
        return Value((count - 1) / k_total, "", k_total)
    return Value(len(mediator_turns(utterances)) / k_total, "", k_total)


def success_rate(series: Series, options: MetricOptions = UPSTREAM, *, use: str = "mean") -> Value:
    """Share of topics whose last 10 points average (or, `use="max"`, peak) at least 0.9 (upstream only).

    Topics with fewer than 10 points are left out.
    """
    check_choice("use", use, ("mean", "max"))
    w = options.window
    outcomes = []
    for c in series.topics.values():
        if len(c) < w:
            continue
        tail = list(c[-w:])
        level = max(tail) if use == "max" else _mean(tail, options)
        outcomes.append(level >= options.success_threshold)
    if not outcomes:
        return Value(None, f"no topic has {w} consensus points", 0)
    return Value(sum(outcomes) / len(outcomes), "", len(outcomes), tuple(outcomes))


def episode_series(trace: EpisodeTrace, options: MetricOptions = UPSTREAM) -> Series:
    """The trace's consensus series: K + 1 points for K utterances."""
    return consensus_series(
        trace.parties, trace.topics, len(trace.utterances) + 1, trace.readings, pair_score=options.pair_score
    )


def episode_metrics(trace: EpisodeTrace, options: MetricOptions = UPSTREAM) -> dict[str, Value]:
    """Every metric of one episode under `options` (spec §1.5, PM-11)."""
    series = episode_series(trace, options)
    utterances = trace.utterances
    return {
        "consensus_change": consensus_change(series.overall, options),
        "topic_level_efficiency": topic_level_efficiency(series, utterances, options),
        "response_latency": response_latency(series.overall, utterances, options),
        "response_latency_seconds": response_latency(series.overall, utterances, options, unit="seconds"),
        "mediator_effectiveness": mediator_effectiveness(series, utterances, options),
        "mediator_intelligence": mediator_intelligence(utterances, options),
        "intervention_frequency": intervention_frequency(utterances, options),
        "success_rate": success_rate(series, options),
        "success_rate_max": success_rate(series, options, use="max"),
    }


def upstream_results(trace: EpisodeTrace, options: MetricOptions = UPSTREAM_EXACT) -> dict[str, Any]:
    """The episode's row of upstream's `results_summary.csv`, sentinels included (for PM-A13).

    Column by column as `scripts/evaluation.py` writes it: −1 for an undefined ME, RL or (NoAgent)
    behaviour score, `intervene_per_step` with −1 for excluded interventions, the unused
    monitoring/planning scores 0 with a mediator, CC None (an empty cell) under 10 points.
    """
    metrics = episode_metrics(trace, options)
    mediated = _has_mediator(trace.utterances)

    def sentinel(value: Value) -> float:
        return -1 if value.value is None else value.value

    me = metrics["mediator_effectiveness"]
    row: dict[str, Any] = {
        "intervene_yield": sentinel(me),
        "latency": sentinel(metrics["response_latency"]),
        "success_rate": metrics["success_rate"].value or 0,
        "success_rate_max": metrics["success_rate_max"].value or 0,
        "consensus_change": metrics["consensus_change"].value,
        "frequency": metrics["intervention_frequency"].value,
        "mean_topic_efficiency": metrics["topic_level_efficiency"].value,
        "monitoring_score": 0 if mediated else -1,
        "planning_score": 0 if mediated else -1,
        "simple_score": sentinel(metrics["mediator_intelligence"]) if mediated else -1,
        "intervene_per_step": [-1 if part is None else part for part in me.parts] if mediated else -1,
        "topic_efficiencies": list(metrics["topic_level_efficiency"].parts),
    }
    return row
