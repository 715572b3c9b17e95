from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from .characters import Relationship
from .teams import OwnedQuerySet


class Difficulty(models.TextChoices):
    STANDARD = "standard", "standard"
    HARD = "hard", "hard"


class Scenario(models.Model):
    """A social situation with two or more roles, each with a private goal.

    ``context`` is what every side sees; it should be neutral (no side's goal or private figures).
    ``original_context`` keeps the text as written or imported, before neutralisation.
    """

    team = models.ForeignKey("Team", on_delete=models.PROTECT, related_name="scenarios")
    external_id = models.CharField(max_length=100, null=True, blank=True, help_text="Unique per team.")
    codename = models.SlugField(max_length=100, blank=True)
    source = models.CharField(max_length=100, blank=True, help_text="Where it came from, e.g. 'sotopia'.")
    context = models.TextField(help_text="The shared, neutral context every side sees.")
    original_context = models.TextField(blank=True)
    difficulty = models.CharField(max_length=10, choices=Difficulty, default=Difficulty.STANDARD)
    relationship = models.PositiveSmallIntegerField(choices=Relationship, default=Relationship.STRANGER)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["codename", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["team", "external_id"], name="scenario_external_id_per_team"),
            models.CheckConstraint(condition=models.Q(relationship__lte=5), name="scenario_relationship_known"),
        ]

    def __str__(self) -> str:
        return self.codename or f"scenario {self.pk}"


class Role(models.Model):
    """One side of a scenario: its goal, why, and what only it knows.

    ``character`` is the default persona for the slot; an episode's seat may cast someone else.
    """

    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="roles")
    position = models.PositiveSmallIntegerField(help_text="0 for the first role, 1 for the second, ...")
    character = models.ForeignKey(
        "Character", on_delete=models.SET_NULL, null=True, blank=True, related_name="roles"
    )
    goal = models.TextField(help_text="The private social goal; several goals go on separate lines.")
    reason = models.TextField(blank=True, help_text="Why the character wants this.")
    private_knowledge = models.TextField(blank=True, help_text="Facts only this side knows.")

    class Meta:
        ordering = ["scenario", "position"]
        constraints = [
            models.UniqueConstraint(fields=["scenario", "position"], name="role_position_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.scenario} · role {self.position + 1}"

    def clean(self) -> None:
        if not self.goal.strip():
            raise ValidationError({"goal": "A role needs a goal."})
