"""``benchmark_report --analysis shrec``: Tables 1 and 2 of one task set as text, JSON and CSV, with clear refusals."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import TaskSet
from tests.benchmark.shrec_results_data import build_world
from tests.builders import default_team, make_team

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("benchmark_report", "--analysis", "shrec", "--team", default_team().slug, "--bootstrap", "50",
                 *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def world():
    build_world(make_team(), name="elsewhere", model="someone-else")
    return build_world()


def test_the_text_report_prints_both_tables_for_the_latest_task_set(world):
    out, err = run()

    assert "SHREC results for the task set shrec-seed0" in out
    assert "Table 1" in out and "Table 2" in out and "Attr Partial" in out
    assert "(L) m1  0.75 ± 0.35" in out
    assert "someone-else" not in out
    assert "task set shrec-seed0: 11 item(s), 1 model row(s), 0 person(s)" in err


def test_json_is_the_same_bytes_twice(world):
    first, _ = run("--format", "json")
    second, _ = run("--format", "json")

    assert first == second
    report = json.loads(first)
    assert report["resamples"] == 50
    assert report["rows"][0]["tasks"]["pre"]["metrics"]["accuracy"]["pooled"] == pytest.approx(2 / 3)


def test_csv_table_two_and_the_named_task_set(world):
    build_world(name="later", model="m2")

    out, _ = run("--format", "csv", "--table", "table2", "--task-set", "shrec-seed0")

    rows = list(csv.DictReader(io.StringIO(out)))
    assert {row["model"] for row in rows} == {"m1"}
    assert [row["column"] for row in rows] == ["Pre-condition", "Post-condition", "Rationale", "Correction"]
    assert rows[0]["n_per_subset"] == "2/2" and float(rows[0]["mean"]) == pytest.approx(0.75)


def test_the_output_file_is_written_whole(world, tmp_path):
    target = tmp_path / "shrec.json"

    out, _ = run("--format", "json", "--output", str(target))

    assert json.loads(target.read_text())["task_set"]["name"] == "shrec-seed0"
    assert f"Wrote the json SHREC results to {target}" in out


def test_an_unknown_task_set_names_the_choices(world):
    with pytest.raises(CommandError, match="--task-set: no task set is called 'nope'; the task sets are shrec-seed0"):
        run("--task-set", "nope")


def test_no_task_set_says_how_to_build_one():
    with pytest.raises(CommandError, match="no SHREC task set yet.*shrec_tasks"):
        run()


def test_an_empty_task_set_reports_with_a_clear_note():
    TaskSet.objects.create(team=default_team(), name="empty")

    out, _ = run()

    assert "Note: the task set 'empty' has no items: build them with shrec_tasks" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--table", "means", "--format", "csv"), "the SHREC analysis has the tables"),
        (("--model", "m1"), "--model does not apply to --analysis shrec"),
        (("--evaluator", "m1"), "--evaluator does not apply to --analysis shrec"),
    ],
)
def test_options_of_other_analyses_are_refused(world, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_task_set_belongs_to_the_shrec_analysis(world):
    with pytest.raises(CommandError, match="--task-set and --answers apply to --analysis shrec only"):
        call_command("benchmark_report", "--team", default_team().slug, "--task-set", "shrec-seed0")


def test_coerced_answers_are_scored_when_asked(world):
    from benchmark.models import TaskAnswer

    TaskAnswer.objects.filter(item__item_key="d4", item__task_set=world["task_set"]).update(
        coerced="error", coerced_by="judge-model")

    out, _ = run("--answers", "coerced", "--format", "json")

    assert json.loads(out)["answers"] == "coerced"
    assert json.loads(out)["rows"][0]["tasks"]["detection"]["metrics"]["accuracy"]["pooled"] == 1.0
