"""The SHREC report (SH-16 to SH-18): Tables 1 and 2, the per-attribute scores, the dataset panel and the
human baseline, as one plain dict that the tables, figures, page, downloads and command all read.

**Rows.** One per model and prompt variant (``records.RowKey``), labelled as the paper does: "(L)" for a
model that read the transcript only (every Parley row: frames are off), "+ few-shot" or "+ cot" for the
variants. The **Human** row comes last.

**Cells.** For each task, the metrics of ``benchmark.stats.shrec.METRICS`` are computed on each subset (the
items whose ``subsets`` hold k: the paper's three separately sampled subsets), then reported as mean ± SD
over the subsets (sample SD, ddof 1) with the number of answers per subset. Beside them, the same metrics on
the pooled items (every item the row answered, once) with a 95% percentile CI from a bootstrap that
resamples whole videos (episodes). A task whose items were drawn into no subset is one subset, the pool.
An answer no parser could read stays in: wrong, and counted (``unparsed``). An item a model was not asked
is not counted (``answered`` says how many were).

**Human.** Every person's answer is scored as one observation, pooled across people (the printed value,
with n: the paper gives no ± for people); per subset, per person and for the majority answer of each item
(most frequent; a tie goes to the answer that sorts first, noted) in the JSON.

Which number a column prints is stated in ``legend`` (spec §5, items 1 and 2): "Attr Acc." is exact-set
accuracy, "Attr F1" macro-F1 over the seven attributes, "Multi F1" macro-F1 over True/False (never above
accuracy; the positive-class F1 is kept as ``positive_f1``).

**Figures' data.** The radar reads each task's primary metric (the attribute task: ``RADAR_METRIC``); the
per-attribute panels read per-label F1 of the attribute task and the error-detection macro-F1 within the
error-task items whose segment carries each attribute (``provenance["attributes"]``); the dataset panel
reads the statistics the task set stored when it was built (``TaskSet.params["dataset"]``: benchmark
cannot read the annotators' spans) and the composition of the items themselves.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ...caching import cached
from ...models import TaskSet
from ...stats import shrec as stats
from ...stats.bootstrap import DEFAULT_RESAMPLES
from ...stats.plain import plain_report
from .records import PARSED, TASKS, ItemRecord, Observation, TaskSetRecords, load_records

SCHEMA_VERSION = 1
HUMAN = "Human"
TASK_LABELS = {
    "detection": "Error / competence / none",
    "error": "Error detection",
    "attributes": "Attribute identification",
    "multiple": "Multiple attributes",
    "pre": "Pre-condition",
    "post": "Post-condition",
    "rationale": "Rationale",
    "correction": "Correction",
}
# (task, metric, column heading): the paper's Table 1 and Table 2.
TABLE1 = (
    ("detection", "accuracy", "EC3 Acc."),
    ("detection", "macro_f1", "EC3 F1"),
    ("error", "accuracy", "Err Acc."),
    ("error", "macro_f1", "Err F1"),
    ("attributes", "exact", "Attr Acc."),
    ("attributes", "macro_f1", "Attr F1"),
    ("attributes", "partial", "Attr Partial"),
    ("multiple", "accuracy", "Multi Acc."),
    ("multiple", "macro_f1", "Multi F1"),
)
TABLE2 = (
    ("pre", "accuracy", "Pre-condition"),
    ("post", "accuracy", "Post-condition"),
    ("rationale", "accuracy", "Rationale"),
    ("correction", "accuracy", "Correction"),
)
# The radar's axis per task: the primary metric, except for attributes, whose exact-set accuracy is near
# zero for every model by construction (spec §5 item 1); partial match tells the models apart.
RADAR_METRIC = {task: stats.METRICS[task][0] for task in TASKS} | {"attributes": "partial"}
METRIC_LABELS = {
    "accuracy": "accuracy",
    "macro_f1": "macro-F1",
    "exact": "exact-set accuracy",
    "partial": "partial match",
    "example_f1": "example-F1",
    "micro_f1": "micro-F1",
    "positive_f1": "F1 of True",
}
LEGEND = {
    "cells": "mean ± SD over the task's subsets (sample SD, ddof 1), n = answers per subset; the Human row: every "
    "person's answer pooled (no ±, as in the paper).",
    "attr_acc": "Attr Acc. is exact-set accuracy: the chosen attributes equal the gold set exactly.",
    "attr_f1": "Attr F1 is macro-F1 over the seven attributes (example-F1 and micro-F1 are in the JSON); "
    "Attr Partial: at least one gold attribute chosen.",
    "multi_f1": "Multi F1 is macro-F1 over True and False, which never exceeds accuracy; the F1 of True alone "
    "(what the paper's human 0.75 seems to be) is in the JSON as positive_f1.",
    "unparsed": "An answer no parser could read is wrong and counted; it is no class's false positive.",
    "prefix": "(L): the model read the transcript only (no frames).",
    "radar": "Radar axes: accuracy for every task except attribute identification, drawn as partial match.",
}


def _subsets_of(items: Sequence[ItemRecord]) -> list[int]:
    return sorted({k for item in items for k in item.subsets})


def _scores(task: str, items: Mapping[int, ItemRecord], observations: Sequence[Observation]) -> dict[str, float]:
    gold = [items[o.item].gold for o in observations]
    return stats.task_scores(task, gold, [o.answer for o in observations])


def _cell(
    task: str,
    items: Mapping[int, ItemRecord],
    task_items: Sequence[ItemRecord],
    observations: Sequence[Observation],
    *,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """One row's scores on one task: per subset, mean ± SD over subsets, pooled with a CI by video."""
    metrics = stats.METRICS[task]
    subsets = _subsets_of(task_items)
    per_subset = []
    for k in subsets or [None]:
        chosen = [o for o in observations if k is None or k in items[o.item].subsets]
        per_subset.append(
            {
                "subset": k,
                "n": len(chosen),
                "metrics": _scores(task, items, chosen) if chosen else dict.fromkeys(metrics),
            }
        )
    pooled = (
        stats.cluster_bootstrap_scores(
            task,
            [items[o.item].gold for o in observations],
            [o.answer for o in observations],
            [items[o.item].episode for o in observations],
            resamples=resamples,
            seed=seed,
        )
        if observations
        else {}
    )
    cell_metrics = {}
    for metric in metrics:
        spread = stats.subset_mean_sd([entry["metrics"][metric] for entry in per_subset])
        entry = pooled.get(metric) or {}
        cell_metrics[metric] = {
            "mean": spread.mean,
            "sd": spread.sd,
            "subsets": spread.n,
            "pooled": entry.get("value"),
            "ci95": entry.get("ci95"),
        }
    return {
        "items": len(task_items),
        "answered": len(observations),
        "unparsed": sum(1 for o in observations if o.answer is None),
        "videos": len({items[o.item].episode for o in observations}),
        "n_per_subset": [entry["n"] for entry in per_subset],
        "per_subset": per_subset,
        "metrics": cell_metrics,
    }


