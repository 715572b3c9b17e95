"""Each annotator's agreement with the others and with gold, and MACE competence: the report and the dashboard.

The study is ``test_reports.rated_study`` (three annotators A, B, C on four regular items, plus a gold and
an attention item), with an adjudicated item 3 (gold: barrier ``emotional``, confusion 1), a draft curation
of item 4 that is not gold yet, and a training and a qualification item answered in ways that would change
every figure if they counted. By hand, for ``barrier``:

    item  A          B          C          gold
    1     none       none       none
    2     semantic   semantic   none
    3     emotional  none       semantic   emotional
    4     none       none       none       (draft: semantic)

A agrees with B on 3 items and with C on 2: 5 of 8 pairs; C with A on 2 and with B on 2: 4 of 8. With gold
(item 3 only): A 1 of 1, B and C 0 of 1. For ``confusion`` (A 5 3 1 4, B 4 3 2 4, C 5 2 1 4) A's absolute
differences from the others are 1 0 | 0 1 | 1 0 | 0 0: mean 3/8; from gold, 0; B's from gold, 1.
"""

import csv
import io

import numpy as np
import pandas as pd
import pytest
from django.db import transaction
from django.urls import reverse

from annotator.models import Curation, StudyItem
from annotator.reports import build_report, report_tables
from annotator.reports.annotators import _question, annotator_quality_rows
from annotator.reports.build import latest_submitted
from annotator.reports.display import report_view
from annotator.reports.units import unit_name, unit_target
from benchmark.instruments.respondents import pseudonym
from benchmark.instruments.targets import Target
from benchmark.models import Answer, Question, Respondent, Response
from benchmark.stats.annotator_agreement import annotator_agreement
from benchmark.stats.mace import mace
from tests.annotator.builders import add_items
from tests.annotator.test_reports import annotate, rated_study
from tests.builders import make_researcher, make_user

pytestmark = pytest.mark.django_db


def curate(study, item, answers, *, status=Curation.Status.FINAL):
    """A curation of ``item`` whose gold response answers ``answers`` {key: (value, number)}."""
    gold, _ = Respondent.objects.get_or_create(kind=Respondent.Kind.GOLD, label="gold",
                                               prompt_version=f"study {study.pk}")
    response = Response.objects.create(
        instrument=study.instrument, episode=item.episode, respondent=gold,
        status=Response.Status.SUBMITTED if status == Curation.Status.FINAL else Response.Status.DRAFT,
    )
    questions = {question.key: question for question in study.instrument.questions.all()}
    for key, (value, number) in answers.items():
        Answer.objects.create(response=response, question=questions[key], value=value, number=number)
    return Curation.objects.create(item=item, response=response, curator=study.created_by or make_user(),
                                   status=status)


def adjudicated_study():
    study, items, annotators = rated_study()
    curate(study, items[2], {"barrier": ("emotional", None), "confusion": ("1", 1.0)})
    curate(study, items[3], {"barrier": ("semantic", None)}, status=Curation.Status.DRAFT)
    for kind in (StudyItem.Kind.TRAINING, StudyItem.Kind.QUALIFICATION):
        (item,) = add_items(study, 1, kind=kind)
        for person, answer in zip(annotators, ["emotional", "semantic", "emotional"], strict=True):
            annotate(item, person, [("barrier", None, answer, None), ("confusion", None, "1", 1.0)])
    return study, items, annotators


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """The report and the dashboard's figures of ``adjudicated_study``, built once (rolled back at the end)."""
    with django_db_blocker.unblock(), transaction.atomic():
        study, _, annotators = adjudicated_study()
        report = build_report(study, resamples=50, seed=3)
        rows = annotator_quality_rows(study, latest_submitted(study), seed=3)  # MACE's restarts as the report's
        names = {person.username: pseudonym(person.pk) for person in annotators}
        transaction.set_rollback(True)
    return report, rows, names


