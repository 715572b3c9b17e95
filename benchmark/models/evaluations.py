from functools import reduce
from operator import or_

from django.db import models
from django.db.models import Q
from django.utils import timezone

from ..dimensions import DIMENSIONS
from .teams import OwnedQuerySet


class EvaluationQuerySet(OwnedQuerySet):
    team_path = "episode__team"


def _score_in_range() -> Q:
    return reduce(
        or_, (Q(dimension=d.key, score__gte=d.low, score__lte=d.high) for d in DIMENSIONS.values())
    )


def _seat_matches_dimension() -> Q:
    per_seat = [d.key for d in DIMENSIONS.values() if d.per_seat]
    return Q(dimension__in=per_seat, seat__isnull=False) | (~Q(dimension__in=per_seat) & Q(seat__isnull=True))


class Evaluation(models.Model):
    """One score with its reasoning: an evaluator's verdict on one dimension of an episode.

    Goal-oriented dimensions are scored per seat; barrier-aware ones per episode (no seat).
    """

    episode = models.ForeignKey("Episode", on_delete=models.CASCADE, related_name="evaluations")
    seat = models.ForeignKey("Seat", on_delete=models.CASCADE, null=True, blank=True, related_name="evaluations")
    evaluator = models.CharField(max_length=200, help_text="The judge model's name, or 'human mean'.")
    prompt_version = models.CharField(max_length=50, blank=True)
    dimension = models.CharField(max_length=30, choices=[(d.key, d.label) for d in DIMENSIONS.values()])
    score = models.FloatField()
    reasoning = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)

    objects = EvaluationQuerySet.as_manager()

    class Meta:
        ordering = ["episode", "evaluator", "seat", "dimension"]
        constraints = [
            models.CheckConstraint(condition=_score_in_range(), name="evaluation_score_in_range"),
            models.CheckConstraint(condition=_seat_matches_dimension(), name="evaluation_seat_matches_dimension"),
            models.UniqueConstraint(
                fields=["episode", "seat", "evaluator", "prompt_version", "dimension"],
                condition=Q(seat__isnull=False),
                name="evaluation_unique_per_seat",
            ),
            models.UniqueConstraint(
                fields=["episode", "evaluator", "prompt_version", "dimension"],
                condition=Q(seat__isnull=True),
                name="evaluation_unique_per_episode",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.evaluator} · {self.dimension} = {self.score:g}"
