"""Benchmark results under communication barriers: the SocialVeil analyses on one plain table.

Input: one row per (episode, seat) scored by one evaluator, with the columns named below, one
column per evaluation dimension (the seat's own score for per-seat dimensions, the episode's score
repeated on every seat for episode-level ones, NaN when missing) and the linguistic features of
the episode (``barrier_speech.<feature>`` and ``transcript.<feature>``), and the ``Scale`` of each
dimension (its range and whether it is scored per seat; in Parley the judge's instrument
questions say so). ``benchmark.results.build`` builds both from the database; a test or a
script can build them by hand.

What comes out (docs/results-schema.md lists every key):

- **Means per model and condition** (SocialVeil Table 2): mean, sample SD and standard error
  SE = SD / sqrt(n) (SD with n - 1 in the denominator) of every dimension, over all scenarios and
  split by difficulty tag. The unit is the analysed seat (the partner by default, as SocialVeil
  evaluates the partner agent) for per-seat dimensions, and the episode for episode-level ones.
  The model is the analysed seat's model.
- **Change from the baseline**: (mean under a condition - mean under ``none``) / |mean under
  ``none``| x 100, per model, split and dimension; null with a note when the baseline mean is 0
  or missing, or too close to 0 (below).
- **Barrier-specific effects** (SocialVeil §5.1, Figure 5): for each barrier, dimension and model,
  per scenario the barrier's mean minus the mean of the *other* barriers' means on that scenario
  (``none`` excluded); the deviation is the mean of those differences over scenarios, and the
  percent deviation is 100 x sum of differences / |sum of the other barriers' means|. 95% CIs are
  percentiles of a cluster bootstrap that resamples scenarios with replacement (seeded).
- **Percent only far from zero**: a percent divides by the baseline, so a baseline near 0 turns a
  small move into thousands of percent (relationship, scored -5..5, often averages about 0.1).
  Signatures are therefore reported in score points, and a percent (change or deviation) is
  given only when |baseline| >= 10% of the dimension's scale range (1 point on 0-10 and on
  -5..5, 0.4 on 1-5); otherwise it is None with a note. Dimensions without a known range fall
  back to refusing only a baseline of exactly 0.
- **Linguistic correlations** (SocialVeil Figure 4): Pearson r and Spearman rho, each with a
  two-sided p from t = r sqrt((n - 2) / (1 - r^2)), between each feature and each dimension over
  episodes (per-seat dimensions averaged over the analysed seats of the episode).

Every undefined number is None with a note saying why; nothing here returns NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from .bootstrap import DEFAULT_RESAMPLES, Seed, draw_counts, make_rng, percentile_interval
from .linguistic import FEATURES

EPISODE = "episode"
SEAT = "seat"
SEAT_ROLE = "seat_role"
MODEL = "model"
PARTNER_MODEL = "partner_model"
BARRIER_MODEL = "barrier_model"
CONDITION = "condition"
SCENARIO = "scenario"
DIFFICULTY = "difficulty"
STRATEGY = "strategy"
EVALUATOR = "evaluator"
PROMPT_VERSION = "prompt_version"

BASELINE = "none"
PARTNER = "partner"
BARRIER = "barrier"
SEAT_ROLES = (PARTNER, BARRIER)
FEATURE_SOURCES = ("barrier_speech", "transcript")
DEFAULT_SEED = 0
# A percent needs |baseline| >= this share of the dimension's scale range (see the module docstring).
PERCENT_FLOOR_SHARE = 0.10

REQUIRED_COLUMNS = (EPISODE, SEAT_ROLE, PARTNER_MODEL, BARRIER_MODEL, CONDITION, SCENARIO, DIFFICULTY)

METHODS = {
    "means": (
        "Mean, sample standard deviation (n - 1 in the denominator) and standard error SE = SD / sqrt(n) "
        "of each dimension per model and condition. Per-seat dimensions are taken from the analysed seat "
        "(one value per seat); episode-level dimensions once per episode. The model is the analysed seat's "
        "model. Computed over every episode ('all') and per difficulty tag."
    ),
    "percent_change": (
        "(mean under the condition - mean under the barrier-free baseline 'none') / |mean under 'none'| x 100, "
        "for the same model, split and dimension. Undefined when the baseline mean is missing or within 10% "
        "of the dimension's scale range of 0 (e.g. |mean| < 1 on 0-10 or -5..5), where a percent explodes."
    ),
    "deviations": (
        "For each barrier b, dimension and model: on every scenario that has episodes under b and under at "
        "least one other barrier, d = mean under b - mean of the other barriers' means ('none' excluded). "
        "deviation = mean of d over those scenarios; deviation_percent = 100 x sum(d) / |sum of the other barriers' "
        "means|, given only when |mean of the other barriers' means| >= 10% of the dimension's scale range, "
        "so read signatures in score points. 95% CIs: percentiles (2.5, 97.5) of a cluster bootstrap that "
        "resamples scenarios with replacement, all barriers and dimensions of a model sharing the same resamples."
    ),
    "correlations": (
        "Over episodes with both values: Pearson r and Spearman rho (Pearson r of average ranks) between a "
        "linguistic feature of the episode and a dimension, each with a two-sided p from "
        "t = r sqrt((n - 2) / (1 - r^2)) on n - 2 degrees of freedom. Per-seat dimensions are averaged over "
        "the analysed seats of the episode."
    ),
}


# --- input -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """What the analyses need to know of a dimension: its inclusive range and how it is scored."""

    low: float
    high: float
    per_seat: bool


Scales = Mapping[str, Scale]


def dimension_columns(
    table: pd.DataFrame, dimensions: Sequence[str] | None = None, scales: Scales | None = None
) -> list[str]:
    """The dimensions to report: those given, or every dimension of ``scales`` the table has, in that order."""
    if dimensions is not None:
        missing = [key for key in dimensions if key not in table.columns]
        if missing:
            raise ValueError(f"the results table has no column for dimension {', '.join(missing)}")
        return list(dimensions)
    return [key for key in scales or {} if key in table.columns]


def feature_columns(table: pd.DataFrame) -> list[str]:
    """The linguistic feature columns the table has, barrier speech first, in FEATURES order."""
    return [f"{source}.{feature}" for source in FEATURE_SOURCES for feature in FEATURES
            if f"{source}.{feature}" in table.columns]


def per_seat(dimension: str, scales: Scales | None) -> bool:
    """Whether a dimension is scored per seat (dimensions without a scale are taken as per seat)."""
    known = (scales or {}).get(dimension)
    return known.per_seat if known else True


def check_table(table: pd.DataFrame) -> None:
    """Refuse a table the analyses cannot read, naming what is wrong."""
    missing = [column for column in REQUIRED_COLUMNS if column not in table.columns]
    if missing:
        raise ValueError(f"the results table has no column {', '.join(missing)}")
    for column in (EVALUATOR, PROMPT_VERSION):
        if column in table.columns and table[column].nunique(dropna=True) > 1:
            found = ", ".join(sorted(map(str, table[column].dropna().unique())))
            raise ValueError(f"the results table mixes several {column.replace('_', ' ')}s ({found}); pass one")
    roles = set(table[SEAT_ROLE].dropna().unique()) - set(SEAT_ROLES)
    if roles:
        raise ValueError(f"unknown seat_role {', '.join(sorted(map(str, roles)))}; use partner or barrier")


def ordered_conditions(values: Sequence[str], order: Sequence[str] | None = None) -> list[str]:
    """The conditions present: in ``order`` when given (others after, sorted), else baseline first then sorted."""
    present = list(dict.fromkeys(str(v) for v in values))
    if order is None:
        order = [BASELINE]
    ranked = [c for c in order if c in present]
    return ranked + sorted(c for c in present if c not in ranked)


def _model_column(seat_role: str) -> str:
    return PARTNER_MODEL if seat_role == PARTNER else BARRIER_MODEL


def unit_table(
    table: pd.DataFrame, dimensions: Sequence[str], seat_role: str, scales: Scales | None = None
) -> pd.DataFrame:
    """One row per (episode, analysed seat): the seat's per-seat scores and the episode's scores.

    Episode-level scores are kept on the episode's first analysed seat only, so a column mean
    counts each episode once whatever the number of analysed seats. An episode without a seat in
    ``seat_role`` (say, an imported one with no barrier seat, analysed for the barrier) is left out.
    """
    model_column = _model_column(seat_role)
    base = [EPISODE, SCENARIO, CONDITION, DIFFICULTY]
    rows = table[table[SEAT_ROLE] == seat_role]
    units = rows[base].copy()
    units[MODEL] = rows[model_column].fillna("").astype(str)
    first = ~rows[EPISODE].duplicated().to_numpy()
    for key in dimensions:
        values = pd.to_numeric(rows[key], errors="coerce").to_numpy(dtype=float)
        units[key] = values if per_seat(key, scales) else np.where(first, values, np.nan)
    units[CONDITION] = units[CONDITION].astype(str)
    units[SCENARIO] = units[SCENARIO].astype(str)
    units[DIFFICULTY] = units[DIFFICULTY].fillna("").astype(str)
    return units.reset_index(drop=True)


# --- means, standard errors and change from the baseline ----------------------------------------


def describe(values: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """n, mean, SD (n - 1) and SE = SD / sqrt(n) of the finite values, with notes for what is undefined."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    cell: dict[str, Any] = {"n": n, "mean": None, "sd": None, "se": None, "percent_change": None, "notes": []}
    if n == 0:
        cell["notes"].append("no scores")
        return cell
    cell["mean"] = float(x.mean())
    if n < 2:
        cell["notes"].append("SD and SE need at least two scores")
        return cell
    sd = float(x.std(ddof=1))
    cell["sd"] = sd
    cell["se"] = sd / float(np.sqrt(n))
    return cell