def _by_task(items: Mapping[int, ItemRecord], observations: Sequence[Observation]) -> dict[str, list[Observation]]:
    grouped: dict[str, list[Observation]] = defaultdict(list)
    for observation in observations:
        grouped[items[observation.item].task].append(observation)
    return grouped


def _row_cells(
    records: TaskSetRecords, observations: Sequence[Observation], *, resamples: int, seed: int
) -> dict[str, Any]:
    items = records.items
    by_task = _by_task(items, observations)
    task_items = _task_items(records)
    return {
        task: _cell(task, items, task_items[task], by_task.get(task, []), resamples=resamples, seed=seed)
        for task in TASKS
    }


def _task_items(records: TaskSetRecords) -> dict[str, list[ItemRecord]]:
    grouped: dict[str, list[ItemRecord]] = {task: [] for task in TASKS}
    for item in records.items.values():
        if item.task in grouped:
            grouped[item.task].append(item)
    return grouped


def _majority(observations: Sequence[Observation]) -> tuple[list[Observation], int]:
    """The most frequent answer of each item (a tie: the answer that sorts first), and how many items tied."""
    answers: dict[int, Counter] = defaultdict(Counter)
    for observation in observations:
        answers[observation.item][observation.answer] += 1
    chosen, ties = [], 0
    for item, counts in sorted(answers.items()):
        top = max(counts.values())
        leaders = sorted((answer for answer, count in counts.items() if count == top), key=repr)
        ties += len(leaders) > 1
        chosen.append(Observation(item, leaders[0], "majority"))
    return chosen, ties


