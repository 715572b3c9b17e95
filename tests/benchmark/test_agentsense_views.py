"""The AgentSense results page and its downloads: who may look, whose data, figures, CSV, empty state."""

import csv
import io
import json

import pytest
from django.urls import reverse

from tests.benchmark.agentsense_data import agentsense_episode, agentsense_scenario
from tests.builders import default_team, make_researcher, make_team, make_user

pytestmark = pytest.mark.django_db

PAGE = reverse("benchmark:results-agentsense")
JSON = reverse("benchmark:results-agentsense-json")


def csv_url(table: str) -> str:
    return reverse("benchmark:results-agentsense-csv", args=[table])


@pytest.fixture
def researcher_client(client):
    client.force_login(make_researcher())
    return client


@pytest.fixture
def experiment():
    team = default_team()
    for models in (["strong", "weak", "weak"], ["weak", "strong", "strong"]):
        agentsense_episode(agentsense_scenario(team), models, blind=True, tag="grid",
                           verdict=lambda who, seat: who == "self" or (who == "judge-a" and seat == 0))


@pytest.mark.parametrize("url", [PAGE, JSON, "/benchmark/results/agentsense/completion.csv"])
def test_anonymous_users_are_sent_to_log_in(client, url):
    response = client.get(url)

    assert response.status_code == 302
    assert "login" in response.url


@pytest.mark.parametrize("url", [PAGE, JSON, "/benchmark/results/agentsense/completion.csv"])
def test_non_researchers_are_refused(client, experiment, url):
    client.force_login(make_user())

    response = client.get(url)

    assert response.status_code == 403
    assert b"strong" not in response.content


def test_the_page_shows_every_table_with_intervals_and_the_figures(researcher_client, experiment):
    response = researcher_client.get(PAGE)

    assert response.status_code == 200
    page = response.content.decode()
    for title in ("Goal completion per model and perspective", "Goal completion per ERG need",
                  "Implicit reasoning", "Profile sensitivity index", "Sender × receiver models",
                  "Agreement between perspectives", "Agents&#x27; view minus the judges&#x27; majority"):
        assert title in page
    assert page.count("<svg") == 4
    assert "judges&#x27; majority" in page
    assert "95% CI" in page
    assert "Nothing to analyse yet" not in page


def test_another_teams_episodes_are_invisible(client, experiment):
    outsider = make_researcher(make_team())
    agentsense_episode(agentsense_scenario(outsider.teams.get()), ["their-model"] * 3)
    client.force_login(outsider)

    page = client.get(PAGE).content.decode()
    completion = client.get(csv_url("completion")).content.decode()

    assert "their-model" in page and "their-model" in completion
    assert "strong" not in page and "strong" not in completion


def test_a_team_without_answers_is_told_what_to_run(researcher_client):
    response = researcher_client.get(PAGE)

    assert response.status_code == 200
    page = response.content.decode()
    assert "Nothing to analyse yet" in page
    assert "evaluate --interview --blind" in page
    assert "<svg" not in page


def test_csv_tables_hold_unrounded_numbers_and_neutralise_formulas(researcher_client):
    agentsense_episode(agentsense_scenario(default_team()), ["=HYPERLINK(1)", "plain", "plain"])

    rows = list(csv.DictReader(io.StringIO(researcher_client.get(csv_url("completion")).content.decode())))
    answers = list(csv.DictReader(io.StringIO(researcher_client.get(csv_url("goal-answers")).content.decode())))

    assert {row["model"] for row in rows} == {"'=HYPERLINK(1)", "plain"}
    assert {row["view"] for row in rows} >= {"self", "other", "judges' majority"}
    assert len(answers) == 3 * 3 + 2 * 3  # every agent and every judge about each of the three goals


def test_user_text_is_escaped_on_the_page(researcher_client):
    agentsense_episode(agentsense_scenario(default_team()), ["<script>alert(1)</script>", "b", "b"])

    page = researcher_client.get(PAGE).content.decode()

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_json_and_filters(researcher_client, experiment):
    agentsense_episode(agentsense_scenario(default_team()), ["other-run"] * 3, tag="other")

    report = json.loads(researcher_client.get(JSON, {"tag": "grid"}).content)

    assert report["models"] == ["strong", "weak"]
    assert report["filters"]["tag"] == "grid"
    assert report["reasoning"]["blind"]["strong"]["n"] == 3  # one seat in the first episode, two in the second
    assert researcher_client.get(PAGE, {"model": "no-such-model"}).status_code == 400
    assert researcher_client.get(csv_url("nonsense")).status_code == 400
