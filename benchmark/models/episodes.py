import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from .teams import OwnedQuerySet


class ActionType(models.TextChoices):
    """What a seat can do on its turn (Sotopia's action space)."""

    SPEAK = "speak", "speak"
    NON_VERBAL = "non-verbal", "non-verbal communication"
    ACTION = "action", "physical action"
    NONE = "none", "do nothing"
    LEAVE = "leave", "leave"


class Episode(models.Model):
    """One transcript, whatever produced it: agents, a human chat, or an import."""

    class Source(models.TextChoices):
        SIMULATED = "simulated", "simulated by agents"
        HUMAN_CHAT = "human_chat", "chat with a human"
        IMPORTED = "imported", "imported"

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        FAILED = "failed", "failed"
        ABANDONED = "abandoned", "abandoned"

    class EndReason(models.TextChoices):
        LEAVE = "leave", "a side left"
        TURN_CAP = "turn_cap", "turn cap reached"
        TIMEOUT = "timeout", "inactivity timeout"
        MODEL_ERROR = "model_error", "model failed"
        IMPORTED = "imported", "as imported"

    team = models.ForeignKey("Team", on_delete=models.PROTECT, related_name="episodes")
    external_id = models.CharField(max_length=100, null=True, blank=True, help_text="Unique per team.")
    scenario = models.ForeignKey("Scenario", on_delete=models.PROTECT, related_name="episodes")
    barrier = models.ForeignKey(
        "Barrier", on_delete=models.PROTECT, related_name="episodes",
        help_text="The condition; the seats marked as barrier seats speak under it.",
    )
    source = models.CharField(max_length=20, choices=Source)
    status = models.CharField(max_length=20, choices=Status, default=Status.PENDING)
    end_reason = models.CharField(max_length=20, choices=EndReason, blank=True)
    turn_cap = models.PositiveSmallIntegerField(default=20)
    tag = models.CharField(max_length=100, blank=True, help_text="Experiment tag, e.g. a run name.")
    settings = models.JSONField(default=dict, blank=True, help_text="Model settings (temperature, seed, ...).")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["source", "status"])]
        constraints = [
            models.UniqueConstraint(fields=["team", "external_id"], name="episode_external_id_per_team"),
            models.CheckConstraint(condition=Q(turn_cap__gte=1), name="episode_turn_cap_positive"),
        ]

    def __str__(self) -> str:
        return self.external_id or f"episode {self.pk}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Give a new episode its external id if it has none, so that exports re-import as the same episode."""
        if not self.external_id:
            self.external_id = new_external_id()
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "external_id"}
        super().save(*args, **kwargs)


def new_external_id() -> str:
    """A stable external id for an episode that came without one (simulated, chatted, demo).

    Random rather than made from the primary key: the id travels with exports, and a key-based
    id (``parley-episode-7``) would collide with another database's episode 7 on import.
    """
    return f"episode-{uuid.uuid4().hex}"


class Seat(models.Model):
    """Who plays which role in an episode, and how (model, strategy, barrier).

    ``carries_barrier`` marks the seats the condition names (one by default, the first role; a run
    may name several). They are marked under the ``none`` baseline too, so conditions compare.
    """

    class Player(models.TextChoices):
        AGENT = "agent", "language agent"
        HUMAN = "human", "human participant"

    class Strategy(models.TextChoices):
        DEFAULT = "default", "default"
        REPAIR = "repair", "repair instruction"

    episode = models.ForeignKey(Episode, on_delete=models.CASCADE, related_name="seats")
    position = models.PositiveSmallIntegerField()
    role = models.ForeignKey("Role", on_delete=models.PROTECT, related_name="seats")
    character = models.ForeignKey("Character", on_delete=models.PROTECT, related_name="seats")
    player = models.CharField(max_length=10, choices=Player, default=Player.AGENT)
    model = models.CharField(max_length=200, blank=True, help_text="litellm model name, or 'scripted'.")
    strategy = models.CharField(max_length=20, choices=Strategy, default=Strategy.DEFAULT)
    carries_barrier = models.BooleanField(default=False)

    class Meta:
        ordering = ["episode", "position"]
        constraints = [
            models.UniqueConstraint(fields=["episode", "position"], name="seat_position_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.character} in {self.episode}"

    def clean(self) -> None:
        if self.role_id and self.episode_id and self.role.scenario_id != self.episode.scenario_id:
            raise ValidationError({"role": "The role must belong to the episode's scenario."})


class Turn(models.Model):
    """One action in an episode, stored before it is acknowledged to anyone."""

    episode = models.ForeignKey(Episode, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField()
    seat = models.ForeignKey(Seat, on_delete=models.RESTRICT, related_name="turns")
    action_type = models.CharField(max_length=20, choices=ActionType, default=ActionType.SPEAK)
    content = models.TextField(blank=True)
    client_id = models.CharField(
        max_length=64, null=True, blank=True, help_text="Sent by the client; a resend is a no-op."
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    model = models.CharField(max_length=200, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    start_s = models.FloatField(
        null=True, blank=True, help_text="When the turn starts in the episode's recording (seconds), if it has one."
    )
    end_s = models.FloatField(null=True, blank=True, help_text="When the turn ends in the recording (seconds).")
    words = models.JSONField(
        default=list, blank=True,
        help_text="The turn's words with their times, [[seconds, word], ...], when the transcript gave them.",
    )

    class Meta:
        ordering = ["episode", "index"]
        constraints = [
            models.UniqueConstraint(fields=["episode", "index"], name="turn_index_unique"),
            models.UniqueConstraint(
                fields=["episode", "client_id"], condition=Q(client_id__isnull=False), name="turn_client_id_unique"
            ),
            models.CheckConstraint(
                condition=Q(end_s__isnull=True) | Q(start_s__isnull=False, end_s__gte=F("start_s")),
                name="turn_times_ordered",
            ),
            models.CheckConstraint(  # a non-verbal turn may be a gesture no one described
                condition=~Q(action_type__in=["speak", "action"]) | ~Q(content=""),
                name="turn_action_has_content",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.episode} #{self.index}"

    @property
    def number(self) -> int:
        """The turn's number as people read it, from 1; ``index`` (stored, exported, in span anchors)
        counts from 0."""
        return self.index + 1

    def clean(self) -> None:
        if self.seat_id and self.episode_id and self.seat.episode_id != self.episode_id:
            raise ValidationError({"seat": "The seat must belong to the same episode."})


class TurnFeatures(models.Model):
    """The linguistic counts and sentiment of one turn's text, stored the first time a report needs them.

    A cache with a check, filled and read only by ``benchmark.results.turn_features``: ``digest``
    hashes the text and the feature definitions they were computed from, so a turn edited since (by
    any path) or features defined anew are seen as stale and computed again. The fields are
    ``benchmark.stats.linguistic.Counts`` and the VADER sentiment (None when the text has no words).
    """

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, primary_key=True, related_name="features")
    digest = models.CharField(max_length=32)
    words = models.PositiveIntegerField()
    vague_pronouns = models.PositiveIntegerField()
    hedges = models.PositiveIntegerField()
    self_focus = models.PositiveIntegerField()
    sentiment = models.FloatField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "turn features"

    def __str__(self) -> str:
        return f"features of {self.turn_id}"
