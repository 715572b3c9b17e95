"""The import page and the report bundle with a real consumer in its own process, as on another machine.

The consumer (``tests.consumers``) has a var directory of its own and shares with the web side (this
test process) only the database, the queue and ``PARLEY_SHARED_DIR``: it reads the uploads from there
and writes the bundle there, and tells its progress through the queue's key-value store.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.models import ReportBundle
from benchmark.import_jobs.jobs import job_directory
from benchmark.import_jobs.progress_store import read_progress
from benchmark.jobs.queue import worker_name
from benchmark.models import Character, ImportJob, Job
from tests.annotator.test_reports import rated_study
from tests.builders import default_team, make_researcher, make_user
from tests.consumers import wait_for

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
PROFILES = SOTOPIA / "serialized_agent_profiles.jsonl"


@pytest.fixture
def shared(settings, tmp_path) -> Path:
    """The directory the web side and the consumer share (settings here, ``PARLEY_SHARED_DIR`` there)."""
    settings.SHARED_DIR = tmp_path / "shared"
    return settings.SHARED_DIR


def test_a_consumer_elsewhere_does_the_dry_run_and_the_import(queue, consumers, shared, client):
    consumers.start(workers=1, worker_type="process", env={"PARLEY_SHARED_DIR": str(shared)})
    client.force_login(make_researcher())

    response = client.post(reverse("benchmark:import"), {
        "files": [SimpleUploadedFile(PROFILES.name, PROFILES.read_bytes())], "format": "auto",
    })
    job = ImportJob.objects.get()
    assert response.status_code == 302

    wait_for(lambda: Job.objects.filter(pk=job.queue_job_id, status=Job.Status.FINISHED).exists(), "the dry run",
             consumers)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.CHECKED
    assert job.queue_job.worker and job.queue_job.worker != worker_name()  # the consumer did it, not this process
    assert read_progress(job.pk) is None  # the task cleared its progress from the queue's store
    assert "Would create</dt><dd>40 characters" in client.get(reverse("benchmark:import-job", args=[job.pk])).text
    assert Character.objects.count() == 0

    client.post(reverse("benchmark:import-job-start", args=[job.pk]))
    wait_for(lambda: ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.IMPORTED).exists(), "the import",
             consumers)
    assert Character.objects.filter(team=default_team()).count() == 40
    assert not job_directory(job.pk).exists()


def test_a_consumer_elsewhere_builds_the_bundle_the_page_then_offers(queue, consumers, shared, settings, client):
    settings.PARLEY_REPORT_BACKGROUND_THRESHOLD = 0
    consumers.start(workers=1, env={"PARLEY_SHARED_DIR": str(shared), "PARLEY_REPORT_BACKGROUND_THRESHOLD": "0"})
    researcher = make_user(staff=True)
    study, _, _ = rated_study(slug="big-study", created_by=researcher)
    client.force_login(researcher)

    client.post(reverse("annotator:report-bundle", args=[study.slug]))
    bundle = wait_for(
        lambda: ReportBundle.objects.filter(study=study).exclude(status__in=["pending", "running"]).first(),
        "the bundle", consumers, timeout=120,
    )

    assert bundle.status == ReportBundle.Status.READY, bundle.error
    assert (shared / "reports" / bundle.file_name).is_file()
    download = client.get(reverse("annotator:report-bundle-file", args=[study.slug, bundle.pk]))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert "report.json" in archive.namelist()
