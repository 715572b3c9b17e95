"""The import page: upload, dry run, import, progress, and who may see and start a job.

The worker process is replaced only at its start: ``spawn_process`` records the command, and the test
then does what that process does (``run_job``), in the test's database.
"""

import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from benchmark.import_jobs import jobs
from benchmark.import_jobs.jobs import remove_expired, run_job
from benchmark.import_jobs.progress_file import FileProgress, job_directory, progress_path, write_progress
from benchmark.importing import import_file
from benchmark.models import Character, ImportJob
from tests.builders import add_to_team, default_team, make_researcher, make_team

pytestmark = pytest.mark.django_db

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
PROFILES = SOTOPIA / "serialized_agent_profiles.jsonl"
BROKEN = b'{"scenario": {"codename": "x"}, "seats": []}\n{"scenario": \n'


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


@pytest.fixture
def spawned(monkeypatch):
    """The worker commands the page started (no process is started)."""
    calls = []
    monkeypatch.setattr(jobs, "spawn_process", lambda command, *, cwd, log: calls.append(command) or 4242)
    return calls


@pytest.fixture
def researcher():
    return make_researcher()


@pytest.fixture
def browser(client, researcher):
    client.force_login(researcher)
    return client


def upload(browser, *files: tuple[str, bytes], format: str = "auto"):
    uploads = [SimpleUploadedFile(name, content) for name, content in files]
    return browser.post(reverse("benchmark:import"), {"files": uploads, "format": format})


def dry_run(browser, capture, *files: tuple[str, bytes]) -> ImportJob:
    """Upload ``files`` and do what the worker started for them does."""
    with capture(execute=True):
        response = upload(browser, *files)
    assert response.status_code == 302, response.content.decode()
    job = ImportJob.objects.get()
    assert response["Location"] == reverse("benchmark:import-job", args=[job.pk])
    return run_job(job.pk)


