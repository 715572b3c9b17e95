from django.conf import settings
from django.db import models


class Curation(models.Model):
    """An item's adjudicated gold answers: the curator's pick among the annotators' answers, question by question.

    The gold answers themselves are ``benchmark.Answer`` rows of ``response``, whose respondent is of kind
    ``gold`` (one per study), so reports, exports and the ratings import read gold as they read any other
    respondent. ``CuratedDecision`` keeps where each gold answer came from and why.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "in progress"
        FINAL = "final", "final"

    item = models.OneToOneField("StudyItem", on_delete=models.CASCADE, related_name="curation")
    response = models.OneToOneField(
        "benchmark.Response", on_delete=models.PROTECT, related_name="curation",
        help_text="The gold answers (respondent of kind gold).",
    )
    curator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="curations")
    status = models.CharField(max_length=10, choices=Status, default=Status.DRAFT)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item"]

    def __str__(self) -> str:
        return f"gold for {self.item}"


class CuratedDecision(models.Model):
    """How one gold answer (one question, one target) was decided: an annotator's answer picked, or the curator's
    own."""

    curation = models.ForeignKey(Curation, on_delete=models.CASCADE, related_name="decisions")
    question = models.ForeignKey("benchmark.Question", on_delete=models.PROTECT, related_name="+")
    seat_position = models.PositiveSmallIntegerField(null=True, blank=True)
    goal = models.ForeignKey("benchmark.Goal", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    turn = models.PositiveIntegerField(null=True, blank=True)
    picked = models.ForeignKey(
        "Annotation", on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        help_text="The annotation whose answer was taken; empty: the curator wrote their own.",
    )
    note = models.TextField(blank=True)
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["curation", "question__position", "seat_position", "goal", "turn"]
        constraints = [
            models.UniqueConstraint(
                fields=["curation", "question", "seat_position", "goal", "turn"],
                nulls_distinct=False, name="curated_decision_once",
            ),
        ]
