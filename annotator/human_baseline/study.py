"""Making a human-baseline study from a task set: its instrument, its items, all or nothing.

One study may hold one task or several ("mixed"): the instrument asks one question per task in the
study, keyed by the task's name, and each item is asked only its own task's question
(``annotator.human_baseline.page.questions_for``). The questions:

- detection, error, pre, post, rationale, correction: a per-item choice (``item_choice``, source
  ``task_item``) whose choices are the item's options in their stored order, the order the model's
  prompt lists them in; the correct option stays on the task item;
- attributes: a multi-label question whose choices are the attribute items' options (the seven
  attributes, in the order the builder stored them), each valued by its ``SocialAttribute`` key, so an
  answer is already in the task's answer space; every attribute item must offer the same options;
- multiple: yes / no (more than one attribute involved?).

Each study item shows a window of its episode: the task item's turns; for a pre-condition only the
agent's turn that is its context (the last), for a post-condition only the person's (the first), so
the answer's turn is never on the page. An item without turns shows its context text alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify

from benchmark.instruments.checks import check_questions
from benchmark.instruments.versions import next_version
from benchmark.models import Instrument, Question, SocialAttribute, Task, TaskItem, TaskSet
from benchmark.shrec.records import ATTRIBUTES

from ..forms import join_team_as_annotators
from ..models import Membership, Study, StudyItem

TASK_ITEMS_PRESET = "shrec-task-items"  # Instrument.preset of a human-baseline instrument (made per study)
ITEM_CHOICE_TASKS = (Task.DETECTION, Task.ERROR, Task.PRE, Task.POST, Task.RATIONALE, Task.CORRECTION)
CONTEXT_ONLY_TASKS = (Task.PRE, Task.POST)  # the page shows the one utterance, never the turn that answers it

# Each task's question, as the form asks it (the task's full text is shown above the excerpt).
PROMPTS = {
    Task.DETECTION: "What does the agent show in this excerpt?",
    Task.ERROR: "Does the agent make a social error in this excerpt?",
    Task.ATTRIBUTES: "Which social attributes does this stretch have to do with?",
    Task.MULTIPLE: "Is more than one social attribute involved?",
    Task.PRE: "Which did the person most likely say just before?",
    Task.POST: "Which did the agent say next?",
    Task.RATIONALE: "Which explanation says why?",
    Task.CORRECTION: "What should the agent have done instead?",
}
HELP_TEXT = "The task above says what to decide. Answer from the excerpt alone."
ATTRIBUTES_HELP = "Tick every attribute that applies (at least one)."
INSTRUCTIONS = (
    "You will read short excerpts of conversations between an agent (a robot or a language agent) and a "
    "person, each with a small task: whether the agent shows a social competence or makes a social error, "
    "which social attributes a marked moment has to do with, what the person said just before or the agent "
    "said next, why a moment was an error, or what the agent should have done instead.\n\n"
    "Each item says what to decide and gives its own options. Answer from the excerpt alone and go with your "
    "best judgement: there is no time limit, and you will not see anyone else's answers. Your answers save "
    "as you go."
)


class HumanStudyProblem(ValueError):
    """A human-baseline study that cannot be made, with a message that says why."""


def parse_tasks(text: str) -> list[str]:
    """``all`` or task names separated by commas (``detection,pre``) → the tasks, in the tasks' own order."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["all"]:
        return list(Task.values)
    unknown = [name for name in names if name not in Task.values]
    if not names or unknown:
        given = ", ".join(repr(name) for name in unknown) or "nothing given"
        raise HumanStudyProblem(
            f"--tasks: {given} is not a task; use 'all' or any of {', '.join(Task.values)}, separated by commas"
        )
    return [task for task in Task.values if task in names]


def select_items(task_set: TaskSet, tasks: Sequence[str], subset: int | None = None) -> list[TaskItem]:
    """The task set's items of ``tasks`` (in subset ``subset`` when given), task by task, then by key."""
    rows = TaskItem.objects.filter(task_set=task_set, task__in=tasks).select_related("episode")
    order = {task: place for place, task in enumerate(Task.values)}
    items = sorted(rows, key=lambda item: (order[item.task], item.item_key))
    if subset is not None:  # in Python: SQLite's JSON fields have no "contains"
        items = [item for item in items if isinstance(item.subsets, list) and subset in item.subsets]
    if not items:
        within = f" in subset {subset}" if subset is not None else ""
        raise HumanStudyProblem(
            f"task set {task_set.name!r} has no items of {', '.join(tasks)}{within}: build them first (shrec_tasks)"
        )
    return items


def item_window(task_item: TaskItem) -> tuple[int | None, int | None]:
    """The turns a study item of ``task_item`` shows: the item's, the context's alone for a pre- or post-condition
    ((None, None) when the item has no turns)."""
    first, last = task_item.first_turn, task_item.last_turn
    if first is None:
        return None, None
    last = first if last is None else last
    if task_item.task == Task.PRE:
        return last, last
    if task_item.task == Task.POST:
        return first, first
    return first, last


def _check_windows(items: Sequence[TaskItem]) -> None:
    """Items without turns show their whole episode's place in the study: two of one episode cannot both."""
    seen: dict[int, str] = {}
    for item in items:
        if item.first_turn is None:
            if item.episode_id in seen:
                raise HumanStudyProblem(
                    f"task items {seen[item.episode_id]!r} and {item.item_key!r} have no turns and share an episode; "
                    "rebuild the task set with an excerpt mode that keeps turns"
                )
            seen[item.episode_id] = item.item_key


