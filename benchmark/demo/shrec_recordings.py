"""The demo's SHREC recordings: a synthetic file imported as SHREC's are, each episode with an audio track.

``install_shrec_recordings(team)`` writes the demo's synthetic SHREC file (``shrec.py``: eight short
talks of a companion robot, three subsets, two or three annotators each), imports it through the same
path as ``import_episodes --format shrec FILE`` (one episode per recording, tagged ``demo-shrec``; the
annotator app turns the annotations into its imported SHREC study) and gives each episode its
``Recording``: a stand-in audio file whose tone follows the turns (``shrec_audio.py``), stored under
the private media root, so the annotation page's player has something to play.

Everything is found again: the import leaves an imported file's episodes unchanged, and an episode
whose recording already has a file keeps it, so running this twice changes nothing.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile

from ..episodes.recordings import attach_upload
from ..importing import import_file
from ..importing.import_result import ImportResult
from ..models import Episode, Recording, Team
from .shrec import AGENT, SyntheticVideo, synthetic_videos, write_shrec_csv
from .shrec_audio import turn_tones

TAG = "demo-shrec"
VIDEOS = 8
SEED = 0
FILE_NAME = "shrec-demo.csv"


@dataclass
class DemoRecordings:
    episodes: list[Episode]  # in the file's order
    imported: ImportResult
    attached: int  # audio files stored by this call


def demo_videos() -> list[SyntheticVideo]:
    return synthetic_videos(VIDEOS, seed=SEED)


def install_shrec_recordings(team: Team) -> DemoRecordings:
    """Import the demo's SHREC file into ``team`` (once) and give each episode its audio track (once)."""
    videos = demo_videos()
    with tempfile.TemporaryDirectory(prefix="parley-shrec-demo-") as folder:
        imported = import_file(write_shrec_csv(Path(folder) / FILE_NAME, videos), team=team, format="shrec", tag=TAG)
    names = [video.file_name for video in videos]
    by_id = {episode.external_id: episode for episode in Episode.objects.of_team(team).filter(external_id__in=names)}
    episodes = [by_id[video.file_name] for video in videos]
    attached = sum(attach_audio(episode, video) for episode, video in zip(episodes, videos, strict=True))
    return DemoRecordings(episodes, imported, attached)


def attach_audio(episode: Episode, video: SyntheticVideo) -> bool:
    """Store ``video``'s audio track as ``episode``'s recording, unless it has a file already; whether it stored one.

    The track goes through the same checks and storage as a researcher's upload (``attach_upload``), and takes the
    place of the recording the import made to reference the video's frames (the demo has none)."""
    recording = Recording.objects.filter(episode=episode).first()
    if recording is not None and recording.file:
        return False
    data = turn_tones(
        [(turn.start_s, turn.end_s, turn.speaker == AGENT) for turn in video.turns], video.duration_s
    )
    upload = SimpleUploadedFile(f"{video.file_name}.wav", data, content_type="audio/wav")
    attach_upload(episode, upload, duration_s=round(video.duration_s, 3))
    return True
