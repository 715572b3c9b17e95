"""Per-item multiple choice: the choices come from the item answered, the correct one never shown.

A ``multiple_choice`` question carries its choices and its ``correct`` value in its own options,
the same for every episode. AgentSense's probes and SHREC's tasks are not like that: each item
(an episode, later a SHREC task item) brings its own options and its own right answer, so a study
over many items cannot write them into one question. An ``item_choice`` question names instead
**where** each item's choices come from:

- ``options.source``: one of ``SOURCES``: ``scenario.probe``, the probe of the episode's
  scenario at ``options.position`` (``benchmark.models.Probe``: its ``options`` are the choices,
  ``correct`` the index of the right one); or ``task_item``, the SHREC task item a human-baseline
  study item answers (``benchmark.models.TaskItem``: its ``options`` in their stored order, the order
  the model's prompt lists them in, and its ``correct`` position). The choices' values are the option
  indexes as text (``"0"``, ``"1"``, ...), as the probes instrument the interviewed agents answer
  (``benchmark.evaluation.interviews.instruments.probe_question``) stores them, so humans' and
  agents' answers read the same.

Why no new model: the item already holds its choices (a scenario's probes, a task item's options,
with their correct index), and the question only needs to say which. A source is a function of
(episode, options, task item): the task item is the one a study item points at (``task_item``,
passed by whoever binds the question to an item; None everywhere an item is an episode), so the
``scenario.probe`` source ignores it and the ``task_item`` source has nothing without it.

The correct choice stays out of everything a respondent sees: ``for_item`` binds a question to an
item as a copy whose ``options`` hold the item's ``choices`` only (value and label, never the
correct index), and that copy is what the widget, a participant's form and a model's prompt are
given; ``correct_for`` is read only by the reports' accuracy. Without an item (a question not yet
bound) there are no choices, so no value passes ``check_value``.

The database cannot see the item from the answer triggers' arguments on PostgreSQL (the question's
options and the value), so its check (``CHOICE_INDEX``) is the shape of a value (a choice index);
the item's own range is checked by ``check_value`` on the bound question wherever an answer is
read about an item (the annotation page and imported ratings, the participant's questionnaire, a
model's reply through ``parse_reply``). The majority is the most common value, the agreement
Krippendorff's alpha on values (nominal), accuracy is scored against ``correct_for``, and offline
(``scripted_answer``) the choice sharing the most words with the transcript is picked.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import register
from .base import SCRIPTED, ChoiceKind, DbCheck, is_whole, overlap, unknown_key_problems, words


@dataclass(frozen=True)
class ItemChoices:
    """One item's choices (``{"value", "label"}``, in order) and the value of the correct one."""

    choices: list[dict[str, str]]
    correct: str | None


def _scenario_probe(episode: Any, options: dict[str, Any], task_item: Any = None) -> ItemChoices | None:
    """The probe at ``options["position"]`` of the episode's scenario, or None when it has none there."""
    # Read through .all(), so a report that prefetched the scenarios' probes asks no query per item.
    probe = next((p for p in episode.scenario.probes.all() if p.position == options.get("position")), None)
    if probe is None or not isinstance(probe.options, list):
        return None
    choices = [{"value": str(index), "label": str(text)} for index, text in enumerate(probe.options)]
    correct = str(probe.correct) if probe.correct is not None and probe.correct < len(choices) else None
    return ItemChoices(choices, correct)


def _task_item(episode: Any, options: dict[str, Any], task_item: Any = None) -> ItemChoices | None:
    """The task item's options in their stored order; its correct option when it has exactly one (the
    multiple-choice tasks), else none. None without a task item, or with one that has no options."""
    if task_item is None or not isinstance(task_item.options, list) or not task_item.options:
        return None
    choices = [{"value": str(index), "label": str(text)} for index, text in enumerate(task_item.options)]
    correct = task_item.correct if isinstance(task_item.correct, list) else []
    right = str(correct[0]) if len(correct) == 1 and is_whole(correct[0]) and 0 <= correct[0] < len(choices) else None
    return ItemChoices(choices, right)


