"""The synthetic SHREC recordings: the released file format, seeded, annotators who pair and sometimes
disagree, and a stand-in audio track whose sound follows the turns."""

import ast
import csv
import io
import re
import wave

import numpy as np

from benchmark.demo.shrec import (
    AGENT,
    ANNOTATOR_COLUMNS,
    ATTRIBUTE_KEYS,
    COLUMNS,
    SPELLINGS,
    SUBSETS,
    shrec_csv,
    synthetic_videos,
    transcript,
)
from benchmark.demo.shrec_audio import RATE, SILENCE, turn_tones
from benchmark.demo.shrec_lines import COMPETENCIES, ERRORS

WORD_LINE = re.compile(r"^(\(\d\d:\d\d:\d\d\) \S+)( \(\d\d:\d\d:\d\d\) \S+)*$")


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_seed_gives_the_same_file_and_another_seed_another():
    assert shrec_csv(synthetic_videos(5, seed=3)) == shrec_csv(synthetic_videos(5, seed=3))
    assert shrec_csv(synthetic_videos(5, seed=3)) != shrec_csv(synthetic_videos(5, seed=4))


def test_the_file_has_shrecs_columns_and_python_literal_annotations():
    parsed = rows(shrec_csv(synthetic_videos(6, seed=0)))

    assert list(parsed[0]) == list(COLUMNS)
    assert [row["source"] for row in parsed] == [*SUBSETS, *SUBSETS]
    assert len({row["file_name"] for row in parsed}) == 6
    for row in parsed:
        assert float(row["framerate"]) == 1.0
        for column in ANNOTATOR_COLUMNS:
            for mark in ast.literal_eval(row[column]):
                assert set(mark) == {"timestamp", "error", "source", "attribute", "rationale", "correction"}
                assert set(mark["timestamp"]) == {"start", "end"}
                assert set(mark["source"]) == {"Verbal", "Non-Verbal"} and any(mark["source"].values())
                assert list(mark["attribute"]) == list(SPELLINGS[column]) and any(mark["attribute"].values())
                assert mark["rationale"]
                assert bool(mark["correction"]) == mark["error"]  # a competency has no correction


def test_the_transcript_alternates_speaker_lines_and_timed_words():
    video = synthetic_videos(1, seed=0)[0]
    lines = transcript(video).split("\n")

    assert lines[0] == "AI Agent:" and lines[2] == "User A:"
    assert lines[0::2] == [f"{turn.speaker}:" for turn in video.turns]
    assert all(WORD_LINE.match(line) for line in lines[1::2])
    seconds = [int(clock[-2:]) + 60 * int(clock[-5:-3]) for clock in re.findall(r"\d\d:\d\d:\d\d", transcript(video))]
    assert seconds == sorted(seconds)  # words in time order


def test_spellings_of_the_attributes_differ_between_annotators_as_in_the_released_files():
    assert "Social Context &  Relationships" in SPELLINGS["Annotations_A"]  # two spaces
    assert "Recognizing Social Norms including toxicity" in SPELLINGS["Annotations_B"]
    assert all(len(spellings) == len(ATTRIBUTE_KEYS) for spellings in SPELLINGS.values())


def test_every_mark_lies_inside_its_recording_and_starts_before_it_ends():
    for video in synthetic_videos(30, seed=1, exchanges=8, labelled=5):
        for column in ANNOTATOR_COLUMNS:
            for mark in video.annotations[column]:
                start, end = mark["timestamp"]["start"], mark["timestamp"]["end"]
                assert 0 <= start < end <= video.turns[-1].end_s


def test_two_annotators_pair_mostly_agree_and_sometimes_disagree_or_miss():
    videos = synthetic_videos(60, seed=2)
    paired = agreed = a_marks = 0
    for video in videos:
        first, second = video.annotations["Annotations_A"], video.annotations["Annotations_B"]
        a_marks += len(first)
        for mark in first:
            near = [b for b in second if abs(b["timestamp"]["start"] - mark["timestamp"]["start"]) < 3]
            paired += bool(near)
            agreed += any(b["error"] == mark["error"] for b in near)
    assert 0.75 < paired / a_marks < 0.97  # B misses some exchanges
    assert 0.85 < agreed / paired < 1  # and labels some the other way
    assert all(video.annotations["Annotations_A"] for video in videos)
    assert [bool(video.annotations["Annotations_C"]) for video in videos[:6]] == [False, False, True] * 2


def test_a_large_imperfect_set_has_gaps_like_the_released_data():
    videos = synthetic_videos(70, seed=5, exchanges=12, labelled=8, imperfect=True, empty_first_every=7)
    marks = [mark for video in videos for column in ANNOTATOR_COLUMNS for mark in video.annotations[column]]

    assert sum(not video.annotations["Annotations_A"] for video in videos) == 10
    assert all(video.annotations["Annotations_C"] for video in videos if not video.annotations["Annotations_A"])
    assert any(None in mark["timestamp"].values() for mark in marks)
    assert any(mark["error"] and not mark["correction"] for mark in marks)


def test_a_small_set_uses_each_line_once_with_as_many_errors_as_competencies():
    exchanges = [exchange for video in synthetic_videos(8, seed=0) for exchange in video.exchanges]
    labelled = [exchange for exchange in exchanges if exchange.kind != "plain"]

    assert len(set(labelled)) == len(labelled)
    assert sum(exchange in ERRORS for exchange in labelled) == sum(exchange in COMPETENCIES for exchange in labelled)


def test_the_audio_hums_during_each_turn_and_is_silent_between_and_small():
    video = synthetic_videos(1, seed=0)[0]
    turns = [(turn.start_s, turn.end_s, turn.speaker == AGENT) for turn in video.turns]

    data = turn_tones(turns, video.duration_s)

    with wave.open(io.BytesIO(data)) as track:
        assert (track.getnchannels(), track.getsampwidth(), track.getframerate()) == (1, 1, RATE)
        assert track.getnframes() == round(video.duration_s * RATE)
        samples = np.frombuffer(track.readframes(track.getnframes()), dtype=np.uint8).astype(int) - SILENCE
    assert len(data) < 200_000
    for (start, end, _), following in zip(turns, turns[1:], strict=False):
        speech = samples[int(start * RATE) : int(end * RATE)]
        assert np.abs(speech).max() > 20
        pause = samples[int(end * RATE) + 1 : int(following[0] * RATE)]
        assert np.abs(pause).max(initial=0) == 0