def figures(world, key, who):
    report, _, names = world
    return report["annotators"]["questions"][key]["annotators"][names[f"rater-{who}"]]


def test_agreement_with_the_others_counts_regular_items_only(world):
    assert figures(world, "barrier", "A")["answers"] == 4
    assert figures(world, "barrier", "A")["others"]["agreement"] == pytest.approx(5 / 8)
    assert figures(world, "barrier", "B")["others"]["agreement"] == pytest.approx(5 / 8)
    assert figures(world, "barrier", "C")["others"]["agreement"] == pytest.approx(4 / 8)
    assert figures(world, "barrier", "C")["others"]["pairs"] == 8


def test_agreement_with_gold_reads_final_curations_only(world):
    report, _, _ = world
    assert report["annotators"]["gold_items"] == 1
    assert figures(world, "barrier", "A")["gold"]["items"] == 1
    assert figures(world, "barrier", "A")["gold"]["agreement"] == 1.0
    assert figures(world, "barrier", "B")["gold"]["agreement"] == 0.0
    assert figures(world, "confusion", "A")["gold"]["mean_abs_difference"] == 0.0
    assert figures(world, "confusion", "B")["gold"]["mean_abs_difference"] == 1.0


def test_numeric_questions_get_mean_differences_and_no_competence(world):
    confusion = figures(world, "confusion", "A")
    assert confusion["others"]["mean_abs_difference"] == pytest.approx(3 / 8)
    assert "competence" not in confusion
    report, _, _ = world
    assert report["annotators"]["questions"]["confusion"]["type"] == "numeric"
    assert report["annotators"]["questions"]["barrier"]["type"] == "nominal"


def test_competence_is_mace_on_the_regular_answers(world):
    choices = ["none", "semantic", "emotional"]
    answers = [["none", "none", "none"], ["semantic", "semantic", "none"], ["emotional", "none", "semantic"],
               ["none", "none", "none"]]
    items = [i for i in range(4) for _ in range(3)]
    labels = [choices.index(answer) for row in answers for answer in row]
    expected = mace(items, [0, 1, 2] * 4, labels, n_labels=3, seed=3).competence  # the report's seed
    got = [figures(world, "barrier", who)["competence"] for who in "ABC"]
    assert got == pytest.approx(expected.tolist())


def test_questions_without_a_per_annotator_figure_are_left_out(world):
    report, _, _ = world
    assert set(report["annotators"]["questions"]) == {"barrier", "confusion", "goal"}  # no spans, no free text


def test_the_methods_cite_mace(world):
    report, _, _ = world
    assert "Learning Whom to Trust with MACE" in report["methods"]["annotators"]


def test_the_csv_table_has_one_row_per_question_and_annotator(world):
    report, _, names = world
    rows = list(csv.DictReader(io.StringIO(report_tables(report)["annotators.csv"])))
    assert len(rows) == 3 * 3
    row = next(r for r in rows if r["question"] == "barrier" and r["annotator"] == names["rater-C"])
    assert float(row["others_agreement"]) == pytest.approx(0.5)
    assert row["gold_items"] == "1" and float(row["gold_agreement"]) == 0.0
    assert row["others_mean_abs_difference"] == ""
    assert 0 <= float(row["competence"]) <= 1


def test_the_report_page_shows_each_annotator(world):
    report, _, names = world
    view = report_view(report, drawn={})
    row = next(r for r in view.annotator_rows if r[0] == "barrier" and r[1] == names["rater-A"])
    assert row[2:4] == ["4", "0.625"]
    assert row[5] == "1.000 (1)"


