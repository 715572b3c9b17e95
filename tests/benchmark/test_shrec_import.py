"""Importing SHREC's files (SH-1, SH-2 for imports, SH-A10): episodes, recordings and the annotators' spans."""

from pathlib import Path

import pandas
import pytest
from django.core.management import call_command

from annotator.external_spans import shrec_study, study_slug
from annotator.models import Annotation, Assignment, ExternalAnnotator, Span, Study
from benchmark.importing import ImportProblem
from benchmark.models import Episode, Recording, Response, Scenario, Turn
from tests.benchmark.import_checks import import_file, row_counts
from tests.builders import default_team

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"
TAG = "shrec-two-videos"


def test_the_fixture_imports_two_episodes_with_timed_turns_seats_and_a_recording():
    result = import_file(FIXTURE)

    assert result.format == "shrec"
    episodes = Episode.objects.order_by("external_id")
    assert [episode.external_id for episode in episodes] == ["P01_s001", "P02_s003"]
    first = episodes[0]
    assert first.source == "imported" and first.barrier.key == "none" and first.tag == TAG
    assert first.settings["shrec"]["source"] == "empathic"
    assert episodes[1].settings["shrec"]["source"] == "wellness-dorm"
    assert first.settings["shrec"]["framerate"] == 1.0
    assert [(seat.position, seat.character.name) for seat in first.seats.all()] == [(0, "Jibo"), (1, "User A")]
    turns = list(first.turns.order_by("index"))
    assert len(turns) == 18
    assert (turns[0].seat.position, turns[0].start_s, turns[0].content) == (
        0, 4.0, "Hi there, it is good to see you again.")
    assert turns[0].words[:2] == [[4.0, "Hi"], [4.0, "there,"]]
    assert turns[1].seat.position == 1 and turns[1].start_s == 14.0
    assert all(turn.end_s >= turn.start_s for turn in turns)
    recording = Recording.objects.get(episode=first)
    assert (recording.kind, recording.frames, recording.framerate, recording.file.name, recording.url) == (
        "video", "frames/P01_s001/", 1.0, "", "")
    assert set(Scenario.objects.values_list("external_id", flat=True)) == {"shrec-empathic", "shrec-wellness-dorm"}


def spans_of(study, number):
    """(start_s, end_s, label, attributes, channel, start_turn, end_turn) of external annotator ``number``'s spans."""
    annotator = ExternalAnnotator.objects.get(study=study, number=number)
    spans = Span.objects.filter(annotation__assignment__annotator=annotator.user).order_by(
        "annotation__assignment__item__position", "start_s")
    return [
        (span.annotation.assignment.item.episode.external_id, span.start_s, span.end_s, span.label,
         sorted(attribute.key for attribute in span.attributes.all()), span.channel, span.start_turn, span.end_turn,
         span.seat_position)
        for span in spans
    ]


def test_each_annotator_column_is_an_external_annotator_of_one_study_with_submitted_annotations():
    result = import_file(FIXTURE)

    team = default_team()
    study = shrec_study(team, TAG)
    assert study.slug == study_slug(team, TAG) and study.title == f"SHREC: {TAG}"
    assert study.instrument.preset == "shrec-spans" and not study.is_open
    assert list(study.items.order_by("position").values_list("episode__external_id", flat=True)) == [
        "P01_s001", "P02_s003"]
    assert list(study.external_annotators.values_list("number", flat=True)) == [1, 2, 3]
    # Annotations_C is empty for the second video: two annotators there.
    per_item = {item.episode.external_id: item.assignments.count() for item in study.items.all()}
    assert per_item == {"P01_s001": 3, "P02_s003": 2}
    annotations = Annotation.objects.filter(assignment__item__study=study)
    assert annotations.count() == 5 and {a.status for a in annotations} == {"submitted"}
    assert all(a.response.status == Response.Status.SUBMITTED and a.response.respondent.kind == "annotator"
               for a in annotations)
    assert Assignment.objects.filter(item__study=study, status="submitted").count() == 5
    assert Span.objects.count() == 6 + 6 + 3 + 6 + 6
    assert result.created["span"] == 27 and result.skipped["segment without a time"] == 1
    first = spans_of(study, 1)[0]
    assert first == ("P01_s001", 24.0, 29.0, "competency", ["emotions", "engagement"], "verbal", 2, 2, 0)


