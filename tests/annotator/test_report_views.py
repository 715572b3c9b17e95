"""The report page and its downloads: who may open them, what they hold, and background bundles."""

import csv
import io
import json
import os
import re
import time
import zipfile

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from annotator.models import ReportBundle
from annotator.permissions import ANNOTATORS
from annotator.reports import bundles
from annotator.tasks import build_report_bundle, remove_old_report_files
from benchmark.jobs.queue import QueueUnavailable
from benchmark.models import Answer, Barrier, Job, Respondent
from tests.annotator.builders import make_study
from tests.annotator.test_reports import annotate, make_report_instrument, rated_study
from tests.builders import make_researcher, make_team, make_user

pytestmark = pytest.mark.django_db

PAGES = [
    ("report", ()),
    ("report-download", ("json",)),
    ("report-download", ("html",)),
    ("report-download", ("zip",)),
    ("report-tables", ()),
    ("report-table", ("statistics.csv",)),
    ("report-bundle", ()),
]
PAGE_IDS = ["page", "json", "html", "zip", "tables", "one-table", "bundle-panel"]
BUNDLE_FILES = {
    "README.txt", "annotations.csv", "report.json", "report.html", "tables/statistics.csv", "tables/accuracy.csv",
    "tables/confusion.csv", "tables/alignment.csv", "tables/by_condition.csv", "tables/notes.csv",
    "figures/barrier-accuracy.svg", "figures/barrier-confusion.svg", "figures/confusion-judge.svg",
    "figures/confusion-conditions.svg",
}


@pytest.fixture
def researcher():
    return make_user(staff=True, username="the-researcher")


@pytest.fixture
def study(researcher):
    study, _, annotators = rated_study(title="Barrier pilot", slug="barrier-pilot", created_by=researcher)
    group, _ = Group.objects.get_or_create(name=ANNOTATORS)
    for person in annotators:
        person.groups.add(group)
    return study


@pytest.fixture
def owner(client, researcher):
    client.force_login(researcher)
    return client


def url(name, *args, slug="barrier-pilot"):
    return reverse(f"annotator:{name}", args=[slug, *args])


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


# Who may open what


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_anonymous_visitors_are_sent_to_log_in(client, study, name, args):
    response = client.get(url(name, *args))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_annotators_never_see_reports_even_of_studies_they_rated(client, study, name, args):
    client.force_login(study.items.first().assignments.first().annotator)

    response = client.get(url(name, *args))

    assert response.status_code == 403
    assert b"0.583" not in body(response)


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_another_teams_study_is_not_found(client, study, name, args):
    client.force_login(make_researcher(make_team()))

    assert client.get(url(name, *args)).status_code == 404


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_a_superuser_opens_every_report(client, study, name, args):
    client.force_login(make_user(superuser=True))

    assert client.get(url(name, *args)).status_code == 200


def test_annotators_cannot_start_a_bundle(client, study):
    client.force_login(study.items.first().assignments.first().annotator)

    assert client.post(url("report-bundle")).status_code == 403
    assert not ReportBundle.objects.exists()


# The page


def test_the_page_shows_the_numbers_with_their_readings(owner, study):
    response = owner.get(url("report"))

    assert response.status_code == 200
    text = response.text
    assert "0.583" in text  # percent agreement, 7/12
    assert "0.143" in text and "slight" in text  # Fleiss' kappa, 1/7
    assert "0.375" in text and "fair" in text  # Randolph's kappa, 3/8
    assert "0.750" in text  # accuracy, 9/12
    assert "0.921" in text  # r with judge-x, 20 / sqrt(472)
    assert "judge-x" in text
    assert "3 annotations of gold items and 3 of attention checks" in text
    assert "How these numbers were computed" in text


def test_the_page_draws_every_figure_inline_with_a_title(owner, study):
    text = owner.get(url("report")).text

    assert text.count("<svg") == 6  # barrier: accuracy, confusion; confusion and goal: judge, conditions
    assert 'role="img"' in text and "<title id=" in text
    assert "barrier: accuracy with 95% cluster-bootstrap CIs" in text


