"""AgentSense's answers from the database as the plain records ``benchmark.stats.agentsense`` takes.

What counts (the shared contract of issue 14):

- **Goal answers**: submitted yes/no answers about a goal to any question measuring
  ``goal_achieved`` (the ``agentsense-goals`` preset, or an annotation instrument asking the same).
  An interviewed agent's or a participant's answer is ``self`` when the seat that answered
  (``Response.seat_position``) plays the role the goal belongs to, ``other`` otherwise; a judge's
  is ``judge``, an annotator's ``human``. The model measured is the model of the goal's seat.
- **Probe answers**: submitted answers of agents and participants to the scenario's probes
  instrument (preset ``scenario-probes``; question *i* is the scenario's probe *i* in order), right
  when the value is the question's ``correct`` option. The attacker is the seat that answered; the
  defender the seat playing the role the probe is about. Answers of a respondent whose prompt
  version starts with ``blind-`` or ``scripted-blind-`` are the blind test.

Everything is read through ``benchmark.instruments.answers.respondent_answers`` in a fixed number
of queries, for the episodes of the asking researcher's teams that match the filters.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
from django.db.models import QuerySet

from ...evaluation.interviews.instruments import GOALS_QUESTION, NO, PROBES_PRESET, YES
from ...instruments.answers import RespondentAnswer, respondent_answers
from ...models import ERG, Episode, Goal, GoalType, Instrument, Probe, Question, Respondent, Seat
from ...stats import goal_completion as goals
from ...stats.agentsense import agentsense_report
from ...stats.bootstrap import DEFAULT_RESAMPLES
from ...stats.implicit_reasoning import PROBE_COLUMNS

SCHEMA_VERSION = 1
HUMAN_PLAYER = "human"
UNKNOWN_MODEL = "unknown model"
BLIND_PREFIXES = ("blind-", "scripted-blind-")
GOAL_DIMENSION = GOALS_QUESTION["dimension"]
PERSPECTIVE_OF_KIND = {Respondent.Kind.JUDGE: goals.JUDGE, Respondent.Kind.ANNOTATOR: goals.HUMAN}


@dataclass(frozen=True)
class AgentSenseFilters:
    """Which episodes the analyses cover; empty strings mean 'any'."""

    tag: str = ""
    model: str = ""  # episodes with a seat played by this model
    template: str = ""  # a template scenario's id: only scenarios instantiated from it
    category: str = ""  # AgentSense's scenario category

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def apply(self, episodes: QuerySet[Episode]) -> QuerySet[Episode]:
        if self.tag:
            episodes = episodes.filter(tag=self.tag)
        if self.model:
            episodes = episodes.filter(pk__in=Seat.objects.filter(model=self.model).values("episode_id"))
        if self.template:
            episodes = episodes.filter(scenario__template_id=self.template)
        if self.category:
            episodes = episodes.filter(scenario__category=self.category)
        return episodes


def is_blind(prompt_version: str) -> bool:
    """Whether answers under this prompt version are the blind test (no conversation seen)."""
    return prompt_version.startswith(BLIND_PREFIXES)


def _seat_model(model: str, player: str) -> str:
    return model or (HUMAN_PLAYER if player == HUMAN_PLAYER else UNKNOWN_MODEL)


class _Episodes:
    """The labels of the selected episodes and their seats, read once."""

    def __init__(self, episodes: QuerySet[Episode]) -> None:
        self.labels = {
            pk: {goals.SCENARIO: str(scenario), goals.CATEGORY: category or "",
                 goals.TEMPLATE: "" if template is None else (codename or f"template {template}")}
            for pk, scenario, category, template, codename in episodes.values_list(
                "pk", "scenario_id", "scenario__category", "scenario__template_id", "scenario__template__codename"
            )
        }
        self.seat_of_role: dict[tuple[int, int], int] = {}
        self.seats: dict[tuple[int, int], dict[str, str]] = {}
        for episode, position, role, model, player, communication in Seat.objects.filter(
            episode_id__in=list(self.labels)
        ).values_list("episode_id", "position", "role_id", "model", "player", "role__communication"):
            self.seat_of_role[episode, role] = position
            self.seats[episode, position] = {goals.MODEL: _seat_model(model, player),
                                             goals.COMMUNICATION: communication or ""}


def _judge_names(rows: list[RespondentAnswer]) -> dict[tuple[str, str], str]:
    """A judge's name: its model, with the prompt version when the model judged under several."""
    versions = Counter(name for name, _ in {(row.respondent, row.prompt_version) for row in rows})
    return {
        (row.respondent, row.prompt_version): row.respondent if versions[row.respondent] == 1
        else f"{row.respondent} ({row.prompt_version})"
        for row in rows
    }


