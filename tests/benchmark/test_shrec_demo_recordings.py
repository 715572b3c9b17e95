"""The demo's SHREC recordings: the synthetic file imported as SHREC's are, each episode with its audio track."""

import io
import wave

import numpy as np
import pytest

from annotator.external_spans import shrec_study
from annotator.models import ExternalAnnotator, Span
from benchmark.demo.shrec_audio import RATE, SILENCE
from benchmark.demo.shrec_recordings import TAG, VIDEOS, install_shrec_recordings
from benchmark.models import Recording, Turn
from tests.builders import default_team

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def samples(recording: Recording) -> np.ndarray:
    with recording.file.open("rb") as stored, wave.open(io.BytesIO(stored.read())) as track:
        assert (track.getnchannels(), track.getsampwidth(), track.getframerate()) == (1, 1, RATE)
        return np.frombuffer(track.readframes(track.getnframes()), dtype=np.uint8).astype(int) - SILENCE


def test_the_demo_recordings_are_imported_with_their_annotators_spans_in_a_shrec_study():
    team = default_team()

    demo = install_shrec_recordings(team)

    assert len(demo.episodes) == VIDEOS == 8 and demo.attached == 8
    assert {episode.tag for episode in demo.episodes} == {TAG}
    assert [episode.settings["shrec"]["source"] for episode in demo.episodes[:3]] == [
        "empathic", "wellness-dorm", "wellness-home"]
    study = shrec_study(team, TAG)
    assert study.items.count() == 8
    assert list(ExternalAnnotator.objects.filter(study=study).order_by("number").values_list("number", flat=True)) == [
        1, 2, 3]
    spans = Span.objects.filter(annotation__assignment__item__study=study)
    assert spans.count() > 40 and not spans.filter(start_s__isnull=True).exists()
    assert set(spans.values_list("label", flat=True)) == {"error", "competency"}


def test_each_episode_gets_an_audio_track_that_sounds_while_its_turns_are_spoken(media_root):
    demo = install_shrec_recordings(default_team())

    for episode in demo.episodes:
        recording = Recording.objects.get(episode=episode)
        assert (recording.kind, recording.content_type, recording.url) == ("audio", "audio/wav", "")
        assert recording.file.name.startswith(f"recordings/{episode.team_id}/{episode.pk}/")
        assert (media_root / recording.file.name).is_file() and recording.size < 220_000
        sound = samples(recording)
        assert len(sound) / RATE == pytest.approx(recording.duration_s, abs=0.01)
        turns = list(Turn.objects.filter(episode=episode).order_by("index"))
        assert len(sound) / RATE > turns[-1].end_s
        for turn in turns:  # the imported turn times (first and last word) fall where the track hums
            for second in (turn.start_s + 0.3, turn.end_s + 0.3):
                assert np.abs(sound[int(second * RATE) - 200 : int(second * RATE) + 200]).max() > 10


def test_installing_again_imports_nothing_and_keeps_the_stored_tracks():
    team = default_team()
    first = install_shrec_recordings(team)
    names = list(Recording.objects.order_by("pk").values_list("file", flat=True))

    again = install_shrec_recordings(team)

    assert again.attached == 0 and sum(again.imported.created.values()) == 0
    assert again.imported.unchanged["episode"] == 8
    assert [episode.pk for episode in again.episodes] == [episode.pk for episode in first.episodes]
    assert list(Recording.objects.order_by("pk").values_list("file", flat=True)) == names
