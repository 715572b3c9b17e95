"""Ratings made outside Parley answer a ranking (the order as JSON in one cell) and a per-item choice."""

import csv

import pytest

from annotator.external_ratings import import_ratings
from benchmark.importing import ImportProblem
from benchmark.models import Answer, Instrument, Probe
from tests.annotator.builders import make_question, make_study
from tests.builders import make_episode, make_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    scenario = make_scenario()
    Probe.objects.create(scenario=scenario, about=scenario.roles.first(), position=0, topic="private_info",
                         text="What is hidden?", options=["a debt", "a dog"], correct=1)
    instrument = Instrument.objects.create(name="Ranking and item choice, rated elsewhere")
    make_question(instrument=instrument, key="order", position=0, kind="ranking", prompt="Order",
                  options={"choices": [{"value": v, "label": v.upper()} for v in ("a", "b", "c")]})
    make_question(instrument=instrument, key="hidden", position=1, kind="item_choice", prompt="Hidden?",
                  options={"source": "scenario.probe", "position": 0})
    return make_study(instrument=instrument, items=[make_episode(scenario=scenario, external_id="ep-1")], overlap=2)


def write(tmp_path, rows):
    path = tmp_path / "ratings.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["episode_id", "annotator_id", "order", "hidden"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_wide_file_gives_one_ranking_row_and_the_items_choice(study, tmp_path):
    path = write(tmp_path, [{"episode_id": "ep-1", "annotator_id": "r1", "order": '["c", "a", "b"]', "hidden": "1"},
                            {"episode_id": "ep-1", "annotator_id": "r2", "order": '["a","b","c"]', "hidden": "0"}])

    import_ratings(path, study=study)

    rows = Answer.objects.filter(response__annotation__assignment__item__study=study)
    assert sorted(rows.values_list("question__key", "value")) == [
        ("hidden", "0"), ("hidden", "1"), ("order", '["a", "b", "c"]'), ("order", '["c", "a", "b"]'),
    ]


@pytest.mark.parametrize(("order", "hidden", "message"), [
    ('["c", "a"]', "1", "place every choice (missing: B)"),
    ('["c", "a", "b"]', "2", "'2' is not one of the choices; choose one of: a debt, a dog."),
])
def test_a_cell_the_question_does_not_allow_is_refused_naming_it(study, tmp_path, order, hidden, message):
    path = write(tmp_path, [{"episode_id": "ep-1", "annotator_id": "r1", "order": order, "hidden": hidden}])

    with pytest.raises(ImportProblem) as caught:
        import_ratings(path, study=study)

    assert message in str(caught.value)
