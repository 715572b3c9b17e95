"""SH-A10 and SHREC's bad input: spellings, untimed and empty segments, and files refused by row and field."""

import csv

import pytest

from annotator.external_spans import shrec_study
from annotator.models import Span
from benchmark.importing import ImportProblem
from benchmark.models import Episode
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts
from tests.builders import default_team

pytestmark = pytest.mark.django_db

TRANSCRIPT = "AI Agent:\n(00:00:02) Hey (00:00:03) there.\nUser A:\n(00:00:08) Good.\nAI Agent: (00:00:12) Sweet!"
SEVEN = ("Emotions", "Engagement", "Conversational Mechanics", "Knowledge State", "Intention",
         "Social Context &  Relationships", "Social Norms and Routines")


def segment(start=2, end=6, error=True, ticked=("Emotions",), names=SEVEN, rationale="Too cheerful.",
            correction="Ask how the day went.", verbal=True, non_verbal=False):
    return {"timestamp": {"start": start, "end": end}, "error": error,
            "source": {"Verbal": verbal, "Non-Verbal": non_verbal},
            "attribute": {name: name in ticked for name in names}, "rationale": rationale, "correction": correction}


def write(tmp_path, rows, name="shrec_empathic.csv", columns=("file_name", "transcript", "Annotations_A",
                                                              "Annotations_B", "Annotations_C", "framerate")):
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(columns)
        for row in rows:
            values = {"file_name": "v1", "transcript": TRANSCRIPT, "Annotations_A": [segment()],
                      "Annotations_B": [segment()], "Annotations_C": [], "framerate": "1.0", **row}
            writer.writerow([value if isinstance(value, str) else repr(value) for value in
                             (values[column] for column in columns)])
    return path


def test_sh_a10_spellings_untimed_and_empty_segments_and_an_empty_third_column(tmp_path):
    context, norms = "Social Context &  Relationships", "Recognizing Social Norms including toxicity"
    spelled = segment(ticked=(context, norms), names=(*SEVEN[:5], context, norms))
    untimed = {**segment(), "timestamp": {"start": None, "end": 6}}
    no_correction = segment(start=8, end=10, correction="")
    no_rationale = segment(start=12, end=12, error=False, rationale="", correction="")
    path = write(tmp_path, [{"Annotations_A": [spelled, untimed, no_correction, no_rationale]}])

    result = import_file(path)

    study = shrec_study(default_team(), "shrec-shrec-empathic")
    spans = Span.objects.filter(annotation__assignment__item__study=study).order_by("annotation__assignment__pk",
                                                                                      "start_s")
    first = spans[0]
    assert sorted(attribute.key for attribute in first.attributes.all()) == ["social-context", "social-norms"]
    assert result.skipped["segment without a time"] == 1
    assert [(span.correction, span.rationale) for span in spans[1:3]] == [("", "Too cheerful."), ("", "")]
    assert "flagged: 1 of 4 segments have no rationale and 1 errors no correction" in result.summary()
    assert study.external_annotators.count() == 2  # Annotations_C is empty
    assert Episode.objects.get().settings["shrec"]["source"] == "empathic"  # from the file's name
    before = row_counts()
    import_file(path)
    assert row_counts() == before


def test_an_unknown_attribute_is_refused_naming_the_segment(tmp_path):
    segments = [segment(), segment(), segment(), segment(names=(*SEVEN, "Humour"))]
    path = write(tmp_path, [{"Annotations_B": segments}])

    assert_rejected(path, "shrec_empathic.csv, row 2, field Annotations_B[3].attribute.Humour: 'Humour' is not one")


@pytest.mark.parametrize(("timestamp", "message"), [
    ({"start": -1, "end": 3}, "field Annotations_A[0].timestamp.start: -1 s is before the recording starts"),
    ({"start": 5, "end": 3}, "field Annotations_A[0].timestamp.end: 3 s is before the segment's start (5 s)"),
    ({"start": 5, "end": 300}, "field Annotations_A[0].timestamp.end: 300 s is past the end of the recording"),
    ({"start": "soon", "end": 3}, "field Annotations_A[0].timestamp.start: expected seconds, got string 'soon'"),
])
def test_a_segment_outside_its_recording_is_refused(tmp_path, timestamp, message):
    path = write(tmp_path, [{"Annotations_A": [{**segment(), "timestamp": timestamp}]}])

    assert_rejected(path, message)