def percent_floor(dimension: str, scales: Scales | None) -> float:
    """The smallest |baseline| a percent of this dimension may divide by: 10% of its scale range.

    Below it a percent says more about the baseline than about the change (0.3 points over a
    baseline of 0.1 is +300%). Dimensions without a scale have no range, so only a baseline of 0 is refused.
    """
    known = (scales or {}).get(dimension)
    return PERCENT_FLOOR_SHARE * (known.high - known.low) if known else 0.0


def near_zero_reason(baseline: float, floor: float, what: str) -> str | None:
    """Why no percent may divide by ``baseline`` (``what`` names it), or None when it may."""
    if baseline == 0:
        return f"{what} is 0, so a percent is undefined"
    if abs(baseline) < floor:
        return (f"{what} ({baseline:.2f}) is within {floor:g} point{'' if floor == 1 else 's'} of 0 (10% of the "
                "scale range), so a percent would exaggerate; read the change in points")
    return None


def percent_change(
    value: float | None, baseline: float | None, *, floor: float = 0.0
) -> tuple[float | None, str | None]:
    """(value - baseline) / |baseline| x 100, or None and the reason it is undefined.

    ``floor`` is the smallest |baseline| allowed (``percent_floor`` of the dimension).
    """
    if baseline is None:
        return None, f"no scores under the barrier-free baseline '{BASELINE}'"
    if value is None:
        return None, "no scores under this condition"
    if baseline == 0:
        return None, "the baseline mean is 0, so a change in percent is undefined"
    reason = near_zero_reason(baseline, floor, "the baseline mean")
    if reason:
        return None, reason
    return (value - baseline) / abs(baseline) * 100.0, None


