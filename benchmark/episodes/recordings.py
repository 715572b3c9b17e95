"""An episode's recording: an uploaded audio or video file, checked before anything is stored, or a URL.

The rules:

- An upload's type is read from its first bytes (``sniff``): WAV (RIFF … WAVE), MP3 (an ID3 tag or
  an MPEG audio frame), Ogg, FLAC, WebM / Matroska (EBML) and MP4 / QuickTime (``ftyp``). The file
  name's extension and the type the browser claims only decide between audio and video for a
  container that holds either (Ogg, WebM, MP4); they never make a file acceptable.
- An upload over ``PARLEY_MAX_RECORDING_MB`` is refused, and so is anything that is not one of
  those containers, before a byte is written under the media root or a row is saved.
- A referenced recording is an ``http`` or ``https`` URL; the player is given it as it is, and
  the pages say it is external (Parley cannot vouch for what it serves).
- Uploaded files live under ``MEDIA_ROOT`` (private, under the var directory), which no static or
  media route serves: ``benchmark.episodes.byte_ranges`` sends them, from views that check who asks.
- An episode has one recording: attaching another replaces it, and the old file is deleted once
  the new row is committed (all or nothing: a failed save deletes the file it wrote instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse

from ..models import Episode, Recording
from .byte_ranges import serve_file

HEAD_BYTES = 64  # what ``sniff`` reads
ACCEPTED = "WAV, MP3, Ogg, FLAC, WebM/Matroska or MP4"
AUDIO_EXTENSIONS = {".m4a", ".oga", ".opus", ".weba", ".mka"}
EXTENSIONS = {
    "audio/wav": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg", "video/ogg": ".ogv", "audio/flac": ".flac",
    "audio/webm": ".weba", "video/webm": ".webm", "audio/x-matroska": ".mka", "video/x-matroska": ".mkv",
    "audio/mp4": ".m4a", "video/mp4": ".mp4", "video/quicktime": ".mov",
}


class RecordingRefused(ValueError):
    """A recording Parley will not take; the message names the file or URL and says why."""


class SizeLimit(FileUploadHandler):
    """An upload handler that stops taking a file's bytes once they pass the limit (``max_bytes``), so an
    oversized recording is not even written to a temporary file; ``refused`` then names it. Install it
    first, before the request's body is read (``views.attach_recording``)."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.refused = ""

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > max_bytes():
            self.refused = (f"{self.file_name}: over the limit of {settings.PARLEY_MAX_RECORDING_MB} MB "
                            "for a recording.")
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


@dataclass(frozen=True)
class MediaType:
    """What the first bytes of a file say it is."""

    kind: str  # Recording.Kind: audio or video
    content_type: str


def sniff(head: bytes, *, audio_hint: bool = False) -> MediaType | None:
    """The media type of a file starting with ``head`` (its first ``HEAD_BYTES``), or None when it is none of
    the accepted containers. ``audio_hint``: the name or the browser says audio, which settles a container
    that may hold either (Ogg, WebM / Matroska, MP4)."""
    either = "audio" if audio_hint else "video"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return MediaType("audio", "audio/wav")
    if head[:3] == b"ID3" or _mpeg_audio_frame(head):
        return MediaType("audio", "audio/mpeg")
    if head[:4] == b"fLaC":
        return MediaType("audio", "audio/flac")
    if head[:4] == b"OggS":
        video = b"\x80theora" in head or b"\x01video" in head
        return MediaType("video", "video/ogg") if video else MediaType("audio", "audio/ogg")
    if head[:4] == b"\x1a\x45\xdf\xa3":  # EBML: WebM or Matroska, named by its DocType
        family = "webm" if b"webm" in head else "x-matroska"
        return MediaType(either, f"{either}/{family}")
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"M4A ", b"M4B "):
            return MediaType("audio", "audio/mp4")
        if brand == b"qt  ":
            return MediaType("video", "video/quicktime")
        return MediaType(either, f"{either}/mp4")
    return None


