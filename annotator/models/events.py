from django.conf import settings
from django.db import models


class StudyEvent(models.Model):
    """One change to a study, with who made it and when (its log): settings edited, paused, an annotator removed...

    ``action`` is a short slug (``annotator.lifecycle`` names them); ``detail`` says it in a sentence for the page.
    """

    study = models.ForeignKey("Study", on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="Who made the change; empty for Parley itself (e.g. a check that paused an annotator).",
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The annotator the change was about, if any.",
    )
    action = models.CharField(max_length=40)
    detail = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "-at", "-pk"]
        indexes = [models.Index(fields=["study", "at"])]

    def __str__(self) -> str:
        return f"{self.study}: {self.action}"
