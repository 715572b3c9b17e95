"""Barrier signatures near a zero baseline: points everywhere, percent only where the baseline is far from 0.

Fixture: one partner model, two scenarios, three barriers and ``none``. Goal (0-10) sits near 5, so
its percent is meaningful; relationship (-5..5) sits near 0.1, where a percent explodes (+300%
for a 0.3-point move). "Far from zero" is |baseline| >= 10% of the scale's range: 1 point on both.

    goal          none  semantic  sociocultural  emotional     relationship  none  semantic  socio  emotional
    s1              5       4           5            5          s1            0.1    0.5      0.1     0.1
    s2              5       5           5            5          s2            0.1    0.3      0.1     0.1

Semantic on goal: others 5, deviation -0.5, percent -10%. Semantic on relationship: others 0.1,
deviation +0.3 points, percent undefined (0.1 is under the 1-point floor).
"""

import csv
import io
import re

import pandas as pd
import pytest

from benchmark.instruments.rubrics import JUDGE_DIMENSIONS
from benchmark.results.figures import deviation_forest, results_figures
from benchmark.results.tables import csv_table, deviations_display, means_display, text_report
from benchmark.stats.results import Scale, results_report

SCALES = {key: Scale(q.low, q.high, q.per_seat) for key, (_, q) in JUDGE_DIMENSIONS.items()}

GOAL = {"none": (5, 5), "semantic": (4, 5), "sociocultural": (5, 5), "emotional": (5, 5)}
RELATIONSHIP = {"none": (0.1, 0.1), "semantic": (0.5, 0.3), "sociocultural": (0.1, 0.1), "emotional": (0.1, 0.1)}


def near_zero_table() -> pd.DataFrame:
    rows, number = [], 0
    for condition in GOAL:
        for index, scenario in enumerate(("s1", "s2")):
            number += 1
            common = {"episode": number, "scenario": scenario, "condition": condition, "difficulty": "",
                      "partner_model": "m", "barrier_model": "b", "evaluator": "judge", "prompt_version": "v1"}
            rows.append({**common, "seat": 0, "seat_role": "barrier", "goal": 5.0, "relationship": 0.0})
            rows.append({**common, "seat": 1, "seat_role": "partner", "goal": float(GOAL[condition][index]),
                         "relationship": float(RELATIONSHIP[condition][index])})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def report():
    analysis = results_report(
        near_zero_table(), scales=SCALES, dimensions=["goal", "relationship"], resamples=200, seed=1
    )
    return {
        **analysis,
        "condition_labels": {key: key.capitalize() for key in analysis["conditions"]},
        "dimension_info": {
            key: {"label": q.label, "low": q.low, "high": q.high} for key, (_, q) in JUDGE_DIMENSIONS.items()
        },
        "feature_labels": {}, "evaluator": None, "filters": {},
    }


def _entry(report, barrier, dimension):
    return next(e for e in report["deviations"] if e["barrier"] == barrier and e["dimension"] == dimension)


def test_percent_is_null_with_a_note_on_a_near_zero_baseline_and_kept_on_a_far_one(report):
    relationship = _entry(report, "semantic", "relationship")
    assert relationship["deviation"] == pytest.approx(0.3)
    assert relationship["deviation_percent"] is None and relationship["deviation_percent_ci95"] is None
    assert any("within 1 point of 0" in note for note in relationship["notes"]), relationship["notes"]
    assert relationship["deviation_percent_floor"] == pytest.approx(1.0)
    goal = _entry(report, "semantic", "goal")
    assert goal["deviation_percent"] == pytest.approx(-10)
    assert goal["deviation_percent_floor"] == pytest.approx(1.0)


def test_percent_change_from_a_near_zero_baseline_is_null_with_a_note(report):
    cells = report["means"]["m"]["semantic"]
    assert cells["relationship"]["percent_change"] is None
    assert any("within 1 point of 0" in note for note in cells["relationship"]["notes"])
    assert cells["goal"]["percent_change"] == pytest.approx(-10)


def test_the_signature_figure_plots_points_not_percent(report):
    figure = deviation_forest(report, "m")
    assert "score points" in figure.svg and "% deviation" not in figure.svg
    assert "Relationship · Semantic: +0.30 points" in figure.description
    assert "Goal completion · Semantic: -0.50 points (-10.0%)" in figure.description
    assert "+300" not in figure.description
    assert "m" in results_figures(report)["deviations"]


def test_the_page_rows_show_a_dash_and_the_reason_for_the_near_zero_percent(report):
    rows = {(row["barrier"], row["dimension"]): row for row in deviations_display(report)}
    relationship = rows[("Semantic", "Relationship")]
    assert relationship["deviation"] == "+0.30"
    assert relationship["deviation_percent"] == "—" and "within 1 point of 0" in relationship["deviation_percent_note"]
    assert rows[("Semantic", "Goal completion")]["deviation_percent"] == "-10.0%"
    cells = next(row for row in means_display(report)[0]["rows"] if row["condition"] == "Semantic")["cells"]
    assert cells[1]["change"] == "—" and "within 1 point of 0" in cells[1]["change_note"]
    assert cells[0]["change"] == "-10.0%"


def test_the_csv_leaves_the_near_zero_percent_empty_and_says_why(report):
    rows = {(r["barrier"], r["dimension"]): r for r in csv.DictReader(io.StringIO(csv_table("deviations", report)))}
    relationship = rows[("semantic", "relationship")]
    assert relationship["deviation_percent"] == "" and relationship["deviation"] != ""
    assert "within 1 point of 0" in relationship["notes"]
    assert float(rows[("semantic", "goal")]["deviation_percent"]) == pytest.approx(-10)


def test_the_text_table_shows_a_dash_for_the_near_zero_percent(report):
    text = text_report({**report, "evaluator": None, "filters": {}})
    line = next(line for line in text.splitlines() if re.search(r"\bsemantic\s+relationship\b", line))
    assert "+0.30" in line and "—" in line and "%" not in line
