"""AgentSense's goal completion from several perspectives, on plain records (no Django).

Input: one row per yes/no answer about one goal of one character (the seat of an episode), with
the columns below. ``value`` is 1 for yes and 0 for no; ``perspective`` says who answered:

- ``self``: the agent playing the character the goal belongs to;
- ``other``: another character's agent;
- ``judge``: an external judge reading the transcript (``respondent`` names which);
- ``human``: a human annotator (``respondent`` names which).

``model`` is the model of the seat the goal belongs to (the model being measured, whoever
answered), ``template`` the template scenario the scenario was instantiated from ("" if none),
``communication`` the role's ``sender``/``receiver`` label ("" if none).

**Views** turn the answers about one goal into one score in [0, 1]:

- ``self``: the character's own answer; ``other``: the mean of the other characters' answers
  (AgentSense averages them per goal: ``SENSE/metric.py``, ``GoalMetric``);
- ``judge:<name>``: one judge's answer; ``judges_average``: the mean of the judges' answers;
- ``judges_majority``: the judges' most common answer, a tie counting as yes (Parley's majority
  rule, ``benchmark.evaluation.majority``; AgentSense's ``statistics.mode`` takes the tied answer
  of the judge listed first, which depends on the order of the judges);
- ``humans``: the annotators' most common answer, under the same rule.

**Goal completion** (AgentSense §4.1) of a character is the mean of its goals' scores; of a model
the mean over its characters (each seat of each episode), the two-level mean of ``GoalMetric``. By
ERG need and goal type the unit is the goal (a character's goals may be of several types); by
scenario category it is the character. **PSI** (profile sensitivity index, AgentSense §3.3): per
template, the sample standard deviation (n - 1 in the denominator, ``np.std(..., ddof=1)`` in
``SENSE/utils/data_utils.py``, ``calculate_tmpl_res``) of the scenario-level metric over the
scenarios instantiated from it, averaged over templates; a template with one scenario has no
standard deviation and is left out. Every mean carries a 95% percentile CI from a bootstrap that
resamples scenarios (``bootstrap.clustered_mean``); PSI's resamples templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, Seed, clustered_mean

EPISODE = "episode"
SCENARIO = "scenario"
TEMPLATE = "template"
CATEGORY = "category"
MODEL = "model"
SEAT = "seat"
COMMUNICATION = "communication"
GOAL = "goal"
GOAL_TYPE = "goal_type"
ERG = "erg"
PERSPECTIVE = "perspective"
RESPONDENT = "respondent"
VALUE = "value"
VIEW = "view"
SCORE = "score"

SELF, OTHER, JUDGE, HUMAN = "self", "other", "judge", "human"
PERSPECTIVES = (SELF, OTHER, JUDGE, HUMAN)
JUDGES_AVERAGE, JUDGES_MAJORITY, HUMANS = "judges_average", "judges_majority", "humans"
JUDGE_PREFIX = "judge:"
SENDER, RECEIVER = "sender", "receiver"

GOAL_COLUMNS = (
    EPISODE, SCENARIO, TEMPLATE, CATEGORY, MODEL, SEAT, COMMUNICATION, GOAL, GOAL_TYPE, ERG, PERSPECTIVE,
    RESPONDENT, VALUE,
)
TARGET = [EPISODE, SEAT, GOAL]
GOAL_LABELS = [SCENARIO, TEMPLATE, CATEGORY, MODEL, COMMUNICATION, GOAL_TYPE, ERG]
CHARACTER_LABELS = [SCENARIO, TEMPLATE, CATEGORY, MODEL, COMMUNICATION]

METHODS = {
    "goal_completion": (
        "Per goal, one score per view: self = the character's own yes (1) or no (0); other = the mean of the "
        "other characters' answers; each judge's answer; the judges' average; the judges' majority (most "
        "common answer, a tie counts as yes); humans = the annotators' majority. A character's completion is "
        "the mean of its goals' scores, a model's the mean over its characters (every seat of every episode). "
        "95% CI: percentile bootstrap resampling scenarios with replacement."
    ),
    "by_label": (
        "By ERG need and goal type: the mean over the goals of that type (the unit is the goal); by scenario "
        "category: the mean over the characters of scenarios in that category. Same bootstrap."
    ),
    "overestimation": (
        "Per character, its completion in the self (or other) view minus its completion by the judges' "
        "majority, over characters with both; positive means the agents rate the goals as reached more often "
        "than the external judges do. Same bootstrap."
    ),
    "psi": (
        "Profile sensitivity index: per model, the metric per scenario (the mean over the model's characters "
        "in it), the sample standard deviation (n - 1) over the scenarios of each template, averaged over the "
        "templates that have two or more scenarios (AgentSense's calculate_tmpl_res). Lower is steadier. "
        "95% CI: percentile bootstrap resampling templates."
    ),
    "pairings": (
        "Episodes whose sender roles are all played by one model and receiver roles by one model: per "
        "(sender model, receiver model), the completion of every character, of the senders and of the "
        "receivers, in the chosen view (the judges' majority when there are judges). Same bootstrap."
    ),
}


def check_goal_records(records: pd.DataFrame) -> None:
    """Refuse records the analyses cannot read, naming the column and the value."""
    missing = [column for column in GOAL_COLUMNS if column not in records.columns]
    if missing:
        raise ValueError(f"the goal answers have no column {', '.join(missing)}")
    unknown = sorted(set(records[PERSPECTIVE].astype(str)) - set(PERSPECTIVES))
    if unknown:
        raise ValueError(f"unknown perspective {', '.join(unknown)}; use {', '.join(PERSPECTIVES)}")
    values = pd.to_numeric(records[VALUE], errors="coerce")
    bad = records[~values.isin([0, 1])]
    if len(bad):
        raise ValueError(f"goal answer value {bad[VALUE].iloc[0]!r} is not 0 (no) or 1 (yes)")


def _majority(shares: pd.Series) -> pd.Series:
    """1 where at least half said yes (a tie counts as yes), else 0."""
    return (shares >= 0.5).astype(float)


def goal_views(records: pd.DataFrame) -> pd.DataFrame:
    """One row per goal (episode, seat, goal) and view, with its score and the goal's labels."""
    check_goal_records(records)
    records = records.assign(**{VALUE: pd.to_numeric(records[VALUE]).astype(float)})
    labels = records.drop_duplicates(TARGET).set_index(TARGET)[GOAL_LABELS]
    frames: list[pd.DataFrame] = []

    def add(view: str, scores: pd.Series) -> None:
        frames.append(scores.rename(SCORE).to_frame().assign(**{VIEW: view}))

    for perspective in (SELF, OTHER):
        rows = records[records[PERSPECTIVE] == perspective]
        if len(rows):
            add(perspective, rows.groupby(TARGET)[VALUE].mean())
    for perspective, average, majority in ((JUDGE, JUDGES_AVERAGE, JUDGES_MAJORITY), (HUMAN, None, HUMANS)):
        rows = records[records[PERSPECTIVE] == perspective]
        if not len(rows):
            continue
        # One vote per respondent and goal (a respondent who answered twice votes by its own majority).
        votes = _majority(rows.groupby([*TARGET, RESPONDENT])[VALUE].mean())
        if perspective == JUDGE:
            for name, judged in votes.groupby(level=RESPONDENT, sort=True):
                add(JUDGE_PREFIX + str(name), judged.droplevel(RESPONDENT))
        if average:
            add(average, votes.groupby(level=TARGET).mean())
        add(majority, _majority(votes.groupby(level=TARGET).mean()))
    if not frames:
        return pd.DataFrame(columns=[*TARGET, VIEW, SCORE, *GOAL_LABELS])
    return pd.concat(frames).join(labels).reset_index()