def test_the_page_links_every_download(owner, study):
    text = owner.get(url("report")).text

    for name, args in [("report-download", ("json",)), ("report-download", ("html",)), ("report-tables", ()),
                       ("report-table", ("statistics.csv",)), ("report-download", ("zip",))]:
        assert f'href="{url(name, *args)}"' in text


def test_a_study_without_annotations_says_there_is_nothing_to_report(client, researcher):
    make_study(instrument=make_report_instrument(), slug="empty", created_by=researcher)
    client.force_login(researcher)

    response = client.get(url("report", slug="empty"))

    assert response.status_code == 200
    assert "Nothing to report yet" in response.text
    assert "<svg" not in response.text


def test_the_page_takes_a_fixed_number_of_queries(owner, study, django_assert_max_num_queries):
    # Four of them the stamp that keys the kept report (reports/stamp.py), two each annotator's agreement
    # (their answers and gold, reports/annotators.py).
    with django_assert_max_num_queries(18):
        assert owner.get(url("report")).status_code == 200


# Downloads


def test_json_download_is_the_strict_report(owner, study):
    response = owner.get(url("report-download", "json"))

    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == 'attachment; filename="barrier-pilot-report.json"'

    def refuse(constant):
        raise AssertionError(f"{constant} in the JSON")

    report = json.loads(response.content, parse_constant=refuse)
    barrier = report["questions"]["barrier"]
    assert barrier["percent_agreement"] == pytest.approx(7 / 12)
    assert barrier["accuracy"]["overall"]["value"] == pytest.approx(0.75)
    assert report["study"]["slug"] == "barrier-pilot"


def test_html_download_stands_alone(owner, study):
    response = owner.get(url("report-download", "html"))

    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="barrier-pilot-report.html"'
    text = response.content.decode()
    assert text.startswith("<!doctype html>") or "<!doctype html>" in text[:400]
    assert "<style>" in text and "--accent" in text  # the site's CSS, inline
    assert text.count("<svg") == 6
    assert "<link" not in text and "<script" not in text and 'src="' not in text
    assert "0.583" in text and "Barrier pilot" in text


def test_csv_tables_download_as_a_zip(owner, study):
    response = owner.get(url("report-tables"))

    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert {"statistics.csv", "accuracy.csv", "confusion.csv", "notes.csv"} <= set(archive.namelist())
    assert "barrier,categorical,fleiss_kappa,0.1428571428571" in archive.read("statistics.csv").decode()


def test_one_csv_table(owner, study):
    response = owner.get(url("report-table", "accuracy.csv"))

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert lines[0] == "question,class,value,ci95_low,ci95_high,n,chance,cluster,n_clusters,resamples"
    assert lines[1].startswith("barrier,overall,0.75,")


PLANTED = '=HYPERLINK("http://evil.example","click")'


@pytest.fixture
def planted(study):
    """The study with a judge and every free-text comment named like a spreadsheet formula."""
    Respondent.objects.filter(model="judge-x").update(model=PLANTED)
    Answer.objects.filter(question__key="comment").update(value=PLANTED)
    return study


def test_one_csv_table_quotes_a_judge_named_like_a_formula(owner, planted):
    response = owner.get(url("report-table", "alignment.csv"))

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert rows and {row["evaluator"] for row in rows} == {"'" + PLANTED}


def test_the_tables_zip_quotes_a_judge_named_like_a_formula(owner, planted):
    response = owner.get(url("report-tables"))

    alignment = zipfile.ZipFile(io.BytesIO(response.content)).read("alignment.csv").decode()
    assert {row["evaluator"] for row in csv.DictReader(io.StringIO(alignment))} == {"'" + PLANTED}


