from django.conf import settings
from django.db import models
from django.utils import timezone

from .teams import OwnedQuerySet


class ImportJob(models.Model):
    """Files uploaded on the import page, checked by a dry run and then imported, each step a task on the queue.

    The files wait under ``VAR_DIR/imports/<id>/`` until the import is over (or a day has passed);
    this row says where the job stands and keeps, per file, what the dry run or the import did
    (``results``) and the located problem that stopped it (``error``, about file ``failed_file``).
    ``queue_job`` is the queue's job of the step under way, whose status tells a step still waiting
    for a consumer from one that has lost it. How far the task has got inside a file is in the queue's
    key-value store (``benchmark.import_jobs.progress_store``), since the task's open transaction
    would hide it from every other reader if it were written here.
    """

    class Status(models.TextChoices):
        CHECKING = "checking", "dry run under way"
        CHECKED = "checked", "checked, ready to import"
        REFUSED = "refused", "refused by the dry run"
        IMPORTING = "importing", "importing"
        IMPORTED = "imported", "imported"
        FAILED = "failed", "stopped by a bad file"
        EXPIRED = "expired", "expired, not imported"

    team = models.ForeignKey("Team", on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="import_jobs"
    )
    format = models.CharField(max_length=30, default="auto", help_text="'auto', or the format every file is in.")
    file_names = models.JSONField(default=list, help_text="The uploaded files' names, in the order they import.")
    size = models.PositiveBigIntegerField(default=0, help_text="Bytes uploaded, all files together.")
    status = models.CharField(max_length=20, choices=Status, default=Status.CHECKING)
    results = models.JSONField(default=list, help_text="Per file done: its format, summary parts and notes.")
    error = models.TextField(blank=True, help_text="The problem that stopped the job, as the command line words it.")
    failed_file = models.PositiveIntegerField(null=True, blank=True, help_text="Position of the file that failed.")
    queue_job = models.ForeignKey(
        "Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The queue's job of the latest step (the dry run or the import).",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"import {self.pk} ({', '.join(self.file_names)})"

    @property
    def working(self) -> bool:
        """The dry run or the import is queued or under way."""
        return self.status in {self.Status.CHECKING, self.Status.IMPORTING}

    @property
    def dry_run(self) -> bool:
        return self.status in {self.Status.CHECKING, self.Status.CHECKED, self.Status.REFUSED, self.Status.EXPIRED}
