"""How a shipped instrument is written in code: a ``PresetSpec`` of ``QuestionSpec`` rows, and the helpers that write
a Likert question's anchors and a slider's ends (``benchmark.instruments.presets`` installs them)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from benchmark.models import Instrument, Question

from .checks import set_bounds


@dataclass(frozen=True)
class QuestionSpec:
    """A question of a preset, as it becomes a ``Question`` row (position from its place in the list)."""

    key: str
    kind: str
    prompt: str
    help_text: str = ""
    required: bool = True
    scope: str = Question.Scope.EPISODE
    rationale: str = "none"
    options: dict[str, Any] = field(default_factory=dict)
    dimension: str = ""
    truth: str = ""

    def build(self, instrument: Instrument, position: int) -> Question:
        """The question row (unsaved), its numeric bounds set from its options."""
        question = Question(
            instrument=instrument, key=self.key, position=position, kind=self.kind, prompt=self.prompt,
            help_text=self.help_text, required=self.required, scope=self.scope, rationale=self.rationale,
            options=copy.deepcopy(self.options), dimension=self.dimension, truth=self.truth,
        )
        set_bounds(question)
        return question


@dataclass(frozen=True)
class PresetSpec:
    """An instrument Parley ships, installed with ``install_preset``.

    ``seats_needed`` is the fewest seats an episode must have for the questions to make sense (a
    mediator rating needs two parties and the mediator); ``seats_reason`` says why, for messages.
    ``asks_probes``: an annotation study with this preset also asks each episode's scenario probes
    (``annotator.probes`` says how), which differ per scenario and so cannot be questions of the preset.
    ``shows_condition``: the item page names the episode's condition (its barrier, e.g. a ProMediate
    conflict mode) because a question rates how it came across; every other preset keeps raters blind to it.
    """

    name: str
    description: str
    questions: tuple[QuestionSpec, ...]
    seats_needed: int = 2
    seats_reason: str = ""
    asks_probes: bool = False
    shows_condition: bool = False


def anchors(*anchors: tuple[int, str, str]) -> dict[str, Any]:
    return {"anchors": [{"value": value, "label": label, "description": text} for value, label, text in anchors]}


def slider(low: int, high: int, low_means: str, high_means: str) -> dict[str, Any]:
    return {"min": low, "max": high, "step": 1, "labels": {"min": low_means, "max": high_means}}
