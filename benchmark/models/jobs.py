from django.conf import settings
from django.db import models
from django.utils import timezone

from .teams import OwnedQuerySet


class Job(models.Model):
    """One piece of long work handed to the task queue: which task, for which team, and how it went.

    ``benchmark.jobs.enqueue`` writes the row and puts the task on the queue under the row's
    ``task_id``; the queue's signals keep ``status``, ``attempts``, ``error`` and the times current
    from whichever consumer runs it. What the work is about (a run, an import, a report bundle)
    keeps its own progress on its own row; this one is what the jobs page lists, and what a retry
    puts on the queue again. Upkeep that belongs to no team has ``team`` empty.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        RETRYING = "retrying", "failed, will retry"
        FINISHED = "finished", "finished"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    team = models.ForeignKey("Team", on_delete=models.CASCADE, null=True, blank=True, related_name="jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs"
    )
    task = models.CharField(max_length=100, help_text="The queue's name for the task.")
    task_id = models.CharField(max_length=64, unique=True, help_text="The queue's id of this piece of work.")
    arguments = models.JSONField(default=list, help_text="The task's arguments (ids only).")
    label = models.CharField(max_length=200, help_text="What the work is, as the jobs page says it.")
    link = models.CharField(max_length=300, blank=True, help_text="The page of what the work is about.")
    status = models.CharField(max_length=20, choices=Status, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0, help_text="How many times a consumer has started it.")
    error = models.TextField(blank=True, help_text="The last error, as the task raised it.")
    worker = models.CharField(max_length=200, blank=True, help_text="Host and process that last ran it.")
    retried_as = models.OneToOneField(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="retry_of",
        help_text="The job that queued this failed one's task again.",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["team", "status"], name="job_team_status")]

    def __str__(self) -> str:
        return self.label

    @property
    def done(self) -> bool:
        return self.status in {self.Status.FINISHED, self.Status.FAILED, self.Status.CANCELLED}
