"""What the item page adds for a human-baseline item: the task's text, its question alone, the excerpt.

People read what the model reads (spec §1.2: the human baseline took "the same prompts as
instructions"): the sentence about the agent for the item's source and the task's text from the
model prompt (``benchmark.shrec.prompts``), then the excerpt, then the item's options in the order
the prompt lists them (the per-item choice binds them, ``item_choice``'s ``task_item`` source). What
the page never shows: the correct option, the gold answer, the item's provenance, a model's answer or
anyone else's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from benchmark.models import Question, Task

from .study import CONTEXT_ONLY_TASKS

# Until benchmark.shrec.prompts is on main: the task's text, as the prompt module will word it.
_TASK_TEXT = {
    Task.DETECTION: "Decide whether, in this conversation, the agent shows a Social Competence, makes a Social Error, "
    "or neither.",
    Task.ERROR: "Decide whether the agent makes a social error in this conversation.",
    Task.ATTRIBUTES: "This stretch of conversation has been marked as {label} of the agent. Choose the social "
    "attributes it has to do with; pick every one that applies.",
    Task.MULTIPLE: "This stretch of conversation has been marked as {label} of the agent. Say whether more than one "
    "social attribute is involved.",
    Task.PRE: "Below is something the agent said or did. Among the numbered things the person might have said just "
    "before, choose the one that the agent's behaviour most appropriately follows.",
    Task.POST: "Below is something the person said or did. Among the numbered responses of the agent, choose the one "
    "the agent gave next.",
    Task.RATIONALE: "This stretch of conversation has been marked as {label} of the agent. Among the numbered "
    "explanations, choose the one that says correctly why.",
    Task.CORRECTION: "This stretch of conversation has been marked as a Social Error of the agent. Among the numbered "
    "behaviours, choose what the agent should have done instead.",
}
_LABEL_WORDS = {"error": "a Social Error", "competency": "a Social Competence"}


def task_instructions(task: str, label: str | None = None) -> str:
    return _TASK_TEXT[task].format(label=_LABEL_WORDS.get(label or "", "a social error or a social competence"))


def agent_description(source: str) -> str:
    return "The agent is a conversational AI talking with a person."


EXCERPT_LABELS = {Task.PRE: "What the agent said or did", Task.POST: "What the person said or did"}


@dataclass(frozen=True)
class TaskView:
    """A human-baseline item's task as the page shows it, above the excerpt."""

    name: str  # the task, as people name it
    about: str  # the sentence about the agent
    instructions: str  # the task's text, as the model's prompt words it
    excerpt_label: str = ""
    excerpt: str = ""  # the text to read when no transcript window shows it (pre/post, an item without turns)


def task_view(task_item: Any) -> TaskView | None:
    """What the page says of ``task_item`` (a ``StudyItem``'s task item, or None for other items)."""
    if task_item is None:
        return None
    shows_text = task_item.task in CONTEXT_ONLY_TASKS or task_item.first_turn is None
    return TaskView(
        name=Task(task_item.task).label.capitalize(),
        about=agent_description(task_item.source),
        instructions=task_instructions(task_item.task, task_item.label or None),
        excerpt_label=EXCERPT_LABELS.get(task_item.task, "The excerpt") if shows_text else "",
        excerpt=task_item.context if shows_text else "",
    )


def questions_for(task_item: Any, questions: Iterable[Question]) -> list[Question]:
    """The questions an item is asked: all of them, or for a task item only its task's (keyed by the task)."""
    if task_item is None:
        return list(questions)
    return [question for question in questions if question.key == task_item.task]
