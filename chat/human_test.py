"""AgentSense's human test: after a chat, the participant judges their own goals and answers the probes.

A participant who played one seat of a scenario with three or more roles, or of one with probes,
answers two things before the study's usual questionnaire, on the same page:

- **their own goals**: the shared ``agentsense-goals`` preset, one yes/no per goal of their role
  (the self perspective, as an interviewed agent gives it about its own seat);
- **the probes** they may be asked (``Probe.asked_of``; the scenario's ``scenario-probes``
  instrument): what they worked out about the others' private information, goals or reasons, as
  multiple choice. The correct option is never shown, only the options' texts.

The answers are stored as responses of the participant's respondent (kind ``participant``,
``chat.answers.participant_respondent``) with ``seat_position`` their seat, one per instrument,
in the same transaction as the questionnaire (``chat.answers.save_answers``): all or nothing. A
two-party scenario without probes asks nothing here, so such a study is as it was.

``human_test_answers`` reads them back for the researcher (the live monitor, a participant's
transcript page, the participants CSV): each own goal with its verdict, each probe with the option
picked and whether it is the correct one. The researcher is blind to nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django import forms

from benchmark.evaluation.interviews.instruments import (
    GOALS_PRESET,
    PROBES_PRESET,
    YES,
    goals_instrument,
    may_be_asked,
    probes_instrument,
)
from benchmark.instruments.forms import question_field
from benchmark.instruments.targets import Target
from benchmark.instruments.values import check_value, what_to_answer
from benchmark.models import Answer, Goal, Instrument, Probe, Question, Respondent, Response, Seat

from .answers import participant_respondent
from .models import Participant


@dataclass(frozen=True)
class HumanTest:
    """What one participant is asked: their seat, their goals, and the probes they may be asked."""

    seat_position: int
    goals_instrument: Instrument
    goal_question: Question
    goals: list[Goal]
    probes_instrument: Instrument | None
    probes: list[tuple[Question, Probe]]


def human_test_for(participant: Participant) -> HumanTest | None:
    """The participant's human test, or None when their scenario has two roles and no probes for them."""
    if participant.episode_id is None:
        return None
    human = (
        Seat.objects.filter(episode_id=participant.episode_id, player=Seat.Player.HUMAN)
        .select_related("role", "episode__scenario")
        .first()
    )
    if human is None or human.role is None:
        return None
    scenario = human.episode.scenario
    probes = [probe for probe in scenario.probes.select_related("about").order_by("position")]
    asked = [probe for probe in probes if may_be_asked(probe, human.position)]
    if scenario.roles.count() < 3 and not asked:
        return None
    instrument = goals_instrument()
    probe_instrument = probes_instrument(scenario) if asked else None
    questions = list(probe_instrument.questions.order_by("position")) if probe_instrument else []
    # The instrument has one question per probe, in probe order (``probes_instrument``).
    pairs = [(question, probe) for question, probe in zip(questions, probes, strict=True) if probe in asked]
    return HumanTest(
        seat_position=human.position,
        goals_instrument=instrument,
        goal_question=instrument.questions.get(key="goal_achieved"),
        goals=list(human.role.goals.order_by("position")),
        probes_instrument=probe_instrument,
        probes=pairs,
    )


def goal_field_name(goal: Goal) -> str:
    return f"goal-{goal.pk}"


def probe_field_name(question: Question) -> str:
    return f"probe-{question.key}"


class HumanTestForm(forms.Form):
    """One yes/no field per own goal, then one multiple-choice field per probe; every answer required."""

    def __init__(self, test: HumanTest | None, data: Any = None) -> None:
        super().__init__(data)
        self.test = test
        if test is None:
            return
        for number, goal in enumerate(test.goals, start=1):
            field = question_field(test.goal_question)
            field.label, field.number, field.help_text = goal.text, number, ""
            field.required = True
            field.error_messages["required"] = f"Please say whether you reached your goal {number}: “{goal.text}”."
            field.error_messages["invalid_choice"] = f"Goal {number}: {what_to_answer(test.goal_question)}"
            self.fields[goal_field_name(goal)] = field
        for number, (question, _) in enumerate(test.probes, start=1):
            field = question_field(question)
            field.number, field.required = number, True
            field.error_messages["required"] = f"Please answer question {number} about the others: “{question.prompt}”."
            field.error_messages["invalid_choice"] = f"Question {number} about the others: {what_to_answer(question)}"
            self.fields[probe_field_name(question)] = field

    @property
    def goal_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name.startswith("goal-")]

    @property
    def probe_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name.startswith("probe-")]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.test is None:
            return data
        for name, question in self._questions():
            text = data.get(name)
            if text:
                _, _, problem = check_value(question, text)
                if problem:
                    self.add_error(name, problem)
        return data

    def _questions(self) -> list[tuple[str, Question]]:
        test = self.test
        assert test is not None
        named = [(goal_field_name(goal), test.goal_question) for goal in test.goals]
        return named + [(probe_field_name(question), question) for question, _ in test.probes]


