"""Every AgentSense analysis of one set of episodes, as one plain report (no Django).

Takes the goal answers (``goal_completion.GOAL_COLUMNS``) and the probe answers
(``implicit_reasoning.PROBE_COLUMNS``) and returns a dict of plain JSON values whose keys
docs/results-schema.md lists: goal completion per model and view (AgentSense Table 2), by ERG need,
goal type and scenario category (Figure 6), the over-estimation of self and other against the
judges' majority, attacker, defender and blind accuracy (Figure 5(b)), PSI per model and metric,
sender/receiver pairings (Figure 5(a)) and the agreement between perspectives.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from . import goal_completion as goals
from . import implicit_reasoning as reasoning
from .bootstrap import DEFAULT_RESAMPLES
from .perspective_agreement import METHOD as AGREEMENT_METHOD
from .perspective_agreement import perspective_agreement
from .plain import plain_report

ERG_ORDER = ("existence", "relatedness", "growth")
CATEGORY_ORDER = ("personal_domain", "small_society", "large_society")


def agentsense_report(
    goal_records: pd.DataFrame,
    probe_records: pd.DataFrame,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    goal_type_order: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The whole report; undefined numbers are None with a note, never NaN."""
    options = {"resamples": resamples, "seed": seed}
    views = goals.goal_views(goal_records)
    characters = goals.character_scores(views)
    view_names = goals.view_order(list(views[goals.VIEW].unique())) if len(views) else []
    primary = goals.primary_view(view_names)
    probe_characters = reasoning.character_accuracy(probe_records)
    models = sorted(
        {str(model) for model in characters[goals.MODEL]}
        | {str(model) for units in probe_characters.values() for model in units[goals.MODEL]}
    )
    notes: list[str] = []
    if not len(goal_records):
        notes.append("no goal answers: interview the agents and have judges answer the goals (`evaluate --interview`)")
    if not len(probe_records):
        notes.append("no probe answers: the scenarios need probes and the agents an interview")
    psi = {f"goal_completion.{view}": goals.profile_sensitivity(characters[characters[goals.VIEW] == view], **options)
           for view in view_names}
    for role in reasoning.ROLES:
        if len(probe_characters[role]):
            psi[role] = goals.profile_sensitivity(probe_characters[role], **options)
    report = {
        "models": models,
        "views": view_names,
        "primary_view": primary,
        "counts": {
            "episodes": int(pd.concat([goal_records[goals.EPISODE], probe_records[goals.EPISODE]]).nunique()),
            "scenarios": int(pd.concat([goal_records[goals.SCENARIO], probe_records[goals.SCENARIO]]).nunique()),
            "characters": int(characters[[goals.EPISODE, goals.SEAT]].drop_duplicates().shape[0]),
            "goal_answers": len(goal_records),
            "probe_answers": len(probe_records),
        },
        "completion": goals.completion_by_model(characters, **options),
        "completion_by_erg": {},
        "completion_by_goal_type": {},
        "completion_by_category": {},
        "erg_needs": goals.label_values(views, goals.ERG, ERG_ORDER),
        "goal_types": goals.label_values(views, goals.GOAL_TYPE, goal_type_order),
        "categories": goals.label_values(characters, goals.CATEGORY, CATEGORY_ORDER),
        "overestimation": {
            side: goals.view_difference(characters, side, goals.JUDGES_MAJORITY, **options)
            for side in (goals.SELF, goals.OTHER)
        },
        "reasoning": reasoning.reasoning_by_model(probe_characters, **options),
        "psi": psi,
        "pairings": goals.sender_receiver_pairings(characters, primary, **options),
        "agreement": perspective_agreement(goal_records, views, **options),
        "methods": {**goals.METHODS, "reasoning": reasoning.METHOD, "agreement": AGREEMENT_METHOD},
        "resamples": resamples,
        "seed": seed,
        "notes": notes,
    }
    if primary is not None:
        report["completion_by_erg"] = goals.completion_by_label(views, goals.ERG, primary, **options)
        report["completion_by_goal_type"] = goals.completion_by_label(views, goals.GOAL_TYPE, primary, **options)
        report["completion_by_category"] = goals.completion_by_label(characters, goals.CATEGORY, primary, **options)
    if goals.JUDGES_MAJORITY not in view_names and len(goal_records):
        notes.append("no external judge has answered the goals: over-estimation and pairings need one")
    return plain_report(report)
