"""Agreement between the perspectives on goal completion: self, other, judges and humans (no Django).

AgentSense finds that agents rate their own progress higher than external judges do; agreement
says how far the yes/no answers of one perspective follow another's, goal by goal. Comparisons:

- **self vs the judges' majority**, **other vs the judges' majority**: each agent's answer about a
  goal against the judges' majority answer about the same goal (an item is a goal and an agent);
- **judge vs judge**: Cohen's kappa for each pair of judges, and Fleiss' kappa over all judges;
- **humans vs each**: the annotators' majority answer against self, other, the judges' majority
  and each judge (AgentSense's Table 8 compares model judges with humans).

Cohen's kappa (Cohen 1960) and percent agreement for two raters come from the 2 x 2 table of their
answers (``kappa.cohen_kappa_from_table``, ``kappa.percent_agreement_from_counts``); their 95% CIs
are percentiles of a bootstrap that resamples scenarios (each resample's table is the sum of the
drawn scenarios' tables). Fleiss' kappa uses ``kappa.fleiss_kappa_from_counts`` with the same
scenario clusters.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, Seed, make_rng, percentile_interval, resampled_sums
from .goal_completion import (
    HUMANS,
    JUDGE,
    JUDGE_PREFIX,
    JUDGES_MAJORITY,
    OTHER,
    PERSPECTIVE,
    RESPONDENT,
    SCENARIO,
    SCORE,
    SELF,
    TARGET,
    VALUE,
    VIEW,
)
from .kappa import COHEN_METHOD, cohen_kappa_from_table, fleiss_kappa_from_counts, percent_agreement_from_counts

METHOD = (
    "Per comparison, the items both sides answered (a goal, and the agent when one side is an agent's "
    "answer). Cohen's kappa (p_o - p_e) / (1 - p_e) from the 2 x 2 table of yes/no answers; percent "
    "agreement = share of items where both answered alike; Fleiss' kappa over all judges for each goal "
    "they all judged. 95% CIs: percentile bootstrap resampling scenarios with replacement."
)


def _answers(records: pd.DataFrame, perspective: str) -> pd.DataFrame:
    """Individual answers of a perspective: one row per goal and respondent."""
    rows = records[records[PERSPECTIVE] == perspective]
    return rows[[*TARGET, RESPONDENT, SCENARIO, VALUE]].assign(**{VALUE: pd.to_numeric(rows[VALUE]).astype(float)})


def _view(views: pd.DataFrame, view: str) -> pd.DataFrame:
    """One view's score per goal, as 0/1 (views of one answer or a majority are already 0/1)."""
    rows = views[views[VIEW] == view]
    return rows[[*TARGET, SCENARIO]].assign(**{VALUE: rows[SCORE].round().astype(float)})


def two_rater_agreement(
    first: pd.DataFrame, second: pd.DataFrame, *, names: tuple[str, str], resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = 0,
) -> dict[str, Any]:
    """Cohen's kappa and percent agreement of two sides' 0/1 answers on the goals both answered.

    ``first`` may hold several answers per goal (several agents); each is paired with ``second``'s
    one answer about that goal.
    """
    paired = first.merge(second[[*TARGET, VALUE]], on=TARGET, suffixes=("_a", "_b"))
    a = paired[f"{VALUE}_a"].to_numpy(dtype=int)
    b = paired[f"{VALUE}_b"].to_numpy(dtype=int)
    result: dict[str, Any] = {
        "first": names[0], "second": names[1], "n": len(paired), "kappa": None, "kappa_ci95": None,
        "percent_agreement": None, "percent_ci95": None, "notes": [],
    }
    if not len(paired):
        result["notes"].append("no goal answered by both")
        return result
    cells = a * 2 + b
    table = np.bincount(cells, minlength=4).reshape(2, 2)
    kappa = cohen_kappa_from_table(table)
    result["kappa"] = kappa.value
    result["notes"].extend(kappa.notes)
    # One item per row, two ratings each: Fleiss's P is then the share of items where both agree.
    result["percent_agreement"] = percent_agreement_from_counts(np.column_stack([(a == 0) + (b == 0), a + b]))
    codes, clusters = np.unique(paired[SCENARIO].astype(str), return_inverse=True)
    if resamples and len(codes) >= 2:
        per_cluster = np.zeros((len(codes), 4))
        np.add.at(per_cluster, (clusters, cells), 1)
        sums = resampled_sums(per_cluster, resamples, make_rng(seed))
        p = sums / sums.sum(axis=1, keepdims=True)
        observed = p[:, 0] + p[:, 3]
        expected = (p[:, 0] + p[:, 1]) * (p[:, 0] + p[:, 2]) + (p[:, 2] + p[:, 3]) * (p[:, 1] + p[:, 3])
        with np.errstate(divide="ignore", invalid="ignore"):
            kappas = np.where(expected < 1 - 1e-12, (observed - expected) / (1 - expected), np.nan)
        result["kappa_ci95"] = percentile_interval(kappas) if result["kappa"] is not None else None
        result["percent_ci95"] = percentile_interval(observed)
    return result