def page(browser, job: ImportJob) -> str:
    response = browser.get(reverse("benchmark:import-job", args=[job.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_dry_run_shows_what_would_be_created_and_writes_nothing(
    browser, spawned, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    html = page(browser, job)
    assert spawned == [jobs.worker_command(job.pk)]
    assert job.status == ImportJob.Status.CHECKED
    assert "Would create</dt><dd>40 characters" in html
    assert "Import 1 file for real" in html
    assert Character.objects.count() == 0
    assert (job_directory(job.pk) / "0" / PROFILES.name).exists(), "the files wait for the import"


def test_importing_for_real_writes_shows_the_summary_and_deletes_the_files(
    browser, spawned, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post(reverse("benchmark:import-job-start", args=[job.pk]))
    assert response.status_code == 302
    assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.IMPORTING
    job = run_job(job.pk)

    html = page(browser, job)
    assert len(spawned) == 2
    assert job.status == ImportJob.Status.IMPORTED
    assert Character.objects.filter(team=default_team()).count() == 40
    assert "Created</dt><dd>40 characters" in html and "for real" not in html
    assert not job_directory(job.pk).exists()


def test_a_second_click_on_import_starts_no_second_worker(browser, spawned, django_capture_on_commit_callbacks):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    with django_capture_on_commit_callbacks(execute=True):
        browser.post(reverse("benchmark:import-job-start", args=[job.pk]))
        response = browser.post(reverse("benchmark:import-job-start", args=[job.pk]), follow=True)

    assert len(spawned) == 2  # the dry run's worker and one import worker
    assert "cannot be imported now: the job is importing" in response.content.decode()


def test_a_bad_file_shows_the_command_lines_located_message_and_writes_nothing(
    browser, spawned, django_capture_on_commit_callbacks, tmp_path
):
    job = dry_run(
        browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()), ("bad.jsonl", BROKEN)
    )
    (tmp_path / "bad.jsonl").write_bytes(BROKEN)
    with pytest.raises(CommandError) as command:
        call_command("import_episodes", str(tmp_path / "bad.jsonl"), "--dry-run")

    html = page(browser, job)
    assert job.status == ImportJob.Status.REFUSED
    assert str(command.value).startswith("bad.jsonl, line 2")
    assert job.error == str(command.value)
    assert job.error in html.replace("&#x27;", "'").replace("&quot;", '"')
    assert "Would create</dt><dd>40 characters" in html, "the file before it was checked"
    assert "for real" not in html and Character.objects.count() == 0
    assert not job_directory(job.pk).exists()


def test_a_file_that_fails_in_the_import_keeps_the_files_before_it_as_the_command_does(
    browser, spawned, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, ("a.jsonl", PROFILES.read_bytes()),
                  ("b.jsonl", PROFILES.read_bytes()), ("c.jsonl", PROFILES.read_bytes()))
    (job_directory(job.pk) / "1" / "b.jsonl").write_bytes(BROKEN)  # changed after its dry run
    jobs.start_import(job)

    job = run_job(job.pk)

    html = page(browser, job)
    assert (job.status, job.failed_file) == (ImportJob.Status.FAILED, 1)
    assert job.error.startswith("b.jsonl, line 2")
    assert Character.objects.count() == 40
    assert "The 1 file(s) before it were imported. The 1 file(s) after it were not read." in html
    assert "not imported" in html


def test_another_teams_researcher_can_neither_see_nor_start_a_job(
    browser, client, spawned, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))
    client.force_login(make_researcher(make_team()))

    assert client.get(reverse("benchmark:import-job", args=[job.pk])).status_code == 404
    assert client.get(reverse("benchmark:import-job-progress", args=[job.pk])).status_code == 404
    assert client.post(reverse("benchmark:import-job-start", args=[job.pk])).status_code == 404
    assert PROFILES.name not in client.get(reverse("benchmark:import")).content.decode()
    assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.CHECKED and len(spawned) == 1


def test_the_job_goes_to_the_chosen_team_of_a_researcher_with_several(
    browser, researcher, spawned, django_capture_on_commit_callbacks
):
    second = make_team(name="Second lab")
    make_researcher(second)  # someone else there
    add_to_team(researcher, second)
    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post(reverse("benchmark:import"), {
            "files": [SimpleUploadedFile(PROFILES.name, PROFILES.read_bytes())], "format": "auto", "team": second.pk,
        })
    assert response.status_code == 302
    jobs.start_import(run_job(ImportJob.objects.get().pk))
    run_job(ImportJob.objects.get().pk)

    assert Character.objects.filter(team=second).count() == 40
    assert not Character.objects.filter(team=default_team()).exists()


def test_files_over_the_limit_are_refused_with_the_limit_named(browser, spawned, settings):
    settings.PARLEY_IMPORT_MAX_BYTES = 1000

    response = upload(browser, (PROFILES.name, PROFILES.read_bytes()))

    html = response.content.decode()
    assert response.status_code == 200
    assert "These files come to 31.4\xa0KB; this page takes at most 1000\xa0bytes at once" in html
    assert not ImportJob.objects.exists() and spawned == []


def test_an_empty_file_is_refused_by_name(browser, spawned):
    response = upload(browser, ("empty.jsonl", b""))

    assert "The file empty.jsonl is empty." in response.content.decode()
    assert not ImportJob.objects.exists()


def test_the_progress_partial_reports_the_workers_progress_and_keeps_polling(browser, researcher):
    job = ImportJob.objects.create(team=default_team(), created_by=researcher, file_names=["a.jsonl", "b.jsonl"])
    write_progress(job.pk, FileProgress(files=2, file=1, stage="saving", done=120, total=480))

    html = browser.get(reverse("benchmark:import-job-progress", args=[job.pk])).content.decode()

    assert "File 2 of 2, b.jsonl: 120 of 480 records checked" in html
    assert 'value="120" max="480"' in html
    assert 'hx-trigger="every 1s"' in html


def test_import_file_tells_its_progress_as_records_are_parsed_and_saved():
    told = []

    import_file(PROFILES, team=default_team(), progress=lambda stage, done, total: told.append((stage, done, total)))

    assert told[0] == ("parsed", 40, 40) and told[-1] == ("saved", 40, 40)


def test_a_job_whose_worker_is_silent_is_shown_as_lost_and_no_longer_polled(browser, researcher):
    job = ImportJob.objects.create(team=default_team(), created_by=researcher, file_names=["a.jsonl"],
                                   status=ImportJob.Status.IMPORTING)
    write_progress(job.pk, FileProgress(files=1, stage="saving", done=3, total=9))
    long_ago = time.time() - 120
    os.utime(progress_path(job.pk), (long_ago, long_ago))

    html = browser.get(reverse("benchmark:import-job-progress", args=[job.pk])).content.decode()

    assert "The worker stopped before the end" in html
    assert "hx-get" not in html


def test_uploads_of_an_unconfirmed_dry_run_are_deleted_after_a_day(
    browser, spawned, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    remove_expired(now=timezone.now() + timedelta(days=1, minutes=1))

    job.refresh_from_db()
    assert job.status == ImportJob.Status.EXPIRED
    assert not job_directory(job.pk).exists()
    assert "Import 1 file for real" not in page(browser, job)


def test_the_worker_command_runs_a_job_and_prints_the_command_lines_summary(
    browser, spawned, django_capture_on_commit_callbacks, capsys
):
    with django_capture_on_commit_callbacks(execute=True):
        upload(browser, (PROFILES.name, PROFILES.read_bytes()))
    job = ImportJob.objects.get()

    call_command("import_episodes", "--job", str(job.pk))

    out = capsys.readouterr().out
    assert f"{PROFILES.name} (sotopia): would create 40 characters" in out
    assert f"Import {job.pk}: checked, ready to import." in out
    with pytest.raises(CommandError, match="nothing for a worker to do"):
        call_command("import_episodes", "--job", str(job.pk))
