"""Human answers about goals and probes set against the models' (AgentSense, Table 8 and §5).

**Goals.** Each goal of each regular item's episode gets the annotators' **majority** yes/no (a
tie is no majority: the goal is left out and counted). Every other respondent's answer about that
goal, read through ``benchmark.instruments.answers`` for the respondent kinds the report compares
with, is a **self**, **other** or **external** judgement (``RespondentAnswer.perspective``: the
agent that held the goal, another agent of the episode, a judge or another study's annotator).
Per perspective, pooled and per respondent (kind, model, prompt version):

- ``accuracy``: the share of the perspective's answers that agree with the human majority, with
  ``n`` answers over ``goals`` distinct goals (an "other" goal has one answer per other seat, so
  ``n`` may exceed ``goals``) — AgentSense's "accuracy of model judges against humans";
- ``kappa``: Cohen's kappa of the (human majority, model answer) pairs, and ``yes_share`` beside
  ``human_yes_share`` on the same pairs: a self perspective that says yes more often than the
  humans over-estimates its own success, the paper's finding.

The annotators' own agreement on goals (Fleiss' kappa and percent agreement over goal units,
``"<item>:g<goal id>"``) comes first, since a majority of annotators who disagree is weak ground.

**Probes.** Annotators' answers to the scenario's probes (``annotator.probes``) are scored
against each question's correct option: the humans' accuracy. Beside it stands each interviewed
model's **attacker accuracy** on the same questions and episodes: the share correct of its answers
about other roles' information (``Probe.about`` vs the role of the seat that answered), and its
**blind** accuracy (prompt versions starting ``blind-`` or ``scripted-blind-``: probes answered
before the conversation). Agents are read only when the report compares with them, and only on the
probes annotators are asked (``annotator.probes.asked_of_annotators``: none about a goal the page shows).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from django.db.models import QuerySet

from benchmark.evaluation.interviews.instruments import PROBES_PRESET
from benchmark.instruments.answers import EXTERNAL, OTHER, SELF, RespondentAnswer, respondent_answers
from benchmark.instruments.kinds import get_kind
from benchmark.models import Answer, Probe, Question, Respondent, Response, Seat
from benchmark.stats.kappa import cohen_kappa_from_table, fleiss_kappa, percent_agreement

from ..models import Annotation, Study, StudyItem
from ..probes import asked_of_annotators, asks_probes
from .comparison import respondent_name

PERSPECTIVES = (SELF, OTHER, EXTERNAL)
YES_NO = ("yes", "no")
BLIND_PREFIXES = ("blind-", "scripted-blind-")


def agentsense_report(
    annotations: QuerySet[Annotation], questions: Sequence[Question], respondent_kinds: Sequence[str], *,
    exclude_study: Study, resamples: int, seed: int,
) -> dict[str, Any] | None:
    """The goals and probes comparison of a study's latest submitted ``annotations`` (None when it asks neither).

    ``questions`` are the study instrument's; its yes/no questions asked per goal are the goal
    questions. ``exclude_study`` is the study itself: its own responses are never among the compared respondents.
    """
    goal_questions = [q for q in questions if q.scope == Question.Scope.GOAL and get_kind(q.kind).boolean]
    regular = annotations.filter(assignment__item__kind=StudyItem.Kind.REGULAR)
    has_probes = asks_probes(exclude_study.instrument) and regular.filter(probes_response__isnull=False).exists()
    if not goal_questions and not has_probes:
        return None
    own = Response.objects.filter(annotation__assignment__item__study=exclude_study)
    own_probes = Response.objects.filter(probe_annotation__assignment__item__study=exclude_study)
    episodes = list(regular.values_list("assignment__item__episode_id", flat=True).distinct())
    result: dict[str, Any] = {"goals": None, "probes": None}
    if goal_questions:
        human = list(
            Answer.objects.filter(
                response__annotation__in=regular, question__key__in=[q.key for q in goal_questions],
                goal__isnull=False,
            ).order_by("pk").values_list(
                "response__annotation__assignment__item__position", "response__episode_id", "goal_id",
                "response__respondent__user_id", "value",
            )
        )
        others = respondent_answers(episodes, goal_questions, kinds=respondent_kinds, exclude_responses=own)
        result["goals"] = goal_comparison(human, [row for row in others if row.target.goal is not None],
                                          resamples=resamples, seed=seed)
    if has_probes:
        # Only the probes annotators are asked, for humans (answers from before a probe was left out too) and agents.
        probe_questions = asked_of_annotators(list(Question.objects.filter(
            instrument__preset=PROBES_PRESET, instrument__scenario__episodes__in=episodes,
        ).distinct()), list(questions))
        human_probes = list(
            Answer.objects.filter(response__probe_annotation__in=regular, question__in=probe_questions)
            .values_list("question_id", "value")
        )
        agents: list[RespondentAnswer] = []
        if Respondent.Kind.AGENT in respondent_kinds:
            agents = respondent_answers(
                episodes, probe_questions, kinds=[Respondent.Kind.AGENT], exclude_responses=own_probes
            )
        result["probes"] = probe_comparison(human_probes, agents)
    return result


def goal_comparison(
    human: Iterable[tuple[int, int, int, int, str]], others: Sequence[RespondentAnswer], *, resamples: int, seed: int
) -> dict[str, Any]:
    """``human``: (item position, episode, goal, annotator, value) rows; ``others``: answers about goals."""
    votes: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
    records = []
    for position, episode_id, goal_id, annotator, value in human:
        if value in YES_NO:
            votes[episode_id, goal_id][value] += 1
            records.append({"item": f"{position + 1}:g{goal_id}", "annotator": annotator, "value": value})
    table = pd.DataFrame.from_records(records, columns=["item", "annotator", "value"])
    fleiss = fleiss_kappa(table, categories=list(YES_NO), resamples=resamples, seed=seed).to_dict() if records else {
        "value": None, "ci95": None, "method": None,
    }
    majority: dict[tuple[int, int], str] = {}
    for key, counts in votes.items():
        ranked = counts.most_common()
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            majority[key] = ranked[0][0]
    pairs: dict[tuple[str, ...], list[tuple[str, str, tuple[int, int]]]] = defaultdict(list)
    for row in others:
        key = (row.episode_id, row.target.goal)
        if row.value not in YES_NO or key not in majority or row.perspective not in PERSPECTIVES:
            continue
        pair = (majority[key], row.value, key)
        pairs[(row.perspective,)].append(pair)
        pairs[(row.perspective, *row.respondent_key)].append(pair)
    rows = [
        {
            "perspective": key[0],
            "respondent_kind": key[1] if len(key) > 1 else None,
            "respondent": respondent_name(key[2]) if len(key) > 1 else None,
            "prompt_version": key[3] if len(key) > 1 else None,
            **_agreement(pairs[key]),
        }
        for key in sorted(pairs, key=lambda key: (PERSPECTIVES.index(key[0]), len(key) > 1, key[1:]))
    ]
    return {
        "goals": len(votes),
        "goals_with_majority": len(majority),
        "ties": len(votes) - len(majority),
        "annotators": {
            "fleiss_kappa": fleiss,
            "percent_agreement": percent_agreement(table) if len(table) else None,
            "ratings": len(table),
        },
        "perspectives": rows,
    }


def _agreement(pairs: list[tuple[str, str, tuple[int, int]]]) -> dict[str, Any]:
    """Accuracy, Cohen's kappa and yes shares of (human majority, model answer) pairs."""
    n = len(pairs)
    table = [[sum(1 for h, m, _ in pairs if (h, m) == (a, b)) for b in YES_NO] for a in YES_NO]
    kappa = cohen_kappa_from_table(table)
    return {
        "n": n,
        "goals": len({goal for _, _, goal in pairs}),
        "accuracy": sum(h == m for h, m, _ in pairs) / n if n else None,
        "kappa": kappa.value,
        "kappa_notes": kappa.notes,
        "yes_share": sum(m == "yes" for _, m, _ in pairs) / n if n else None,
        "human_yes_share": sum(h == "yes" for h, _, _ in pairs) / n if n else None,
    }


