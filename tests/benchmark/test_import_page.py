"""The import page: upload, dry run, import, progress, and who may see and start a job.

Each step is a task on the queue (``benchmark.jobs.tasks.import_upload``). The tests run the queue in
immediate mode: a step queued by a request runs in place once the request's transaction commits
(``django_capture_on_commit_callbacks(execute=True)``); without that, the step stays queued and the
test may do what the task does (``run_job``).
"""

import time
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from benchmark.import_jobs import jobs
from benchmark.import_jobs.jobs import JobNotRunnable, job_directory, remove_expired, run_job
from benchmark.import_jobs.progress_store import FileProgress, progress_key, read_progress, write_progress
from benchmark.importing import import_file
from benchmark.jobs.queue import HUEY, QueueUnavailable
from benchmark.jobs.tasks import import_upload, remove_expired_imports
from benchmark.models import Character, ImportJob, Job, Scenario
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
def spawned():
    """The steps the page queued, as the queue's job rows (oldest first)."""

    class Queued:
        def __iter__(self):
            return iter(Job.objects.filter(task=import_upload.task_class.__name__).order_by("pk"))

        def __len__(self) -> int:
            return Job.objects.filter(task=import_upload.task_class.__name__).count()

        def __eq__(self, other: object) -> bool:
            return list(self) == list(other)

    return Queued()


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
    """Upload ``files``; their dry run, queued once the request commits, runs in place."""
    with capture(execute=True):
        response = upload(browser, *files)
    assert response.status_code == 302, response.content.decode()
    job = ImportJob.objects.get()
    assert response["Location"] == reverse("benchmark:import-job", args=[job.pk])
    return job


