from django.db import models
from django.db.models import Q


class Scheme(models.Model):
    """A versioned list of questions that drives the form, validation, exports and the report.

    Once an annotation under it is submitted the scheme is frozen: its questions can no longer
    change, so every stored answer keeps the meaning it was given under. To change a frozen
    scheme, copy it to a new version (``annotator.schemes.new_version``).
    """

    name = models.CharField(max_length=200)
    preset = models.SlugField(max_length=50, blank=True, help_text="The preset it was made from, if any.")
    version = models.PositiveIntegerField(default=1)
    description = models.TextField(blank=True)
    frozen_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="scheme_name_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def frozen(self) -> bool:
        return self.frozen_at is not None


class Question(models.Model):
    """One question of a scheme; ``options`` holds what its kind needs (see ``annotator.schemes``).

    - categorical: ``choices`` [{value, label, description}]
    - likert: ``anchors`` [{value, label, description}] over consecutive integers
    - slider: ``min``, ``max``, ``step``, optional ``labels`` {min: ..., max: ...}
    - span: ``labels`` (error / competency), ``attributes`` (SocialAttribute keys)
    - text: ``max_length``
    - pairwise: ``choices`` for which of two episodes is better (A / B / tie)
    """

    class Kind(models.TextChoices):
        CATEGORICAL = "categorical", "categorical"
        LIKERT = "likert", "Likert scale"
        SLIDER = "slider", "bounded slider"
        SPAN = "span", "span task"
        TEXT = "text", "free text"
        PAIRWISE = "pairwise", "pairwise comparison"

    scheme = models.ForeignKey(Scheme, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=50, help_text="Stable name used in exports and reports.")
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=20, choices=Kind)
    prompt = models.TextField()
    help_text = models.TextField(blank=True)
    required = models.BooleanField(default=True)
    per_seat = models.BooleanField(default=False, help_text="Asked once for each character of the episode.")
    rationale = models.CharField(
        max_length=10,
        choices=[("none", "no rationale"), ("optional", "optional"), ("required", "required")],
        default="none",
    )
    options = models.JSONField(default=dict, blank=True)
    dimension = models.CharField(
        max_length=30, blank=True, help_text="The evaluation dimension this question measures, if any (for alignment)."
    )
    truth = models.CharField(
        max_length=30, blank=True,
        help_text="Where the true answer comes from, if anywhere, e.g. 'episode.barrier' (for accuracy).",
    )

    class Meta:
        ordering = ["scheme", "position"]
        constraints = [
            models.UniqueConstraint(fields=["scheme", "key"], name="question_key_unique"),
            models.UniqueConstraint(fields=["scheme", "position"], name="question_position_unique"),
            models.CheckConstraint(condition=~Q(key=""), name="question_key_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.scheme} · {self.key}"
