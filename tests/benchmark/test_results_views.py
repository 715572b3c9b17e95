import csv
import io
import json
import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from benchmark.instruments.respondents import pseudonym, respondent_for
from benchmark.models import Barrier, Instrument, Response
from benchmark.permissions import RESEARCHERS
from tests.benchmark.results_data import judged_experiment
from tests.builders import make_scores, make_user

pytestmark = pytest.mark.django_db

PAGE = reverse("benchmark:results")
JSON = reverse("benchmark:results-json")
FIGURES = ("means", "deviations", "correlations")


def figures_of(client, query: str = "") -> str:
    """The page's figures, as the page asks for them once shown (htmx), with the page's query."""
    page = client.get(PAGE + query).text
    urls = re.findall(r'hx-get="([^"]*/figures/[^"]*)"', page)
    return "".join(client.get(url.replace("&amp;", "&")).text for url in urls)


def csv_url(table: str) -> str:
    return reverse("benchmark:results-csv", args=[table])


@pytest.fixture
def researcher_client(client):
    client.force_login(make_user(staff=True))
    return client


@pytest.fixture
def experiment():
    return judged_experiment()


# Who may look

@pytest.mark.parametrize("url", [PAGE, JSON, "/benchmark/results/means.csv", "/benchmark/results/figures/means/"])
def test_anonymous_users_are_sent_to_log_in(client, url):
    response = client.get(url)

    assert response.status_code == 302
    assert "login" in response.url


@pytest.mark.parametrize("url", [PAGE, JSON, "/benchmark/results/means.csv", "/benchmark/results/figures/means/"])
def test_signed_in_non_researchers_are_refused(client, experiment, url):
    client.force_login(make_user())

    response = client.get(url)

    assert response.status_code == 403
    assert b"partner-model" not in response.content


def test_members_of_the_researchers_group_may_look(client, experiment):
    user = make_user()
    user.groups.add(Group.objects.get_or_create(name=RESEARCHERS)[0])
    client.force_login(user)

    assert client.get(JSON).status_code == 200


def test_the_page_only_answers_get(researcher_client):
    assert researcher_client.post(PAGE).status_code == 405


# The page

def test_the_page_shows_the_table_signatures_correlations_and_inline_figures(researcher_client, experiment):
    response = researcher_client.get(PAGE)

    assert response.status_code == 200
    text = response.text
    assert "Judge <strong>judge-a</strong> (prompt v1)" in text
    assert "7.00 ± 1.00" in text and "-35.7%" in text
    assert "Hard scenarios" in text and "Standard scenarios" in text
    assert text.count('hx-trigger="load"') == 3  # means, signatures, correlations: drawn once the page is shown
    assert figures_of(researcher_client).count('<svg role="img"') == 3  # one model's signatures
    assert "Barrier signatures" in text and "Linguistic signatures" in text
    assert f'href="{JSON}"' in text and f'href="{csv_url("deviations")}"' in text


def test_filters_in_the_query_choose_the_judge_and_carry_into_the_downloads(researcher_client, experiment):
    response = researcher_client.get(PAGE, {"evaluator": "scripted", "seat": "partner"})

    assert response.status_code == 200
    assert response.context["report"]["evaluator"]["evaluator"] == "scripted"
    assert f'href="{JSON}?evaluator=scripted&amp;seat=partner"' in response.text
    assert 'hx-get="/benchmark/results/figures/means/?evaluator=scripted&amp;seat=partner"' in response.text


def test_a_figure_is_drawn_for_the_filters_it_is_asked_with(researcher_client, experiment):
    judge = researcher_client.get("/benchmark/results/figures/means/")
    scripted = researcher_client.get("/benchmark/results/figures/means/", {"evaluator": "scripted"})

    assert judge.status_code == scripted.status_code == 200 and scripted.text.count("<svg") == 1
    assert "partner-model, No barrier: 7.00 ± 1.00" in judge.text  # judge-a's partner goal under none
    assert "partner-model, No barrier: 7.00" not in scripted.text
    assert researcher_client.get("/benchmark/results/figures/means/", {"tag": "no-such-tag"}).status_code == 400
    assert researcher_client.get("/benchmark/results/figures/pie/").status_code == 404


def test_a_value_outside_the_choices_is_shown_on_the_form(researcher_client, experiment):
    response = researcher_client.get(PAGE, {"tag": "no-such-tag"})

    assert response.status_code == 400
    assert response.context["report"] is None
    assert "These filters cannot be used" in response.text
    assert "no-such-tag is not one of the available choices" in response.text


def test_a_judge_without_scores_for_the_selection_is_explained(researcher_client, experiment):
    response = researcher_client.get(PAGE, {"evaluator": "scripted", "prompt_version": "v1"})

    assert response.status_code == 400
    assert "evaluator &#x27;scripted&#x27; with prompt version &#x27;v1&#x27; has no scores" in response.text


def test_the_page_says_when_nothing_was_scored(researcher_client):
    response = researcher_client.get(PAGE)

    assert response.status_code == 200
    assert "No judge has scored the selected episodes." in response.text
    assert "<svg" not in response.text and "/figures/" not in response.text


