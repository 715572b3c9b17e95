from django.conf import settings
from django.db import models
from django.db.models import Q


class ReportBundle(models.Model):
    """A study's report bundle (a ZIP under ``reports/`` in the queue's shared directory) built in the background.

    Large studies take too long to bundle during a request, so a task on the queue builds the file
    and this row tracks it: the page polls the row, and a restart of the web process loses nothing
    (``annotator.reports.bundles``). ``annotations`` and ``last_submitted_at`` record the data the bundle was
    built from, so the page can tell a bundle that new submissions have overtaken.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "waiting to start"
        RUNNING = "running", "being prepared"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    study = models.ForeignKey("Study", on_delete=models.CASCADE, related_name="report_bundles")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status, default=Status.PENDING)
    annotations = models.PositiveIntegerField(default=0, help_text="Submitted annotations the bundle was built from.")
    last_submitted_at = models.DateTimeField(null=True, blank=True)
    file_name = models.CharField(max_length=200, blank=True, help_text="The ZIP's name under VAR_DIR/reports.")
    size = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["study", "status"])]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="ready") | ~Q(file_name=""), name="report_bundle_ready_has_file"
            ),
        ]

    def __str__(self) -> str:
        return f"report bundle of {self.study} ({self.status})"