@pytest.mark.parametrize(("row", "message"), [
    ({"transcript": "(00:00:01) hello"}, "row 2, field transcript: cannot be read: line 1: words before any speaker"),
    ({"transcript": ""}, "row 2, field transcript: holds no turns"),
    ({"Annotations_A": "[{'timestamp': "}, "row 2, field Annotations_A: cannot be read as a list of segments"),
    ({"Annotations_A": "__import__('os')"}, "row 2, field Annotations_A: cannot be read as a list of segments"),
    ({"Annotations_A": [{**segment(), "error": None}]}, "field Annotations_A[0].error: expected True (an error)"),
    ({"Annotations_A": [{**segment(), "source": {"Verbal": True, "Gesture": True}}]},
     "field Annotations_A[0].source: names gesture"),
    ({"Annotations_A": [{**segment(), "attribute": {"Emotions": "maybe"}}]},
     "field Annotations_A[0].attribute.Emotions: expected true or false, got string 'maybe'"),
    ({"framerate": "fast"}, "row 2, field framerate: expected frames per second"),
    ({"file_name": ""}, "row 2, field file_name: must not be empty"),
])
def test_bad_cells_are_refused_by_row_and_field_and_nothing_is_written(tmp_path, row, message):
    assert_rejected(write(tmp_path, [row]), message)


def test_a_video_given_twice_is_refused(tmp_path):
    assert_rejected(write(tmp_path, [{}, {}]), "row 3, field file_name: video 'v1' appears twice in this file (first "
                                               "at row 2)")


def test_a_file_without_the_columns_is_refused_naming_them(tmp_path):
    path = write(tmp_path, [{}], columns=("file_name", "transcript", "framerate"))

    with pytest.raises(ImportProblem, match=r"shrec_empathic.csv, row 1: a SHREC file needs the columns Annotations_A "
                                            r"\(and _B, _C\)"):
        import_file(path, format="shrec")
    assert not Episode.objects.exists()


def test_spans_that_differ_from_those_already_imported_are_refused(tmp_path):
    import_file(write(tmp_path, [{}]))
    changed = write(tmp_path, [{"Annotations_B": [segment(rationale="Another reason.")]}])

    assert_rejected(changed, "row 2, field Annotations_B: external 2's spans of video 'v1' are already in study")


def test_the_subset_column_wins_over_the_file_name(tmp_path):
    columns = ("file_name", "dataset", "transcript", "Annotations_A", "Annotations_B", "Annotations_C", "framerate")
    import_file(write(tmp_path, [{"dataset": "Wellness_Home"}], columns=columns))

    assert Episode.objects.get().settings["shrec"]["source"] == "wellness-home"
    assert Episode.objects.get().scenario.external_id == "shrec-wellness-home"


def test_listed_frames_give_the_recordings_folder_and_duration(tmp_path):
    from benchmark.models import Recording

    columns = ("file_name", "transcript", "Annotations_A", "Annotations_B", "Annotations_C", "framerate",
               "frame_paths")
    frames = [f"frames/v1/{number:04d}.png" for number in range(30)]
    import_file(write(tmp_path, [{"file_name": "v1.mp4", "frame_paths": frames, "framerate": "2"}], columns=columns))

    recording = Recording.objects.get()
    assert (recording.episode.external_id, recording.frames, recording.framerate, recording.duration_s) == (
        "v1", "frames/v1/", 2.0, 15.0)
    assert recording.episode.settings["shrec"]["frame_count"] == 30


def test_a_video_with_a_second_user_gets_a_seat_each_and_its_own_cast_of_the_scenario(tmp_path):
    transcript = TRANSCRIPT + "\nUser B: (00:00:14) Me too.\nUser A: (00:00:16) Bye."
    import_file(write(tmp_path, [{"transcript": transcript}]))

    episode = Episode.objects.get()
    assert [(seat.position, seat.character.name) for seat in episode.seats.all()] == [
        (0, "Jibo"), (1, "User A"), (2, "User B")]
    assert episode.scenario.external_id == "shrec-empathic-user-a-user-b"
    assert list(episode.turns.values_list("seat__position", flat=True)) == [0, 1, 0, 2, 1]