def test_model_names_are_escaped(researcher_client):
    judged_experiment(partner_model="<script>alert(1)</script>")

    response = researcher_client.get(PAGE)

    assert "<script>alert(1)</script>" not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text


def test_a_model_and_a_barrier_named_like_maths_are_drawn_as_text(researcher_client):
    judged_experiment(partner_model=r"$\foo$ & <i>")
    Barrier.objects.filter(key="semantic").update(name=r"$\bar$")

    figures = figures_of(researcher_client)

    assert r"$\foo$ &amp; &lt;i&gt;" in figures and r"$\bar$" in figures


# Downloads

def test_json_download_is_strict_json_for_the_filters(researcher_client, experiment):
    response = researcher_client.get(JSON, {"seat": "barrier"})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="results.json"'
    report = json.loads(response.content, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert report["seat_role"] == "barrier" and report["models"] == ["barrier-model"]


@pytest.mark.parametrize("table, first_column", [
    ("means", "split"), ("deviations", "model"), ("correlations", "scope"), ("episodes", "episode"),
])
def test_each_csv_table_downloads(researcher_client, experiment, table, first_column):
    response = researcher_client.get(csv_url(table))

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="results-{table}.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][0] == first_column and len(rows) > 1


@pytest.mark.parametrize("table, column", [("means", "model"), ("deviations", "model"), ("episodes", "partner_model")])
def test_csv_tables_quote_a_model_named_like_a_formula(researcher_client, table, column):
    planted = '=HYPERLINK("http://evil.example","click")'
    judged_experiment(partner_model=planted)

    response = researcher_client.get(csv_url(table))

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {row[column] for row in rows} == {"'" + planted}
    negative = [value for row in rows for key, value in row.items() if key != column and value.startswith("-")]
    assert negative and all(float(value) < 0 for value in negative)  # negative numbers are written as numbers


def test_an_unknown_csv_table_is_a_400_naming_the_choices(researcher_client):
    response = researcher_client.get(csv_url("secrets"))

    assert response.status_code == 400
    assert b"choose one of means, deviations, correlations, episodes" in response.content


def test_a_download_with_bad_filters_is_a_400_naming_the_field(researcher_client, experiment):
    response = researcher_client.get(JSON, {"seat": "judge"})

    assert response.status_code == 400
    assert b"seat: Select a valid choice." in response.content


def test_the_page_sets_every_judge_and_their_majority_side_by_side(researcher_client, experiment):
    response = researcher_client.get(PAGE)

    assert response.status_code == 200
    assert "Every judge and their majority" in response.text
    assert "majority of 2" in response.text
    assert "median" in response.text


def test_the_page_reports_the_majority_when_asked(researcher_client, experiment):
    response = researcher_client.get(PAGE, {"evaluator": "majority"})

    assert response.status_code == 200
    assert response.context["report"]["evaluator"]["evaluator"] == "majority"
    assert "the majority of 2 judges" in response.text


def test_the_page_reads_another_kind_of_respondent(researcher_client, experiment):
    response = researcher_client.get(PAGE, {"respondent_kind": "annotator"})

    assert response.status_code == 200
    assert response.context["report"]["evaluator"]["evaluator"] == "human mean"
    assert "Annotator <strong>human mean</strong>" in response.text


def test_only_respondents_with_scores_are_offered_each_by_the_name_the_exports_use(researcher_client, experiment):
    scorer, idle = make_user(username="scoring-annotator"), make_user(username="idle-annotator")
    for episode in experiment:
        partner = episode.seats.get(carries_barrier=False).position
        make_scores(episode, [("goal", partner, 7)], respondent=respondent_for(scorer, "annotator"))
    instrument = Instrument.objects.filter(questions__dimension="goal").first()
    Response.objects.create(  # answers to no dimension: nothing the results could report
        episode=experiment[0], respondent=respondent_for(idle, "annotator"), instrument=instrument
    )

    page = researcher_client.get(PAGE)
    offered = [value for value, _ in page.context["form"].fields["evaluator"].choices]
    assert pseudonym(scorer.pk) in offered and pseudonym(idle.pk) not in offered
    assert not any(name.startswith("annotator ") for name in offered)
    assert "scoring-annotator" not in page.text and "idle-annotator" not in page.text

    chosen = researcher_client.get(PAGE, {"evaluator": pseudonym(scorer.pk)})
    assert chosen.status_code == 200
    assert chosen.context["report"]["evaluator"]["evaluator"] == pseudonym(scorer.pk)
    assert chosen.context["report"]["respondent_kind"] == "annotator"
    report = json.loads(researcher_client.get(JSON, {"evaluator": pseudonym(scorer.pk)}).content)
    assert report["evaluator"]["evaluator"] == pseudonym(scorer.pk)
    side_by_side = researcher_client.get(PAGE, {"respondent_kind": "annotator"})
    assert [entry["evaluator"] for entry in side_by_side.context["report"]["evaluators"]][:2] == [
        "human mean", pseudonym(scorer.pk)
    ]
