"""The ratings import page (issue 21): the checked file waits on the server for the import step, scoped to the
researcher and the study; the page lists every problem of a file and says an empty file is empty.

The study and the files are ``test_import_ratings``'s: five of Sotopia's real episodes on Sotopia-EVAL.
"""

import os
import stat
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotator.models import Annotation
from tests.annotator.test_import_ratings import LONG, rows_of, study, write_csv  # noqa: F401 - a fixture
from tests.builders import make_researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return settings.VAR_DIR / "imports" / "ratings"


def signed_in(team) -> Client:  # noqa: ANN001
    client = Client()
    client.force_login(make_researcher(team))
    return client


def check(client: Client, study, content: bytes, name: str = "prolific.csv"):  # noqa: ANN001, ANN201, F811
    upload = SimpleUploadedFile(name, content, content_type="text/csv")
    return client.post(reverse("annotator:ratings-import", args=[study.slug]), {"file": upload, "action": "check"})


def test_a_file_larger_than_a_posted_field_may_be_is_checked_then_imported(study, kept_dir, settings):  # noqa: F811
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096  # the long file is ~30 kB: sent back as a field, it was refused
    client = signed_in(study.team)
    checked = check(client, study, LONG.read_bytes())
    assert checked.status_code == 200 and "would create 210 answers" in checked.content.decode()
    token = checked.context["form"].initial["upload"]
    assert LONG.read_bytes().decode()[:200] not in checked.content.decode()  # the file is not in the page

    url = reverse("annotator:ratings-import", args=[study.slug])
    imported = client.post(url, {"upload": token, "action": "import"})

    assert imported.status_code == 302
    assert Annotation.objects.count() == 15
    assert not any(kept_dir.iterdir())  # deleted once imported


def test_the_checked_file_is_readable_by_the_server_alone(study, kept_dir):  # noqa: F811
    check(signed_in(study.team), study, LONG.read_bytes())

    [directory] = list(kept_dir.iterdir())
    [kept] = list(directory.iterdir())
    assert kept.name == "prolific.csv"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700 and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert len(directory.name.split("-", 2)[2]) == 32  # study, researcher, then a random token


def test_another_researcher_of_the_team_cannot_import_someone_elses_checked_file(study, kept_dir):  # noqa: F811
    token = check(signed_in(study.team), study, LONG.read_bytes()).context["form"].initial["upload"]
    other = signed_in(study.team)
    response = other.post(reverse("annotator:ratings-import", args=[study.slug]), {"upload": token, "action": "import"})

    assert response.status_code == 200
    assert "no longer on the server" in response.content.decode()
    assert not Annotation.objects.exists()


def test_a_checked_file_not_imported_within_a_day_is_deleted(study, kept_dir):  # noqa: F811
    client = signed_in(study.team)
    token = check(client, study, LONG.read_bytes()).context["form"].initial["upload"]
    [directory] = list(kept_dir.iterdir())
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(directory, (two_days_ago, two_days_ago))

    late = client.post(reverse("annotator:ratings-import", args=[study.slug]), {"upload": token, "action": "import"})
    assert "no longer on the server" in late.content.decode() and not Annotation.objects.exists()
    check(client, study, LONG.read_bytes())  # the next upload sweeps it away
    assert not directory.exists()


def test_a_refused_file_is_not_kept_and_every_problem_is_listed(study, kept_dir, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    rows[0]["value"] = "12"
    rows[5]["value"] = "99"
    response = check(signed_in(study.team), study, Path(write_csv(tmp_path / "bad.csv", rows)).read_bytes(), "bad.csv")
    page = response.content.decode()

    assert "2 problems, so nothing was imported" in page
    assert "<li>bad.csv, row 2, field value:" in page and "<li>bad.csv, row 7, field value:" in page
    assert not any(kept_dir.iterdir())


def test_an_empty_file_gets_one_clear_message_on_the_page(study, kept_dir):  # noqa: F811
    response = check(signed_in(study.team), study, b"", "empty.csv")
    page = response.content.decode()

    assert "empty.csv: the file is empty: it holds no header and no ratings" in page
    assert page.count('role="alert"') == 1
    assert "Choose a ratings file" not in page and "The submitted file is empty" not in page
