from django.db import models
from django.db.models import Q

from .teams import OwnedQuerySet


def recording_path(recording: "Recording", filename: str) -> str:
    """Where an uploaded recording is stored, under the private media root (never served as static)."""
    return f"recordings/{recording.episode.team_id}/{recording.episode_id}/{filename}"


class RecordingQuerySet(OwnedQuerySet):
    team_path = "episode__team"


class Recording(models.Model):
    """The audio or video an episode was transcribed from (SHREC's sessions; a recorded chat).

    The file is uploaded (``file``, stored under the private media root and served only through a
    view that checks who may see the episode) or referenced (``url``), never both. ``frames`` names
    where still frames of the video are kept (a folder or URL prefix, as SHREC releases them at
    ``framerate`` per second): referenced, not copied. Turn times (``Turn.start_s``, ``end_s``) are
    seconds from the start of this recording.
    """

    class Kind(models.TextChoices):
        AUDIO = "audio", "audio"
        VIDEO = "video", "video"

    episode = models.OneToOneField("Episode", on_delete=models.CASCADE, related_name="recording")
    kind = models.CharField(max_length=10, choices=Kind)
    file = models.FileField(upload_to=recording_path, blank=True, max_length=300)
    url = models.URLField(max_length=500, blank=True, help_text="Where the recording is, when it is not uploaded.")
    content_type = models.CharField(max_length=100, blank=True, help_text="The file's media type, e.g. video/mp4.")
    size = models.PositiveBigIntegerField(null=True, blank=True, help_text="Bytes, for an uploaded file.")
    duration_s = models.FloatField(null=True, blank=True, help_text="Length in seconds, when known.")
    frames = models.CharField(
        max_length=500, blank=True, help_text="Where the recording's still frames are kept (referenced, not copied)."
    )
    framerate = models.FloatField(null=True, blank=True, help_text="Stored frames per second.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RecordingQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(file="") | Q(url=""), name="recording_file_or_url"),
            models.CheckConstraint(
                condition=Q(duration_s__isnull=True) | Q(duration_s__gte=0), name="recording_duration_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(framerate__isnull=True) | Q(framerate__gt=0), name="recording_framerate_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of {self.episode}"
