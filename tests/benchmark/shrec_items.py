"""SHREC task items built directly with the ORM, for the runner's and the prompts' tests."""

from benchmark.models import TaskItem, TaskSet
from tests.builders import make_episode

DETECTION = ["Social Competence", "Social Error", "None"]
RATIONALES = ["Robot kept talking over the user.", "Robot forgot the user's name.",
              "Robot answered a sad story with a cheerful joke.", "Robot did not apologise.",
              "Robot missed that the user wanted to stop."]


def make_task_set(name: str = "shrec-seed0", rationale_items: int = 2, detection_items: int = 1) -> TaskSet:
    """A task set with ``rationale_items`` rationale items (correct: option 3) and ``detection_items`` detection
    items (gold error), all in subset 0 except the last rationale item, which is in subset 1 only."""
    episode = make_episode()
    task_set = TaskSet.objects.create(team=episode.team, name=name, seed=0)
    for number in range(rationale_items):
        TaskItem.objects.create(
            task_set=task_set, task="rationale", item_key=f"v1:E{number}", episode=episode, label="error",
            context=f"AI Agent: Sweet! Let's start.\nUser A: My cat died last week ({number}).",
            options=RATIONALES, correct=[2], gold=3, source="empathic",
            subsets=[1] if number == rationale_items - 1 and number else [0],
        )
    for number in range(detection_items):
        TaskItem.objects.create(
            task_set=task_set, task="detection", item_key=f"v1:D{number}", episode=episode, label="error",
            context="AI Agent: Sorry, I did not catch that. Sorry?", options=DETECTION, correct=[1], gold="error",
            source="wellness-home", subsets=[0],
        )
    return task_set
