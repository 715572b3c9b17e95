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
from benchmark.shrec.prompts import agent_description, given_line, task_instructions

from .study import CONTEXT_ONLY_TASKS

EXCERPT_LABELS = {Task.PRE: "Agent's behaviour", Task.POST: "Participant's behaviour"}  # the prompt's headings


@dataclass(frozen=True)
class TaskView:
    """A human-baseline item's task as the page shows it, above the excerpt."""

    name: str  # the task, as people name it
    about: str  # the sentence about the agent and what is given, as the prompt opens
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
        about=f"{agent_description(task_item.source)} {given_line(task_item.task, task_item.source)}",
        instructions=task_instructions(task_item.task, task_item.label or None),
        excerpt_label=EXCERPT_LABELS.get(task_item.task, "The excerpt") if shows_text else "",
        excerpt=task_item.context if shows_text else "",
    )


def questions_for(task_item: Any, questions: Iterable[Question]) -> list[Question]:
    """The questions an item is asked: all of them, or for a task item only its task's (keyed by the task)."""
    if task_item is None:
        return list(questions)
    return [question for question in questions if question.key == task_item.task]