def probe_comparison(human: Sequence[tuple[int, str]], agents: Sequence[RespondentAnswer]) -> dict[str, Any]:
    """Humans' accuracy on the probes, and each agent model's attacker and blind accuracy beside it."""
    question_ids = {question_id for question_id, _ in human} | {row.question_id for row in agents}
    questions = Question.objects.filter(pk__in=question_ids).values_list(
        "pk", "options", "position", "instrument__scenario_id"
    )
    correct = {pk: str((options or {}).get("correct", "")) for pk, options, _, _ in questions}
    about = _probe_roles({pk: (scenario, position) for pk, _, position, scenario in questions})
    seat_roles = dict(
        ((episode, position), role) for episode, position, role in Seat.objects.filter(
            episode_id__in={row.episode_id for row in agents}
        ).values_list("episode_id", "position", "role_id")
    )
    scored = [value == correct.get(question_id) for question_id, value in human if value != ""]
    by_model: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for row in agents:
        if row.value == "":
            continue
        blind = row.prompt_version.startswith(BLIND_PREFIXES)
        if not blind and seat_roles.get((row.episode_id, row.response_seat)) == about.get(row.question_id):
            continue  # an answer about the seat's own information is no inference
        by_model["blind" if blind else "attacker", row.respondent].append(row.value == correct.get(row.question_id))
    return {
        "humans": {"n": len(scored), "correct": sum(scored), "accuracy": sum(scored) / len(scored) if scored else None},
        "agents": [
            {
                "measure": measure, "model": model, "n": len(hits), "correct": sum(hits),
                "accuracy": sum(hits) / len(hits),
            }
            for (measure, model), hits in sorted(by_model.items())
        ],
    }


