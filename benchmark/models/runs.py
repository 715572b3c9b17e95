from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .teams import OwnedQuerySet


class NeutralContextQuerySet(OwnedQuerySet):
    team_path = "scenario__team"


class NeutralContext(models.Model):
    """A scenario's public context rewritten into one neutral sentence (SocialVeil §2.3).

    Made by a model call and cached per scenario and prompt version; ``Scenario.original_context``
    keeps the text as written. A researcher may edit ``text``; ``edited`` then protects it from
    being regenerated.
    """

    scenario = models.ForeignKey("Scenario", on_delete=models.CASCADE, related_name="neutral_contexts")
    prompt_version = models.CharField(max_length=50)
    model = models.CharField(max_length=200, help_text="The model that wrote it, or 'scripted'.")
    text = models.TextField()
    edited = models.BooleanField(default=False, help_text="Set when a researcher changed the text by hand.")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    objects = NeutralContextQuerySet.as_manager()

    class Meta:
        ordering = ["scenario", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["scenario", "prompt_version"], name="neutral_context_per_version"),
        ]

    def __str__(self) -> str:
        return f"{self.scenario} ({self.prompt_version})"


class SimulationRun(models.Model):
    """A batch of agent–agent episodes launched from the web or the command line.

    ``options`` holds what ``manage.py simulate`` takes (scenarios, conditions, models, strategy,
    episodes per cell, turn cap, temperature, concurrency, seed). Its episodes are played in chunks
    (:class:`RunChunk`, one task each on the queue) that update the counts here; ``cancel_requested``
    asks them to stop. ``heartbeat_at`` is written by the run's own tasks (preparing, watching,
    finishing), ``watch_token`` names the one watch task that may go on. Its episodes carry ``tag``
    so a re-run resumes them.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    team = models.ForeignKey("Team", on_delete=models.PROTECT, related_name="simulation_runs")
    tag = models.SlugField(max_length=100, help_text="Names the run; its episodes carry this tag.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="simulation_runs"
    )
    options = models.JSONField(default=dict)
    status = models.CharField(max_length=20, choices=Status, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0, help_text="Episodes in the run.")
    finished = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True, help_text="The summary, or what went wrong.")
    cancel_requested = models.BooleanField(default=False)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    watch_token = models.CharField(max_length=32, blank=True, editable=False)
    baseline = models.JSONField(
        default=dict, blank=True, editable=False,
        help_text="Where this execution started: episodes finished before, turns stored before, the start time.",
    )

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=Q(finished__lte=models.F("total")), name="run_finished_within_total"),
        ]

    def __str__(self) -> str:
        return self.tag

    @property
    def done(self) -> bool:
        return self.status in {self.Status.FINISHED, self.Status.FAILED, self.Status.CANCELLED}


class RunChunkQuerySet(OwnedQuerySet):
    team_path = "run__team"


class RunChunk(models.Model):
    """A few episodes of a run, played by one task on whichever consumer takes it.

    ``episodes`` lists ``[episode id, seed]`` pairs. ``attempt`` grows each time the chunk is queued
    again because its consumer stopped beating (``heartbeat_at``); a task only plays, beats and
    records for the attempt it was queued with, so a superseded one stops at its next beat.
    ``worker`` is the consumer's ``host:pid``, for the run page.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        CANCELLED = "cancelled", "cancelled"
        FAILED = "failed", "failed"

    run = models.ForeignKey(SimulationRun, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField(help_text="From 1, in the run's episode order.")
    episodes = models.JSONField(default=list, help_text="[episode id, seed] pairs.")
    status = models.CharField(max_length=20, choices=Status, default=Status.QUEUED)
    attempt = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    finished = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    objects = RunChunkQuerySet.as_manager()

    class Meta:
        ordering = ["run", "number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="run_chunk_number")]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="run_chunk_status_beat")]

    def __str__(self) -> str:
        return f"{self.run} chunk {self.number}"

    @property
    def ended(self) -> bool:
        return self.status in {self.Status.DONE, self.Status.CANCELLED, self.Status.FAILED}
