"""``benchmark_report --analysis promediate``: Tables 1–3 as text, JSON and CSV, with clear refusals."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.benchmark.promediate_report_data import mi_answers, negotiation_episode, negotiation_scenario
from tests.builders import default_team, make_team

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "benchmark_report",
        "--analysis",
        "promediate",
        "--team",
        default_team().slug,
        "--bootstrap",
        "50",
        *args,
        stdout=out,
        stderr=err,
    )
    return out.getvalue(), err.getvalue()


@pytest.fixture
def experiment():
    scenario = negotiation_scenario()
    first = negotiation_episode(scenario, high=0.8)
    second = negotiation_episode(scenario, high=0.5, run_id=2)
    mi_answers(first, {4: (4, 4, 5, 5), 9: (3, 3, 3, 3)})
    mi_answers(second, {4: (5, 5, 5, 5), 9: (2, 2, 2, 2)})
    negotiation_episode(negotiation_scenario(make_team(), codename="elsewhere"), model="someone-else")


def test_text_shows_table_one_with_the_social_cells_filled_and_the_others_missing(experiment):
    out, err = run()

    assert "Table 1: metrics per conflict mode and mediator condition" in out
    header = next(line for line in out.splitlines() if line.startswith("metric"))
    assert "competing / NoAgent" in header and "competing / Generic" in header and "competing / Social" in header
    cc = next(line for line in out.splitlines() if line.startswith("CC (%)"))
    assert "13.50 ± 4.50" in cc and "n=2" in cc
    assert cc.count("missing") == 2
    rl = next(line for line in out.splitlines() if line.startswith("RL (turns)"))
    assert " - " in rl  # NoAgent: not defined
    assert "Table 3" in out and "needs more conversations than metrics" in out
    assert "Methods" in out and "preset upstream" in out
    assert "someone-else" not in out and "elsewhere" not in out
    assert "Wrote the text ProMediate results to standard output: 2 conversation(s) over 1 scenario(s)" in err


def test_json_and_csv_hold_the_same_numbers(experiment, tmp_path):
    target = tmp_path / "promediate.json"

    run("--format", "json", "--output", str(target))
    out, _ = run("--format", "csv", "--table", "table1")

    report = json.loads(target.read_text())
    assert report["table1"]["cells"]["consensus_change"]["competing"]["social"]["mean"] == pytest.approx(13.5)
    rows = list(csv.DictReader(io.StringIO(out)))
    social = next(r for r in rows if r["metric"] == "MI" and r["condition"] == "Social")
    assert float(social["mean"]) == pytest.approx(3.625)
    assert social["n"] == "2"
    none = next(r for r in rows if r["metric"] == "MI" and r["condition"] == "NoAgent")
    assert none["defined"] == "False" and none["mean"] == ""


def test_filters_by_mediator_model_and_judge(experiment):
    _, err = run("--mediator-model", "o4-mini")
    assert "0 conversation(s)" in err and "2 left out" in err

    _, err = run("--evaluator", "another-judge")
    assert "0 conversation(s)" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--table", "means", "--format", "csv"), "the ProMediate analysis has the tables"),
        (("--scenarios", "nowhere"), "no scenario has the id"),
        (("--category", "small_society"), "--category does not apply"),
        (("--prompt-version", "v1"), "--prompt-version needs --evaluator"),
        (("--evaluator", "majority"), "reads one judge's consensus trace"),
    ],
)
def test_bad_options_are_refused_with_a_clear_message(experiment, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_promediate_options_are_refused_by_the_other_analyses(experiment):
    with pytest.raises(CommandError, match="apply to --analysis promediate only"):
        call_command(
            "benchmark_report",
            "--team",
            default_team().slug,
            "--mediator-model",
            "x",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
