"""AgentSense's implicit reasoning: attackers, defenders and the blind test, on plain records (no Django).

Input: one row per answer to a probe (a multiple-choice question about one character's private
information), with the columns below: the episode, scenario and template; ``seat`` and ``model``
of the character whose agent answered (the attacker), ``defender_seat`` and ``defender_model`` of
the character the probe is about, ``blind`` (True for the blind test: answered before any
interaction, without the transcript) and ``value`` (1 correct, 0 wrong). Answers about the
answering character's own information are left out: reasoning is about the others.

- **Attacker accuracy** (AgentSense §5.2, Figure 5(b)): per character, the share of its answers
  about the others that are correct; per model, the mean over its characters (as
  ``SENSE/metric.py``'s ``SingleChoiceMetric`` averages agents).
- **Defender score**: per character, 1 - the others' accuracy on the probes about it; per model,
  the mean over its characters.
- **Blind accuracy**: attacker accuracy from the blind answers, the baseline a model reaches from
  the scenario alone (AgentSense's blind test).

Every mean carries a 95% percentile CI from a bootstrap that resamples scenarios.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, Seed, clustered_mean
from .goal_completion import EPISODE, MODEL, SCENARIO, SCORE, SEAT, TEMPLATE, VALUE

DEFENDER_SEAT = "defender_seat"
DEFENDER_MODEL = "defender_model"
BLIND = "blind"
PROBE_COLUMNS = (EPISODE, SCENARIO, TEMPLATE, MODEL, SEAT, DEFENDER_SEAT, DEFENDER_MODEL, BLIND, VALUE)
ROLES = ("attacker", "defender", "blind")

METHOD = (
    "Attacker accuracy: per character, the share of its answers to probes about the other characters that "
    "are correct, then the mean over the model's characters. Defender score: per character, 1 - the share of "
    "the other characters' answers about it that are correct, then the mean over the model's characters. "
    "Blind accuracy: attacker accuracy of answers given without the conversation (the blind test). 95% CI: "
    "percentile bootstrap resampling scenarios with replacement."
)


def check_probe_records(records: pd.DataFrame) -> None:
    """Refuse records the analyses cannot read, naming the column and the value."""
    missing = [column for column in PROBE_COLUMNS if column not in records.columns]
    if missing:
        raise ValueError(f"the probe answers have no column {', '.join(missing)}")
    values = pd.to_numeric(records[VALUE], errors="coerce")
    bad = records[~values.isin([0, 1])]
    if len(bad):
        raise ValueError(f"probe answer value {bad[VALUE].iloc[0]!r} is not 0 (wrong) or 1 (correct)")


def character_accuracy(records: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per role (attacker, defender, blind), one row per character: its score, scenario, template and model."""
    check_probe_records(records)
    about_others = records[records[SEAT] != records[DEFENDER_SEAT]].assign(
        **{VALUE: lambda rows: pd.to_numeric(rows[VALUE]).astype(float)}
    )
    blind = about_others[BLIND].astype(bool)
    labels = {SCENARIO: (SCENARIO, "first"), TEMPLATE: (TEMPLATE, "first")}
    attackers = about_others[~blind].groupby([EPISODE, SEAT]).agg(
        **{SCORE: (VALUE, "mean"), MODEL: (MODEL, "first")}, **labels
    )
    defenders = about_others[~blind].groupby([EPISODE, DEFENDER_SEAT]).agg(
        **{SCORE: (VALUE, "mean"), MODEL: (DEFENDER_MODEL, "first")}, **labels
    )
    defenders[SCORE] = 1 - defenders[SCORE]
    blinds = about_others[blind].groupby([EPISODE, SEAT]).agg(
        **{SCORE: (VALUE, "mean"), MODEL: (MODEL, "first")}, **labels
    )
    return {"attacker": attackers.reset_index(), "defender": defenders.reset_index(), "blind": blinds.reset_index()}


def reasoning_by_model(
    characters: dict[str, pd.DataFrame], *, resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, dict[str, Any]]:
    """{role: {model: cell}} for attacker accuracy, defender score and blind accuracy."""
    out: dict[str, dict[str, Any]] = {}
    for role in ROLES:
        units = characters[role]
        out[role] = {
            str(model): clustered_mean(rows[SCORE], rows[SCENARIO], resamples=resamples, seed=seed)
            for model, rows in units.groupby(MODEL, sort=True)
        }
    return out
