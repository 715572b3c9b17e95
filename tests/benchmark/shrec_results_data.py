"""A small SHREC task set with known answers, built with the ORM, for the results tests.

Two videos (episodes), one model (``m1``, zero-shot), two people through a registered human-baseline
source. The expected numbers in the tests were worked out by hand from the lists below.
"""

from __future__ import annotations

from typing import Any

from benchmark.models import Episode, Respondent, TaskAnswer, TaskItem, TaskSet, Team
from benchmark.results.shrec import human
from benchmark.results.shrec.human import HumanAnswer
from tests.builders import default_team, make_episode, make_scenario

MCQ_OPTIONS = ["one", "two", "three", "four", "five"]
# As benchmark.shrec.dataset.dataset_statistics stores it.
DATASET = {
    "pairing": "shrec",
    "overall": {
        "videos": 2, "annotators": 2, "annotations": 6, "paired_annotations": 4, "pairs": 2, "agreed_pairs": 1,
        "labels": {"error": 3, "competency": 3}, "channels": {"verbal": 4, "non-verbal": 1, "both": 0, "": 1},
        "attributes": {"emotions": 2, "conversational-mechanics": 3}, "agreed_attribute_counts": [1, 2],
    },
    "by_source": {
        "empathic": {"videos": 1, "annotations": 4, "paired_annotations": 4, "pairs": 2, "agreed_pairs": 1,
                     "labels": {"error": 2, "competency": 2}},
        "wellness": {"videos": 1, "annotations": 2, "paired_annotations": 0, "pairs": 0, "agreed_pairs": 0,
                     "labels": {"error": 1, "competency": 1}},
    },
}


def _item(task_set: TaskSet, episode: Episode, task: str, key: str, gold: Any, subsets: list[int], **fields: Any):
    options = {
        "detection": ["Social Competence", "Social Error", "None"],
        "error": ["Social Error", "No Social Error"],
        "multiple": ["True", "False"],
    }.get(task, MCQ_OPTIONS)
    return TaskItem.objects.create(
        task_set=task_set, task=task, item_key=key, episode=episode, context=f"Context of {key}.", options=options,
        correct=[0], gold=gold, subsets=subsets, source=fields.pop("source", "empathic"), **fields,
    )


def build_world(team: Team | None = None, *, name: str = "shrec-seed0", model: str = "m1") -> dict[str, Any]:
    """The task set, its items by key, and the model's answers (see the module docstring)."""
    team = team or default_team()
    scenario = make_scenario(team=team)
    first, second = make_episode(scenario=scenario), make_episode(scenario=scenario)
    params = {"seed": 0, "dataset": DATASET}
    task_set = TaskSet.objects.create(team=team, name=name, seed=0, params=params, spans_from="SHREC: two videos")
    items = {
        "d1": _item(task_set, first, "detection", "d1", "competency", [0], label="competency"),
        "d2": _item(task_set, second, "detection", "d2", "error", [0], label="error"),
        "d3": _item(task_set, first, "detection", "d3", "none", [1], label="none", source="wellness"),
        "d4": _item(task_set, second, "detection", "d4", "error", [1], label="error", source="wellness"),
        "e1": _item(task_set, first, "error", "e1", "error", [0], provenance={"attributes": ["emotions"]}),
        "e2": _item(task_set, second, "error", "e2", "no_error", [0],
                    provenance={"attributes": ["emotions", "intention"]}),
        "a1": _item(task_set, first, "attributes", "a1", ["conversational-mechanics", "knowledge-state"], [0]),
        "a2": _item(task_set, second, "attributes", "a2", ["emotions"], [0]),
        "p1": _item(task_set, first, "pre", "p1", 2, [0]),
        "p2": _item(task_set, second, "pre", "p2", 1, [0, 1]),
        "p3": _item(task_set, first, "pre", "p3", 3, [1]),
    }
    answers = {
        "d1": "competency", "d2": "error", "d3": "none", "d4": None,
        "e1": "error", "e2": "error",
        "a1": ["conversational-mechanics"], "a2": ["emotions"],
        "p1": 2, "p2": 1, "p3": 4,
    }
    for key, answer in answers.items():
        respondent, _ = Respondent.objects.get_or_create(
            kind=Respondent.Kind.JUDGE, model=model, prompt_version=f"shrec-{items[key].task}-v1"
        )
        TaskAnswer.objects.create(item=items[key], respondent=respondent, reply=f"reply {answer}", answer=answer)
    return {"task_set": task_set, "items": items, "episodes": (first, second)}


HUMAN_ANSWERS = (("p1", "P1", 2), ("p1", "P2", 1), ("p2", "P1", 1))


def human_baseline(monkeypatch) -> Any:
    """Installs a human-baseline source with two people's answers to the pre-condition items (P2 wrong on p1)."""
    registered: list = []
    monkeypatch.setattr(human, "_SOURCES", registered)

    def install(world: dict[str, Any], answers=HUMAN_ANSWERS) -> None:
        items = world["items"]

        def source(task_set_id: int) -> list[HumanAnswer]:
            if task_set_id != world["task_set"].pk:
                return []
            return [HumanAnswer(items[key].pk, person, answer) for key, person, answer in answers]

        human.register_human_baseline(source)

    return install
