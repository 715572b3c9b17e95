"""Importing a flat CSV of turns: seats from speakers, a placeholder scenario per episode."""

from pathlib import Path

import pytest

from benchmark.models import Character, Episode, Scenario, Seat, Turn
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts

pytestmark = pytest.mark.django_db

HEADER = "episode_id,turn_index,speaker,action_type,text"


def write_csv(tmp_path: Path, *lines: str, header: str = HEADER, name: str = "turns.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


def test_speakers_become_seats_in_order_of_first_speech(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann Lee,speak,Hi.", "e1,1,Bo,speak,Hello.", "e1,2,Ann Lee,leave,")

    import_file(path)

    episode = Episode.objects.get(external_id="e1")
    assert [seat.character.name for seat in episode.seats.all()] == ["Ann Lee", "Bo"]
    assert list(episode.turns.values_list("seat__position", "action_type")) == [
        (0, "speak"),
        (1, "speak"),
        (0, "leave"),
    ]
    assert (episode.source, episode.status, episode.barrier.key) == ("imported", "finished", "none")


def test_rows_may_come_in_any_order(tmp_path):
    import_file(write_csv(tmp_path, "e1,1,Bo,speak,Second.", "e1,0,Ann,speak,First."))

    assert Seat.objects.get(position=0).character.name == "Ann"
    assert Turn.objects.get(index=0).content == "First."


def test_the_quote_the_export_puts_before_a_formula_is_removed(tmp_path):
    path = write_csv(tmp_path, "e1,0,'@Ann,speak,'=1+1", "e1,1,Bo,speak,''=literal quote", "e1,2,Bo,speak,'quoted",
                     "e1,3,Bo,speak,'-1")

    import_file(path)

    assert list(Turn.objects.order_by("index").values_list("content", flat=True)) == [
        "=1+1", "'=literal quote", "'quoted", "-1",
    ]
    assert Seat.objects.get(position=0).character.name == "@Ann"


def test_placeholder_scenario_takes_its_codename_from_the_scenario_column(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.,Rent Talk", "e1,1,Bo,speak,Hey.,", header=HEADER + ",scenario")

    import_file(path)

    scenario = Episode.objects.get().scenario
    assert scenario.codename == "rent-talk"
    assert "turns.csv" in scenario.context
    assert scenario.roles.count() == 2


def test_placeholder_scenario_codename_falls_back_to_the_episode_id(tmp_path):
    import_file(write_csv(tmp_path, "Run 7,0,Ann,speak,Hi.", "Run 7,1,Bo,speak,Hey."))

    assert Scenario.objects.get().codename == "run-7"


def test_speakers_are_one_character_across_episodes(tmp_path):
    path = write_csv(
        tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Bo,speak,Hey.", "e2,0,Bo,speak,Again.", "e2,1,Ann,speak,Yes."
    )

    result = import_file(path)

    assert Character.objects.filter(external_id="csv:Ann").count() == 1
    assert result.created["character"] == 2
    assert result.created["scenario"] == 2


def test_barrier_column_sets_the_condition(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.,semantic", "e1,1,Bo,speak,Hey.,semantic", header=HEADER + ",barrier")

    import_file(path)

    assert Episode.objects.get().barrier.key == "semantic"


def test_extra_columns_are_ignored(tmp_path):
    import_file(write_csv(tmp_path, "e1,0,Ann,speak,Hi.,x", "e1,1,Bo,speak,Hey.,y", header=HEADER + ",notes"))

    assert Turn.objects.count() == 2


def test_reimport_leaves_everything_unchanged(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Bo,speak,Hey.")
    import_file(path)
    before = row_counts()

    result = import_file(path)

    assert row_counts() == before
    assert result.unchanged["episode"] == 1


def test_missing_header_is_rejected(tmp_path):
    path = tmp_path / "turns.csv"
    path.write_text("e1,0,Ann,speak,Hi.\ne1,1,Bo,speak,Hey.\n")

    assert_rejected(path, "turns.csv, row 1: the header lacks episode_id, turn_index, speaker, action_type, text")


def test_unknown_barrier_is_rejected(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.,loud", "e1,1,Bo,speak,Hey.,", header=HEADER + ",barrier")

    assert_rejected(path, "turns.csv, row 2, field barrier: 'loud' is not a barrier key")


def test_episode_with_one_speaker_is_rejected(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Ann,speak,Anyone?")

    assert_rejected(path, "row 2, field speaker: episode 'e1' has 1 speaker (Ann); at least two are needed")


def test_duplicate_turn_index_is_rejected(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Bo,speak,Hey.", "e1,1,Ann,speak,Again.")

    assert_rejected(
        path, "turns.csv, row 4, field turn_index: turn index 1 appears twice in episode 'e1' (first at row 3)"
    )


def test_turn_index_that_is_not_a_number_is_rejected(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,one,Bo,speak,Hey.")

    assert_rejected(path, "turns.csv, row 3, field turn_index: expected a whole number of 0 or more, got 'one'")


def test_unknown_action_type_is_rejected(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,shout,Hi.", "e1,1,Bo,speak,Hey.")

    assert_rejected(path, "row 2, field action_type: 'shout' is not one of speak, non-verbal, action, none, leave")


def test_row_with_a_missing_cell_is_rejected(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Bo,speak")

    assert_rejected(path, "row 3: has 4 cells; the header has 5")


# --- input no database can store, or that would exhaust the importer ----------------------------


def test_a_40_digit_turn_index_is_refused_naming_row_and_column(tmp_path):
    index = "1" * 40
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", f"e1,{index},Bo,speak,Hey.")

    assert_rejected(path, f"turns.csv, row 3, field turn_index: {index} is above the maximum 2147483647")


def test_a_turn_index_written_in_other_digits_is_refused(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,²,Bo,speak,Hey.")

    assert_rejected(path, "turns.csv, row 3, field turn_index: expected a whole number of 0 or more, got '²'")


def test_a_nul_character_is_refused_naming_row_and_column(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Bo,speak,He\x00y.")

    assert_rejected(path, "turns.csv, row 3, field text: holds a NUL character (\\u0000, character 3)")


def test_a_turn_over_the_size_cap_is_refused_naming_row_and_column(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Bo,speak," + "x" * 100_001)

    assert_rejected(path, "turns.csv, row 3, field text: is 100001 characters long; at most 100000 fit")


def test_a_cell_too_long_for_the_csv_reader_is_refused_naming_the_row(tmp_path):
    path = write_csv(tmp_path, "e1,0,Ann,speak,Hi.", "e1,1,Bo,speak," + "x" * 200_000)

    assert_rejected(path, "turns.csv, row 3: cannot be read as CSV (field larger than field limit (131072))")


def test_an_episode_with_more_turns_than_a_turn_cap_holds_is_refused(tmp_path):
    lines = [f"e1,{index},{'Ann' if index % 2 else 'Bo'},speak,Hi." for index in range(32_768)]

    assert_rejected(write_csv(tmp_path, *lines), "turns.csv, row 2: episode 'e1' has 32768 turns; at most 32767 fit")