def _plain_scores(task: str, items: Mapping[int, ItemRecord], observations: Sequence[Observation]) -> dict[str, Any]:
    return {
        "n": len(observations),
        "unparsed": sum(1 for o in observations if o.answer is None),
        "metrics": _scores(task, items, observations) if observations else dict.fromkeys(stats.METRICS[task]),
    }


def human_section(records: TaskSetRecords, *, resamples: int, seed: int) -> dict[str, Any] | None:
    """The Human row's cells (every answer pooled), per person and the majority per item, or None."""
    observations = records.humans
    if not observations:
        return None
    items = records.items
    by_task = _by_task(items, observations)
    people = sorted({o.person for o in observations})
    per_person = {
        person: {
            task: _plain_scores(task, items, [o for o in answers if o.person == person])
            for task, answers in sorted(by_task.items(), key=lambda entry: TASKS.index(entry[0]))
            if any(o.person == person for o in answers)
        }
        for person in people
    }
    majority, ties = {}, 0
    for task in TASKS:
        if by_task.get(task):
            chosen, tied = _majority(by_task[task])
            majority[task] = _plain_scores(task, items, chosen)
            ties += tied
    return {
        "label": HUMAN,
        "people": len(people),
        "answers": len(observations),
        "generated": records.generated_humans,
        "tasks": _row_cells(records, observations, resamples=resamples, seed=seed),
        "per_person": per_person,
        "majority": majority,
        "majority_ties": ties,
    }


def _model_rows(records: TaskSetRecords, *, resamples: int, seed: int) -> list[dict[str, Any]]:
    return [
        {
            "label": key.label,
            "model": key.model,
            "variant": key.variant,
            "setting": key.setting,
            "modality": "L",
            "prompt_versions": records.prompt_versions.get(key, {}),
            "tasks": _row_cells(records, observations, resamples=resamples, seed=seed),
        }
        for key, observations in records.models.items()
    ]


def _attribute_f1(records: TaskSetRecords, observations: Sequence[Observation]) -> dict[str, Any] | None:
    """Per-label F1 of the attribute task over the pooled answers (Fig. 8), or None without answers."""
    chosen = [o for o in observations if records.items[o.item].task == "attributes"]
    if not chosen:
        return None
    scores = stats.attribute_scores([records.items[o.item].gold for o in chosen], [o.answer for o in chosen])
    return {"n": len(chosen), "f1": {key: scores.per_label[key].f1 for key in stats.ATTRIBUTE_LABELS}}


def _error_f1_by_attribute(records: TaskSetRecords, observations: Sequence[Observation]) -> dict[str, Any] | None:
    """Error detection within the error-task items whose segment carries each attribute (Figs. 6–7): macro-F1
    (``f1``, drawn), the error class's F1 and accuracy; None without answers to the error task."""
    chosen = [o for o in observations if records.items[o.item].task == "error"]
    if not chosen:
        return None
    by_attribute = stats.scores_by_attribute(
        "error",
        [records.items[o.item].gold for o in chosen],
        [o.answer for o in chosen],
        [records.items[o.item].attributes for o in chosen],
    )
    return {
        key: {
            "n": entry["n"],
            "f1": entry.get("macro_f1"),
            "error_f1": entry.get("error_f1"),
            "accuracy": entry.get("accuracy"),
        }
        for key, entry in by_attribute.items()
    }


