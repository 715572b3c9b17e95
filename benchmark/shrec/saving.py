"""Storing a build's items as a ``TaskSet`` with its ``TaskItem``s, all or nothing.

A task set's name is unique per team. Building again under a name already used is refused unless
``replace`` is given; replacing deletes the old set with its items and the models' answers to them
(they answered other items), and is refused while a human-baseline study still shows its items
(people's answers must not lose their questions). Nothing is written unless every item can be.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import ProtectedError

from benchmark.models import Episode, TaskItem, TaskSet, Team

from .builders import ItemRecord

MAX_NAME = TaskSet._meta.get_field("name").max_length
MAX_KEY = TaskItem._meta.get_field("item_key").max_length
MAX_SEED = 2**31 - 1  # the largest seed every database's integer column holds


class TaskSetError(ValueError):
    """A task set that cannot be saved, with the reason people read."""


def _episode_ids(team: Team, items: Sequence[ItemRecord]) -> dict[str, int]:
    """Each item's episode: its ``episode_id``, else the team's episode with ``episode_key`` as external id."""
    keys = {item.episode_key for item in items if item.episode_id is None}
    found = dict(Episode.objects.of_team(team).filter(external_id__in=keys).values_list("external_id", "pk"))
    missing = sorted(keys - set(found))
    if missing:
        raise TaskSetError(f"the team {team.slug!r} has no episode with the external id {', '.join(missing)}")
    given = {item.episode_id for item in items if item.episode_id is not None}
    owned = set(Episode.objects.of_team(team).filter(pk__in=given).values_list("pk", flat=True))
    if given - owned:
        raise TaskSetError(f"episodes {sorted(given - owned)} are not the team {team.slug!r}'s")
    return found


def _row(task_set: TaskSet, item: ItemRecord, episodes: dict[str, int]) -> TaskItem:
    return TaskItem(
        task_set=task_set,
        task=item.task,
        item_key=item.item_key,
        episode_id=item.episode_id if item.episode_id is not None else episodes[item.episode_key],
        first_turn=item.first_turn,
        last_turn=item.last_turn,
        start_s=item.start_s,
        end_s=item.end_s,
        label=item.label if item.label in ("error", "competency", "none") else "",
        context=item.context,
        options=item.options,
        correct=item.correct,
        gold=item.gold,
        source=item.source,
        provenance=item.provenance,
        subsets=item.subsets,
    )


def save_task_set(
    team: Team,
    name: str,
    items: Sequence[ItemRecord],
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    spans_from: str = "",
    replace: bool = False,
) -> TaskSet:
    """Write the task set and its items in one transaction (see the module docstring)."""
    if not name.strip():
        raise TaskSetError("a task set needs a name")
    if len(name) > MAX_NAME:
        raise TaskSetError(f"a task set's name has at most {MAX_NAME} characters; {name[:20]!r}… has {len(name)}")
    if not 0 <= seed <= MAX_SEED:
        raise TaskSetError(f"the seed must be a whole number from 0 to {MAX_SEED}, not {seed}")
    long_keys = [item.item_key for item in items if len(item.item_key) > MAX_KEY]
    if long_keys:
        raise TaskSetError(f"item keys have at most {MAX_KEY} characters; {long_keys[0][:40]!r}… is longer")
    keys = [(item.task, item.item_key) for item in items]
    if len(set(keys)) != len(keys):
        duplicate = next(key for key in keys if keys.count(key) > 1)
        raise TaskSetError(f"two items of task {duplicate[0]!r} have the key {duplicate[1]!r}")
    with transaction.atomic():
        episodes = _episode_ids(team, items)
        old = TaskSet.objects.select_for_update().filter(team=team, name=name).first()
        if old is not None:
            if not replace:
                raise TaskSetError(
                    f"the team {team.slug!r} already has a task set named {name!r}: choose another name, or replace it "
                    "(--replace; its items and the models' answers to them are deleted)"
                )
            try:
                old.delete()
            except ProtectedError as error:
                raise TaskSetError(
                    f"the task set {name!r} cannot be replaced: a human-baseline study shows its items "
                    f"({len(error.protected_objects)} study items); build under another name"
                ) from error
        task_set = TaskSet.objects.create(team=team, name=name, seed=seed, params=params or {}, spans_from=spans_from)
        TaskItem.objects.bulk_create([_row(task_set, item, episodes) for item in items], batch_size=500)
    return task_set