def _mpeg_audio_frame(head: bytes) -> bool:
    """An MPEG audio frame header (an MP3 without an ID3 tag): 11 sync bits, a known version and a layer."""
    if len(head) < 2 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    version, layer = (head[1] >> 3) & 0b11, (head[1] >> 1) & 0b11
    return version != 0b01 and layer != 0b00  # 01: reserved version; layer 00 is AAC's ADTS, not MP3


def max_bytes() -> int:
    """The largest upload accepted (``PARLEY_MAX_RECORDING_MB``)."""
    return settings.PARLEY_MAX_RECORDING_MB * 1024 * 1024


def check_upload(upload: UploadedFile) -> MediaType:
    """The upload's media type; ``RecordingRefused`` when it is too large or not audio or video."""
    name = upload.name or "the file"
    if upload.size is not None and upload.size > max_bytes():
        raise RecordingRefused(
            f"{name}: {upload.size / 1024 / 1024:.1f} MB is over the limit of {settings.PARLEY_MAX_RECORDING_MB} MB "
            "for a recording."
        )
    upload.seek(0)
    head = upload.read(HEAD_BYTES)
    upload.seek(0)
    claimed = (upload.content_type or "").lower()
    audio_hint = claimed.startswith("audio/") or PurePosixPath(name.lower()).suffix in AUDIO_EXTENSIONS
    found = sniff(head, audio_hint=audio_hint)
    if found is None:
        raise RecordingRefused(
            f"{name}: not an audio or video file Parley can play (its first bytes are not {ACCEPTED}), "
            "whatever its name or the browser says."
        )
    return found


def check_url(url: str) -> str:
    """``url`` if it is an http or https address with a host; ``RecordingRefused`` otherwise."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise RecordingRefused(f"{url}: a recording's address must start with http:// or https:// and name a host.")
    return url.strip()


def attach_upload(episode: Episode, upload: UploadedFile, *, duration_s: float | None = None) -> Recording:
    """Check ``upload`` (``check_upload``), store it under the media root and make it the episode's recording."""
    media = check_upload(upload)
    recording = Recording(episode=episode, kind=media.kind, content_type=media.content_type, size=upload.size,
                          duration_s=duration_s)
    recording.file.save(f"{media.kind}{EXTENSIONS[media.content_type]}", upload, save=False)
    return _replace(episode, recording)


def attach_url(episode: Episode, url: str, *, kind: str, duration_s: float | None = None) -> Recording:
    """Make the recording at ``url`` (checked by ``check_url``) the episode's; ``kind`` audio or video."""
    if kind not in Recording.Kind.values:
        raise RecordingRefused(f"{kind!r} is not a kind of recording; use audio or video.")
    return _replace(episode, Recording(episode=episode, kind=kind, url=check_url(url), duration_s=duration_s))


def remove(episode: Episode) -> bool:
    """Delete the episode's recording (and its file, once committed); False when it had none."""
    old = Recording.objects.filter(episode=episode).first()
    if old is None:
        return False
    with transaction.atomic():
        old.delete()
        _delete_file_on_commit(old)
    return True


def _replace(episode: Episode, recording: Recording) -> Recording:
    """Save ``recording`` in place of the episode's old one, all or nothing."""
    try:
        with transaction.atomic():
            old = Recording.objects.select_for_update().filter(episode=episode).first()
            if old is not None:
                old.delete()
                _delete_file_on_commit(old)
            recording.save()
    except Exception:
        if recording.file:
            recording.file.delete(save=False)
        raise
    return recording


def _delete_file_on_commit(recording: Recording) -> None:
    if recording.file:
        storage, name = recording.file.storage, recording.file.name
        transaction.on_commit(lambda: storage.delete(name))


def serve(request: HttpRequest, recording: Recording | None) -> HttpResponse:
    """The uploaded file of ``recording``, with Range support; 404 when there is no file to send (none
    uploaded, a referenced URL, or a file gone from disk). Who may ask is the calling view's check."""
    if recording is None or not recording.file:
        raise Http404("This episode has no uploaded recording.")
    try:
        path = Path(recording.file.path)
    except NotImplementedError:  # a storage without local paths
        raise Http404("The recording is not stored on this server.") from None
    if not path.is_file():
        raise Http404("The recording's file is gone; attach it again.")
    return serve_file(request, path, recording.content_type or "application/octet-stream")