def view_order(views: Sequence[str]) -> list[str]:
    """Self, other, each judge, the judges' average and majority, humans: the order of AgentSense's Table 2."""
    present = set(views)
    judges = sorted(view for view in present if view.startswith(JUDGE_PREFIX))
    return [view for view in (SELF, OTHER, *judges, JUDGES_AVERAGE, JUDGES_MAJORITY, HUMANS) if view in present]


def primary_view(views: Sequence[str]) -> str | None:
    """The view the breakdowns and pairings use: the judges' majority, else humans, other or self."""
    for view in (JUDGES_MAJORITY, HUMANS, OTHER, SELF):
        if view in views:
            return view
    return None


def character_scores(views: pd.DataFrame) -> pd.DataFrame:
    """One row per character (episode, seat) and view: the mean of its goals' scores, with its labels."""
    keys = [VIEW, EPISODE, SEAT]
    if views.empty:
        return pd.DataFrame(columns=[*keys, SCORE, *CHARACTER_LABELS])
    grouped = views.groupby(keys, sort=False)
    out = grouped[SCORE].mean().to_frame().join(grouped[CHARACTER_LABELS].first())
    return out.reset_index()


def _by(units: pd.DataFrame, keys: Sequence[str], resamples: int, seed: Seed) -> dict[str, Any]:
    """Nested dicts keyed by ``keys`` (in sorted order) of the clustered mean of each group's scores."""
    out: dict[str, Any] = {}
    for group, rows in units.groupby(list(keys), sort=True):
        group = group if isinstance(group, tuple) else (group,)
        node = out
        for key in group[:-1]:
            node = node.setdefault(str(key), {})
        node[str(group[-1])] = clustered_mean(rows[SCORE], rows[SCENARIO], resamples=resamples, seed=seed)
    return out


