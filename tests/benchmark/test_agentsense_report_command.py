"""``benchmark_report --analysis agentsense``: the AgentSense page's tables as text, JSON and CSV."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.benchmark.agentsense_data import agentsense_episode, agentsense_scenario
from tests.builders import default_team, make_team

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("benchmark_report", "--analysis", "agentsense", "--team", default_team().slug, *args,
                 stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def experiment():
    team = default_team()
    for models in (["strong", "weak", "weak"], ["weak", "strong", "strong"]):
        agentsense_episode(agentsense_scenario(team), models, verdict=lambda who, seat: who == "self" or seat == 0)
    agentsense_episode(agentsense_scenario(make_team()), ["someone-else"] * 3)


def test_text_prints_every_table_with_intervals(experiment):
    out, err = run("--bootstrap", "50")

    for title in ("Goal completion per model and perspective", "Implicit reasoning", "Profile sensitivity index",
                  "Sender × receiver models", "Agreement between perspectives"):
        assert title in out
    assert "judges' majority  strong" in out
    assert "95% CI" in out
    assert "someone-else" not in out
    assert "Wrote the text AgentSense results to standard output: 2 episode(s) with answers, 2 model(s)" in err


def test_json_holds_the_same_numbers_as_the_page(experiment, tmp_path):
    target = tmp_path / "agentsense.json"

    run("--format", "json", "--bootstrap", "0", "--output", str(target))

    report = json.loads(target.read_text())
    # Judges say yes to the sender's goal only: strong is the sender once in three characters, weak once in three.
    assert report["completion"]["judges_majority"]["strong"]["mean"] == pytest.approx(1 / 3)
    assert report["completion"]["self"]["weak"]["mean"] == 1.0
    assert report["overestimation"]["self"]["all"]["mean"] == pytest.approx(2 / 3)
    assert report["completion"]["self"]["weak"]["ci95"] is None  # 0 resamples


def test_csv_writes_the_chosen_table(experiment):
    out, _ = run("--format", "csv", "--table", "reasoning", "--bootstrap", "0")

    rows = list(csv.DictReader(io.StringIO(out)))
    assert {(row["measure"], row["model"]) for row in rows} == {
        ("attacker accuracy", "strong"), ("attacker accuracy", "weak"),
        ("defender score", "strong"), ("defender score", "weak"),
    }


def test_options_of_the_other_analysis_are_refused(experiment):
    with pytest.raises(CommandError, match="--table means"):
        run("--format", "csv", "--table", "means")
    with pytest.raises(CommandError, match="--evaluator"):
        run("--evaluator", "judge-a")
    with pytest.raises(CommandError, match="--analysis agentsense only"):
        call_command("benchmark_report", "--team", default_team().slug, "--model", "strong")


def test_an_empty_selection_says_what_to_run():
    out, _ = run("--bootstrap", "0")

    assert "(none)" in out
    assert "evaluate --interview" in out