def test_the_dashboard_rows_pool_every_question(world):
    _, rows, _ = world
    by_name = {row["name"]: row for row in rows["rows"]}
    a = by_name["rater-A"]
    assert a["answers"] == 4 + 4 + 8  # barrier, confusion, goal per seat
    assert a["gold_answers"] == 2 and a["gold_agreement"] == 1.0  # barrier and confusion of item 3
    assert a["competence"] == pytest.approx(figures(world, "barrier", "A")["competence"])
    assert a["others_kappa"] == pytest.approx(figures(world, "barrier", "A")["others"]["kappa"])
    assert [question["key"] for question in a["questions"]] == ["barrier", "confusion", "goal"]


def test_a_study_without_answers_has_no_rows():
    study, _, _ = rated_study()
    study.items.all().delete()
    assert annotator_quality_rows(study, latest_submitted(study))["rows"] == []
    section = build_report(study, resamples=0)["annotators"]
    assert section["gold_items"] == 0
    assert all(entry["annotators"] == {} for entry in section["questions"].values())


def test_the_dashboard_loads_the_partial_and_the_partial_shows_the_figures(client):
    study, _, _ = adjudicated_study()
    client.force_login(make_researcher(study.team))
    url = reverse("annotator:annotator-agreement", args=[study.slug])
    page = client.get(reverse("annotator:dashboard", args=[study.slug])).content.decode()
    assert f'hx-get="{url}"' in page
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "rater-A" in html and "MACE competence" in html
    assert "0.625" in html  # A's agreement with the others on barrier, question by question
    assert "1 item adjudicated" in html


def test_the_partial_says_so_before_any_answer(client):
    study, _, _ = rated_study()
    study.items.all().delete()
    client.force_login(make_researcher(study.team))
    html = client.get(reverse("annotator:annotator-agreement", args=[study.slug])).content.decode()
    assert "No answers on regular items yet" in html


@pytest.mark.parametrize("per_seat", [False, True])
@pytest.mark.parametrize("numeric", [False, True])
def test_answer_rows_give_the_figures_of_the_table_of_unit_names(numeric, per_seat):
    """The report's path (answer rows coded by unit target, ``annotators._question``) gives, to the bit, what
    ``annotator_agreement`` gives for the long table of unit names, annotators and values those rows stand for."""
    question = Question(key="q", kind="likert" if numeric else "categorical",
                        scope=Question.Scope.SEAT if per_seat else Question.Scope.EPISODE,
                        options={} if numeric else {"choices": [{"value": "b"}, {"value": "a"}]})
    rng = np.random.default_rng(5)
    rows, gold_rows = [], []
    for _ in range(400):
        seat = (int(rng.integers(0, 2)), None, None, None, None, None) if rng.random() < 0.7 else (None,) * 6
        number = None if rng.random() < 0.1 else float(rng.integers(1, 6)) + (0.25 if rng.random() < 0.2 else 0)
        text = "" if number is None else str(rng.choice(["a", "b", "c", "10"]))
        rows.append((int(rng.choice([3, 12, 25, 40])), int(rng.integers(100, 130)), "q", text, number, *seat))
    for _ in range(30):
        seat = (int(rng.integers(0, 2)), None, None, None, None, None)
        gold_rows.append((int(rng.integers(100, 130)), "q", str(rng.choice(["a", "b", "d"])), float(rng.integers(1, 6)),
                          *seat))
    got = _question(question, rows, gold_rows, seed=2)

    def unit(item_id, target):
        return unit_name(str(item_id), unit_target(question, Target.from_columns(*target)))

    answers = [(unit(item_id, target), annotator, number if numeric else text)
               for annotator, item_id, _, text, number, *target in rows
               if (number if numeric else text) not in (None, "")]
    gold = pd.DataFrame.from_records(
        [(unit(item_id, target), number if numeric else text) for item_id, _, text, number, *target in gold_rows],
        columns=["item", "value"],
    ).drop_duplicates("item")
    want = annotator_agreement(pd.DataFrame.from_records(answers, columns=["item", "annotator", "value"]),
                               numeric=numeric, gold=gold, categories=None if numeric else ["b", "a"], seed=2)
    assert got.annotators == want.annotators
    assert got.notes == want.notes
