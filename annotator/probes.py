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
"""

from __future__ import annotations

from benchmark.evaluation.interviews.instruments import probes_instrument
from benchmark.instruments.presets import PRESETS
from benchmark.models import Instrument, Scenario


def asks_probes(instrument: Instrument) -> bool:
    """Whether a study with ``instrument`` also asks each episode's scenario probes (a preset's ``asks_probes``)."""
    spec = PRESETS.get(instrument.preset)
    return bool(spec and spec.asks_probes)


def probes_for(instrument: Instrument, scenario: Scenario) -> Instrument | None:
    """The probes instrument a new annotation of ``scenario``'s episode answers, or None (no probes, or not asked)."""
    if not asks_probes(instrument):
        return None
    return probes_instrument(scenario)
