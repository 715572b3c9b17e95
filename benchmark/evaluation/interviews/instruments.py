"""The instruments of an interview: the shared goals preset, and one instrument per scenario of its probes."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from ...models import Instrument, Probe, Question, Scenario

GOALS_PRESET = "agentsense-goals"
PROBES_PRESET = "scenario-probes"
YES, NO = "yes", "no"

# The preset as the migration that adds it writes it (0015); made again here only if it is missing,
# as in a test database emptied between tests.
GOALS_INSTRUMENT = {
    "name": "AgentSense goals",
    "description": (
        "Goal completion judged yes or no, one goal at a time (after AgentSense). Asked of every agent "
        "after its episode about its own goals and the other characters' goals, so its view of itself "
        "can be set against the others' view of it and against external judges."
    ),
}
GOALS_QUESTION = {
    "key": "goal_achieved",
    "kind": Question.Kind.YES_NO,
    "prompt": "By the end of the conversation, was this goal achieved?",
    "help_text": (
        "Answer for the goal shown, from what happened in the conversation: yes if it was reached, "
        "no if it was not or only in part."
    ),
    "scope": Question.Scope.GOAL,
    "rationale": "optional",
    "options": {"choices": [{"value": YES, "label": "Yes"}, {"value": NO, "label": "No"}]},
    "dimension": "goal_achieved",
}


def goals_instrument() -> Instrument:
    """The shared preset *AgentSense goals* (its latest version)."""
    found = Instrument.objects.filter(team=None, preset=GOALS_PRESET).order_by("-version").first()
    if found is not None:
        return found
    with transaction.atomic():
        instrument = Instrument.objects.create(team=None, preset=GOALS_PRESET, frozen_at=timezone.now(),
                                               **GOALS_INSTRUMENT)
        Question.objects.create(instrument=instrument, position=0, **GOALS_QUESTION)
    return instrument


def probe_question(probe: Probe, position: int) -> dict[str, Any]:
    """The multiple-choice question a probe becomes: its text and options, the correct one named."""
    return {
        "key": f"probe_{position + 1}",
        "position": position,
        "kind": Question.Kind.MULTIPLE_CHOICE,
        "prompt": probe.text,
        "scope": Question.Scope.EPISODE,
        "rationale": "optional",
        "options": {
            "choices": [{"value": str(index), "label": option} for index, option in enumerate(probe.options)],
            "correct": str(probe.correct),
        },
        "dimension": f"probe_{probe.topic}",
    }


def probes_instrument(scenario: Scenario) -> Instrument | None:
    """The instrument of the scenario's probes (None without probes), built on first use.

    It is frozen when built; when the probes have changed since, a new version is built, so
    answers already given keep the questions they answered.
    """
    probes = list(scenario.probes.order_by("position"))
    if not probes:
        return None
    wanted = [probe_question(probe, position) for position, probe in enumerate(probes)]
    latest = Instrument.objects.filter(scenario=scenario, preset=PROBES_PRESET).order_by("-version").first()
    if latest is not None:
        have = [
            {"key": q.key, "position": q.position, "kind": q.kind, "prompt": q.prompt, "scope": q.scope,
             "rationale": q.rationale, "options": q.options, "dimension": q.dimension}
            for q in latest.questions.order_by("position")
        ]
        if have == wanted:
            return latest
    with transaction.atomic():
        instrument = Instrument.objects.create(
            team=scenario.team,
            scenario=scenario,
            preset=PROBES_PRESET,
            name=f"Probes of {scenario.external_id or f'parley-scenario-{scenario.pk}'}",
            version=latest.version + 1 if latest else 1,
            description="The scenario's probes as multiple-choice questions, asked of interviewed agents.",
            frozen_at=timezone.now(),
        )
        Question.objects.bulk_create(Question(instrument=instrument, **question) for question in wanted)
    return instrument


def may_be_asked(probe: Probe, role_position: int) -> bool:
    """Whether the seat playing ``role_position`` may be asked ``probe`` (``Probe.asked_of``)."""
    if probe.asked_of == Probe.AskedOf.SELF:
        return probe.about.position == role_position
    if probe.asked_of == Probe.AskedOf.OTHERS:
        return probe.about.position != role_position
    return True
