from django.conf import settings
from django.db import models
from django.db.models import Q


class CrowdWorker(models.Model):
    """An annotator who came from a crowd platform's link: no account of their own, bound to one browser.

    ``user`` is an account made for them (no usable password) that the link's session signs in; the
    browser keeps a random token whose SHA-256 is ``browser_token``, so another browser with the same
    participant id cannot take over (as ``chat.Participant`` does for chat participants).
    """

    study = models.ForeignKey("Study", on_delete=models.CASCADE, related_name="crowd_workers")
    participant_id = models.CharField(max_length=100, help_text="The platform's id, e.g. PROLIFIC_PID.")
    platform_study_id = models.CharField(max_length=100, blank=True)
    platform_session_id = models.CharField(max_length=100, blank=True)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_worker")
    browser_token = models.CharField(max_length=64, help_text="SHA-256 (hex) of the browser's token.")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When the completion code was shown.")
    screened_out_at = models.DateTimeField(null=True, blank=True, help_text="When the screen-out code was shown.")

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "participant_id"], name="crowd_worker_once_per_study"),
            models.CheckConstraint(condition=~Q(participant_id=""), name="crowd_worker_id_not_empty"),
        ]

    def __str__(self) -> str:
        return f"crowd {self.participant_id} in {self.study}"