def condition_means(
    units: pd.DataFrame, dimensions: Sequence[str], conditions: Sequence[str], scales: Scales | None = None
) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """{model: {condition: {dimension: cell}}} with each cell's percent change from ``none``."""
    out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    grouped = {key: group for key, group in units.groupby([MODEL, CONDITION], sort=False)}
    for model in sorted(units[MODEL].unique()):
        by_condition: dict[str, dict[str, dict[str, Any]]] = {}
        for condition in conditions:
            group = grouped.get((model, condition))
            if group is None:
                continue
            by_condition[condition] = {key: describe(group[key].to_numpy()) for key in dimensions}
        baseline = by_condition.get(BASELINE, {})
        for condition, cells in by_condition.items():
            for key, cell in cells.items():
                if condition == BASELINE:
                    cell["notes"].append("percent_change: this is the baseline")
                    continue
                reference = baseline.get(key, {}).get("mean")
                change, reason = percent_change(cell["mean"], reference, floor=percent_floor(key, scales))
                cell["percent_change"] = change
                if reason:
                    cell["notes"].append(f"percent_change: {reason}")
        out[model] = by_condition
    return out


def pooled_means(
    table: pd.DataFrame,
    *,
    scales: Scales | None = None,
    dimensions: Sequence[str] | None = None,
    seat_role: str = PARTNER,
    conditions: Sequence[str] | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """{condition: {dimension: cell}} over every model, cells as in ``describe`` without a percent change.

    One evaluator's scores in brief, so several judges (and their majority) can be set side by side.
    """
    check_table(table)
    keys = dimension_columns(table, dimensions, scales)
    units = unit_table(table, keys, seat_role, scales)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for condition in ordered_conditions(units[CONDITION], conditions):
        group = units[units[CONDITION] == condition]
        cells = {key: describe(group[key].to_numpy()) for key in keys}
        for cell in cells.values():
            del cell["percent_change"]
        out[condition] = cells
    return out


# --- barrier-specific effects -------------------------------------------------------------------


def _scenario_means(units: pd.DataFrame, dimensions: Sequence[str], barriers: Sequence[str]) -> tuple[
    list[str], np.ndarray
]:
    """Scenarios of one model and a scenarios x barriers x dimensions array of means (NaN when absent)."""
    rows = units[units[CONDITION].isin(barriers)]
    means = rows.groupby([SCENARIO, CONDITION], sort=True)[list(dimensions)].mean()
    scenarios = sorted(rows[SCENARIO].unique())
    index = pd.MultiIndex.from_product([scenarios, list(barriers)], names=[SCENARIO, CONDITION])
    cube = means.reindex(index).to_numpy(dtype=float).reshape(len(scenarios), len(barriers), len(dimensions))
    return scenarios, cube


def _deviation_entry(model: str, barrier: str, dimension: str, others: list[str], floor: float) -> dict[str, Any]:
    return {
        "model": model,
        "barrier": barrier,
        "dimension": dimension,
        "other_barriers": others,
        "scenarios": 0,
        "barrier_mean": None,
        "others_mean": None,
        "deviation": None,
        "deviation_ci95": None,
        "deviation_percent": None,
        "deviation_percent_ci95": None,
        "deviation_percent_floor": floor,
        "ci_excludes_zero": None,
        "notes": [],
    }


def barrier_deviations(
    units: pd.DataFrame,
    dimensions: Sequence[str],
    conditions: Sequence[str],
    *,
    scales: Scales | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = DEFAULT_SEED,
) -> list[dict[str, Any]]:
    """Each barrier's deviation from the other barriers on the same scenarios, per model and dimension.

    One entry per (model, barrier, dimension), models sorted, barriers and dimensions in the order
    given. The bootstrap draws one set of scenario resamples per model (models in sorted order
    from one seeded generator), shared by all of that model's barriers and dimensions, so the
    intervals are reproducible for a seed.
    """
    rng = make_rng(seed)
    barriers = [c for c in conditions if c != BASELINE]
    entries: list[dict[str, Any]] = []
    for model in sorted(units[MODEL].unique()):
        own = units[units[MODEL] == model]
        present = [b for b in barriers if (own[CONDITION] == b).any()]
        model_entries = [
            _deviation_entry(model, barrier, key, [b for b in present if b != barrier], percent_floor(key, scales))
            for barrier in present for key in dimensions
        ]
        if len(present) < 2:
            for entry in model_entries:
                entry["notes"].append("needs episodes under at least two barriers (other than 'none')")
            entries.extend(model_entries)
            continue
        scenarios, cube = _scenario_means(own, dimensions, present)
        columns_d, columns_o, columns_p = [], [], []
        for b in range(len(present)):
            mine = cube[:, b, :]
            rest = np.delete(cube, b, axis=1)
            counted = np.isfinite(rest).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                others = np.where(counted > 0, np.nansum(rest, axis=1) / np.maximum(counted, 1), np.nan)
            usable = np.isfinite(mine) & np.isfinite(others)
            columns_d.append(np.where(usable, mine - others, 0.0))
            columns_o.append(np.where(usable, others, 0.0))
            columns_p.append(usable.astype(float))
        # scenarios x (barriers * dimensions), in the order of model_entries
        differences = np.concatenate(columns_d, axis=1)
        other_means = np.concatenate(columns_o, axis=1)
        usable = np.concatenate(columns_p, axis=1)
        n = usable.sum(axis=0)
        totals_d, totals_o = differences.sum(axis=0), other_means.sum(axis=0)
        replicates = None
        if resamples > 0 and len(scenarios) >= 2:
            unit_totals = np.concatenate([differences, other_means, usable], axis=1)
            sums = np.concatenate([block.astype(float) @ unit_totals
                                   for block in draw_counts(len(scenarios), resamples, rng)])
            k = differences.shape[1]
            with np.errstate(invalid="ignore", divide="ignore"):
                replicate_deviation = sums[:, :k] / sums[:, 2 * k:]
                replicate_percent = 100.0 * sums[:, :k] / np.abs(sums[:, k : 2 * k])
            replicates = (replicate_deviation, replicate_percent)
        for column, entry in enumerate(model_entries):
            count = int(n[column])
            entry["scenarios"] = count
            if count == 0:
                entry["notes"].append("no scenario has episodes under this barrier and another barrier")
                continue
            entry["deviation"] = float(totals_d[column] / count)
            entry["others_mean"] = float(totals_o[column] / count)
            entry["barrier_mean"] = entry["others_mean"] + entry["deviation"]
            floor = entry["deviation_percent_floor"]
            reason = near_zero_reason(entry["others_mean"], floor, "the other barriers' mean")
            if reason is None:
                entry["deviation_percent"] = float(100.0 * totals_d[column] / abs(totals_o[column]))
            else:
                entry["notes"].append(f"deviation_percent: {reason}")
            if replicates is None or count < 2:
                entry["notes"].append(
                    "ci95: bootstrap skipped (0 resamples)" if resamples <= 0
                    else "ci95: a bootstrap interval needs at least two scenarios"
                )
                continue
            entry["deviation_ci95"] = percentile_interval(replicates[0][:, column])
            if entry["deviation_percent"] is not None:
                entry["deviation_percent_ci95"] = percentile_interval(replicates[1][:, column])
            interval = entry["deviation_ci95"]
            if interval is not None:
                entry["ci_excludes_zero"] = bool(interval[0] > 0 or interval[1] < 0)
        entries.extend(model_entries)
    return entries


# --- linguistic correlations ---------------------------------------------------------------------


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    dx, dy = x - x.mean(), y - y.mean()
    r = float(np.clip((dx @ dy) / np.sqrt((dx @ dx) * (dy @ dy)), -1.0, 1.0))
    n = len(x)
    if abs(r) >= 1.0:
        return r, 0.0
    t = r * np.sqrt((n - 2) / (1 - r * r))
    return r, float(2 * scipy_stats.t.sf(abs(t), n - 2))


def correlation(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """Pearson and Spearman correlations of the pairs where both values are finite, with p-values.

    Spearman's rho is Pearson's r of the average ranks (ties share the mean rank), with the same
    t-based p (as ``scipy.stats.spearmanr`` computes it). Both come from centred sums rather than
    ``scipy.stats.pearsonr``/``spearmanr``, which give 0.9999999999999999 and a p above 0 for
    perfectly monotone pairs (see ``alignment``); here those are exactly 1 and 0.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    both = np.isfinite(a) & np.isfinite(b)
    a, b = a[both], b[both]
    entry: dict[str, Any] = {
        "n": int(a.size), "pearson_r": None, "pearson_p": None, "spearman_rho": None, "spearman_p": None,
        "notes": [],
    }
    if a.size < 3:
        entry["notes"].append("a correlation needs at least three episodes with both values")
        return entry
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        constant = "feature" if np.ptp(a) == 0 else "dimension"
        entry["notes"].append(f"undefined: the {constant} does not vary")
        return entry
    entry["pearson_r"], entry["pearson_p"] = _pearson(a, b)
    entry["spearman_rho"], entry["spearman_p"] = _pearson(scipy_stats.rankdata(a), scipy_stats.rankdata(b))
    return entry


def episode_table(table: pd.DataFrame, units: pd.DataFrame, dimensions: Sequence[str]) -> pd.DataFrame:
    """One row per episode: its model, the dimensions (per-seat ones averaged) and its features."""
    scores = units.groupby(EPISODE, sort=True).agg({MODEL: "first", **{key: "mean" for key in dimensions}})
    features = feature_columns(table)
    if features:
        values = table.drop_duplicates(EPISODE).set_index(EPISODE)[features].apply(pd.to_numeric, errors="coerce")
        scores = scores.join(values, how="left")
    return scores


def feature_correlations(
    episodes: pd.DataFrame, features: Sequence[str], dimensions: Sequence[str]
) -> list[dict[str, Any]]:
    """One entry per (feature, dimension): the correlations over the given episodes."""
    entries = []
    for feature in features:
        x = episodes[feature].to_numpy(dtype=float)
        for key in dimensions:
            entries.append({"feature": feature, "dimension": key,
                            **correlation(x, episodes[key].to_numpy(dtype=float))})
    return entries


# --- the whole report ---------------------------------------------------------------------------


def results_report(
    table: pd.DataFrame,
    *,
    scales: Scales | None = None,
    dimensions: Sequence[str] | None = None,
    seat_role: str = PARTNER,
    conditions: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Every analysis of a results table, as a JSON-ready dict (docs/results-schema.md).

    ``scales`` gives each dimension's range and scope (a dimension without one is taken as per
    seat, with no percent floor); ``dimensions`` picks and orders the reported ones (default: every
    dimension of ``scales`` the table has). ``conditions`` orders the conditions (the barrier-free
    ``none`` should come first); the analysed seat is ``seat_role`` (``partner``, as in SocialVeil,
    or ``barrier``).
    """
    if seat_role not in SEAT_ROLES:
        raise ValueError(f"seat_role must be partner or barrier, not {seat_role!r}")
    if resamples < 0:
        raise ValueError("resamples must be 0 or more")
    check_table(table)
    keys = dimension_columns(table, dimensions, scales)
    units = unit_table(table, keys, seat_role, scales)
    ordered = ordered_conditions(units[CONDITION], conditions)
    difficulties = sorted(d for d in units[DIFFICULTY].unique() if d)
    episodes = episode_table(table, units, keys)
    notes = []
    if len(units) == 0:
        notes.append("no scored episodes: there is nothing to report")
    elif BASELINE not in ordered:
        notes.append(f"no episode under the barrier-free baseline '{BASELINE}': percent changes are undefined")
    features = feature_columns(table)
    by_model = {
        model: feature_correlations(group, features, keys) for model, group in episodes.groupby(MODEL, sort=True)
    }
    return {
        "seat_role": seat_role,
        "dimensions": keys,
        "conditions": ordered,
        "models": sorted(units[MODEL].unique()),
        "difficulties": difficulties,
        "features": features,
        "counts": {
            "episodes": int(table[EPISODE].nunique()),
            "scenarios": int(table[SCENARIO].nunique()),
            "rows": int(len(table)),
            "analysed_seats": int((table[SEAT_ROLE] == seat_role).sum()),
        },
        "resamples": resamples,
        "seed": seed,
        "means": condition_means(units, keys, ordered, scales),
        "means_by_difficulty": {
            difficulty: condition_means(units[units[DIFFICULTY] == difficulty], keys, ordered, scales)
            for difficulty in difficulties
        },
        "deviations": barrier_deviations(units, keys, ordered, scales=scales, resamples=resamples, seed=seed),
        "correlations": {"all": feature_correlations(episodes, features, keys), "by_model": by_model},
        "methods": dict(METHODS),
        "notes": notes,
    }
