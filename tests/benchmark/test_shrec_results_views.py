"""The SHREC results page and its downloads: who may look, which task sets, the tables, CSV, JSON and the ZIP."""

import csv
import io
import json
import zipfile

import pytest
from django.urls import reverse

from benchmark.models import TaskAnswer, TaskItem
from tests.benchmark.shrec_results_data import build_world, human_baseline
from tests.builders import make_researcher, make_team, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(monkeypatch):
    return human_baseline(monkeypatch)

PAGE = reverse("benchmark:results-shrec")
JSON = reverse("benchmark:results-shrec-json")
ZIP = reverse("benchmark:results-shrec-zip")
CSV = reverse("benchmark:results-shrec-csv", args=["table1"])


@pytest.fixture
def researcher_client(client):
    client.force_login(make_researcher())
    return client


@pytest.fixture
def world():
    return build_world()


@pytest.mark.parametrize("url", [PAGE, JSON, ZIP, CSV])
def test_anonymous_users_are_sent_to_log_in(client, url):
    response = client.get(url)

    assert response.status_code == 302 and "login" in response.url


@pytest.mark.parametrize("url", [PAGE, JSON, ZIP, CSV])
def test_annotators_and_other_non_researchers_are_refused(client, world, url):
    client.force_login(make_user())

    assert client.get(url).status_code == 403


@pytest.mark.parametrize("url", [PAGE, JSON, ZIP, CSV])
def test_another_teams_task_set_is_not_found(client, world, url):
    client.force_login(make_researcher(make_team()))

    assert client.get(url, {"task_set": world["task_set"].pk}).status_code == 404


def test_another_teams_researcher_sees_none_of_our_task_sets(client, world):
    client.force_login(make_researcher(make_team()))

    response = client.get(PAGE)

    assert response.status_code == 200
    assert world["task_set"].name not in response.content.decode()
    assert "no SHREC task set yet" in response.content.decode()


def test_the_page_shows_both_tables_the_human_row_last_and_the_figures(researcher_client, world, people):
    people(world)

    response = researcher_client.get(PAGE)

    assert response.status_code == 200
    page = response.content.decode()
    for text in ("Table 1: detection and social attributes", "EC3 Acc.", "Attr Partial", "Pre-condition",
                 "0.75 ± 0.35", "shrec-seed0", "exact-set accuracy", "Dataset statistics", "overlap 66.7%"):
        assert text in page
    table2 = page[page.index("Table 2:"):page.index("Attribute identification: F1")]
    assert table2.index("(L) m1") < table2.index("Human")
    assert page.count("<svg") == 4
    assert 'href="/benchmark/results/shrec/shrec.zip?"' not in page  # no empty query


def test_a_task_set_is_chosen_by_its_id(researcher_client, world):
    build_world(name="newer-empty-answers", model="m2")

    response = researcher_client.get(PAGE, {"task_set": world["task_set"].pk})

    page = response.content.decode()
    assert "(L) m1" in page and "(L) m2" not in page


def test_a_task_set_that_is_not_a_number_is_a_form_error(researcher_client, world):
    assert researcher_client.get(PAGE, {"task_set": "first"}).status_code == 400
    assert researcher_client.get(PAGE, {"task_set": "9" * 5000}).status_code == 400  # too long for an id
    response = researcher_client.get(JSON, {"task_set": "first"})
    assert response.status_code == 400 and "Bad choice" in response.content.decode()


def test_the_downloads_without_a_task_set_say_why(researcher_client):
    response = researcher_client.get(JSON)

    assert response.status_code == 400
    assert "no SHREC task set yet" in response.content.decode()


def test_the_json_download_is_the_report_with_intervals(researcher_client, world):
    response = researcher_client.get(JSON)

    report = json.loads(response.content)
    assert report["resamples"] == 1000
    assert report["rows"][0]["tasks"]["detection"]["metrics"]["accuracy"]["ci95"] is not None
    assert response["Content-Disposition"] == 'attachment; filename="shrec.json"'
    assert report["task_set"]["name"] == "shrec-seed0"
    assert [row["label"] for row in report["rows"]] == ["(L) m1"]


def test_the_csv_quotes_a_model_named_like_a_formula(researcher_client):
    build_world(model="=HYPERLINK(\"http://evil.example\")")

    response = researcher_client.get(CSV)

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert response.status_code == 200
    assert rows[0]["model"] == "'=HYPERLINK(\"http://evil.example\")"
    assert rows[0]["row"].startswith("(L) =HYPERLINK")  # the label does not start with a trigger


def test_the_csv_quotes_a_source_named_like_a_formula(researcher_client, world):
    TaskItem.objects.filter(item_key="d1").update(source="@SUM(A1)")

    rows = list(csv.reader(io.StringIO(researcher_client.get(
        reverse("benchmark:results-shrec-csv", args=["dataset"])).content.decode())))

    assert ["items: detection", "source", "'@SUM(A1)", "1"] in rows


def test_an_unknown_csv_table_is_refused(researcher_client, world):
    response = researcher_client.get(reverse("benchmark:results-shrec-csv", args=["table9"]))

    assert response.status_code == 400 and "table9" in response.content.decode()


def test_the_zip_holds_the_report_tables_and_figures_and_is_the_same_twice(researcher_client, world):
    first = researcher_client.get(ZIP)
    second = researcher_client.get(ZIP)

    names = zipfile.ZipFile(io.BytesIO(first.content)).namelist()
    assert {"README.txt", "shrec.json", "shrec.txt", "tables/table1.csv", "tables/dataset.csv",
            "figures/shrec-radar.svg", "figures/shrec-dataset.svg"} <= set(names)
    assert first.content == second.content


def test_a_model_name_is_escaped_in_the_figures(researcher_client):
    build_world(model="<script>alert(1)</script>")

    page = researcher_client.get(PAGE).content.decode()

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_report_is_scored_once_and_again_after_a_new_answer(researcher_client, world, monkeypatch):
    from benchmark.models import Respondent
    from benchmark.results.shrec import build

    scored = []
    real = build.score_records
    monkeypatch.setattr(build, "score_records", lambda records, **options: scored.append(1) or real(records, **options))

    researcher_client.get(PAGE)
    researcher_client.get(PAGE)
    assert len(scored) == 1
    researcher_client.get(JSON)
    researcher_client.get(ZIP)
    assert len(scored) == 2  # the downloads carry intervals: scored once more, with the bootstrap
    respondent = Respondent.objects.create(kind=Respondent.Kind.JUDGE, model="m9", prompt_version="shrec-pre-v1")
    TaskAnswer.objects.create(item=world["items"]["p1"], respondent=respondent, reply="(2)", answer=2)

    assert "(L) m9" in researcher_client.get(PAGE).content.decode()
    assert len(scored) == 3


def test_the_page_scores_coerced_answers_when_asked(researcher_client, world):
    TaskAnswer.objects.filter(item=world["items"]["d4"]).update(coerced="error", coerced_by="judge-model")

    report = json.loads(researcher_client.get(JSON, {"answers": "coerced"}).content)

    assert report["answers"] == "coerced"
    assert researcher_client.get(PAGE, {"answers": "guessed"}).status_code == 400
