"""Options that are easy to mistype are spelled the same way on every command, and old spellings still work."""

import pytest
from django.core.management import load_command_class


def parse(app: str, name: str, *args: str) -> dict:
    parser = load_command_class(app, name).create_parser("manage.py", name)
    return vars(parser.parse_args(list(args)))


@pytest.mark.parametrize(("app", "name", "required"), [
    ("benchmark", "benchmark_report", []), ("annotator", "agreement_report", ["--study", "pilot"]),
])
@pytest.mark.parametrize("spelling", ["--out", "--output"])
def test_report_commands_take_both_spellings_of_the_output_file(app, name, required, spelling):
    assert parse(app, name, *required, spelling, "report.json")["output"] == "report.json"


def test_simulate_names_difficulty_and_run_name_so_they_cannot_be_mixed_up():
    preferred = parse("benchmark", "simulate", "--difficulty", "hard", "--run-name", "pilot")
    old = parse("benchmark", "simulate", "--tags", "hard", "--tag", "pilot")

    assert (preferred["difficulty"], preferred["run_name"]) == ("hard", "pilot")
    assert (old["difficulty"], old["run_name"]) == ("hard", "pilot")


def test_simulate_help_names_the_preferred_spellings():
    help_text = load_command_class("benchmark", "simulate").create_parser("manage.py", "simulate").format_help()

    assert "--difficulty" in help_text and "--run-name" in help_text
    assert "--tags is an old spelling" in " ".join(help_text.split())