def test_span_turns_are_the_turns_its_times_overlap_or_the_nearest():
    import_file(FIXTURE)

    study = shrec_study(default_team(), TAG)
    episode = Episode.objects.get(external_id="P01_s001")
    for span in Span.objects.filter(annotation__assignment__item__episode=episode):
        covered = [turn.index for turn in episode.turns.all()
                   if turn.start_s <= span.end_s and turn.end_s >= span.start_s]
        assert (span.start_turn, span.end_turn) == (min(covered), max(covered))
    assert study is not None


def test_importing_the_same_file_again_changes_nothing():
    import_file(FIXTURE)
    before = row_counts()

    again = import_file(FIXTURE)

    assert row_counts() == before
    assert again.created == {} or not any(again.created.values())
    assert again.unchanged["episode"] == 2 and again.unchanged["span"] == 27 and again.unchanged["annotation"] == 5
    assert again.skipped["segment without a time"] == 1


def test_a_parquet_copy_of_the_csv_imports_the_same(tmp_path):
    path = tmp_path / "two_videos.parquet"
    pandas.read_csv(FIXTURE).to_parquet(path)

    result = import_file(path)

    assert result.format == "shrec"
    assert Episode.objects.count() == 2 and Turn.objects.count() == 34
    assert result.created["span"] == 27 and result.skipped["segment without a time"] == 1
    assert Study.objects.get().title == "SHREC: shrec-two-videos"


def test_parquet_cells_may_hold_lists_and_dicts_rather_than_text(tmp_path):
    import ast

    frame = pandas.read_csv(FIXTURE)
    for column in ("Annotations_A", "Annotations_B", "Annotations_C"):
        frame[column] = [ast.literal_eval(cell) for cell in frame[column]]
    path = tmp_path / "native.parquet"
    frame.to_parquet(path)

    result = import_file(path)

    assert result.created["span"] == 27 and result.skipped["segment without a time"] == 1
    study = Study.objects.get()
    assert spans_of(study, 1)[0][:5] == ("P01_s001", 24.0, 29.0, "competency", ["emotions", "engagement"])


def test_the_command_summary_counts_skipped_segments_and_flags_empty_rationales(capsys):
    call_command("import_episodes", str(FIXTURE), "--format", "shrec", team=default_team().slug)

    out = capsys.readouterr().out
    assert "skipped 1 segment without a time" in out
    assert "created 2 episodes, 2 scenarios, 2 characters, 34 turns" in out and "27 spans" in out
    assert "flagged: 1 of 27 segments have no rationale and 2 errors no correction" in out


def test_a_dry_run_reports_the_study_and_spans_it_would_make_and_keeps_nothing():
    before = row_counts()

    result = import_file(FIXTURE, dry_run=True)

    assert row_counts() == before
    assert (result.created["episode"], result.created["study"], result.created["span"]) == (2, 1, 27)
    assert "would create" in result.summary()


def test_the_tag_names_the_study_so_a_second_tag_makes_a_second_study_of_the_same_episodes():
    import_file(FIXTURE)

    result = import_file(FIXTURE, tag="shrec-rerun")

    assert result.unchanged["episode"] == 2 and result.created["study"] == 1 and result.created["span"] == 27
    assert Study.objects.count() == 2 and Episode.objects.count() == 2
    assert shrec_study(default_team(), "shrec-rerun").items.count() == 2


def test_a_parquet_file_named_as_another_format_is_read_as_text_and_refused_by_it(tmp_path):
    path = tmp_path / "two_videos.parquet"
    pandas.read_csv(FIXTURE).to_parquet(path)

    with pytest.raises(ImportProblem, match="two_videos.parquet: not UTF-8 text"):
        import_file(path, format="parley")
