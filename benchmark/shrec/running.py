"""Models answering SHREC's task items (SH-8): chunks of items on the task queue, each answer stored once.

``evaluate --shrec`` picks the items (a task set, some tasks, maybe one subset), cuts them into
chunks of ``CHUNK_SIZE`` and puts each chunk on the queue (``benchmark.jobs.tasks.answer_shrec_items``,
inline under ``PARLEY_TASKS_IMMEDIATE``); a consumer runs :func:`answer_chunk`. For every item:

- the respondent is the judge-kind ``Respondent`` of the model under the task's prompt version
  (``prompts.prompt_version``); a temperature other than 0 is recorded in its label, so answers at
  different temperatures are different respondents, never each other's cache;
- an item the respondent has answered under the variant is skipped (cached) unless ``force``; with
  a coercing model, a cached answer not yet coerced by it is only coerced;
- the prompt (``prompts.build_prompt``; few-shot examples from the same task set) goes to the model
  through the one gateway (``agents.respondent.ask_free_text``), or to the offline scripted answerer
  for model ``scripted``; the reply is read by ``answers.parse_answer`` and, with a coercing model,
  restated by it and read again into ``coerced``; the ``TaskAnswer`` is written in one statement.

A model that cannot be reached stops the run rather than failing every item alike: a refused key at
once, and a model that is unavailable before any of the chunk's calls has succeeded
(:class:`ModelUnreachable`, with the provider's message). The command runs the first chunk alone, so
such a run stops after one chunk. Any other failure fails its item only; the chunk then ends with
:class:`ChunkFailed` naming them, which the jobs page shows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import transaction

from benchmark.agents import llm
from benchmark.agents.batches import map_bounded
from benchmark.agents.respondent import ask_free_text
from benchmark.instruments.respondents import JUDGE, find_respondent
from benchmark.jobs.queue import enqueue, task_named
from benchmark.models import Job, Respondent, Task, TaskAnswer, TaskItem, TaskSet, Team

from .answers import coercion_messages, parse_answer
from .prompts import DEFAULT_EXAMPLES, build_prompt, few_shot_examples, prompt_version
from .scripted import SCRIPTED, scripted_reply

CHUNK_SIZE = 25
TASK = "answer_shrec_items"  # in benchmark.jobs.tasks, which imports this module: named, not imported
POLL_SECONDS = 1.0  # how often the command reads its chunks' jobs while consumers work
NO_CONSUMER_SECONDS = 15  # then the command says that no consumer has taken them
ANSWERED, CACHED, FAILED = "answered", "cached", "failed"


class ModelUnreachable(Exception):
    """The model (or the coercing model) cannot be reached: the run stops; the message is the provider's."""


class ChunkFailed(Exception):
    """Some items of a chunk could not be answered; the message names each and why."""


@dataclass(frozen=True)
class RunSettings:
    """How one model answers: what ``evaluate --shrec`` was given (plain values, so they travel on the queue)."""

    model: str
    variant: str = TaskAnswer.Variant.ZERO_SHOT
    temperature: float = 0.0
    force: bool = False
    coerce_model: str = ""
    examples: int = DEFAULT_EXAMPLES
    concurrency: int = 4

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ItemOutcome:
    item_id: int
    outcome: str = FAILED
    error: str = ""
    parsed: bool = False


@dataclass
class _ChunkState:
    succeeded: bool = False
    respondents: dict[str, Respondent] = field(default_factory=dict)


def temperature_label(temperature: float) -> str:
    """The respondent's label: empty at the default temperature 0, else 'temperature 0.7'."""
    return "" if temperature == 0 else f"temperature {temperature:g}"


def respondent_for(model: str, task: str, temperature: float = 0.0) -> Respondent:
    """The judge-kind respondent of ``model`` answering ``task`` under its prompt version (made on first use)."""
    fields = {"kind": JUDGE, "user": None, "model": model, "prompt_version": prompt_version(task),
              "label": temperature_label(temperature)}
    return find_respondent(Respondent, fields)