def goal_records(episodes: QuerySet[Episode], known: _Episodes) -> tuple[pd.DataFrame, int]:
    """The goal answers as records, and how many answers could not be placed (no seat or not yes/no)."""
    question = Question.objects.filter(dimension=GOAL_DIMENSION, scope=Question.Scope.GOAL).first()
    if question is None:
        return goals.empty_goal_records(), 0
    rows = [row for row in respondent_answers(episodes, [question], kinds=Respondent.Kind.values)
            if row.target.goal is not None]
    goal_info = dict((pk, (role, goal_type)) for pk, role, goal_type in Goal.objects.filter(
        pk__in={row.target.goal for row in rows}
    ).values_list("pk", "role_id", "goal_type"))
    judge_names = _judge_names([row for row in rows if row.respondent_kind == Respondent.Kind.JUDGE])
    records, skipped = [], 0
    for row in rows:
        role, goal_type = goal_info[row.target.goal]
        seat = known.seat_of_role.get((row.episode_id, role))
        answer = {YES: 1, NO: 0}.get(row.value.strip().lower())
        # a judge's or annotator's answer is theirs; a seated respondent's is self or other, as the reader says
        perspective = PERSPECTIVE_OF_KIND.get(row.respondent_kind) or (
            row.perspective if row.perspective in (goals.SELF, goals.OTHER) else None
        )
        if seat is None or answer is None or perspective is None:
            skipped += 1
            continue
        name = judge_names.get((row.respondent, row.prompt_version), row.respondent)
        records.append({
            goals.EPISODE: row.episode_id, **known.labels[row.episode_id], **known.seats[row.episode_id, seat],
            goals.SEAT: seat, goals.GOAL: row.target.goal, goals.GOAL_TYPE: goal_type,
            goals.ERG: ERG.get(goal_type, ""),
            goals.PERSPECTIVE: perspective, goals.RESPONDENT: name, goals.VALUE: answer,
        })
    return (pd.DataFrame(records, columns=goals.GOAL_COLUMNS) if records else goals.empty_goal_records()), skipped


def probe_records(episodes: QuerySet[Episode], known: _Episodes) -> pd.DataFrame:
    """The probe answers of agents and participants as records (attacker, defender, blind, correct)."""
    scenarios = {int(label[goals.SCENARIO]) for label in known.labels.values()}
    questions = list(Question.objects.filter(
        instrument__in=Instrument.objects.filter(preset=PROBES_PRESET, scenario_id__in=scenarios)
    ).select_related("instrument"))
    # Question i of a probes instrument is the scenario's probe i, in the probes' order.
    by_scenario: dict[int, list[int]] = {}
    probes = Probe.objects.filter(scenario_id__in=scenarios).order_by("scenario_id", "position")
    for scenario, role in probes.values_list("scenario_id", "about_id"):
        by_scenario.setdefault(scenario, []).append(role)
    defender_role = {
        (scenario, index): role for scenario, roles in by_scenario.items() for index, role in enumerate(roles)
    }
    question_info = {q.pk: (q.instrument.scenario_id, q.position, str(q.options.get("correct", ""))) for q in questions}
    rows = respondent_answers(
        episodes, questions, kinds=[Respondent.Kind.AGENT, Respondent.Kind.PARTICIPANT]
    )
    records = []
    for row in rows:
        if row.question_id not in question_info or row.response_seat is None:
            continue
        scenario, position, correct = question_info[row.question_id]
        role = defender_role.get((scenario, position))
        defender = known.seat_of_role.get((row.episode_id, role))
        if defender is None or (row.episode_id, row.response_seat) not in known.seats:
            continue
        records.append({
            goals.EPISODE: row.episode_id, goals.SCENARIO: known.labels[row.episode_id][goals.SCENARIO],
            goals.TEMPLATE: known.labels[row.episode_id][goals.TEMPLATE],
            goals.MODEL: known.seats[row.episode_id, row.response_seat][goals.MODEL], goals.SEAT: row.response_seat,
            "defender_seat": defender, "defender_model": known.seats[row.episode_id, defender][goals.MODEL],
            "blind": is_blind(row.prompt_version), goals.VALUE: int(row.value == correct),
        })
    return pd.DataFrame(records, columns=PROBE_COLUMNS)


def build_agentsense(
    filters: AgentSenseFilters, episodes: QuerySet[Episode], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """The report for the filtered episodes, and the goal and probe records behind it."""
    selected = filters.apply(episodes)
    known = _Episodes(selected)
    goal_rows, skipped = goal_records(selected, known)
    probe_rows = probe_records(selected, known)
    report = agentsense_report(
        goal_rows, probe_rows, resamples=resamples, seed=seed, goal_type_order=tuple(GoalType.values)
    )
    if skipped:
        report["notes"].append(f"{skipped} goal answer(s) left out: no seat plays the goal's role, the answering "
                               "seat is unknown, or the value is not yes or no")
    report["filters"] = filters.to_dict()
    report["schema_version"] = SCHEMA_VERSION
    report["counts"]["selected_episodes"] = len(known.labels)
    return report, goal_rows, probe_rows
