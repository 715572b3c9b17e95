from django.db import models
from django.db.models import F, Q


class SocialAttribute(models.Model):
    """One of SHREC's seven social attributes a span can be about (seeded; definitions on hover)."""

    key = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=100)
    definition = models.TextField()
    example = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]

    def __str__(self) -> str:
        return self.name


class Annotation(models.Model):
    """One version of an annotator's answers to an item.

    A draft is autosaved in place (``revision`` counts the saves, so a stale tab is caught);
    submitting it fixes it. Editing a submitted annotation starts a new draft version; old
    versions are kept and never overwritten.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        SUBMITTED = "submitted", "submitted"

    assignment = models.ForeignKey("Assignment", on_delete=models.CASCADE, related_name="annotations")
    version = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=20, choices=Status, default=Status.DRAFT)
    scheme = models.ForeignKey("Scheme", on_delete=models.PROTECT, related_name="annotations")
    revision = models.PositiveIntegerField(default=0, help_text="Autosaves so far; guards against stale tabs.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["assignment", "version"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "version"], name="annotation_version_unique"),
            models.UniqueConstraint(
                fields=["assignment"], condition=Q(status="draft"), name="annotation_one_draft_per_assignment"
            ),
            models.CheckConstraint(
                condition=~Q(status="submitted") | Q(submitted_at__isnull=False), name="annotation_submitted_has_time"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} v{self.version} ({self.status})"


class Answer(models.Model):
    """The answer to one question (for one seat, for per-seat questions) in one annotation version.

    ``value`` is the answer as text (a choice's value, free text); ``number`` is set for
    numeric kinds (Likert, slider) so that statistics never parse strings.
    """

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="answers")
    question = models.ForeignKey("Question", on_delete=models.PROTECT, related_name="answers")
    seat_position = models.PositiveSmallIntegerField(null=True, blank=True)
    value = models.TextField(blank=True)
    number = models.FloatField(null=True, blank=True)
    rationale = models.TextField(blank=True)

    class Meta:
        ordering = ["annotation", "question__position", "seat_position"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotation", "question", "seat_position"], name="answer_unique_per_seat",
                condition=Q(seat_position__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["annotation", "question"], name="answer_unique", condition=Q(seat_position__isnull=True),
            ),
        ]


class Span(models.Model):
    """A stretch of the transcript marked as a social error or competency (SHREC).

    Anchored by turn indexes (inclusive) and, optionally, character offsets within the first and
    last turn (start inclusive, end exclusive).
    """

    class Label(models.TextChoices):
        ERROR = "error", "social error"
        COMPETENCY = "competency", "social competency"

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="spans")
    question = models.ForeignKey("Question", on_delete=models.PROTECT, related_name="spans")
    label = models.CharField(max_length=20, choices=Label)
    start_turn = models.PositiveIntegerField()
    end_turn = models.PositiveIntegerField()
    start_char = models.PositiveIntegerField(null=True, blank=True)
    end_char = models.PositiveIntegerField(null=True, blank=True)
    attributes = models.ManyToManyField(SocialAttribute, related_name="spans")
    rationale = models.TextField()
    correction = models.TextField(blank=True)

    class Meta:
        ordering = ["annotation", "start_turn", "start_char", "pk"]
        constraints = [
            models.CheckConstraint(condition=Q(end_turn__gte=F("start_turn")), name="span_turns_ordered"),
            models.CheckConstraint(
                condition=Q(start_char__isnull=True, end_char__isnull=True)
                | Q(start_char__isnull=False, end_char__isnull=False),
                name="span_char_range_complete",
            ),
            models.CheckConstraint(
                condition=~Q(start_turn=F("end_turn")) | Q(start_char__isnull=True) | Q(end_char__gt=F("start_char")),
                name="span_char_range_ordered",
            ),
            models.CheckConstraint(condition=~Q(rationale=""), name="span_has_rationale"),
            models.CheckConstraint(condition=~Q(label="error") | ~Q(correction=""), name="span_error_has_correction"),
        ]

    def __str__(self) -> str:
        return f"{self.label} turns {self.start_turn}–{self.end_turn}"