def page(browser, job: ImportJob) -> str:
    response = browser.get(reverse("benchmark:import-job", args=[job.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_dry_run_shows_what_would_be_created_and_writes_nothing(
    browser, spawned, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    html = page(browser, job)
    link = reverse("benchmark:import-job", args=[job.pk])
    assert [(queued.label, queued.link, queued.arguments, queued.status) for queued in spawned] == [
        (f"Import {PROFILES.name} (dry run)", link, [job.pk], Job.Status.FINISHED)
    ]
    assert job.queue_job == next(iter(spawned))
    assert job.status == ImportJob.Status.CHECKED
    assert "Would create</dt><dd>40 characters" in html
    assert "Import 1 file for real" in html
    assert Character.objects.count() == 0
    assert (job_directory(job.pk) / "0" / PROFILES.name).exists(), "the files wait for the import"


def test_importing_for_real_writes_shows_the_summary_and_deletes_the_files(
    browser, spawned, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = browser.post(reverse("benchmark:import-job-start", args=[job.pk]))
    assert response.status_code == 302
    assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.IMPORTING
    assert "Waiting for a task consumer to take it" in page(browser, job)
    for callback in queued:
        callback()  # the queue takes the step; in immediate mode it runs in place
    job.refresh_from_db()

    html = page(browser, job)
    assert len(spawned) == 2 and list(spawned)[1].label == f"Import {PROFILES.name}"
    assert job.status == ImportJob.Status.IMPORTED
    assert Character.objects.filter(team=default_team()).count() == 40
    assert "Created</dt><dd>40 characters" in html and "for real" not in html
    assert not job_directory(job.pk).exists()


def test_a_second_click_on_import_queues_no_second_step(browser, spawned, django_capture_on_commit_callbacks):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    with django_capture_on_commit_callbacks(execute=True):
        browser.post(reverse("benchmark:import-job-start", args=[job.pk]))
        response = browser.post(reverse("benchmark:import-job-start", args=[job.pk]), follow=True)

    assert len(spawned) == 2  # the dry run's task and one import task
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
    jobs.start_import(job)  # queued on a commit that never comes in this test: the test does the step

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
    with django_capture_on_commit_callbacks(execute=True):
        jobs.start_import(ImportJob.objects.get())

    assert Character.objects.filter(team=second).count() == 40
    assert not Character.objects.filter(team=default_team()).exists()


def test_files_over_the_limit_are_refused_with_the_limit_named(browser, spawned, settings):
    settings.PARLEY_IMPORT_MAX_BYTES = 1000

    response = upload(browser, (PROFILES.name, PROFILES.read_bytes()))

    html = response.content.decode()
    assert response.status_code == 200
    assert "These files come to 31.4\xa0KB; this page takes at most 1000\xa0bytes at once" in html
    assert not ImportJob.objects.exists() and len(spawned) == 0


def test_an_empty_file_is_refused_by_name(browser, spawned):
    response = upload(browser, ("empty.jsonl", b""))

    assert "The file empty.jsonl is empty." in response.content.decode()
    assert not ImportJob.objects.exists()


def test_the_progress_partial_reports_the_tasks_progress_and_keeps_polling(browser, researcher):
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


def test_a_job_whose_task_is_silent_is_shown_as_lost_and_no_longer_polled(browser, researcher):
    job = ImportJob.objects.create(team=default_team(), created_by=researcher, file_names=["a.jsonl"],
                                   status=ImportJob.Status.IMPORTING)
    progress = FileProgress(files=1, stage="saving", done=3, total=9)
    write_progress(job.pk, progress)
    HUEY.put(progress_key(job.pk), {**asdict(progress), "stamp": time.time() - progress.quiet - 1})

    html = browser.get(reverse("benchmark:import-job-progress", args=[job.pk])).content.decode()

    assert "The task stopped before the end" in html
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


def test_the_command_runs_a_queued_step_in_place_and_prints_the_command_lines_summary(browser, spawned, capsys):
    upload(browser, (PROFILES.name, PROFILES.read_bytes()))  # queued on a commit that never comes in this test
    job = ImportJob.objects.get()

    call_command("import_episodes", "--job", str(job.pk))

    out = capsys.readouterr().out
    assert f"{PROFILES.name} (sotopia): would create 40 characters" in out
    assert f"Import {job.pk}: checked, ready to import." in out
    with pytest.raises(CommandError, match="nothing left to do"):
        call_command("import_episodes", "--job", str(job.pk))


# On the queue: waiting, lost, down, claimed once, and the upkeep


def test_a_step_waiting_in_the_queue_is_not_lost_however_long_it_waits(browser, researcher):
    queued = Job.objects.create(team=default_team(), task=import_upload.task_class.__name__, task_id="q1",
                                label="Import a.jsonl (dry run)")
    job = ImportJob.objects.create(team=default_team(), created_by=researcher, file_names=["a.jsonl"],
                                   queue_job=queued, created_at=timezone.now() - timedelta(hours=2))

    html = browser.get(reverse("benchmark:import-job-progress", args=[job.pk])).content.decode()

    assert "Waiting for a task consumer to take it" in html
    assert 'hx-trigger="every 1s"' in html and "stopped before the end" not in html


def test_a_step_whose_consumer_stopped_is_shown_as_lost_at_once(browser, researcher):
    queued = Job.objects.create(team=default_team(), task=import_upload.task_class.__name__, task_id="q2",
                                label="Import a.jsonl", status=Job.Status.FAILED,
                                error="The consumer stopped while this ran.")
    job = ImportJob.objects.create(team=default_team(), created_by=researcher, file_names=["a.jsonl"],
                                   status=ImportJob.Status.IMPORTING, queue_job=queued, started_at=timezone.now())
    write_progress(job.pk, FileProgress(files=1, stage="saving", done=3, total=9))  # fresh, but its task is gone

    html = browser.get(reverse("benchmark:import-job-progress", args=[job.pk])).content.decode()

    assert "The task stopped before the end" in html and "hx-get" not in html


def test_a_queue_that_is_down_is_said_on_the_page_and_nothing_is_kept(browser, spawned, monkeypatch, var_dir):
    def down() -> None:
        raise QueueUnavailable("The task queue (redis) cannot be reached, so nothing was started: ConnectionError.")

    monkeypatch.setattr(jobs, "check_queue", down)

    response = upload(browser, (PROFILES.name, PROFILES.read_bytes()))

    assert response.status_code == 200
    assert "The task queue (redis) cannot be reached, so nothing was started" in response.content.decode()
    assert not ImportJob.objects.exists() and len(spawned) == 0
    assert not (var_dir / "imports").exists() or not any((var_dir / "imports").iterdir())


def test_a_queue_that_is_down_leaves_a_checked_job_waiting_for_its_import(
    browser, spawned, monkeypatch, django_capture_on_commit_callbacks
):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    def down() -> None:
        raise QueueUnavailable("The task queue (postgres) cannot be reached, so nothing was started: OperationalError.")

    monkeypatch.setattr(jobs, "check_queue", down)
    response = browser.post(reverse("benchmark:import-job-start", args=[job.pk]), follow=True)

    assert "The task queue (postgres) cannot be reached" in response.content.decode()
    assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.CHECKED and len(spawned) == 1
    assert "Import 1 file for real" in response.content.decode()


def test_a_step_the_queue_refuses_at_commit_fails_the_import_with_the_queues_words(
    browser, spawned, monkeypatch, django_capture_on_commit_callbacks
):
    def refuse(task) -> None:
        raise ConnectionError("refused")

    monkeypatch.setattr(HUEY, "enqueue", refuse)
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))

    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED
    assert "could not take the job: ConnectionError" in job.error
    assert "could not take the job" in page(browser, job)
    assert not job_directory(job.pk).exists()


def test_a_step_is_done_once_even_when_it_is_started_twice(browser, researcher):
    upload(browser, (PROFILES.name, PROFILES.read_bytes()))
    job = ImportJob.objects.get()
    ImportJob.objects.filter(pk=job.pk).update(started_at=timezone.now())  # a consumer has claimed it

    with pytest.raises(JobNotRunnable, match="being done already"):
        run_job(job.pk)
    assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.CHECKING


def test_the_task_tells_its_progress_through_the_queues_store_and_clears_it_at_the_end(browser, researcher):
    upload(browser, (PROFILES.name, PROFILES.read_bytes()))
    job = ImportJob.objects.get()
    told = []
    original = HUEY.put
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HUEY, "put", lambda key, value: told.append((key, dict(value))) or original(key, value))
        import_upload.call_local(job.pk)

    stages = [value["stage"] for key, value in told if key == progress_key(job.pk)]
    assert stages[0] == "started" and "reading" in stages and stages[-1] == "saving"
    assert told[-1][1]["done"] == told[-1][1]["total"] == 40
    assert read_progress(job.pk) is None  # cleared once the step is over
    assert ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.CHECKED


def test_the_page_links_to_the_scenarios_an_import_made(browser, django_capture_on_commit_callbacks):
    environments = SOTOPIA / "serialized_environment_profiles.jsonl"
    job = dry_run(browser, django_capture_on_commit_callbacks, (environments.name, environments.read_bytes()))
    with django_capture_on_commit_callbacks(execute=True):
        browser.post(reverse("benchmark:import-job-start", args=[job.pk]))

    html = page(browser, job)
    made = Scenario.objects.filter(team=default_team()).order_by("codename", "pk")
    assert made.count() == 90
    first = made.first()
    assert f'href="{reverse("benchmark:index")}?scenario={first.pk}"' in html and str(first) in html
    assert "and 70 more" in html  # twenty are listed


def test_the_hourly_upkeep_expires_unconfirmed_dry_runs(browser, spawned, django_capture_on_commit_callbacks, caplog):
    job = dry_run(browser, django_capture_on_commit_callbacks, (PROFILES.name, PROFILES.read_bytes()))
    ImportJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(days=1, minutes=1))

    with caplog.at_level("INFO", logger="parley.upkeep"):
        ended = remove_expired_imports.call_local()

    assert ended == 1 and ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.EXPIRED
    assert not job_directory(job.pk).exists()
    assert "Upkeep: expired or ended 1 import(s)" in caplog.text


def test_uploads_wait_in_the_shared_directory_when_one_is_set(browser, settings, tmp_path):
    settings.SHARED_DIR = tmp_path / "shared"
    upload(browser, (PROFILES.name, PROFILES.read_bytes()))  # queued on a commit that never comes in this test
    job = ImportJob.objects.get()

    assert (tmp_path / "shared" / "imports" / str(job.pk) / "0" / PROFILES.name).is_file()
    assert run_job(job.pk).status == ImportJob.Status.CHECKED


def test_a_step_whose_consumer_cannot_see_the_uploads_fails_saying_where_it_looked(browser, settings, tmp_path):
    upload(browser, (PROFILES.name, PROFILES.read_bytes()))
    job = ImportJob.objects.get()
    settings.VAR_DIR = tmp_path / "another-machine"  # a consumer whose var directory is its own

    job = run_job(job.pk)

    assert (job.status, job.failed_file) == (ImportJob.Status.FAILED, 0)
    assert job.error.startswith(f"{PROFILES.name}: the uploaded file is not where the task looked")
    assert "PARLEY_SHARED_DIR" in job.error and "PARLEY_SHARED_DIR" in page(browser, job)


def test_a_step_lost_a_day_ago_is_ended_with_its_job_row(researcher):
    queued = Job.objects.create(team=default_team(), task=import_upload.task_class.__name__, task_id="q3",
                                label="Import a.jsonl", status=Job.Status.RUNNING)
    day_ago = timezone.now() - timedelta(days=1, minutes=5)
    job = ImportJob.objects.create(team=default_team(), created_by=researcher, file_names=["a.jsonl"],
                                   status=ImportJob.Status.IMPORTING, queue_job=queued, created_at=day_ago,
                                   started_at=day_ago)  # its consumer was killed: no progress, no signal

    assert remove_expired() == 1

    job.refresh_from_db()
    queued.refresh_from_db()
    assert (job.status, job.error) == (ImportJob.Status.FAILED, jobs.LOST)
    assert (queued.status, queued.error) == (Job.Status.FAILED, jobs.LOST)
