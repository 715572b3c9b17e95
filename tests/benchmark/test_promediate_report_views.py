"""The ProMediate results page and its downloads: who may look, whose data, the tables, CSV, JSON and the ZIP."""

import csv
import io
import json
import zipfile

import pytest
from django.urls import reverse

from tests.benchmark.promediate_report_data import mi_answers, negotiation_episode, negotiation_scenario
from tests.builders import make_researcher, make_team, make_user

pytestmark = pytest.mark.django_db

PAGE = reverse("benchmark:results-promediate")
JSON = reverse("benchmark:results-promediate-json")
ZIP = reverse("benchmark:results-promediate-zip")
CSV = reverse("benchmark:results-promediate-csv", args=["table1"])


@pytest.fixture
def researcher_client(client):
    client.force_login(make_researcher())
    return client


@pytest.fixture
def experiment():
    scenario = negotiation_scenario()
    first = negotiation_episode(scenario, high=0.8)
    mi_answers(first, {4: (4, 4, 5, 5), 9: (3, 3, 3, 3)})
    negotiation_episode(scenario, high=0.5, run_id=2)
    negotiation_episode(scenario, condition="none", high=0.6)
    other_team = make_team()
    negotiation_episode(negotiation_scenario(other_team, codename="secret-case"), model="secret-model")
    return other_team


@pytest.mark.parametrize("url", [PAGE, JSON, ZIP, CSV])
def test_anonymous_users_are_sent_to_log_in(client, url):
    response = client.get(url)

    assert response.status_code == 302
    assert "login" in response.url


@pytest.mark.parametrize("url", [PAGE, JSON, ZIP, CSV])
def test_non_researchers_are_refused(client, experiment, url):
    client.force_login(make_user())

    assert client.get(url).status_code == 403


def test_the_page_shows_the_three_tables_and_the_figures(researcher_client, experiment):
    response = researcher_client.get(PAGE)

    assert response.status_code == 200
    page = response.content.decode()
    for title in (
        "Table 1: metrics per conflict mode and mediator condition",
        "Table 2: the Social mediator",
        "Table 3: factor loadings",
        "Human validation",
        "How the numbers are computed",
    ):
        assert title in page
    assert "competing / Social" in page and "13.50 ± 4.50" in page
    assert "<td>missing</td>" in page and "<td>-</td>" in page
    assert page.count("<svg") >= 2
    assert "promediate.zip" in page
    assert "secret-model" not in page and "secret-case" not in page


def test_another_teams_researcher_sees_only_their_own(client, experiment):
    client.force_login(make_researcher(experiment))

    data = json.loads(client.get(JSON).content)

    assert data["counts"]["episodes"] == 1
    assert data["table2"]["models"] == ["secret-model"]


def test_downloads_follow_the_filters(researcher_client, experiment):
    data = json.loads(researcher_client.get(JSON, {"mediator_model": "gpt-4.1", "preset": "paper"}).content)
    rows = list(csv.DictReader(io.StringIO(researcher_client.get(CSV).content.decode())))

    assert data["preset"] == "paper" and data["counts"]["episodes"] == 3
    assert any(row["metric"] == "CC" and row["condition"] == "Social" and row["n"] == "2" for row in rows)


def test_the_zip_holds_the_report_every_table_and_the_figures(researcher_client, experiment):
    response = researcher_client.get(ZIP)

    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = set(archive.namelist())
    assert {
        "README.txt",
        "promediate.json",
        "tables/table1.csv",
        "tables/table2.csv",
        "tables/table3.csv",
        "tables/me-mi.csv",
        "tables/conversations.csv",
        "figures/promediate-trajectory.svg",
    } <= names
    assert json.loads(archive.read("promediate.json"))["counts"]["episodes"] == 3
    assert b"secret-model" not in b"".join(archive.read(name) for name in names)


def test_bad_filters_are_a_form_error_and_bad_tables_a_clear_refusal(researcher_client, experiment):
    assert researcher_client.get(PAGE, {"preset": "nonsense"}).status_code == 400
    assert researcher_client.get(JSON, {"mediator_model": "nobody"}).status_code == 400
    response = researcher_client.get(reverse("benchmark:results-promediate-csv", args=["nope"]))
    assert response.status_code == 400
    assert b"choose one of table1" in response.content


def test_an_empty_team_gets_the_how_to(client):
    client.force_login(make_researcher(make_team()))

    page = client.get(PAGE).content.decode()

    assert "Nothing to analyse yet" in page
    assert "evaluate --promediate" in page


def test_the_human_validation_of_quality_ratings_reaches_the_page_the_csv_and_the_json(researcher_client, experiment):
    from annotator.forms import create_study
    from benchmark.models import Episode
    from tests.annotator.builders import add_annotators
    from tests.annotator.test_promediate_validation import answer
    from tests.builders import default_team

    episodes = Episode.objects.filter(team=default_team(), settings__promediate__mediator="social")
    study = create_study(
        team=default_team(), title="Quality", slug="quality", preset="promediate-quality", overlap=1, episodes=episodes
    )
    (rater,) = add_annotators(study, 1)
    for item, score in zip(study.items.order_by("position"), ("4", "5"), strict=True):
        answer(study, rater, item, {"answer-naturalness": score, "answer-mode_expression": "3"})

    data = json.loads(researcher_client.get(JSON).content)
    page = researcher_client.get(PAGE).content.decode()
    rows = list(
        csv.DictReader(
            io.StringIO(
                researcher_client.get(reverse("benchmark:results-promediate-csv", args=["human"])).content.decode()
            )
        )
    )

    assert data["human"]["quality"]["naturalness"]["mean"] == pytest.approx(4.5)
    assert data["human"]["quality"]["naturalness"]["n"] == 2
    assert {
        "check": "conversation quality",
        "scope": "all",
        "statistic": "mean naturalness (1–5)",
        "value": "4.5",
        "n": "2",
    } in rows
    assert "mean naturalness (1–5)" in page and "4.500" in page
