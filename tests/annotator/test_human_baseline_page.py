"""The researcher's page for a new human-baseline study: their own task sets only, all or nothing."""

import pytest
from django.urls import reverse

from annotator.models import Study
from benchmark.models import TaskSet
from tests.annotator.shrec_items import make_task_set
from tests.builders import add_to_team, make_episode, make_researcher, make_scenario, make_team, make_user

pytestmark = pytest.mark.django_db
URL = reverse("annotator:human-baseline-create")


def test_a_researcher_creates_a_study_of_chosen_tasks_from_their_task_set(client):
    task_set = make_task_set()
    client.force_login(make_researcher())

    response = client.post(URL, {"task_set": task_set.pk, "tasks": ["pre", "rationale"], "overlap": "2",
                                 "title": "People on SHREC"})

    study = Study.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("annotator:dashboard", args=[study.slug])
    assert (study.title, study.overlap, study.team_id) == ("People on SHREC", 2, task_set.team_id)
    assert sorted(study.items.values_list("task_item__task", flat=True)) == ["pre", "rationale"]


def test_another_teams_task_set_is_neither_offered_nor_accepted(client):
    theirs = make_task_set("their-set", episode=make_episode(scenario=make_scenario(team=make_team())))
    mine = make_task_set("my-set")
    client.force_login(make_researcher())

    page = client.get(URL)
    assert "my-set" in page.text and "their-set" not in page.text
    response = client.post(URL, {"task_set": theirs.pk, "overlap": "1"})

    assert "Select a valid choice" in response.text and not Study.objects.exists()
    assert TaskSet.objects.count() == 2 and mine.pk != theirs.pk


def test_a_subset_without_items_is_refused_on_the_page_and_nothing_is_made(client):
    task_set = make_task_set()
    client.force_login(make_researcher())

    response = client.post(URL, {"task_set": task_set.pk, "tasks": ["pre"], "subset": "5", "overlap": "1"})

    assert response.status_code == 200
    assert "has no items of pre in subset 5" in response.text and not Study.objects.exists()


def test_an_annotator_cannot_open_the_page(client):
    annotator = make_user()
    add_to_team(annotator, role="annotator")
    client.force_login(annotator)

    assert client.get(URL).status_code == 403