def test_the_zip_bundle_quotes_formulas_in_its_csv_files(owner, planted):
    response = owner.get(url("report-download", "zip"))

    archive = zipfile.ZipFile(io.BytesIO(response.content))
    comments = [row["value"] for row in csv.DictReader(io.StringIO(archive.read("annotations.csv").decode()))
                if row["question"] == "comment"]
    assert comments and set(comments) == {"'" + PLANTED}
    alignment = list(csv.DictReader(io.StringIO(archive.read("tables/alignment.csv").decode())))
    assert {row["evaluator"] for row in alignment} == {"'" + PLANTED}


# User text in figures is text, never maths: matplotlib would parse "$...$" as mathtext and fail.

MATHS = r"$\foo$ & <i>"
MATHS_IN_SVG = r"$\foo$ &amp; &lt;i&gt;"


@pytest.fixture
def maths(study):
    """The study with a barrier whose name matplotlib would take for (broken) mathtext."""
    Barrier.objects.filter(key="semantic").update(name=MATHS)
    return study


def figures_of(text: str) -> str:
    return "".join(re.findall(r"<svg.*?</svg>", text, flags=re.DOTALL))


def test_the_page_draws_a_barrier_named_like_maths_as_text(owner, maths):
    response = owner.get(url("report"))

    assert response.status_code == 200
    assert MATHS_IN_SVG in figures_of(response.text)


def test_the_html_download_draws_a_barrier_named_like_maths_as_text(owner, maths):
    response = owner.get(url("report-download", "html"))

    assert response.status_code == 200
    assert MATHS_IN_SVG in figures_of(response.content.decode())


def test_the_zip_bundle_draws_a_barrier_named_like_maths_as_text(owner, maths):
    response = owner.get(url("report-download", "zip"))

    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert MATHS_IN_SVG in archive.read("figures/confusion-conditions.svg").decode()


@pytest.mark.parametrize(("name", "args"), [("report-table", ("secrets.csv",)), ("report-download", ("pdf",))])
def test_unknown_downloads_are_not_found(owner, study, name, args):
    assert owner.get(url(name, *args)).status_code == 404


def test_the_zip_bundle_holds_data_report_tables_and_figures(owner, study):
    response = owner.get(url("report-download", "zip"))

    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="barrier-pilot-report.zip"'
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert BUNDLE_FILES <= set(archive.namelist())
    annotations = archive.read("annotations.csv").decode().splitlines()
    assert annotations[0].startswith("study,item,item_kind,")
    assert "rater-A" not in archive.read("annotations.csv").decode()  # pseudonyms only
    assert json.loads(archive.read("report.json"))["questions"]["barrier"]["n_items"] == 4
    assert archive.read("figures/barrier-accuracy.svg").startswith(b"<?xml")


# Large studies: the bundle is built by a task on the queue (transactional tests, so that the task is
# queued when the request commits; the tests' queue then runs it in place. Serialized rollback puts the
# seeded rows back after).


@pytest.fixture
def large(settings, tmp_path):
    settings.PARLEY_REPORT_BACKGROUND_THRESHOLD = 0
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_a_large_study_offers_to_prepare_the_bundle(owner, study, large):
    response = owner.get(url("report"))

    assert "Prepare the ZIP bundle" in response.text
    assert f'href="{url("report-download", "zip")}"' not in response.text
    redirected = owner.get(url("report-download", "zip"))
    assert redirected.status_code == 302 and redirected.url.endswith("#bundle")


