"""A SHREC task set built with the ORM for the human-baseline tests: one item of each of the eight tasks.

The episode is a short robot–person exchange; each item's options, correct positions and gold follow
the answer spaces of ``benchmark.models.task_items`` and the builders' fixed options (the error task's two in
the other order, so its options are read by their words). The correct option of a multiple-choice task is never
the first, so a page that showed options in another order, or gave away the correct one, would show.
"""

from __future__ import annotations

from benchmark.models import Episode, TaskItem, TaskSet
from benchmark.shrec.builders import ATTRIBUTE_OPTIONS, DETECTION_OPTIONS, MULTIPLE_OPTIONS
from tests.builders import make_episode

LINES = [
    "Hi! How was your day?",  # 0 agent
    "Today I took a walk around my building.",  # 1 person
    "Taking a walk can clear the mind. Do you have a story to share?",  # 2 agent
    "Not yet. I'll tell you next week.",  # 3 person
    "Sweet! Let's start the exercise.",  # 4 agent
    "I said not yet.",  # 5 person
]
PRE_OPTIONS = ["I'm ready.", "Today I took a walk around my building.", "Yes.", "It left me sore, but it was fun.",
               "I finished my book last night."]
POST_OPTIONS = ["Okay, let's continue.", "Congratulations on finishing the book!",
                "Taking a walk can clear the mind. Do you have a story to share?", "Wonderful, let's begin.",
                "Great, I'll be listening."]
RATIONALE_OPTIONS = ["Robot kept talking over the user.", "Robot forgot the user's name.",
                     "Robot ignored that the user said not yet.", "Robot did not apologise for its mistake.",
                     "Robot did not check in when the user walked away."]
CORRECTION_OPTIONS = ["Ask the user's name again.", "Wait until the user finishes.", "Say goodbye warmly.",
                      "Accept the answer and ask what they would like to do instead.", "Tell a joke."]

EXCHANGE = "User A: Not yet. I'll tell you next week.\nAI Agent: Sweet! Let's start the exercise."
# task -> (first turn, last turn, label, context, options, correct positions, gold)
ITEMS = {
    "detection": (3, 4, "error", EXCHANGE, DETECTION_OPTIONS, [1], "error"),
    "error": (3, 4, "error", EXCHANGE, ["No Social Error", "Social Error"], [1], "error"),
    "attributes": (3, 4, "error", "User A: Not yet.\nAI Agent: Sweet! Let's start the exercise.", ATTRIBUTE_OPTIONS,
                   [2, 4], ["conversational-mechanics", "intention"]),
    "multiple": (3, 4, "error", "User A: Not yet.\nAI Agent: Sweet! Let's start the exercise.", MULTIPLE_OPTIONS, [0],
                 True),
    "pre": (1, 2, "competency", "Taking a walk can clear the mind. Do you have a story to share?", PRE_OPTIONS, [1], 2),
    "post": (1, 2, "competency", "Today I took a walk around my building.", POST_OPTIONS, [2], 3),
    "rationale": (3, 5, "error",
                  "User A: Not yet.\nAI Agent: Sweet! Let's start the exercise.\nUser A: I said not yet.",
                  RATIONALE_OPTIONS, [2], 3),
    "correction": (3, 5, "error", "User A: Not yet.\nAI Agent: Sweet! Let's start the exercise.", CORRECTION_OPTIONS,
                   [3], 4),
}


def make_task_set(name: str = "shrec-seed0", *, episode: Episode | None = None) -> TaskSet:
    """A task set of the default team with one item of each task (key ``v1:<task>``), all in subsets 0 and 1
    except the correction item (subset 2 only)."""
    episode = episode or make_episode(turns=[("speak", line) for line in LINES])
    task_set = TaskSet.objects.create(team=episode.team, name=name, seed=0)
    for task, (first, last, label, context, options, correct, gold) in ITEMS.items():
        TaskItem.objects.create(
            task_set=task_set, task=task, item_key=f"v1:{task}", episode=episode, first_turn=first, last_turn=last,
            label=label, context=context, options=options, correct=correct, gold=gold, source="empathic",
            subsets=[2] if task == "correction" else [0, 1],
            provenance={"spans": [1, 2], "annotators": ["a", "b"]},
        )
    return task_set
