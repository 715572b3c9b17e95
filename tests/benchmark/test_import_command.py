"""The import_episodes command, and telling formats apart."""

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, execute_from_command_line

from benchmark.importing import ImportProblem, detect_format
from benchmark.models import Episode

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
TURNS = "episode_id,turn_index,speaker,action_type,text\ne1,0,Ann,speak,Hi.\ne1,1,Bo,speak,Hey.\n"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_episodes", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_prints_one_line_per_file_and_a_total(tmp_path):
    (tmp_path / "turns.csv").write_text(TURNS)

    output = run(str(SOTOPIA / "sotopia_episodes_v1_first5.jsonl"), str(tmp_path / "turns.csv"))

    lines = [line for line in output.splitlines() if not line.startswith("  note: ")]
    assert lines[0].startswith("sotopia_episodes_v1_first5.jsonl (sotopia): created 5 episodes")
    assert lines[1].startswith("turns.csv (csv): created 1 episode")
    assert lines[2].startswith("Total: 2 file(s); created 6 episode(s), 0 unchanged")


@pytest.mark.django_db
def test_second_run_reports_unchanged(tmp_path):
    (tmp_path / "turns.csv").write_text(TURNS)
    run(str(tmp_path / "turns.csv"))

    assert "turns.csv (csv): unchanged 1 episode" in run(str(tmp_path / "turns.csv"))


@pytest.mark.django_db
def test_dry_run_reports_and_rolls_back():
    output = run(str(SOTOPIA / "sotopia_episodes_v1_first5.jsonl"), "--dry-run")

    assert "would create 5 episodes" in output
    assert "Dry run: nothing was saved." in output
    assert Episode.objects.count() == 0


@pytest.mark.django_db
def test_bad_input_is_a_command_error_with_the_located_message(tmp_path):
    (tmp_path / "turns.csv").write_text(TURNS.replace("speak,Hey.", "shout,Hey."))

    with pytest.raises(CommandError, match=r"turns\.csv, row 3, field action_type: 'shout' is not one of"):
        run(str(tmp_path / "turns.csv"))
    assert Episode.objects.count() == 0


@pytest.mark.django_db
def test_bad_input_exits_non_zero(tmp_path, capsys):
    (tmp_path / "turns.csv").write_text("speaker,text\nAnn,Hi.\n")

    with pytest.raises(SystemExit) as exit:
        execute_from_command_line(["manage.py", "import_episodes", str(tmp_path / "turns.csv")])

    assert exit.value.code == 1
    assert "turns.csv, row 1: the header lacks episode_id" in capsys.readouterr().err


@pytest.mark.django_db
def test_missing_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="nowhere.jsonl: no such file"):
        run(str(tmp_path / "nowhere.jsonl"))


@pytest.mark.django_db
def test_format_option_overrides_detection(tmp_path):
    (tmp_path / "turns.txt").write_text(TURNS)

    assert "turns.txt (csv): created 1 episode" in run(str(tmp_path / "turns.txt"), "--format", "csv")


def test_csv_is_detected_by_extension():
    assert detect_format(Path("turns.csv"), "anything") == "csv"


def test_parley_jsonl_is_detected_by_content():
    assert detect_format(Path("x.jsonl"), '{"external_id": "e", "scenario": {}, "seats": []}\n') == "parley"


def test_sotopia_jsonl_is_detected_by_content():
    first_line = (SOTOPIA / "serialized_agent_profiles.jsonl").read_text().splitlines()[0]
    assert detect_format(Path("x.jsonl"), first_line) == "sotopia"


def test_json_file_is_sotopia():
    assert (
        detect_format(Path("log.json"), (SOTOPIA / "episodelog_native_01J0GZWDV6HMKQK4B3PTEZW5V8.json").read_text())
        == "sotopia"
    )


def test_csv_without_extension_is_detected_by_its_header():
    assert detect_format(Path("export"), TURNS) == "csv"


def test_unrecognisable_file_asks_for_the_format():
    with pytest.raises(ImportProblem, match="pass --format"):
        detect_format(Path("notes.txt"), "hello world")