def per_attribute(records: TaskSetRecords) -> dict[str, Any]:
    """The per-attribute panels' numbers, per model row and for the people (pooled)."""
    rows: list[tuple[str, Sequence[Observation]]] = [(key.label, obs) for key, obs in records.models.items()]
    if records.humans:
        rows.append((HUMAN, records.humans))
    return {
        "attributes": [
            {"key": key, "name": records.attribute_names.get(key, key)} for key in stats.ATTRIBUTE_LABELS
        ],
        "attribute_f1": {label: entry for label, obs in rows if (entry := _attribute_f1(records, obs))},
        "error_f1": {label: entry for label, obs in rows if (entry := _error_f1_by_attribute(records, obs))},
        "error_items_with_attributes": sum(
            1 for item in records.items.values() if item.task == "error" and item.attributes
        ),
    }


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(key): count for key, raw in value.items() if (count := _count(raw)) is not None}


def _share(part: int | None, whole: int | None) -> float | None:
    return part / whole if part is not None and whole else None


def _dataset_entry(entry: Any) -> dict[str, Any]:
    """One scope's statistics as ``benchmark.shrec.dataset.dataset_statistics`` stored them (counts), with the
    shares: overlap = spans in a pair / spans, agreement = agreed pairs / pairs."""
    entry = entry if isinstance(entry, Mapping) else {}
    counts = {
        name: _count(entry.get(name))
        for name in ("videos", "annotators", "annotations", "paired_annotations", "pairs", "agreed_pairs")
    }
    listed = entry.get("agreed_attribute_counts")
    attribute_counts = [n for n in listed if _count(n) is not None] if isinstance(listed, list) else []
    return {
        **counts,
        "overlap": _share(counts["paired_annotations"], counts["annotations"]),
        "agreement": _share(counts["agreed_pairs"], counts["pairs"]),
        "labels": _counts(entry.get("labels")),
        "channels": _counts(entry.get("channels")),
        "attributes": _counts(entry.get("attributes")),
        "mean_agreed_attributes": sum(attribute_counts) / len(attribute_counts) if attribute_counts else None,
    }


def dataset_panel(records: TaskSetRecords) -> dict[str, Any]:
    """The dataset statistics the task set recorded at build time (``TaskSet.params["dataset"]``: ``pairing``,
    ``overall`` and ``by_source``, as ``benchmark.shrec.dataset`` writes them), and the composition of its items."""
    stored = (records.task_set.params or {}).get("dataset")
    composition: dict[str, Any] = {}
    for task, task_items in _task_items(records).items():
        composition[task] = {
            "items": len(task_items),
            "videos": len({item.episode for item in task_items}),
            "subsets": _subsets_of(task_items),
            "by_source": dict(sorted(Counter(item.source or "unknown" for item in task_items).items())),
            "by_label": dict(sorted(Counter(item.label or "unlabelled" for item in task_items).items())),
        }
    if not isinstance(stored, Mapping) or not isinstance(stored.get("overall"), Mapping):
        return {
            "recorded": False,
            "note": "this task set was built without dataset statistics (TaskSet.params['dataset']); the overlap, "
            "agreement, label, channel and attribute distributions are not recorded",
            "pairing": None,
            "overall": None,
            "by_source": {},
            "items": composition,
        }
    sources = stored.get("by_source") if isinstance(stored.get("by_source"), Mapping) else {}
    return {
        "recorded": True,
        "note": "",
        "pairing": stored.get("pairing"),
        "overall": _dataset_entry(stored["overall"]),
        "by_source": {(str(source) or "unknown"): _dataset_entry(entry) for source, entry in sorted(sources.items())},
        "items": composition,
    }