def choose_task_set(team: Team, name: str | None) -> TaskSet:
    """The team's task set named ``name``, or its latest; ``ValueError`` saying what there is otherwise."""
    task_sets = TaskSet.objects.of_team(team)
    if name:
        found = task_sets.filter(name=name).first()
        if found is None:
            known = ", ".join(task_sets.values_list("name", flat=True)) or "none"
            raise ValueError(f"the team {team} has no task set named {name!r} (it has: {known})")
        return found
    latest = task_sets.order_by("-created_at", "-pk").first()
    if latest is None:
        raise ValueError(f"the team {team} has no task set yet; build one with shrec_tasks")
    return latest


def parse_tasks(value: str) -> list[str]:
    """'all' -> the eight tasks; 'pre,post' -> those; an unknown name is refused with the choices."""
    if value.strip() == "all":
        return list(Task.values)
    tasks = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [task for task in tasks if task not in Task.values]
    if unknown or not tasks:
        raise ValueError(f"unknown task {', '.join(map(repr, unknown)) or repr(value)}; "
                         f"choose all or any of {', '.join(Task.values)}")
    return tasks


def select_items(task_set: TaskSet, tasks: Sequence[str], subset: int | None = None) -> list[int]:
    """The ids of the task set's items of ``tasks`` (in subset ``subset`` if given), by task then key."""
    rows = task_set.items.filter(task__in=tasks).order_by("task", "item_key").values_list("pk", "subsets")
    return [pk for pk, subsets in rows if subset is None or subset in (subsets or [])]


def chunks(ids: Sequence[int], size: int | None = None) -> list[list[int]]:
    """``ids`` in chunks of ``size`` (``CHUNK_SIZE``), the work of one queued task each."""
    size = size or CHUNK_SIZE
    return [list(ids[start:start + size]) for start in range(0, len(ids), size)]


def queue_chunk(item_ids: list[int], run: RunSettings, *, team: Team, label: str) -> Job:
    """Put one chunk on the queue (it runs at once, inline, under ``PARLEY_TASKS_IMMEDIATE``)."""
    task = task_named(TASK)
    if task is None:
        raise LookupError(f"The task {TASK} is not registered: benchmark.jobs.tasks was not imported.")
    with transaction.atomic():
        return enqueue(task, item_ids, run.as_dict(), team=team, label=label)


# --- one chunk, on a consumer -------------------------------------------------------------------


def answer_chunk(item_ids: list[int], run: dict[str, Any]) -> str:
    """Answer a chunk's items (the queued task's work): a one-line summary, or ``ChunkFailed``/``ModelUnreachable``."""
    outcomes = async_to_sync(answer_items)(item_ids, RunSettings(**run))
    failed = [outcome for outcome in outcomes if outcome.outcome == FAILED]
    if failed:
        raise ChunkFailed(f"{len(failed)} of {len(outcomes)} item(s) failed: "
                          + "; ".join(f"item {outcome.item_id}: {outcome.error}" for outcome in failed))
    answered = sum(outcome.outcome == ANSWERED for outcome in outcomes)
    return f"{run['model']}: {answered} answered, {len(outcomes) - answered} cached"


async def answer_items(
    item_ids: Sequence[int], run: RunSettings, on_result: Callable[[ItemOutcome], None] | None = None
) -> list[ItemOutcome]:
    """Answer ``item_ids`` with ``run.model``: one at a time until a call succeeds, then ``run.concurrency`` at once.

    Raises :class:`ModelUnreachable` when the model cannot be reached (see the module docstring).
    """
    state = _ChunkState()
    outcomes: list[ItemOutcome] = []
    remaining = list(item_ids)
    while remaining and not state.succeeded:
        outcome = await _answer_one(remaining.pop(0), run, state)
        outcomes.append(outcome)
        if on_result is not None:
            on_result(outcome)

    async def one(item_id: int) -> ItemOutcome:
        return await _answer_one(item_id, run, state)

    return outcomes + await map_bounded(remaining, one, concurrency=run.concurrency, on_result=on_result)