def completion_by_model(
    characters: pd.DataFrame, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, dict[str, Any]]:
    """{view: {model: cell}}: each model's goal completion in each view (AgentSense Table 2's columns)."""
    by_view = _by(characters, [VIEW, MODEL], resamples, seed)
    return {view: by_view[view] for view in view_order(list(by_view))}


def completion_by_label(
    units: pd.DataFrame, label: str, view: str, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, dict[str, Any]]:
    """{model: {label value: cell}} in one view; units without the label are left out (AgentSense Figure 6)."""
    rows = units[(units[VIEW] == view) & (units[label].fillna("").astype(str) != "")]
    return _by(rows, [MODEL, label], resamples, seed)


def view_difference(
    characters: pd.DataFrame, view: str, baseline: str, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, Any]:
    """Per character ``view`` minus ``baseline`` (say self minus the judges' majority): overall and per model."""
    wide = characters.pivot_table(index=[EPISODE, SEAT], columns=VIEW, values=SCORE, aggfunc="first")
    labels = characters.drop_duplicates([EPISODE, SEAT]).set_index([EPISODE, SEAT])[[SCENARIO, MODEL]]
    if view not in wide.columns or baseline not in wide.columns:
        return {"view": view, "baseline": baseline, "all": clustered_mean([], []), "by_model": {}}
    units = (wide[view] - wide[baseline]).dropna().rename(SCORE).to_frame().join(labels)
    return {
        "view": view, "baseline": baseline,
        "all": clustered_mean(units[SCORE], units[SCENARIO], resamples=resamples, seed=seed),
        "by_model": _by(units, [MODEL], resamples, seed),
    }


