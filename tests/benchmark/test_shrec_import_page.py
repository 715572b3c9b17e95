"""SHREC files through the import page: a parquet upload is told by its name, dry-run, then imported with its spans."""

import io
from pathlib import Path

import pandas
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.models import Span
from benchmark.models import Episode, ImportJob
from tests.builders import make_researcher

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path


def test_a_parquet_upload_is_dry_run_then_imported_with_its_spans(client, django_capture_on_commit_callbacks):
    client.force_login(make_researcher())
    parquet = io.BytesIO()
    pandas.read_csv(FIXTURE).to_parquet(parquet)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("benchmark:import"), {
            "files": [SimpleUploadedFile("shrec_empathic.parquet", parquet.getvalue())], "format": "auto"})
    job = ImportJob.objects.get()
    assert response.status_code == 302 and job.status == ImportJob.Status.CHECKED, job.error
    html = client.get(reverse("benchmark:import-job", args=[job.pk])).content.decode()
    assert "SHREC videos and annotations" in html and "27 spans" in html and "2 recordings" in html
    assert not Episode.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("benchmark:import-job-start", args=[job.pk]))

    job.refresh_from_db()
    assert job.status == ImportJob.Status.IMPORTED, job.error
    assert Episode.objects.count() == 2 and Span.objects.count() == 27
