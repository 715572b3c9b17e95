"""A study's report gives Kendall's W for a ranking question and accuracy for a per-item choice."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.models import Assignment
from annotator.reports import build_report
from annotator.reports.display import report_view
from annotator.reports.tables import report_tables, statistic_rows
from benchmark.models import Instrument, Probe
from tests.annotator.builders import add_answer, make_annotation, make_question, make_study
from tests.builders import make_episode, make_scenario, make_user

pytestmark = pytest.mark.django_db

NOW = timezone.now()
REPLIES = {"choices": [{"value": v, "label": v.upper()} for v in ("a", "b", "c")]}


def annotate(item, annotator, answers):
    assignment = Assignment.objects.create(
        item=item, annotator=annotator, claimed_at=NOW, lease_expires_at=NOW + timedelta(hours=1),
        status="submitted", submitted_at=NOW,
    )
    annotation = make_annotation(assignment, submitted_at=NOW)
    questions = {q.key: q for q in item.study.instrument.questions.all()}
    for key, value in answers.items():
        add_answer(annotation, questions[key], value)


@pytest.fixture
def report():
    """Two items of two scenarios, each probe's correct choice at a different index; two annotators each."""
    episodes = []
    for correct in (0, 2):
        scenario = make_scenario()
        Probe.objects.create(scenario=scenario, about=scenario.roles.first(), position=0, topic="private_info",
                             text="What is hidden?", options=["x", "y", "z"], correct=correct)
        episodes.append(make_episode(scenario=scenario))
    instrument = Instrument.objects.create(name="Ranking and item choice report")
    make_question(instrument=instrument, key="order", position=0, kind="ranking", prompt="Order", options=REPLIES)
    make_question(instrument=instrument, key="hidden", position=1, kind="item_choice", prompt="Hidden?",
                  options={"source": "scenario.probe", "position": 0})
    first, second = make_user(), make_user()
    study = make_study(instrument=instrument, items=episodes, overlap=2, annotators=[first, second])
    one, two = study.items.order_by("pk")
    # Item one: the same order (W = 1), both right (correct 0). Item two: reversed orders (W = 0), one right (2).
    annotate(one, first, {"order": '["a", "b", "c"]', "hidden": "0"})
    annotate(one, second, {"order": '["a", "b", "c"]', "hidden": "0"})
    annotate(two, first, {"order": '["a", "b", "c"]', "hidden": "2"})
    annotate(two, second, {"order": '["c", "b", "a"]', "hidden": "1"})
    return build_report(study, resamples=200)


def test_a_ranking_gets_kendalls_w_averaged_over_items(report):
    entry = report["questions"]["order"]
    assert entry["type"] == "ranking"
    assert entry["kendall_w"] == pytest.approx(0.5)
    assert sorted(entry["per_item"].values()) == [pytest.approx(0.0), pytest.approx(1.0)]
    assert (entry["n_items"], entry["n_ratings"], entry["n_annotators"]) == (2, 4, 2)
    assert "Kendall" in entry["methods"]["kendall_w"]
    assert [(row.key, row.value) for row in statistic_rows(entry)][-1] == ("kendall_w", pytest.approx(0.5))


def test_a_per_item_choice_is_scored_against_each_items_own_correct_choice(report):
    entry = report["questions"]["hidden"]
    assert entry["accuracy"]["overall"]["value"] == pytest.approx(3 / 4)
    assert {label: row["value"] for label, row in entry["accuracy"]["by_class"].items()} == {"0": 1.0, "2": 0.5}
    assert not any("outside the question's choices" in note for note in entry["notes"])
    json.dumps(report, allow_nan=False)


def test_the_report_page_and_its_tables_show_both(report):
    view = report_view(report)
    order = next(question for question in view.questions if question.key == "order")
    assert ("Kendall's W, mean over items", "0.500") in [(row.label, row.value) for row in order.statistics]
    tables = report_tables(report)
    assert "order,ranking,kendall_w,0.5" in tables["statistics.csv"].replace("\r\n", "\n")