# Where an item's choices come from: a name → (what its options need, the function that reads them).
SOURCES: dict[str, tuple[tuple[str, ...], Callable[[Any, dict[str, Any], Any], ItemChoices | None]]] = {
    "scenario.probe": (("position",), _scenario_probe),
    "task_item": ((), _task_item),
}

CHOICE_INDEX = DbCheck(
    "choice_index", 45,
    "a per-item choice is not a choice index (0, 1, ...)",
    "({a}.value = '' OR {a}.value GLOB '*[^0-9]*' OR length({a}.value) > 4)",
    "p_value !~ '^[0-9]{1,4}$'",
    "format('%L is not a choice index', p_value)",
)


@register
class ItemChoice(ChoiceKind):
    """``options.source`` (``scenario.probe``, ``task_item``) and what it needs (``position``: the probe's
    position, from 0, for ``scenario.probe``; nothing for ``task_item``)."""

    name = "item_choice"
    label = "multiple choice from the item (correct answer hidden)"
    order = 55
    option_names = ("source", "position")
    participants = True
    widget_template = "instruments/kinds/_item_choice.html"
    agreement = "categorical"
    db_checks = (CHOICE_INDEX,)

    def imported_value_problem(self, question: Any, value: str) -> str:
        """An imported value is checked by the database (a choice index): the item's own choices are not known
        until the file's scenario, with its probes, is stored."""
        return ""

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        source = options.get("source")
        if source not in SOURCES:
            return [f"options.source: {source!r} is not a source of an item's choices; use one of {', '.join(SOURCES)}"]
        needs, _ = SOURCES[source]
        problems = unknown_key_problems("options", options, ("source", *needs))
        if "position" in needs and not (is_whole(options.get("position")) and options["position"] >= 0):
            problems.append("options.position: give the probe's position, a whole number from 0")
        return problems

    def question_problems(self, question: Any) -> list[str]:
        if question.scope != "episode":
            return ["scope: an item's choices are asked once per item; ask the question once per episode"]
        return []

    # --- the item -------------------------------------------------------------------------------

    def item_choices(self, question: Any, episode: Any, task_item: Any = None) -> ItemChoices | None:
        """The item's choices and correct value, or None when the item has none for this question."""
        options = question.options if isinstance(question.options, dict) else {}
        found = SOURCES.get(options.get("source"))
        if found is None or episode is None:
            return None
        return found[1](episode, options, task_item)

    def for_item(self, question: Any, episode: Any, task_item: Any = None) -> Any:
        """A copy of ``question`` whose options hold the item's choices (never the correct one), or None
        when the item has no choices for it (the question is then not asked about this item)."""
        found = self.item_choices(question, episode, task_item)
        if found is None:
            return None
        bound = copy.copy(question)
        bound.options = {**question.options, "choices": [dict(choice) for choice in found.choices]}
        return bound

    def correct_for(self, question: Any, episode: Any, task_item: Any = None) -> str | None:
        """The value of the item's correct choice (for accuracy; never shown to a respondent)."""
        found = self.item_choices(question, episode, task_item)
        return found.correct if found else None

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        if self.choices(question):
            return super().summary(question)
        return "one of the item's own choices", []

    def scripted_answer(self, question: Any, transcript: str) -> tuple[str, str] | None:
        """The choice sharing the most words with the transcript, ties to the first (SHREC's offline rule);
        ``question`` must be bound to the item (``for_item``)."""
        choices = self.choices(question)
        if not choices:
            return None
        said = words(transcript)
        scores = [overlap(str(choice.get("label", "")), said) for choice in choices]
        best = scores.index(max(scores))
        return str(choices[best]["value"]), (
            f"{SCRIPTED}: the choice sharing the most words with the transcript ({scores[best]})."
        )
