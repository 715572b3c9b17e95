"""An episode's recording: what an upload must be, where it is kept, who may hear it, and byte ranges."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from annotator.models import Assignment
from benchmark.episodes import recordings
from benchmark.episodes.byte_ranges import FileSliceResponse, Unsatisfiable, requested_range
from benchmark.episodes.turn_times import turns_overlapping
from benchmark.instruments.presets import install_preset
from benchmark.models import Recording
from tests.annotator.builders import make_study
from tests.builders import make_episode, make_researcher, make_scenario, make_team, make_user
from tests.recordings import wav_bytes

pytestmark = pytest.mark.django_db

WAV = wav_bytes(0.5)
MP3_TAGGED = b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(60)
MP3_FRAME = b"\xff\xfb\x90\x64" + bytes(60)
OGG_AUDIO = b"OggS\x00\x02" + bytes(22) + b"\x01vorbis" + bytes(30)
OGG_VIDEO = b"OggS\x00\x02" + bytes(22) + b"\x80theora" + bytes(30)
WEBM = b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm" + bytes(40)
MKV = b"\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\x82\x88matroska" + bytes(40)
MP4 = b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00" + bytes(48)
M4A = b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00" + bytes(48)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(56)
ADTS_AAC = b"\xff\xf1\x50\x80" + bytes(60)


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STATIC_ROOT = tmp_path / "static"
    return settings.MEDIA_ROOT


@pytest.fixture
def world():
    team = make_team(name="Lab", slug="lab")
    researcher = make_researcher(team, username="rita")
    outsider = make_researcher(make_team(name="Other", slug="other"), username="otto")
    episode = make_episode(scenario=make_scenario(team=team), turns=4)
    return {"team": team, "researcher": researcher, "outsider": outsider, "episode": episode}


def upload(name: str, content: bytes, content_type: str = "application/octet-stream") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type=content_type)


def files_under(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


# What a file is, by its first bytes


@pytest.mark.parametrize(("head", "kind", "content_type"), [
    (WAV[:64], "audio", "audio/wav"),
    (MP3_TAGGED, "audio", "audio/mpeg"),
    (MP3_FRAME, "audio", "audio/mpeg"),
    (b"fLaC" + bytes(60), "audio", "audio/flac"),
    (OGG_AUDIO, "audio", "audio/ogg"),
    (OGG_VIDEO, "video", "video/ogg"),
    (WEBM, "video", "video/webm"),
    (MKV, "video", "video/x-matroska"),
    (MP4, "video", "video/mp4"),
    (M4A, "audio", "audio/mp4"),
])
def test_sniff_reads_the_container_from_the_first_bytes(head, kind, content_type):
    assert recordings.sniff(head) == recordings.MediaType(kind, content_type)


@pytest.mark.parametrize("head", [PNG, ADTS_AAC, b"<html><body>hi</body></html>", b"", b"RIFF\x00\x00\x00\x00AVI LIST"])
def test_sniff_refuses_what_is_not_audio_or_video(head):
    assert recordings.sniff(head) is None


def test_an_audio_hint_settles_a_container_that_holds_either():
    assert recordings.sniff(WEBM, audio_hint=True) == recordings.MediaType("audio", "audio/webm")


def test_a_file_named_and_claimed_as_wav_is_refused_by_its_bytes(world, private_media):
    with pytest.raises(recordings.RecordingRefused, match="talk.wav: not an audio or video file"):
        recordings.attach_upload(world["episode"], upload("talk.wav", PNG, "audio/wav"))
    assert not Recording.objects.exists() and files_under(private_media) == []


def test_an_upload_over_the_limit_is_refused_before_anything_is_stored(world, settings, private_media):
    settings.PARLEY_MAX_RECORDING_MB = 1
    big = WAV + bytes(1024 * 1024)
    with pytest.raises(recordings.RecordingRefused, match=r"big.wav: 1\.\d MB is over the limit of 1 MB"):
        recordings.attach_upload(world["episode"], upload("big.wav", big, "audio/wav"))
    assert not Recording.objects.exists() and files_under(private_media) == []


@pytest.mark.parametrize("url", ["ftp://example.org/a.mp3", "javascript:alert(1)", "file:///etc/passwd", "https://"])
def test_only_http_and_https_addresses_are_taken(world, url):
    with pytest.raises(recordings.RecordingRefused, match="must start with http:// or https://"):
        recordings.attach_url(world["episode"], url, kind="audio")
    assert not Recording.objects.exists()


def test_an_upload_is_kept_under_the_private_media_root_and_replaces_the_old_one(world, private_media,
                                                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = recordings.attach_upload(world["episode"], upload("a.mp3", MP3_TAGGED))
    with django_capture_on_commit_callbacks(execute=True):
        second = recordings.attach_upload(world["episode"], upload("b.wav", WAV, "audio/wav"))

    assert Recording.objects.get(episode=world["episode"]).pk == second.pk
    assert (second.kind, second.content_type, second.size) == ("audio", "audio/wav", len(WAV))
    stored = files_under(private_media)
    assert stored == [Path(second.file.path)] and stored[0].read_bytes() == WAV
    assert not Path(first.file.path).exists()


# The episode page's form


def test_a_researcher_attaches_a_wav_on_the_episode_page(client, world):
    client.force_login(world["researcher"])
    response = client.post(reverse("benchmark:episode-recording-attach", args=[world["episode"].pk]),
                           {"file": upload("session.wav", WAV, "audio/wav")}, follow=True)

    assert "The audio recording is attached" in response.text
    assert Recording.objects.get(episode=world["episode"]).content_type == "audio/wav"
    assert reverse("benchmark:episode-recording", args=[world["episode"].pk]) in response.text


def test_the_episode_page_shows_each_turns_time_in_the_recording(client, world):
    world["episode"].turns.filter(index=1).update(start_s=2.5, end_s=6.0)
    client.force_login(world["researcher"])
    page = client.get(reverse("benchmark:episode", args=[world["episode"].pk])).text
    assert "2.5–6.0 s</span>" in page


def test_the_episode_page_refuses_a_disguised_file_with_its_name(client, world, private_media):
    client.force_login(world["researcher"])
    response = client.post(reverse("benchmark:episode-recording-attach", args=[world["episode"].pk]),
                           {"file": upload("movie.mp4", b"#!/bin/sh\necho hi\n" * 4, "video/mp4")}, follow=True)

    assert "Not attached: movie.mp4: not an audio or video file" in response.text
    assert not Recording.objects.exists() and files_under(private_media) == []


def test_the_episode_page_refuses_an_upload_announced_over_the_limit_unread(client, world, settings):
    settings.PARLEY_MAX_RECORDING_MB = 1
    client.force_login(world["researcher"])
    response = client.post(reverse("benchmark:episode-recording-attach", args=[world["episode"].pk]),
                           {"file": upload("long.wav", WAV + bytes(2 * 1024 * 1024), "audio/wav")}, follow=True)

    assert "over the limit of 1 MB" in response.text
    assert not Recording.objects.exists()


def test_an_upload_that_passes_the_limit_as_it_is_read_is_stopped_there(client, world, settings):
    settings.PARLEY_MAX_RECORDING_MB = 1
    client.force_login(world["researcher"])
    # 30 KB over the limit: under the announced-length check's margin, so the handler must stop it.
    response = client.post(reverse("benchmark:episode-recording-attach", args=[world["episode"].pk]),
                           {"file": upload("long.wav", WAV + bytes(1024 * 1024 + 30_000 - len(WAV)), "audio/wav")},
                           follow=True)

    # The upload handler's words (the announced-length check says "the upload is over the limit").
    assert "Not attached: long.wav: over the limit of 1 MB for a recording." in response.text
    assert not Recording.objects.exists()


def test_attaching_still_needs_the_csrf_token(world):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(world["researcher"])
    response = browser.post(reverse("benchmark:episode-recording-attach", args=[world["episode"].pk]),
                            {"file": upload("a.wav", WAV, "audio/wav")})
    assert response.status_code == 403 and not Recording.objects.exists()


def test_a_referenced_recording_is_played_from_its_address_and_said_to_be_external(client, world):
    client.force_login(world["researcher"])
    client.post(reverse("benchmark:episode-recording-attach", args=[world["episode"].pk]),
                {"url": "https://media.example.org/session-4.mp4", "kind": "video"})

    page = client.get(reverse("benchmark:episode", args=[world["episode"].pk])).text
    assert '<video controls preload="metadata" src="https://media.example.org/session-4.mp4"' in page
    assert "External recording" in page


def test_removing_the_recording_deletes_its_file(client, world, private_media, django_capture_on_commit_callbacks):
    recordings.attach_upload(world["episode"], upload("a.wav", WAV, "audio/wav"))
    client.force_login(world["researcher"])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("benchmark:episode-recording-remove", args=[world["episode"].pk]))
    assert not Recording.objects.exists() and files_under(private_media) == []


# Who may hear it


@pytest.fixture
def heard(world):
    """The episode with an uploaded recording, in a study where annotator "ann" holds it and "bea" another item."""
    recordings.attach_upload(world["episode"], upload("a.wav", WAV, "audio/wav"))
    other = make_episode(scenario=world["episode"].scenario, turns=2)
    ann, bea = make_user(username="ann"), make_user(username="bea")
    study = make_study(team=world["team"], instrument=install_preset("shrec-spans"), items=[world["episode"], other],
                       annotators=[ann, bea])
    items = {item.episode_id: item for item in study.items.all()}
    now = timezone.now()
    own = Assignment.objects.create(item=items[world["episode"].pk], annotator=ann, claimed_at=now,
                                    lease_expires_at=now + timedelta(hours=1))
    elsewhere = Assignment.objects.create(item=items[other.pk], annotator=bea, claimed_at=now,
                                          lease_expires_at=now + timedelta(hours=1))
    return {**world, "ann": ann, "bea": bea, "own": own, "elsewhere": elsewhere}


def researcher_url(world):
    return reverse("benchmark:episode-recording", args=[world["episode"].pk])


def test_the_teams_researcher_hears_it_whole_and_by_range(client, heard):
    client.force_login(heard["researcher"])

    whole = client.get(researcher_url(heard))
    piece = client.get(researcher_url(heard), headers={"Range": "bytes=0-99"})

    assert whole.status_code == 200 and b"".join(whole.streaming_content) == WAV
    assert whole["Accept-Ranges"] == "bytes" and whole["Content-Type"] == "audio/wav"
    assert piece.status_code == 206 and b"".join(piece.streaming_content) == WAV[:100]
    assert piece["Content-Range"] == f"bytes 0-99/{len(WAV)}" and piece["Content-Length"] == "100"


def test_another_teams_researcher_gets_404(client, heard):
    client.force_login(heard["outsider"])
    assert client.get(researcher_url(heard)).status_code == 404


def test_anonymous_is_sent_to_log_in(client, heard):
    for url in (researcher_url(heard), reverse("annotator:recording", args=[heard["own"].pk])):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_the_annotator_holding_the_item_hears_it_through_the_assignment(client, heard):
    client.force_login(heard["ann"])
    response = client.get(reverse("annotator:recording", args=[heard["own"].pk]), headers={"Range": "bytes=44-"})
    assert response.status_code == 206 and b"".join(response.streaming_content) == WAV[44:]


def test_an_annotator_without_the_item_gets_404(client, heard):
    client.force_login(heard["bea"])
    assert client.get(reverse("annotator:recording", args=[heard["own"].pk])).status_code == 404
    # Her own item's episode has no recording: nothing to hear there either.
    assert client.get(reverse("annotator:recording", args=[heard["elsewhere"].pk])).status_code == 404


def test_an_annotator_cannot_use_the_researchers_address(client, heard):
    client.force_login(heard["ann"])
    assert client.get(researcher_url(heard)).status_code == 403


def test_a_released_claim_hears_it_no_more(client, heard):
    Assignment.objects.filter(pk=heard["own"].pk).update(status=Assignment.Status.RELEASED)
    client.force_login(heard["ann"])
    assert client.get(reverse("annotator:recording", args=[heard["own"].pk])).status_code == 404


def test_a_submitted_item_is_heard_again_on_rereading(client, heard):
    Assignment.objects.filter(pk=heard["own"].pk).update(status=Assignment.Status.SUBMITTED,
                                                         submitted_at=heard["own"].claimed_at)
    client.force_login(heard["ann"])
    assert client.get(reverse("annotator:recording", args=[heard["own"].pk])).status_code == 200


def test_a_referenced_recording_is_not_served_by_parley(client, world):
    recordings.attach_url(world["episode"], "https://media.example.org/a.mp3", kind="audio")
    client.force_login(world["researcher"])
    assert client.get(researcher_url(world)).status_code == 404


# Byte ranges


@pytest.mark.parametrize(("header", "expected"), [
    ("bytes=0-9", (0, 9)),
    ("bytes=10-", (10, 99)),
    ("bytes=-10", (90, 99)),
    ("bytes=-500", (0, 99)),
    ("bytes=90-500", (90, 99)),
    ("BYTES = 5 - 6", (5, 6)),
    ("bytes=0-1,5-6", None),  # several ranges: sent whole
    ("items=0-9", None),
    ("bytes=9-2", None),
    ("bytes=-", None),
    ("nonsense", None),
    ("", None),
])
def test_requested_range(header, expected):
    assert requested_range(header, 100) == expected


@pytest.mark.parametrize(("header", "size"), [("bytes=100-", 100), ("bytes=-0", 100), ("bytes=0-", 0)])
def test_a_range_outside_the_file_is_unsatisfiable(header, size):
    with pytest.raises(Unsatisfiable):
        requested_range(header, size)


def test_an_unsatisfiable_range_answers_416_with_the_size(client, heard):
    client.force_login(heard["researcher"])
    response = client.get(researcher_url(heard), headers={"Range": f"bytes={len(WAV)}-"})
    assert response.status_code == 416 and response["Content-Range"] == f"bytes */{len(WAV)}"


def test_if_range_of_another_version_sends_the_whole_file(client, heard):
    client.force_login(heard["researcher"])
    etag = client.get(researcher_url(heard))["ETag"]

    same = client.get(researcher_url(heard), headers={"Range": "bytes=0-9", "If-Range": etag})
    changed = client.get(researcher_url(heard), headers={"Range": "bytes=0-9", "If-Range": '"stale"'})

    assert same.status_code == 206
    assert changed.status_code == 200 and b"".join(changed.streaming_content) == WAV


def test_a_head_request_has_the_headers_and_no_body(client, heard):
    client.force_login(heard["researcher"])
    response = client.head(researcher_url(heard), headers={"Range": "bytes=0-9"})
    assert response.status_code == 206 and response["Content-Length"] == "10"


def test_under_asgi_the_slice_is_read_in_blocks_on_a_thread(tmp_path, monkeypatch):
    path = tmp_path / "big.bin"
    content = bytes(range(256)) * 4000  # about 1 MB, four blocks
    path.write_bytes(content)
    monkeypatch.setattr("benchmark.episodes.byte_ranges.BLOCK", 300_000)

    async def read() -> list[bytes]:
        return [block async for block in FileSliceResponse(path, 1000, 900_000)]

    blocks = asyncio.run(read())
    assert [len(block) for block in blocks] == [300_000, 300_000, 300_000]
    assert b"".join(blocks) == content[1000:901_000]


# Which turns a stretch of the recording covers


TIMES = [(0, 0.0, 2.0), (1, 2.5, 6.0), (2, 6.0, None), (3, 9.0, 11.0)]


@pytest.mark.parametrize(("first", "last", "expected"), [
    (1.0, 3.0, (0, 1)),
    (2.0, 2.5, None),  # in the pause: the turn before
    (6.0, 7.0, (2, 2)),  # a turn without an end lasts until the next starts
    (5.0, 9.5, (1, 3)),
    (4.0, 4.0, (1, 1)),  # a moment
    (12.0, 13.0, (3, 3)),  # after the last turn: the last
])
def test_turns_overlapping(first, last, expected):
    assert turns_overlapping(TIMES, first, last) == (expected or (0, 0))


def test_turns_overlapping_without_times_is_none():
    assert turns_overlapping([(0, None, None)], 1.0, 2.0) is None