def attribute_choices(items: Iterable[TaskItem]) -> list[dict[str, str]]:
    """The attribute task's choices: its items' options (all the same), each valued by its attribute key."""
    offered = {tuple(item.options) for item in items if item.task == Task.ATTRIBUTES}
    if not offered:
        return []
    if len(offered) > 1:
        raise HumanStudyProblem("the attribute items offer different options; one question cannot ask them all")
    options = list(next(iter(offered)))
    attributes = list(SocialAttribute.objects.order_by("position", "key").values_list("key", "name"))
    by_name = {_plain(name): key for key, name in [*attributes, *ATTRIBUTES]}  # seeded names, the builder's names
    keys = [by_name.get(_plain(option)) for option in options]
    if None in keys:  # not named as the seeded attributes: the builder lists the seven in their seeded order
        if len(options) != len(attributes):
            missing = options[keys.index(None)]
            raise HumanStudyProblem(f"attribute option {missing!r} names none of the seven social attributes")
        keys = [key for key, _ in attributes]
    return [{"value": key, "label": str(option)} for key, option in zip(keys, options, strict=True)]


def _plain(text: str) -> str:
    return re.sub(r"[^a-z]+", " ", str(text).lower().replace("&", " and ")).strip()


def build_instrument(team: Any, name: str, tasks: Sequence[str], items: Sequence[TaskItem]) -> Instrument:
    """The team's instrument asking one question per task in ``tasks`` (saved; call inside a transaction)."""
    instrument = Instrument.objects.create(
        team=team, name=name, version=next_version(name), preset=TASK_ITEMS_PRESET,
        description="SHREC's tasks as people answer them for the human baseline: one question per task, each "
        "item asked its own task's question with its own options.",
    )
    questions = [_question(instrument, task, position, items) for position, task in enumerate(tasks)]
    try:
        check_questions(questions)
    except ValidationError as problem:
        raise HumanStudyProblem("; ".join(problem.messages)) from None
    Question.objects.bulk_create(questions)
    return instrument


def _question(instrument: Instrument, task: str, position: int, items: Sequence[TaskItem]) -> Question:
    fields: dict[str, Any] = {"kind": "item_choice", "options": {"source": "task_item"}, "help_text": HELP_TEXT}
    if task == Task.ATTRIBUTES:
        fields = {"kind": "multi_label", "options": {"choices": attribute_choices(items), "min": 1},
                  "help_text": ATTRIBUTES_HELP}
    elif task == Task.MULTIPLE:
        fields = {"kind": "yes_no", "options": {}, "help_text": HELP_TEXT}
    return Question(
        instrument=instrument, key=task, position=position, prompt=PROMPTS[task], label=Task(task).label[:100],
        dimension=f"shrec-{task}", **fields,
    )


def create_human_baseline_study(
    *,
    task_set: TaskSet,
    tasks: Sequence[str] | None = None,
    subset: int | None = None,
    title: str = "",
    slug: str = "",
    overlap: int = 1,
    seed: int = 0,
    pool: Sequence[AbstractBaseUser] = (),
    created_by: AbstractBaseUser | None = None,
) -> Study:
    """A study of ``task_set``'s team over its items of ``tasks`` (all eight when None), in subset ``subset``
    when given, ``overlap`` people per item, all or nothing. Raises ``HumanStudyProblem`` with a clear message."""
    tasks = list(tasks or Task.values)
    if overlap < 1:
        raise HumanStudyProblem(f"--overlap must be 1 or more, not {overlap}")
    items = select_items(task_set, tasks, subset)
    _check_windows(items)
    asked = [task for task in tasks if any(item.task == task for item in items)]
    title = title.strip() or f"SHREC human baseline: {task_set.name}"
    if slug and Study.objects.filter(slug=slug).exists():
        raise HumanStudyProblem(f"the slug {slug!r} is not available; choose another")
    with transaction.atomic():
        instrument = build_instrument(task_set.team, f"SHREC human baseline: {task_set.name}"[:200], asked, items)
        study = Study.objects.create(
            team=task_set.team, title=title[:200], slug=slug or _free_slug(title), instrument=instrument,
            instructions=INSTRUCTIONS, overlap=overlap, seed=seed, created_by=created_by, spans_need_rationale=False,
        )
        rows = []
        for position, task_item in enumerate(items):
            first, last = item_window(task_item)
            rows.append(StudyItem(study=study, position=position, episode_id=task_item.episode_id,
                                  first_turn=first, last_turn=last, task_item=task_item))
        StudyItem.objects.bulk_create(rows)
        if pool:
            Membership.objects.bulk_create(Membership(study=study, annotator=user) for user in pool)
            join_team_as_annotators(task_set.team, pool)
    return study


def _free_slug(title: str) -> str:
    """A slug made from the title, numbered when taken (slugs are unique across teams)."""
    base = slugify(title)[:70].strip("-") or "shrec-human-baseline"
    slug, number = base, 1
    while Study.objects.filter(slug=slug).exists():
        number += 1
        slug = f"{base}-{number}"
    return slug
