"""A question's answer rows coded straight into `CodedRatings` (issue 28): the same codes, labels and numbers as
the long table of names those rows stand for, coded by `benchmark.stats.coded.from_frame` (the path study reports
took before, and the one every other report takes)."""

import numpy as np
import pandas as pd
import pytest

from annotator.reports.build import StudyData, Unit
from annotator.reports.coding import coded_rows
from annotator.reports.units import unit_name, unit_target
from benchmark.instruments.targets import Target
from benchmark.models import Question
from benchmark.stats.coded import from_frame


def _data(units, annotations):
    return StudyData(units, annotations, None, 0, None, [], [], [])


def _expected(question, answers, data, numeric):
    """The long table the rows stand for, built name by name as build._rows did before the rows were coded."""
    records, blank = [], 0
    for annotation_id, columns, text, number in answers:
        answer = number if numeric else text
        if answer is None or answer == "":
            blank += 1
            continue
        item_id, annotator = data.annotations[annotation_id]
        unit = data.units[item_id]
        target = unit_target(question, Target.from_columns(*columns))
        records.append((unit_name(unit.name, target), annotator, question.key, answer, unit.scenario, unit.barrier,
                        unit.barrier))
    table = pd.DataFrame.from_records(
        records, columns=["item", "annotator", "question", "value", "cluster", "condition", "truth"]
    )
    if numeric:
        table["value"] = table["value"].astype(float)
    return from_frame(table), blank


def _same(coded, expected):
    for name in ("item", "annotator", "question", "value", "cluster", "condition", "truth"):
        assert np.array_equal(getattr(coded, name), getattr(expected, name)), name
    assert np.array_equal(coded.number, expected.number, equal_nan=True)
    for column, labels in expected.labels.items():
        assert list(coded.labels[column]) == list(labels), column
    assert (coded.numeric_values, coded.numeric_truths) == (expected.numeric_values, expected.numeric_truths)


SEAT = (None,) * 6


def _seat(position):
    return (position, None, None, None, None, None)


@pytest.mark.parametrize("per_seat", [False, True])
@pytest.mark.parametrize("numeric", [False, True])
def test_coded_rows_are_the_codes_of_the_table_of_names(numeric, per_seat):
    question = Question(key="q", kind="likert" if numeric else "single_choice",
                        scope=Question.Scope.SEAT if per_seat else Question.Scope.EPISODE)
    units = {
        10: Unit("3", 100, "7", "semantic"), 11: Unit("1", 101, "5", None), 12: Unit("2", 102, "7", "cultural"),
        13: Unit("4", 103, "None", "semantic"),
    }
    annotations = {1: (11, "A2"), 2: (10, "A1"), 3: (12, "A2"), 4: (11, "A3"), 5: (13, "A1"), 6: (10, "A3")}
    rng = np.random.default_rng(3)
    answers = []
    for _ in range(60):
        annotation = int(rng.integers(1, 7))
        number = None if rng.random() < 0.15 else float(rng.integers(1, 6)) - (0.5 if rng.random() < 0.1 else 0)
        text = "" if number is None else rng.choice(["b", "a", "10", "2", "c"])
        answers.append((annotation, _seat(int(rng.integers(0, 2))) if rng.random() < 0.7 else SEAT, text, number))
    data = _data(units, annotations)
    coded = coded_rows(question, answers, data, numeric)
    expected, blank = _expected(question, answers, data, numeric)
    assert coded.blank == blank > 0
    assert len(coded.units) == len(coded.targets) == len(coded.ratings) == len(expected) > 0
    _same(coded.ratings, expected)


def test_no_kept_rows_codes_to_empty_arrays_like_an_empty_table():
    question = Question(key="q", kind="likert", scope=Question.Scope.EPISODE)
    data = _data({1: Unit("1", 5, "2", "x")}, {9: (1, "A1")})
    coded = coded_rows(question, [(9, SEAT, "", None)], data, numeric=True)
    expected, blank = _expected(question, [(9, SEAT, "", None)], data, numeric=True)
    assert coded.blank == blank == 1
    _same(coded.ratings, expected)
