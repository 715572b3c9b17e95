"""People's answers to task items, read back into each task's answer space: the Human row's source.

``human_answers_of(task_set_id)`` is what ``annotator.apps`` registers with
``benchmark.results.shrec.human``: every latest submitted answer of every human-baseline study over the
task set's items, one ``HumanAnswer`` per person and item, in the answer space the models' answers are
scored in (``benchmark.models.task_items``):

- a per-item choice posts the option's position (``"0"``, ``"1"``, …): for pre, post, rationale and
  correction that is the 1-based option number (position + 1); for detection and error it is the label
  the option stands for: the item's gold when the position is a correct one, otherwise read from the
  option's words ("None" → ``none``; "No Social Error" → ``no_error``; "Social Error" → ``error``;
  "Social Competence" → ``competency``);
- the attribute question's values are already attribute keys: sorted;
- yes / no → True / False.

An answer that cannot be read (an option that names no label, a position the item does not have) is
None: counted by the scores as unparsed, as a model's would be. People are named by their pseudonym;
answers no person gave carry what generated them (``Annotation.generated_by``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from benchmark.instruments.respondents import pseudonym
from benchmark.models import Answer, Task, TaskItem
from benchmark.results.shrec.human import HumanAnswer

from ..models import Study, StudyItem
from ..reports.build import latest_submitted

MCQ_TASKS = (Task.PRE, Task.POST, Task.RATIONALE, Task.CORRECTION)


def label_of_option(task: str, text: str) -> str | None:
    """The detection or error label an option's words stand for, or None when they name none."""
    words = " ".join(str(text).lower().replace("-", " ").split())
    if task == Task.DETECTION:
        if "none" in words or "neither" in words:
            return "none"
        if "competen" in words:
            return "competency"
        return "error" if "error" in words else None
    if task == Task.ERROR and "error" in words:
        return "no_error" if any(f" {no} " in f" {words} " for no in ("no", "not", "none", "without")) else "error"
    return None


def answer_in_space(task_item: Any, values: list[str]) -> Any:
    """The values a person posted for ``task_item``'s question, in the task's answer space (None: unreadable)."""
    task = task_item.task
    if task == Task.ATTRIBUTES:
        return sorted(values) if values else None
    if not values:
        return None
    if task == Task.MULTIPLE:
        return {"yes": True, "no": False}.get(values[0])
    if not values[0].isdigit() or int(values[0]) >= len(task_item.options):
        return None
    position = int(values[0])
    if task in MCQ_TASKS:
        return position + 1
    if position in (task_item.correct or []):
        return task_item.gold
    return label_of_option(task, task_item.options[position])


def human_answers_of(task_set_id: int) -> list[HumanAnswer]:
    """Every latest submitted human answer to the task set's items, by item then person."""
    studies = Study.objects.filter(items__task_item__task_set_id=task_set_id).distinct().order_by("pk")
    found: dict[int, dict[str, Any]] = {}
    values: dict[int, list[str]] = defaultdict(list)
    for study in studies:
        annotations = latest_submitted(study).filter(
            assignment__item__kind=StudyItem.Kind.REGULAR, assignment__item__task_item__task_set_id=task_set_id
        )
        for pk, item_id, annotator_id, generated_by in annotations.values_list(
            "pk", "assignment__item__task_item_id", "assignment__annotator_id", "generated_by"
        ):
            found[pk] = {"item": item_id, "person": pseudonym(annotator_id), "generated_by": generated_by}
    items = TaskItem.objects.in_bulk({row["item"] for row in found.values()})
    rows = Answer.objects.filter(response__annotation__in=list(found)).order_by("pk")
    for annotation_id, key, value in rows.values_list("response__annotation__pk", "question__key", "value"):
        if key == items[found[annotation_id]["item"]].task:
            values[annotation_id].append(value)
    answers = [
        HumanAnswer(row["item"], row["person"], answer_in_space(items[row["item"]], values[pk]), row["generated_by"])
        for pk, row in found.items()
    ]
    return sorted(answers, key=lambda answer: (answer.item_id, answer.person))