def _task_set_summary(task_set: TaskSet, records: TaskSetRecords) -> dict[str, Any]:
    params = {key: value for key, value in (task_set.params or {}).items() if key != "dataset"}
    return {
        "id": task_set.pk,
        "name": task_set.name,
        "seed": task_set.seed,
        "spans_from": task_set.spans_from,
        "items": len(records.items),
        "params": params,
    }


def _tasks_meta(records: TaskSetRecords) -> list[dict[str, Any]]:
    task_items = _task_items(records)
    return [
        {
            "key": task,
            "label": TASK_LABELS[task],
            "metrics": list(stats.METRICS[task]),
            "primary": RADAR_METRIC[task],
            "chance": stats.CHANCE[task],
            "items": len(task_items[task]),
            "subsets": _subsets_of(task_items[task]),
        }
        for task in TASKS
    ]


def _columns(spec: Sequence[tuple[str, str, str]]) -> list[dict[str, str]]:
    return [{"task": task, "metric": metric, "label": label} for task, metric, label in spec]


def build_shrec(
    task_set: TaskSet, *, answers: str = PARSED, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """The whole SHREC report for one task set (see the module docstring): plain, stable JSON values.

    ``answers``: score the parser's reading of each reply (``parsed``) or the coercing model's (``coerced``)."""
    return score_records(load_records(task_set, answers), resamples=resamples, seed=seed)


def cached_shrec(
    task_set: TaskSet, *, answers: str = PARSED, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """``build_shrec``'s report, kept (``benchmark.caching``) while nothing it reads has changed.

    Reading the records is a few queries; scoring them (a bootstrap per row and task) takes seconds. The key
    is a digest of every record read, so a new answer, a person's answer or a rebuilt task set is a new key,
    and the same data is never scored twice within ``PARLEY_REPORT_CACHE_SECONDS``."""
    records = load_records(task_set, answers)
    content = (
        task_set.name, task_set.seed, task_set.spans_from, task_set.params, records.items, records.models,
        records.prompt_versions, records.humans, records.generated_humans, records.attribute_names, records.notes,
    )
    digest = hashlib.sha256(repr(content).encode()).hexdigest()
    return cached(
        lambda: score_records(records, resamples=resamples, seed=seed),
        "shrec", SCHEMA_VERSION, task_set.pk, answers, resamples, seed, digest,
    )


def score_records(records: TaskSetRecords, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """The report from records already read (``build_shrec`` reads them)."""
    task_set = records.task_set
    notes = list(records.notes)
    if not records.items:
        notes.append(f"the task set {task_set.name!r} has no items: build them with shrec_tasks")
    elif not records.models and not records.humans:
        notes.append(
            "no model or person has answered these items yet: run evaluate --shrec all, or a human-baseline study"
        )
    for task, task_items in _task_items(records).items():
        if task_items and not _subsets_of(task_items):
            notes.append(f"{task}: no item was drawn into a subset; its whole pool is reported as one subset")
    human = human_section(records, resamples=resamples, seed=seed)
    if human and human["generated"]:
        notes.append(f"{human['generated']} human answer(s) were generated, not given by people (the demo's)")
    if human and human["majority_ties"]:
        notes.append(
            f"{human['majority_ties']} item(s) had tied human answers: the majority took the one sorting first"
        )
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "task_set": _task_set_summary(task_set, records),
        "answers": records.answers_from,
        "resamples": resamples,
        "seed": seed,
        "tasks": _tasks_meta(records),
        "table1": _columns(TABLE1),
        "table2": _columns(TABLE2),
        "metric_labels": METRIC_LABELS,
        "legend": LEGEND,
        "rows": _model_rows(records, resamples=resamples, seed=seed),
        "human": human,
        "per_attribute": per_attribute(records),
        "dataset": dataset_panel(records),
        "method": stats.METHOD,
        "notes": notes,
    }
    return plain_report(report)
