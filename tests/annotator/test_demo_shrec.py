"""The demo's SHREC: the results open with numbers for every task (the scripted answerer and a generated Human row),
the same bytes twice, and the recordings play on the annotation page of the study for marking spans by hand."""

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from annotator.demo_shrec import HUMAN_SLUG, SUBSET_SIZE, SUBSETS, TASK_SET
from annotator.human_baseline.generated import GENERATED_BY
from annotator.models import Annotation, Assignment, Study
from benchmark.demo.shrec_recordings import TAG
from benchmark.models import Recording, Task, TaskAnswer, TaskSet

# load_demo, then load_demo_studies: built once per session and laid for this module (tests/worlds.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_studies_world")]

User = get_user_model()


def report() -> str:
    out = StringIO()
    call_command("benchmark_report", "--analysis", "shrec", "--task-set", TASK_SET, "--format", "json", stdout=out,
                 stderr=StringIO())
    return out.getvalue()


def test_the_demo_task_set_has_every_task_in_three_subsets_all_answered_by_the_scripted_answerer():
    task_set = TaskSet.objects.get(name=TASK_SET)

    assert task_set.seed == 0 and task_set.params["subsets"] == SUBSETS == 3
    assert task_set.spans_from.endswith(f"SHREC: {TAG}")
    for task in Task.values:
        items = task_set.items.filter(task=task)
        assert items.count() >= SUBSET_SIZE, task
        for subset in range(SUBSETS):
            assert sum(subset in item.subsets for item in items) == SUBSET_SIZE, (task, subset)
    answers = TaskAnswer.objects.filter(item__task_set=task_set)
    assert answers.count() == task_set.items.count()
    assert set(answers.values_list("respondent__model", flat=True)) == {"scripted"}


def test_the_report_has_numbers_for_all_eight_tasks_from_the_scripted_answerer_and_the_human_row_twice_alike():
    first = report()

    assert report() == first
    data = json.loads(first)
    (scripted,) = data["rows"]
    assert scripted["label"] == "(L) scripted"
    human = data["human"]
    for task in Task.values:
        accuracy = "exact" if task == Task.ATTRIBUTES else "accuracy"
        assert scripted["tasks"][task]["metrics"][accuracy]["subsets"] == 3, task
        assert scripted["tasks"][task]["metrics"][accuracy]["mean"] is not None, task
        assert human["tasks"][task]["metrics"][accuracy]["pooled"] is not None, task
    assert human["people"] == 2 and human["generated"] == human["answers"] > 0
    assert any("generated" in note for note in data["notes"])


def test_the_human_baseline_is_answered_by_two_demo_annotators_and_left_to_the_third():
    study = Study.objects.get(slug=HUMAN_SLUG)
    items = study.items.count()

    assert items == 8 * SUBSET_SIZE and study.overlap == 3
    answered = Annotation.objects.filter(assignment__item__study=study)
    assert answered.count() == 2 * items and set(answered.values_list("generated_by", flat=True)) == {GENERATED_BY}
    assert set(answered.values_list("assignment__annotator__username", flat=True)) == {"annotator1", "annotator2"}
    assert study.annotators.filter(username="annotator3").exists()


def test_the_results_page_opens_with_both_rows_for_the_researcher(client):
    client.force_login(User.objects.get(username="researcher"))
    task_set = TaskSet.objects.get(name=TASK_SET)

    response = client.get(reverse("benchmark:results-shrec"), {"task_set": task_set.pk})

    assert response.status_code == 200
    page = response.content.decode()
    assert "(L) scripted" in page and "Human" in page


def test_an_annotator_of_the_recordings_study_hears_the_recording_beside_the_transcript(client):
    study = Study.objects.get(slug="demo-shrec-recordings")
    annotator = User.objects.get(username="annotator3")
    assert study.items.count() == 8 and not Annotation.objects.filter(assignment__item__study=study).exists()
    item = study.items.order_by("position").first()
    assignment = Assignment.objects.create(
        item=item, annotator=annotator, claimed_at="2025-01-01T00:00:00Z", lease_expires_at="2999-01-01T00:00:00Z"
    )
    study.memberships.filter(annotator=annotator).update(instructions_read_at="2025-01-01T00:00:00Z")
    client.force_login(annotator)

    page = client.get(reverse("annotator:item", args=[assignment.pk])).content.decode()
    audio = client.get(reverse("annotator:recording", args=[assignment.pk]), HTTP_RANGE="bytes=0-43")

    assert "<audio" in page and reverse("annotator:recording", args=[assignment.pk]) in page
    assert audio.status_code == 206 and audio["Content-Type"] == "audio/wav"
    assert b"".join(audio.streaming_content if audio.streaming else [audio.content])[:4] == b"RIFF"
    recording = Recording.objects.get(episode=item.episode)
    assert recording.kind == "audio" and recording.duration_s > 15