def profile_sensitivity(
    units: pd.DataFrame, value: str = SCORE, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, dict[str, Any]]:
    """{model: cell} of PSI: per template, the std (ddof=1) over its scenarios of the scenario's mean, averaged.

    ``units`` has one row per character with ``model``, ``scenario``, ``template`` and ``value``.
    A scenario without a template counts as a template of its own (so it is left out: one scenario).
    """
    out: dict[str, dict[str, Any]] = {}
    rows = units.dropna(subset=[value])
    for model, own in rows.groupby(MODEL, sort=True):
        scenarios = own.groupby(SCENARIO).agg(metric=(value, "mean"), template=(TEMPLATE, "first"))
        scenarios[TEMPLATE] = [
            str(template) if str(template) else f"scenario:{scenario}"
            for scenario, template in zip(scenarios.index, scenarios[TEMPLATE].fillna(""), strict=True)
        ]
        sizes = scenarios.groupby(TEMPLATE)["metric"].size()
        spreads = scenarios.groupby(TEMPLATE)["metric"].std(ddof=1)[sizes >= 2]
        cell = clustered_mean(spreads.to_numpy(), spreads.index.to_numpy(), resamples=resamples, seed=seed)
        notes = []
        single = int((sizes < 2).sum())
        if single:
            notes.append(f"{single} template(s) with a single scenario left out (no standard deviation)")
        out[str(model)] = {
            "psi": cell["mean"], "ci95": cell["ci95"], "templates": cell["n"],
            "scenarios": int(sizes[sizes >= 2].sum()), "by_template": {str(k): float(v) for k, v in spreads.items()},
            "notes": notes,
        }
    return out


def sender_receiver_pairings(
    characters: pd.DataFrame, view: str | None, *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, Any]:
    """Completion per (sender model, receiver model), of all characters, senders and receivers (Figure 5(a))."""
    result: dict[str, Any] = {"view": view, "senders": [], "receivers": [], "cells": [], "notes": []}
    rows = characters[characters[VIEW] == view] if view else characters.iloc[0:0]
    labelled = rows[rows[COMMUNICATION].isin([SENDER, RECEIVER])]
    pairs: dict[Any, tuple[str, str]] = {}
    mixed = 0
    for episode, seats in labelled.groupby(EPISODE, sort=False):
        senders = set(seats.loc[seats[COMMUNICATION] == SENDER, MODEL].astype(str))
        receivers = set(seats.loc[seats[COMMUNICATION] == RECEIVER, MODEL].astype(str))
        if len(senders) == 1 and len(receivers) == 1:
            pairs[episode] = (senders.pop(), receivers.pop())
        else:
            mixed += 1
    if mixed:
        result["notes"].append(
            f"{mixed} episode(s) left out: they lack a sender or a receiver, or their senders (or receivers) "
            "are played by several models"
        )
    if not pairs:
        return result
    rows = rows[rows[EPISODE].isin(list(pairs))]
    pair_of = rows[EPISODE].map(pairs)
    rows = rows.assign(sender_model=[pair[0] for pair in pair_of], receiver_model=[pair[1] for pair in pair_of])
    for (sender, receiver), group in rows.groupby(["sender_model", "receiver_model"], sort=True):
        cell = {"sender_model": sender, "receiver_model": receiver}
        for name, subset in (("all", group), ("senders", group[group[COMMUNICATION] == SENDER]),
                             ("receivers", group[group[COMMUNICATION] == RECEIVER])):
            cell[name] = clustered_mean(subset[SCORE], subset[SCENARIO], resamples=resamples, seed=seed)
        result["cells"].append(cell)
    result["senders"] = sorted({cell["sender_model"] for cell in result["cells"]})
    result["receivers"] = sorted({cell["receiver_model"] for cell in result["cells"]})
    return result


def empty_goal_records() -> pd.DataFrame:
    """A goal-answer table with every column and no rows."""
    return pd.DataFrame({column: pd.Series(dtype=float if column == VALUE else object) for column in GOAL_COLUMNS})


def label_values(units: pd.DataFrame, label: str, order: Sequence[str] = ()) -> list[str]:
    """The values of ``label`` present, in ``order`` first, then sorted."""
    present = {str(value) for value in units[label].dropna() if str(value)} if label in units else set()
    return [value for value in order if value in present] + sorted(present - set(order))

