"""People read what the models read (SH-A12's last check): a human-baseline study made from the task items
built from the SHREC fixture shows, for every item, the task's text of the model's prompt and the same
options in the same order."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.human_baseline.study import create_human_baseline_study
from annotator.models import Assignment, Study
from benchmark.models import Task, TaskSet
from benchmark.shrec.prompts import build_prompt, options_block, task_instructions
from tests.annotator.builders import add_annotators
from tests.builders import default_team, make_user

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"


def test_every_item_shows_the_prompts_task_text_and_options_in_the_prompts_order(client):
    call_command("import_episodes", str(FIXTURE), "--format", "shrec", team=default_team().slug, stdout=StringIO())
    spans = Study.objects.get()
    call_command("shrec_tasks", "--study", spans.slug, "--seed", "0", stdout=StringIO())
    task_set = TaskSet.objects.get()
    study = create_human_baseline_study(task_set=task_set, overlap=1)
    person = make_user(username="reader")
    add_annotators(study, [person])
    client.force_login(person)

    seen = set()
    for item in study.items.select_related("task_item"):
        task_item = item.task_item
        assignment = Assignment.objects.create(item=item, annotator=person, claimed_at="2025-01-01T00:00:00Z",
                                               lease_expires_at="2999-01-01T00:00:00Z")
        response = client.get(reverse("annotator:item", args=[assignment.pk]))
        (entry,) = [entry for section in response.context["sections"] for entry in section.entries]
        prompt = build_prompt(task_item)
        assert response.context["task"].instructions == task_instructions(task_item.task, task_item.label)
        assert task_instructions(task_item.task, task_item.label) in prompt
        if task_item.task == Task.MULTIPLE:  # the prompt asks True or False; the page yes or no, in that order
            assert [option.label for option in entry.options] == ["Yes", "No"]
            assert task_item.options == ["True", "False"]
        else:
            labels = [option.label for option in entry.options]
            assert labels == task_item.options
            assert options_block(task_item.task, labels) in prompt  # "(A) …" / "(1) …" lines, as the model reads them
        assert "correct" not in repr(entry.question.options)
        seen.add(task_item.task)
        assignment.delete()
    assert seen == set(Task.values)