async def _answer_one(item_id: int, run: RunSettings, state: _ChunkState) -> ItemOutcome:
    outcome = ItemOutcome(item_id)
    item, respondent, existing, prompt = await sync_to_async(_load)(item_id, run, state)
    try:
        if existing is not None and not run.force:
            if run.coerce_model and existing.coerced_by != run.coerce_model:
                coerced = await _coerce(item, existing.reply, run)
                await sync_to_async(_store_coercion)(existing.pk, coerced, run.coerce_model)
            outcome.outcome, outcome.parsed = CACHED, existing.answer is not None
            return outcome
        if run.model == SCRIPTED:
            reply, usage = scripted_reply(item), None
        else:
            completion = await ask_free_text([{"role": "user", "content": prompt}], model=run.model,
                                             temperature=run.temperature)
            reply, usage = completion.text, completion.usage
            state.succeeded = True
        answer = parse_answer(item.task, reply, item.options)
        coerced = await _coerce(item, reply, run) if run.coerce_model else None
    except llm.LLMRefused as error:
        raise ModelUnreachable(str(error)) from error
    except llm.LLMUnavailable as error:
        if not state.succeeded:
            raise ModelUnreachable(str(error)) from error
        outcome.error = str(error)
        return outcome
    except llm.LLMError as error:
        outcome.error = str(error)
        return outcome
    await sync_to_async(_store)(item, respondent, run, reply, answer, coerced, usage)
    outcome.outcome, outcome.parsed = ANSWERED, answer is not None
    return outcome


async def _coerce(item: TaskItem, reply: str, run: RunSettings) -> Any:
    """The coercing model's restatement of ``reply``, read by the same parser (None when it cannot say)."""
    completion = await ask_free_text(coercion_messages(item.task, reply, item.options), model=run.coerce_model)
    return parse_answer(item.task, completion.text, item.options)


def _load(item_id: int, run: RunSettings, state: _ChunkState) -> tuple[TaskItem, Respondent, TaskAnswer | None, str]:
    """The item, its respondent, its answer so far, and the prompt when one is to be asked (it reads the
    attributes' definitions and the few-shot examples from the database)."""
    item = TaskItem.objects.get(pk=item_id)
    if item.task not in state.respondents:
        state.respondents[item.task] = respondent_for(run.model, item.task, run.temperature)
    respondent = state.respondents[item.task]
    existing = TaskAnswer.objects.filter(item=item, respondent=respondent, variant=run.variant).first()
    if existing is not None and not run.force:
        return item, respondent, existing, ""
    examples: list[TaskItem] = []
    if run.variant == TaskAnswer.Variant.FEW_SHOT:
        pool = TaskItem.objects.filter(task_set_id=item.task_set_id, task=item.task).exclude(pk=item.pk)
        examples = few_shot_examples(item, list(pool), run.examples)
    return item, respondent, existing, build_prompt(item, run.variant, examples)


def _store(item: TaskItem, respondent: Respondent, run: RunSettings, reply: str, answer: Any, coerced: Any,
           usage: llm.Usage | None) -> None:
    TaskAnswer.objects.update_or_create(
        item=item, respondent=respondent, variant=run.variant,
        defaults={
            "reply": reply, "answer": answer, "coerced": coerced, "coerced_by": run.coerce_model,
            "latency_ms": usage.latency_ms if usage else None,
            "prompt_tokens": usage.prompt_tokens if usage else None,
            "completion_tokens": usage.completion_tokens if usage else None,
        },
    )


def _store_coercion(answer_id: int, coerced: Any, coerce_model: str) -> None:
    TaskAnswer.objects.filter(pk=answer_id).update(coerced=coerced, coerced_by=coerce_model)


# --- what the command reports -------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """Per model after a run: items with an answer, of which unparsed, and items left without one."""

    answered: int
    unparsed: int
    missing: int


def tally(item_ids: Sequence[int], run: RunSettings) -> Tally:
    answers = TaskAnswer.objects.filter(
        item_id__in=item_ids, variant=run.variant, respondent__model=run.model, respondent__kind=JUDGE,
        respondent__label=temperature_label(run.temperature),
    ).select_related("item", "respondent")
    current = [a for a in answers if a.respondent.prompt_version == prompt_version(a.item.task)]
    unparsed = sum(a.answer is None for a in current)
    return Tally(len(current), unparsed, len(set(item_ids)) - len(current))


def stop_message(job: Job) -> str:
    """A failed chunk's error without the exception's class name, as the provider worded it."""
    error = job.error or "the chunk failed"
    for name in (ModelUnreachable.__name__, ChunkFailed.__name__):
        error = error.removeprefix(f"{name}: ")
    return error


def unreachable(job: Job) -> bool:
    return job.status == Job.Status.FAILED and job.error.startswith(ModelUnreachable.__name__)

