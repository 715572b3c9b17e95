"""Casts: other sets of characters for a scenario's roles, so one scenario can be played by many people.

A role's ``character`` is the scenario's default persona for it. A ``Cast`` names someone for each
role instead, as Sotopia's environment–agent combinations do (each environment sampled with several
pairs of agents). A simulation run can play a scenario's casts (``RunOptions.casts``), each as its
own cell; the episode's seats then name the cast's characters.

A cast belongs to its scenario's team. Its characters must be of that team too, each plays one
role, and no character plays two roles of one cast. A role the cast leaves open is played by the
role's default character.
"""

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from .characters import Character
from .teams import OwnedQuerySet


class CastQuerySet(OwnedQuerySet):
    team_path = "scenario__team"


class Cast(models.Model):
    scenario = models.ForeignKey("Scenario", on_delete=models.CASCADE, related_name="casts")
    external_id = models.CharField(
        max_length=100, null=True, blank=True, help_text="Unique per scenario, e.g. Sotopia's combo id."
    )
    label = models.CharField(max_length=200, blank=True, help_text="A name for the cast; empty: its characters.")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = CastQuerySet.as_manager()

    class Meta:
        ordering = ["scenario", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["scenario", "external_id"], name="cast_external_id_per_scenario"),
        ]

    def __str__(self) -> str:
        return self.label or self.external_id or f"cast {self.pk}"

    @property
    def key(self) -> str:
        """How episodes and run options name the cast: its external id, else its id."""
        return self.external_id or str(self.pk)

    def characters(self) -> dict[int, Character]:
        """The cast's character by role position (through the prefetch cache when there is one)."""
        return {member.role.position: member.character for member in self.members.all()}


class CastMember(models.Model):
    """Who plays one role of the cast's scenario."""

    cast = models.ForeignKey(Cast, on_delete=models.CASCADE, related_name="members")
    role = models.ForeignKey("Role", on_delete=models.CASCADE, related_name="cast_members")
    character = models.ForeignKey("Character", on_delete=models.PROTECT, related_name="cast_members")

    class Meta:
        ordering = ["cast", "role__position"]
        constraints = [
            models.UniqueConstraint(fields=["cast", "role"], name="cast_member_role_once"),
            models.UniqueConstraint(fields=["cast", "character"], name="cast_member_character_once"),
        ]

    def __str__(self) -> str:
        return f"{self.character} as {self.role}"

    def clean(self) -> None:
        if self.cast_id and self.role_id and self.role.scenario_id != self.cast.scenario_id:
            raise ValidationError({"role": "The role must belong to the cast's scenario."})
        if self.cast_id and self.character_id and self.character.team_id != self.cast.scenario.team_id:
            raise ValidationError({"character": "The character must belong to the scenario's team."})