def store_human_test(form: HumanTestForm, participant: Participant, now: datetime) -> list[Response]:
    """Store the valid form as the participant's responses (goals, then probes); called by
    ``chat.answers.save_answers`` inside the transaction that finishes them, so both go together."""
    test = form.test
    if test is None:
        return []
    respondent = participant_respondent(participant)
    stored = []
    goal_rows = [(test.goal_question, Target.of_goal(goal.pk), form.cleaned_data[goal_field_name(goal)])
                 for goal in test.goals]
    probe_rows = [(question, Target.episode(), form.cleaned_data[probe_field_name(question)])
                  for question, _ in test.probes]
    for instrument, rows in ((test.goals_instrument, goal_rows), (test.probes_instrument, probe_rows)):
        if instrument is None or not rows:
            continue
        response = Response.objects.create(
            instrument=instrument, episode_id=participant.episode_id, respondent=respondent,
            seat_position=test.seat_position, status=Response.Status.SUBMITTED, created_at=now,
        )
        Answer.objects.bulk_create(
            Answer(response=response, question=question, **target.columns(), value=value)
            for question, target, value in rows
        )
        stored.append(response)
    return stored


# Reading back, for the researcher


@dataclass
class HumanTestAnswers:
    """A participant's stored human test: (goal, yes / no) in goal order, (probe, option picked, correct?) in
    probe order."""

    goals: list[tuple[str, str]] = field(default_factory=list)
    probes: list[tuple[str, str, bool]] = field(default_factory=list)

    @property
    def goals_reached(self) -> int:
        return sum(verdict == YES for _, verdict in self.goals)

    @property
    def probes_correct(self) -> int:
        return sum(correct for _, _, correct in self.probes)

    @property
    def summary(self) -> str:
        """In a line, for a table cell: '1 of 2 own goals reached; 2 of 2 probes right'."""
        parts = []
        if self.goals:
            parts.append(f"{self.goals_reached} of {len(self.goals)} own goals reached")
        if self.probes:
            parts.append(f"{self.probes_correct} of {len(self.probes)} probes right")
        return "; ".join(parts)


def human_test_answers(participants: Iterable[Participant]) -> dict[int, HumanTestAnswers]:
    """The stored human tests of ``participants`` by participant pk (none for those without one), in one query.

    A participant's answers are their respondent's (labelled with their id) about their own episode.
    """
    whose = {participant.episode_id: participant for participant in participants if participant.episode_id}
    rows = (
        Answer.objects.filter(
            response__episode_id__in=whose,
            response__respondent__kind=Respondent.Kind.PARTICIPANT,
            response__instrument__preset__in=(GOALS_PRESET, PROBES_PRESET),
        )
        .order_by("response__episode_id", "goal__position", "question__position", "pk")
        .values_list("response__episode_id", "response__respondent__label", "goal__text", "question__prompt",
                     "question__options", "value")
    )
    found: dict[int, HumanTestAnswers] = {}
    for episode_id, label, goal, prompt, options, value in rows:
        participant = whose[episode_id]
        if label != participant.participant_id:
            continue
        answers = found.setdefault(participant.pk, HumanTestAnswers())
        if goal is not None:
            answers.goals.append((goal, value))
            continue
        labels = {str(choice.get("value")): str(choice.get("label", "")) for choice in options.get("choices", [])}
        answers.probes.append((prompt, labels.get(value, value), value == str(options.get("correct"))))
    return found