def _probe_roles(positions: dict[int, tuple[int | None, int]]) -> dict[int, int]:
    """The role each probe question is about: the probe of its scenario at its position."""
    scenarios = {scenario for scenario, _ in positions.values() if scenario is not None}
    probes = {
        (scenario, position): role
        for scenario, position, role in Probe.objects.filter(scenario_id__in=scenarios).values_list(
            "scenario_id", "position", "about_id"
        )
    }
    return {pk: probes[key] for pk, key in positions.items() if key in probes}


def summary_lines(section: dict[str, Any] | None) -> list[str]:
    """The comparison in a few lines of text, for the command line."""
    if not section:
        return []
    lines = []
    goals = section.get("goals")
    if goals:
        annotators = goals["annotators"]
        lines.append(
            f"Goals: {goals['goals_with_majority']} of {goals['goals']} with a human majority "
            f"(annotators' Fleiss kappa {_figure(annotators['fleiss_kappa']['value'])}, "
            f"agreement {_figure(annotators['percent_agreement'])})."
        )
        for row in goals["perspectives"]:
            who = "all" if row["respondent"] is None else f"{row['respondent']} ({row['respondent_kind']})"
            lines.append(
                f"  {row['perspective']:<8} {who}: accuracy {_figure(row['accuracy'])} (n={row['n']}, "
                f"{row['goals']} goals), kappa {_figure(row['kappa'])}, yes {_figure(row['yes_share'])} vs "
                f"humans {_figure(row['human_yes_share'])}"
            )
        if not goals["perspectives"]:
            lines.append("  no model answers about these goals from the compared respondents")
    probes = section.get("probes")
    if probes:
        humans = probes["humans"]
        lines.append(f"Probes: humans {_figure(humans['accuracy'])} correct (n={humans['n']}).")
        lines.extend(
            f"  {row['measure']:<8} {row['model']}: {_figure(row['accuracy'])} (n={row['n']})"
            for row in probes["agents"]
        )
    return lines


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
