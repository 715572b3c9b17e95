"""The scenario's probes on the item page of a study that asks them (the AgentSense preset).

AgentSense asks people the same multiple-choice questions about the characters' private
information that the agents answer after their episode. Those probes belong to the scenario, not
to the study: a study's items come from many scenarios, each with its own probes, or none. So the
probes cannot be questions of the study's instrument. Three designs were possible:

- a study instrument per scenario, which breaks "a study has one instrument" for every page,
  report and export that relies on it;
- copying the probes into the annotator's response, which the database refuses (an answer's
  question belongs to its response's instrument) and which would cut them off from the agents'
  answers to the very same questions;
- a second response of the same annotator respondent, to the scenario's probes instrument
  (``benchmark.evaluation.interviews.instruments.probes_instrument``, the one the interviewed
  agents answer).

Parley takes the third: ``Annotation.probes_response`` is that response. The agents' and the
humans' probe answers are then answers to the same ``Question`` rows, compared through one reader,
and the correct option stays in the question's options, which the page never shows
(``item_page.QuestionView``). ``annotator.drafts`` keeps the second response's status in step with
the version's (draft, submitted, superseded), exactly as it does the first's, and in the same
transaction, so a submit or an edit is all or nothing across both.

Annotators are tested on these probes, so the page never shows their answers: a role's private
knowledge and reason are not on it at all (``annotator.item_page``). A goal is different: the
preset asks whether each goal was reached, so each goal stands beside its question, and a probe
*about a goal* would then be answered by the page itself. Such probes are left out of what
annotators are asked (``asked_of_annotators``) whenever the study rates goals one by one; the
agreement report sets the agents' accuracy on the same kinds of probes beside the humans'.
"""

from __future__ import annotations

from benchmark.evaluation.interviews.instruments import probes_instrument
from benchmark.instruments.presets import PRESETS
from benchmark.models import Instrument, Probe, Question, Scenario

GOAL_PROBE = f"probe_{Probe.Topic.GOAL}"  # the dimension of a probe question about a goal


def asks_probes(instrument: Instrument) -> bool:
    """Whether a study with ``instrument`` also asks each episode's scenario probes (a preset's ``asks_probes``)."""
    spec = PRESETS.get(instrument.preset)
    return bool(spec and spec.asks_probes)


def probes_for(instrument: Instrument, scenario: Scenario) -> Instrument | None:
    """The probes instrument a new annotation of ``scenario``'s episode answers, or None (no probes, or not asked)."""
    if not asks_probes(instrument):
        return None
    return probes_instrument(scenario)


def shows_goals(questions: list[Question]) -> bool:
    """Whether an instrument's questions put every goal on the page, one question per goal."""
    return any(question.scope == Question.Scope.GOAL for question in questions)


def asked_of_annotators(probe_questions: list[Question], study_questions: list[Question]) -> list[Question]:
    """The probe questions an annotator answers: all but those about a goal the study's questions show."""
    if not shows_goals(study_questions):
        return list(probe_questions)
    return [question for question in probe_questions if question.dimension != GOAL_PROBE]
