"""The import page speaks the page's language (issue 21): formats by their names, problems that name the page's
fields rather than the command's flags, and a finished import that links to the episodes it brought in.

The steps run in place once the request commits, as in ``test_import_page`` (the queue in immediate mode).
"""

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from benchmark.import_jobs.forms import FORMAT_LABELS, ImportForm
from benchmark.importing import FORMATS
from benchmark.models import Episode, ImportJob
from tests.benchmark.test_import_page import browser, dry_run, page, researcher, spawned, upload, var_dir  # noqa: F401
from tests.builders import make_episode, make_researcher, make_team

pytestmark = pytest.mark.django_db

SOTOPIA_V1 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia" / \
    "sotopia_episodes_v1_first5.jsonl"


def test_every_format_in_the_list_is_named_for_people_not_by_its_key(researcher):  # noqa: F811
    choices = dict(ImportForm(user=researcher).fields["format"].choices)

    assert set(choices) == {"auto", *FORMATS}
    for key, label in choices.items():
        assert label == FORMAT_LABELS[key] and label != key and label[0].isupper()


def test_a_file_of_no_known_format_is_told_to_choose_it_in_the_format_list(
    browser, spawned, django_capture_on_commit_callbacks  # noqa: F811
):
    job = dry_run(browser, django_capture_on_commit_callbacks, ("notes.txt", b"just some notes\n"))

    assert job.status == ImportJob.Status.REFUSED
    assert "choose its format in the Format list" in job.error and "--format" not in job.error
    assert "Format list" in page(browser, job)


def test_the_job_page_names_the_chosen_format_and_each_files_format_by_their_labels(
    browser, spawned, django_capture_on_commit_callbacks  # noqa: F811
):
    with django_capture_on_commit_callbacks(execute=True):
        upload(browser, (SOTOPIA_V1.name, SOTOPIA_V1.read_bytes()), format="sotopia")
    job = ImportJob.objects.get()

    html = page(browser, job)
    assert "format: Sotopia episode logs or profiles." in html
    assert '<span class="muted">Sotopia episode logs or profiles</span>' in html
    assert "format: sotopia." not in html and '<span class="muted">sotopia</span>' not in html


def test_the_upload_limit_message_speaks_of_the_page_not_the_command(browser, spawned, settings):  # noqa: F811
    settings.PARLEY_IMPORT_MAX_BYTES = 1000
    html = upload(browser, (SOTOPIA_V1.name, SOTOPIA_V1.read_bytes())).content.decode()

    assert "this page takes at most" in html and "manage.py" not in html


def test_a_finished_import_links_to_the_episode_browser_showing_just_its_episodes(
    browser, spawned, django_capture_on_commit_callbacks  # noqa: F811
):
    other = make_episode(external_id="made-here-before")
    job = dry_run(browser, django_capture_on_commit_callbacks, (SOTOPIA_V1.name, SOTOPIA_V1.read_bytes()))
    assert "brought in" not in page(browser, job)  # a dry run brought nothing in
    with django_capture_on_commit_callbacks(execute=True):
        browser.post(reverse("benchmark:import-job-start", args=[job.pk]))
    job.refresh_from_db()

    html = page(browser, job)
    link = f'{reverse("benchmark:index")}?imported={job.pk}'
    assert f'href="{link}"' in html and "See the 5\n      episodes this import brought in" in html
    listed = browser.get(link)
    shown = {episode.pk for episode in listed.context["page"].object_list}
    assert shown == set(Episode.objects.exclude(pk=other.pk).values_list("pk", flat=True)) and len(shown) == 5
    assert f"import {job.pk}</a>\n  brought in" in listed.content.decode()


def test_another_teams_import_does_not_filter_the_browser(
    browser, spawned, django_capture_on_commit_callbacks  # noqa: F811
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (SOTOPIA_V1.name, SOTOPIA_V1.read_bytes()))
    stranger = Client()
    stranger.force_login(make_researcher(make_team(slug="elsewhere")))

    response = stranger.get(f'{reverse("benchmark:index")}?imported={job.pk}')
    assert response.status_code == 200 and "brought in" not in response.content.decode()
