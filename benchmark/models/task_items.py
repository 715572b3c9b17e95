"""SHREC's eight benchmark tasks as stored items, and the answers models give to them.

A **task set** is one build of task items from agreed spans (``shrec_tasks``): its seed and every
option that shaped it (pairing tolerances, attribute policy, excerpt mode, subsets) are kept in
``params``, so the same spans and parameters build the same items. A **task item** is one question
of one task about one stretch of an episode: the excerpt shown, its options in the order shown, the
correct option(s), the gold answer in the task's answer space and where it came from (span ids,
annotators, distractor sources). A **task answer** is one model's reply to one item under one
prompt variant, parsed into the task's answer space (``answer``; null when no parser could read
it), with the optional model coercion beside it. People answer task items through a human-baseline
annotation study (``annotator``), whose study items point at the task items.

Answer spaces (``TaskItem.gold`` and ``TaskAnswer.answer``):

- ``detection``: ``"competency"``, ``"error"`` or ``"none"``;
- ``error``: ``"error"`` or ``"no_error"``;
- ``attributes``: a sorted list of social-attribute keys (``SocialAttribute.key``);
- ``multiple``: ``true`` (more than one attribute) or ``false``;
- ``pre``, ``post``, ``rationale``, ``correction``: the 1-based number of the option chosen.
"""

from django.db import models
from django.db.models import Q

from .teams import OwnedQuerySet


class Task(models.TextChoices):
    DETECTION = "detection", "error / competence / none detection"
    ERROR = "error", "error detection"
    ATTRIBUTES = "attributes", "social attribute identification"
    MULTIPLE = "multiple", "multiple social attributes"
    PRE = "pre", "pre-condition"
    POST = "post", "post-condition"
    RATIONALE = "rationale", "rationale"
    CORRECTION = "correction", "correction"


class TaskSet(models.Model):
    """One build of the eight tasks' items from one set of agreed spans."""

    team = models.ForeignKey("Team", on_delete=models.PROTECT, related_name="task_sets")
    name = models.CharField(max_length=100, help_text="Unique per team, e.g. 'shrec-seed0'.")
    seed = models.PositiveIntegerField(default=0)
    params = models.JSONField(default=dict, blank=True, help_text="Every option the build took, as given.")
    spans_from = models.CharField(
        max_length=300, blank=True, help_text="What the spans came from (a study, an import), as pages show it."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["team", "name"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="task_set_name_per_team")]

    def __str__(self) -> str:
        return self.name


class TaskItemQuerySet(OwnedQuerySet):
    team_path = "task_set__team"


class TaskItem(models.Model):
    """One question of one task about one stretch of an episode (see the module's docstring)."""

    task_set = models.ForeignKey(TaskSet, on_delete=models.CASCADE, related_name="items")
    task = models.CharField(max_length=20, choices=Task)
    item_key = models.CharField(max_length=200, help_text="Stable within the task set, e.g. 'P15_s002:E3:pre'.")
    episode = models.ForeignKey("Episode", on_delete=models.PROTECT, related_name="task_items")
    first_turn = models.PositiveIntegerField(null=True, blank=True, help_text="The excerpt's first turn (index).")
    last_turn = models.PositiveIntegerField(null=True, blank=True, help_text="The excerpt's last turn (index).")
    start_s = models.FloatField(null=True, blank=True, help_text="The segment's start in the recording (seconds).")
    end_s = models.FloatField(null=True, blank=True, help_text="The segment's end in the recording (seconds).")
    label = models.CharField(
        max_length=20, blank=True, help_text="The segment's agreed label (error, competency, none) where it has one."
    )
    context = models.TextField(help_text="What the respondent reads: the excerpt, or the one utterance (pre/post).")
    options = models.JSONField(default=list, help_text="The options' texts, in the order shown.")
    correct = models.JSONField(default=list, help_text="The correct options' positions in `options` (from 0).")
    gold = models.JSONField(help_text="The gold answer in the task's answer space.")
    source = models.CharField(max_length=50, blank=True, help_text="The dataset subset, e.g. empathic, wellness.")
    provenance = models.JSONField(default=dict, blank=True, help_text="Span ids, annotators, distractor sources.")
    subsets = models.JSONField(default=list, blank=True, help_text="The subsets (from 0) the item was drawn into.")

    objects = TaskItemQuerySet.as_manager()

    class Meta:
        ordering = ["task_set", "task", "item_key"]
        constraints = [
            models.UniqueConstraint(fields=["task_set", "task", "item_key"], name="task_item_key_unique"),
            models.CheckConstraint(
                condition=Q(last_turn__isnull=True)
                | Q(first_turn__isnull=False, last_turn__gte=models.F("first_turn")),
                name="task_item_turns_ordered",
            ),
            models.CheckConstraint(
                condition=Q(end_s__isnull=True) | Q(start_s__isnull=False, end_s__gte=models.F("start_s")),
                name="task_item_times_ordered",
            ),
        ]
        indexes = [models.Index(fields=["task_set", "task"])]

    def __str__(self) -> str:
        return f"{self.task} {self.item_key}"


class TaskAnswerQuerySet(OwnedQuerySet):
    team_path = "item__task_set__team"


class TaskAnswer(models.Model):
    """One model's reply to one task item under one prompt variant, and what it was read as."""

    class Variant(models.TextChoices):
        ZERO_SHOT = "zero-shot", "zero-shot"
        FEW_SHOT = "few-shot", "few-shot"
        COT = "cot", "chain of thought"

    item = models.ForeignKey(TaskItem, on_delete=models.CASCADE, related_name="answers")
    respondent = models.ForeignKey("Respondent", on_delete=models.PROTECT, related_name="task_answers")
    variant = models.CharField(max_length=20, choices=Variant, default=Variant.ZERO_SHOT)
    reply = models.TextField(blank=True, help_text="The model's reply as it came.")
    answer = models.JSONField(null=True, blank=True, help_text="The reply read by the parser; null: unparsed.")
    coerced = models.JSONField(
        null=True, blank=True, help_text="The answer a second model read the reply as (optional; kept apart)."
    )
    coerced_by = models.CharField(max_length=200, blank=True, help_text="The model that coerced, if any.")
    created_at = models.DateTimeField(auto_now_add=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)

    objects = TaskAnswerQuerySet.as_manager()

    class Meta:
        ordering = ["item", "respondent", "variant"]
        constraints = [
            models.UniqueConstraint(fields=["item", "respondent", "variant"], name="task_answer_once"),
            models.CheckConstraint(
                condition=Q(coerced__isnull=True) | ~Q(coerced_by=""), name="task_answer_coerced_by"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.respondent} on {self.item}"