def test_a_bundle_being_prepared_is_polled(owner, study, large, researcher):
    ReportBundle.objects.create(study=study, requested_by=researcher)

    response = owner.get(url("report-bundle"), HTTP_HX_REQUEST="true")

    assert "being prepared" in response.text
    assert 'hx-trigger="every 3s"' in response.text


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_background_bundle_is_written_and_then_linked(client, large):
    researcher = make_user(staff=True)
    study, _, _ = rated_study(slug="big-study", created_by=researcher)
    client.force_login(researcher)

    started = client.post(url("report-bundle", slug="big-study"))

    assert started.status_code == 302
    bundle = ReportBundle.objects.get(study=study)
    assert bundle.status == ReportBundle.Status.READY, bundle.error
    path = large / "reports" / bundle.file_name
    assert path.is_file() and path.stat().st_size == bundle.size
    assert bundle.annotations == 18  # 12 regular + 6 gold and attention: every submitted annotation
    page = client.get(url("report", slug="big-study")).text
    link = url("report-bundle-file", bundle.pk, slug="big-study")
    assert f'href="{link}"' in page
    assert "Prepare" not in page  # the bundle is up to date
    download = client.get(link)
    assert download["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert BUNDLE_FILES <= set(archive.namelist())
    assert client.get(url("report-download", "zip", slug="big-study")).status_code == 200  # the ready file


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_asking_twice_while_building_starts_one_bundle(client, large):
    researcher = make_user(staff=True)
    study, _, _ = rated_study(slug="big-twice", created_by=researcher)
    ReportBundle.objects.create(study=study, requested_by=researcher, status=ReportBundle.Status.RUNNING)
    client.force_login(researcher)

    client.post(url("report-bundle", slug="big-twice"))

    assert ReportBundle.objects.filter(study=study).count() == 1


def test_a_bundle_is_queued_as_a_job_and_built_by_whichever_consumer_takes_it(
    owner, study, large, researcher, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # no consumer takes it yet
        owner.post(url("report-bundle"), HTTP_HX_REQUEST="true")
    bundle = ReportBundle.objects.get(study=study)
    job = Job.objects.get()
    assert (job.task, job.arguments, job.team, job.status) == (
        "build_report_bundle", [bundle.pk], study.team, Job.Status.QUEUED
    )
    assert job.link == url("report") + "#bundle" and job.label == f"Report bundle of {study}"
    waiting = owner.get(url("report-bundle"), HTTP_HX_REQUEST="true").text
    assert "It waits in the queue" in waiting and 'hx-trigger="every 3s"' in waiting

    build_report_bundle.call_local(bundle.pk)  # a consumer, after any restart of the web process

    bundle.refresh_from_db()
    assert bundle.status == ReportBundle.Status.READY, bundle.error
    assert (large / "reports" / bundle.file_name).is_file()


def test_a_queue_that_is_down_is_said_in_the_panel_and_nothing_is_written(owner, study, large, monkeypatch):
    def down() -> None:
        raise QueueUnavailable("The task queue (postgres) cannot be reached, so nothing was started: OperationalError.")

    monkeypatch.setattr(bundles, "check_queue", down)

    panel = owner.post(url("report-bundle"), HTTP_HX_REQUEST="true").text
    page = owner.post(url("report-bundle"), follow=True).text

    assert "The task queue (postgres) cannot be reached" in panel and "Prepare the ZIP bundle" in panel
    assert "The task queue (postgres) cannot be reached" in page
    assert not ReportBundle.objects.exists() and not Job.objects.exists()


def test_a_bundle_whose_task_was_lost_is_stalled_and_prepared_again(
    owner, study, large, researcher, django_capture_on_commit_callbacks
):
    lost = ReportBundle.objects.create(study=study, requested_by=researcher, status=ReportBundle.Status.RUNNING)
    Job.objects.create(team=study.team, task="build_report_bundle", task_id="lost", arguments=[lost.pk],
                       label="Report bundle", status=Job.Status.FAILED, error="The consumer stopped while this ran.")

    panel = owner.get(url("report-bundle")).text
    assert "Its build stopped without finishing" in panel and "hx-trigger" not in panel
    with django_capture_on_commit_callbacks(execute=True):
        owner.post(url("report-bundle"))

    assert ReportBundle.objects.filter(study=study).count() == 1  # the new one replaced the lost one once ready
    assert ReportBundle.objects.get(study=study).status == ReportBundle.Status.READY


def test_the_hourly_upkeep_deletes_report_files_no_ready_bundle_names(study, large, researcher, caplog):
    reports = large / "reports"
    reports.mkdir()
    kept = ReportBundle.objects.create(study=study, requested_by=researcher, status=ReportBundle.Status.READY,
                                       file_name="kept.zip")
    for name in (kept.file_name, "gone-study.zip", "crashed.zip.part", "just-written.zip"):
        (reports / name).write_bytes(b"zip")
    long_ago = time.time() - 2 * 3600
    for name in (kept.file_name, "gone-study.zip", "crashed.zip.part"):
        os.utime(reports / name, (long_ago, long_ago))

    with caplog.at_level("INFO", logger="parley.upkeep"):
        removed = remove_old_report_files.call_local()

    assert removed == 2
    assert sorted(path.name for path in reports.iterdir()) == ["just-written.zip", "kept.zip"]
    assert "Upkeep: deleted 2 old report bundle file(s)" in caplog.text


def test_a_bundle_building_past_the_stall_limit_is_prepared_again_and_its_job_ended(
    owner, study, large, researcher, django_capture_on_commit_callbacks
):
    stuck = ReportBundle.objects.create(study=study, requested_by=researcher, status=ReportBundle.Status.RUNNING)
    ReportBundle.objects.filter(pk=stuck.pk).update(started_at=timezone.now() - bundles.STALLED_AFTER * 2)
    job = Job.objects.create(team=study.team, task="build_report_bundle", task_id="killed", arguments=[stuck.pk],
                             label="Report bundle", status=Job.Status.RUNNING)  # its consumer was killed: no signal

    with django_capture_on_commit_callbacks(execute=True):
        owner.post(url("report-bundle"))

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "task was lost" in job.error
    assert ReportBundle.objects.get(study=study).status == ReportBundle.Status.READY


def test_a_failed_bundle_says_why_and_can_be_tried_again(owner, study, large, researcher):
    ReportBundle.objects.create(study=study, requested_by=researcher, status=ReportBundle.Status.FAILED,
                                error="OSError: disk full")

    response = owner.get(url("report-bundle"))

    assert "could not be built" in response.text and "disk full" in response.text
    assert "Prepare the ZIP bundle" in response.text
    assert "hx-trigger" not in response.text


def test_a_small_studys_bundle_panel_links_the_direct_download(owner, study):
    response = owner.get(url("report-bundle"))

    assert f'href="{url("report-download", "zip")}"' in response.text


# Whom the annotators are compared with


def test_the_page_offers_every_respondent_kind_and_compares_with_judges_by_default(owner, study):
    response = owner.get(url("report"))

    assert response.context["compare"] == [
        ("judge", "automated judges", True), ("agent", "interviewed agents", False),
        ("participant", "participants", False), ("annotator", "annotators of other studies", False),
        ("gold", "adjudicated gold", False),
    ]
    assert response.context["report"]["questions"]["confusion"]["judge"]["evaluator"] == "judge-x"
    assert "?compare=" not in response.text


def test_the_page_and_its_downloads_compare_with_the_kinds_asked_for(owner, study):
    response = owner.get(url("report"), {"compare": ["agent", "oracle"]})

    assert response.context["report"]["compared_with"] == ["agent"]  # a kind that does not exist is ignored
    assert response.context["report"]["questions"]["confusion"]["judge"]["evaluator"] == "agent-z"
    assert f'{url("report-download", "json")}?compare=agent"' in response.text
    assert "it compares the annotators with automated judges" in response.text  # the ZIP bundle does not follow
    downloaded = json.loads(owner.get(url("report-download", "json"), {"compare": "agent"}).content)
    assert downloaded["questions"]["confusion"]["judge"]["respondent_kind"] == "agent"


def test_a_new_study_with_one_rating_says_whom_each_annotator_count_counts(client, researcher):
    study = make_study(instrument=make_report_instrument(), items=2, created_by=researcher)
    annotate(study.items.first(), make_user(), [("barrier", None, "semantic", None)])
    client.force_login(researcher)

    page = client.get(reverse("annotator:report", args=[study.slug])).text

    assert "Annotators with a submitted annotation: <strong>1</strong>" in page
    assert "Annotators of those units: <strong>0</strong>" in page  # no unit has the two ratings agreement needs
    assert "Annotators: <strong>" not in page
