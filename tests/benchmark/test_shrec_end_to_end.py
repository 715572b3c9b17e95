"""SH-A12, SHREC end to end and offline: two synthetic SHREC-format videos imported, all eight tasks built with
seed 0, answered by the scripted answerer, and Tables 1 and 2 equal to a stored file, the same bytes every time;
and a human-baseline study of the same items shows each item's options in the order the model prompt lists them.

Every step goes through its command, as a researcher would run it (``import_episodes --format shrec``,
``shrec_tasks``, ``evaluate --shrec all --models scripted``, ``benchmark_report --analysis shrec``). The
answers are queued as chunks that run inline when the command's transaction commits, so the test commits.
"""

import html
import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.external_spans import shrec_study
from annotator.human_baseline.study import create_human_baseline_study
from annotator.models import Assignment
from benchmark.models import Task, TaskAnswer, TaskItem, TaskSet
from benchmark.shrec.prompts import build_prompt, option_mark
from tests.annotator.builders import add_annotators
from tests.builders import default_team, make_user

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "shrec"
VIDEOS = FIXTURES / "two_videos.csv"
EXPECTED = FIXTURES / "expected_tables.json"
TASK_SET = "sh-a12"

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def run(command: str, *arguments: str) -> str:
    out = StringIO()
    call_command(command, *arguments, stdout=out, stderr=StringIO())
    return out.getvalue()


def build_and_answer(*options: str) -> TaskSet:
    """Import the two videos (unchanged when already there), build the eight tasks and let the scripted answerer
    answer every item."""
    run("import_episodes", "--format", "shrec", str(VIDEOS))
    study = shrec_study(default_team(), "shrec-two-videos")
    run(
        "shrec_tasks", "--study", study.slug, "--tasks", "all", "--seed", "0", "--subsets", "3",
        "--subset-size", "3", "--name", TASK_SET, *options,
    )
    run("evaluate", "--shrec", "all", "--models", "scripted", "--task-set", TASK_SET)
    return TaskSet.objects.get(name=TASK_SET)


def report() -> str:
    return run("benchmark_report", "--analysis", "shrec", "--task-set", TASK_SET, "--format", "json")


def tables(text: str) -> dict:
    """Tables 1 and 2 of a report: their columns, the model rows and the Human row (none here)."""
    data = json.loads(text)
    return {key: data[key] for key in ("table1", "table2", "rows", "human")}


def test_two_videos_give_all_eight_tasks_answered_and_the_stored_tables_in_the_same_bytes_each_time():
    task_set = build_and_answer()

    items = TaskItem.objects.filter(task_set=task_set)
    assert sorted(set(items.values_list("task", flat=True))) == sorted(Task.values)
    assert TaskAnswer.objects.filter(item__task_set=task_set).count() == items.count()
    first = report()
    assert report() == first  # the same database: the same bytes
    assert tables(first) == json.loads(EXPECTED.read_text())

    build_and_answer("--replace")  # built and answered afresh: new rows, the same tables

    assert tables(report()) == tables(first)


LABEL = re.compile(r'<span class="choice__label">(?:<span class="choice__value">[^<]*</span> )?(.*?)</span>', re.S)


def shown_options(page: str) -> list[str]:
    """The labels of the choices the page offers, in the order shown."""
    return [html.unescape(label.strip()) for label in LABEL.findall(page)]


def test_a_human_baseline_study_shows_each_items_options_in_the_order_of_the_model_prompt(client):
    task_set = build_and_answer()
    study = create_human_baseline_study(task_set=task_set, overlap=1)
    person = make_user(username="sh-a12-annotator")
    add_annotators(study, [person])
    study.memberships.update(instructions_read_at="2025-01-01T00:00:00Z")
    client.force_login(person)

    compared = 0
    for study_item in study.items.select_related("task_item"):
        item = study_item.task_item
        assignment = Assignment.objects.create(
            item=study_item, annotator=person, claimed_at="2025-01-01T00:00:00Z",
            lease_expires_at="2999-01-01T00:00:00Z",
        )
        response = client.get(reverse("annotator:item", args=[assignment.pk]))
        assert response.status_code == 200
        page, prompt = response.content.decode(), build_prompt(item)
        if item.task == Task.MULTIPLE:  # asked true or false of models, yes or no of people: no options to order
            assert "True" in prompt and "False" in prompt
            continue
        in_prompt = [prompt.index(f"{option_mark(item.task, n)} {text}") for n, text in enumerate(item.options)]
        assert in_prompt == sorted(in_prompt), item.item_key
        assert shown_options(page) == item.options, item.item_key
        assert " checked" not in page  # nothing is picked for the annotator, the correct option least of all
        compared += 1
    assert compared == TaskItem.objects.filter(task_set=task_set).exclude(task=Task.MULTIPLE).count() > 40
