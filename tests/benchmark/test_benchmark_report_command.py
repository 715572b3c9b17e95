import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.benchmark.results_data import judged_experiment

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("benchmark_report", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def experiment():
    return judged_experiment()


def test_default_output_is_a_readable_text_table_on_standard_output(experiment):
    out, err = run("--bootstrap", "50")

    assert "judge: judge-a (prompt v1, 96 scores)" in out
    assert "Mean ± SE per partner model and condition (all scenarios)" in out
    assert "partner-model  none" in out
    assert "7.00 ± 1.00" in out  # partner goal under none: (8 + 6) / 2, SD sqrt(2), SE 1
    assert "-35.7%" in out  # semantic: (4.5 - 7) / 7
    assert "Barrier signatures" in out
    assert "Wrote the text results to standard output: 6 episode(s) scored by judge-a" in err


def test_json_goes_to_a_file_whole_and_strict(experiment, tmp_path):
    target = tmp_path / "results.json"

    out, _ = run("--format", "json", "--output", str(target), "--bootstrap", "20", "--seed", "3")

    report = json.loads(target.read_text(encoding="utf-8"))
    assert report["seed"] == 3 and report["resamples"] == 20
    assert report["means"]["partner-model"]["none"]["goal"]["mean"] == 7
    assert f"to {target}" in out
    assert [path.name for path in tmp_path.iterdir()] == ["results.json"]  # no temporary file left behind


def test_the_same_seed_gives_the_same_intervals(experiment, tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"

    run("--format", "json", "--output", str(first), "--bootstrap", "200", "--seed", "5")
    run("--format", "json", "--output", str(second), "--bootstrap", "200", "--seed", "5")

    intervals = [[e["deviation_ci95"] for e in json.loads(path.read_text())["deviations"]] for path in (first, second)]
    assert intervals[0] == intervals[1]


def test_csv_writes_the_chosen_table(experiment):
    out, _ = run("--format", "csv", "--table", "deviations", "--bootstrap", "10")

    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0].keys() >= {"model", "barrier", "dimension", "deviation", "deviation_ci_low", "deviation_percent"}
    assert {row["barrier"] for row in rows} == {"semantic", "emotional"}


def test_csv_defaults_to_the_means_table(experiment):
    out, _ = run("--format", "csv", "--bootstrap", "0")

    assert out.splitlines()[0] == "split,model,condition,dimension,n,mean,sd,se,percent_change,notes"


def test_csv_episodes_table_has_one_row_per_episode_and_seat(experiment):
    out, _ = run("--format", "csv", "--table", "episodes", "--bootstrap", "0")

    assert len(list(csv.DictReader(io.StringIO(out)))) == 12


@pytest.mark.parametrize(("table", "column"), [("means", "model"), ("episodes", "partner_model")])
def test_csv_quotes_a_model_named_like_a_formula(db, table, column):
    planted = '=HYPERLINK("http://evil.example","click")'
    judged_experiment(partner_model=planted)

    out, _ = run("--format", "csv", "--table", table, "--bootstrap", "0")

    rows = list(csv.DictReader(io.StringIO(out)))
    assert "'" + planted in {row[column] for row in rows}
    assert planted not in {row[column] for row in rows}


def test_the_evaluator_option_picks_the_judge(experiment):
    out, _ = run("--evaluator", "scripted", "--bootstrap", "0")

    assert "judge: scripted (prompt heuristic-1, 6 scores)" in out


def test_the_seat_option_reports_the_barrier_seat(experiment):
    out, _ = run("--seat", "barrier", "--bootstrap", "0")

    assert "Mean ± SE per barrier model and condition" in out
    assert "barrier-model" in out


def test_an_unknown_evaluator_is_a_clear_error(experiment):
    with pytest.raises(CommandError, match="evaluator 'gpt-judge' has no scores on the selected episodes"):
        run("--evaluator", "gpt-judge")


def test_an_unknown_tag_is_a_clear_error(experiment):
    with pytest.raises(CommandError, match="--tag 'nope': no episode has this tag"):
        run("--tag", "nope")


def test_table_without_csv_is_refused(experiment):
    with pytest.raises(CommandError, match="--table applies to --format csv only"):
        run("--table", "means")


def test_an_output_in_a_missing_directory_is_refused_before_any_work(experiment, tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        run("--output", str(tmp_path / "missing" / "results.txt"))


def test_a_failed_report_leaves_an_existing_file_untouched(experiment, tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("earlier results")

    with pytest.raises(CommandError):
        run("--evaluator", "gpt-judge", "--output", str(target))

    assert target.read_text() == "earlier results"


def test_no_scores_still_writes_a_report_that_says_so(db):
    out, _ = run("--bootstrap", "0")

    assert "judge: none" in out
    assert "no judge scores on the selected episodes" in out
