"""A SHREC task set's items and every answer to them, read from the database into plain records.

The scoring (``build``) never touches the ORM: it takes these records. One **row** of the tables is
one model under one prompt variant (``RowKey``); a model answers each task under that task's prompt
version, so a row gathers several respondents (one per task). When one item holds answers of the
same model and variant under two prompt versions (the prompt changed between runs), the latest
answer counts and the report notes how many were set aside. The human baseline's answers come from
the source the annotator app registers (``human.human_answers``); each person's answer is kept.

Every answer is put in one comparable form per task (``comparable``): attribute sets as sorted
tuples, the rest as stored. ``None`` is an answer no parser could read: scored as wrong, never
dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from ...models import SocialAttribute, Task, TaskAnswer, TaskItem, TaskSet
from .human import HumanAnswer, human_answers

# The paper's order: detection, error, attributes, multiple, pre, post, rationale, correction.
TASKS = tuple(Task.values)
MODALITY = "L"  # every Parley row reads the transcript only (frames, SH-10, are off): the paper's "(L)"
PARSED, COERCED = "parsed", "coerced"
ANSWER_SOURCES = (PARSED, COERCED)  # which reading of a model's reply is scored
VARIANT_SUFFIX = {"zero-shot": "", "few-shot": " + few-shot", "cot": " + cot"}


class ShrecResultsProblem(ValueError):
    """A request the SHREC results cannot answer (no task set, an unknown name), in words for people."""


@dataclass(frozen=True)
class RowKey:
    """One table row: a model under one prompt variant (and a respondent label, e.g. a temperature other than 0)."""

    model: str
    variant: str
    setting: str = ""  # the respondent's label: "" at the default temperature, else e.g. "temperature 0.7"

    @property
    def label(self) -> str:
        setting = f" ({self.setting})" if self.setting else ""
        return f"({MODALITY}) {self.model}{setting}{VARIANT_SUFFIX.get(self.variant, f' + {self.variant}')}"


@dataclass(frozen=True)
class ItemRecord:
    """One task item as scoring needs it: its gold answer, subsets, video (the bootstrap's cluster) and,
    for detection items, the attributes of the segment it came from (per-attribute F1, Figs. 6–7)."""

    id: int
    task: str
    item_key: str
    episode: int
    gold: Any
    subsets: tuple[int, ...]
    source: str
    label: str
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class Observation:
    """One answer to one item: a model row's, or one person's (``person``)."""

    item: int
    answer: Any
    person: str = ""


@dataclass
class TaskSetRecords:
    """Everything one report reads."""

    task_set: TaskSet
    items: dict[int, ItemRecord]
    models: dict[RowKey, list[Observation]]
    prompt_versions: dict[RowKey, dict[str, list[str]]]
    humans: list[Observation]
    generated_humans: int
    attribute_keys: list[str]
    attribute_names: dict[str, str]
    answers_from: str = PARSED
    notes: list[str] = field(default_factory=list)


def comparable(task: str, value: Any) -> Any:
    """An answer or gold in one form per task: attribute keys as a sorted tuple, the rest unchanged."""
    if value is None:
        return None
    if task == Task.ATTRIBUTES:
        return tuple(sorted(str(key) for key in value)) if isinstance(value, list | tuple | set | frozenset) else None
    return value


def choose_task_set(task_sets: QuerySet[TaskSet], name: str = "") -> TaskSet:
    """The task set called ``name``, or the latest one built; a problem naming the choices otherwise."""
    if name:
        found = task_sets.filter(name=name).first()
        if found is None:
            names = sorted(task_sets.values_list("name", flat=True))
            choices = f"; the task sets are {', '.join(names)}" if names else "; there is no task set yet"
            raise ShrecResultsProblem(f"no task set is called {name!r}{choices}")
        return found
    latest = task_sets.order_by("-created_at", "-pk").first()
    if latest is None:
        raise ShrecResultsProblem(
            "there is no SHREC task set yet: import SHREC annotations (import_episodes --format shrec) or annotate "
            "spans, then build the tasks with shrec_tasks"
        )
    return latest


def _item_record(item: dict[str, Any]) -> ItemRecord:
    provenance = item["provenance"] if isinstance(item["provenance"], dict) else {}
    attributes = provenance.get("attributes") or []
    return ItemRecord(
        id=item["pk"],
        task=item["task"],
        item_key=item["item_key"],
        episode=item["episode_id"],
        gold=comparable(item["task"], item["gold"]),
        subsets=tuple(sorted({int(k) for k in item["subsets"] or [] if isinstance(k, int)})),
        source=item["source"],
        label=item["label"],
        attributes=tuple(sorted(str(key) for key in attributes)) if isinstance(attributes, list) else (),
    )


def _model_answers(
    items: dict[int, ItemRecord], task_set: TaskSet, answers_from: str
) -> tuple[dict[RowKey, list[Observation]], dict[RowKey, dict[str, list[str]]], int, int]:
    latest: dict[tuple[RowKey, int], tuple[int, Any]] = {}
    versions: dict[RowKey, dict[str, set[str]]] = {}
    superseded = coerced_used = 0
    answers = (
        TaskAnswer.objects.filter(item__task_set=task_set)
        .order_by("pk")
        .values_list(
            "pk", "item_id", "variant", "answer", "coerced", "respondent__model", "respondent__label",
            "respondent__prompt_version",
        )
    )
    for pk, item_id, variant, parsed, coerced, model, setting, version in answers:
        key = RowKey(model, variant, setting)
        task = items[item_id].task
        versions.setdefault(key, {}).setdefault(task, set()).add(version)
        if (key, item_id) in latest:
            superseded += 1
        use_coerced = answers_from == COERCED and coerced is not None
        latest[key, item_id] = (pk, comparable(task, coerced if use_coerced else parsed), use_coerced)
    rows: dict[RowKey, list[Observation]] = {}
    for (key, item_id), (_, answer, use_coerced) in sorted(latest.items(), key=lambda entry: entry[1][0]):
        rows.setdefault(key, []).append(Observation(item_id, answer))
        coerced_used += use_coerced
    ordered = dict(
        sorted(rows.items(), key=lambda entry: (entry[0].model, entry[0].setting, _variant_rank(entry[0].variant)))
    )
    prompt_versions = {
        key: {task: sorted(versions[key][task]) for task in TASKS if task in versions[key]} for key in ordered
    }
    return ordered, prompt_versions, superseded, coerced_used


def _variant_rank(variant: str) -> tuple[int, str]:
    order = list(VARIANT_SUFFIX)
    return (order.index(variant) if variant in order else len(order), variant)


def _human_observations(items: dict[int, ItemRecord], answers: Sequence[HumanAnswer]) -> tuple[list[Observation], int]:
    kept = [answer for answer in answers if answer.item_id in items]
    observations = [
        Observation(answer.item_id, comparable(items[answer.item_id].task, answer.answer), answer.person)
        for answer in sorted(kept, key=lambda answer: (answer.item_id, answer.person))
    ]
    return observations, sum(1 for answer in kept if answer.generated_by)


def load_records(task_set: TaskSet, answers_from: str = PARSED) -> TaskSetRecords:
    """The task set's items, its models' answers (latest per item, model and variant) and its human answers.

    ``answers_from``: ``parsed`` scores what Parley's parser read in each reply (default); ``coerced`` what the
    coercing model read where one did (the paper's second-model step), the parser's answer elsewhere."""
    if answers_from not in ANSWER_SOURCES:
        raise ShrecResultsProblem(f"unknown answer source {answers_from!r}; choose one of {', '.join(ANSWER_SOURCES)}")
    values = TaskItem.objects.filter(task_set=task_set).order_by("task", "item_key").values(
        "pk", "task", "item_key", "episode_id", "gold", "subsets", "source", "label", "provenance"
    )
    items = {item["pk"]: _item_record(item) for item in values}
    models, prompt_versions, superseded, coerced_used = _model_answers(items, task_set, answers_from)
    humans, generated = _human_observations(items, human_answers(task_set.pk))
    attributes = list(SocialAttribute.objects.order_by("position").values_list("key", "name"))
    notes = []
    if superseded:
        notes.append(
            f"{superseded} older answer(s) of a model under an earlier prompt version left out: the latest answer "
            "of each model, variant and item counts"
        )
    if answers_from == COERCED:
        notes.append(f"{coerced_used} model answer(s) as a coercing model read them; the others as the parser did")
    unknown = Counter(item.task for item in items.values() if item.task not in TASKS)
    if unknown:
        notes.append(f"items of unknown tasks left out: {', '.join(sorted(unknown))}")
    return TaskSetRecords(
        task_set=task_set,
        items=items,
        models=models,
        prompt_versions=prompt_versions,
        humans=humans,
        generated_humans=generated,
        attribute_keys=[key for key, _ in attributes],
        attribute_names=dict(attributes),
        answers_from=answers_from,
        notes=notes,
    )