def judges_fleiss(records: pd.DataFrame, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0) -> dict[str, Any]:
    """Fleiss' kappa over the judges' yes/no votes on each goal (goals with two or more judges)."""
    judged = _answers(records, JUDGE)
    votes = (judged.groupby([*TARGET, RESPONDENT])[VALUE].mean() >= 0.5).astype(int).rename(VALUE).reset_index()
    judges = votes[RESPONDENT].nunique()
    if judges < 2:
        return {"judges": int(judges), "kappa": None, "ci95": None, "percent_agreement": None, "n": 0,
                "notes": ["Fleiss' kappa needs two or more judges"]}
    counts = votes.pivot_table(index=TARGET, columns=VALUE, values=RESPONDENT, aggfunc="count", fill_value=0)
    counts = counts.reindex(columns=[0, 1], fill_value=0)
    scenarios = judged.drop_duplicates(TARGET).set_index(TARGET)[SCENARIO].reindex(counts.index)
    kappa = fleiss_kappa_from_counts(counts.to_numpy(), resamples=resamples, seed=seed, clusters=scenarios.to_numpy())
    return {"judges": int(judges), "kappa": kappa.value, "ci95": kappa.ci95, "n": kappa.n_items,
            "percent_agreement": percent_agreement_from_counts(counts.to_numpy()), "notes": kappa.notes}


def perspective_agreement(
    records: pd.DataFrame, views: pd.DataFrame, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, Any]:
    """Every comparison the data allows: ``pairs`` (two raters each) and ``judges`` (Fleiss over all judges)."""
    present = set(views[VIEW]) if len(views) else set()
    judges = sorted(view for view in present if view.startswith(JUDGE_PREFIX))
    sides: dict[str, pd.DataFrame] = {}
    if SELF in present:
        sides[SELF] = _answers(records, SELF)
    if OTHER in present:
        sides[OTHER] = _answers(records, OTHER)
    for view in (*judges, JUDGES_MAJORITY, HUMANS):
        if view in present:
            sides[view] = _view(views, view)
    wanted = [(SELF, JUDGES_MAJORITY), (OTHER, JUDGES_MAJORITY), (SELF, OTHER)]
    wanted += [(HUMANS, side) for side in (SELF, OTHER, JUDGES_MAJORITY, *judges)]
    wanted += list(combinations(judges, 2))
    if SELF in sides and OTHER in sides:
        # Self against the others' majority about the same goal, so each goal counts once.
        others = sides[OTHER].groupby(TARGET).agg(**{VALUE: (VALUE, "mean"), SCENARIO: (SCENARIO, "first")})
        sides["others_majority"] = others.assign(**{VALUE: (others[VALUE] >= 0.5).astype(float)}).reset_index()
        wanted[2] = (SELF, "others_majority")
    pairs = [
        two_rater_agreement(sides[first], sides[second], names=(first, second), resamples=resamples, seed=seed)
        for first, second in wanted
        if first in sides and second in sides
    ]
    return {"pairs": pairs, "judges": judges_fleiss(records, resamples=resamples, seed=seed),
            "method": f"{METHOD} {COHEN_METHOD}."}

