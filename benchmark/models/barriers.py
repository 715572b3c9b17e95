from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from .teams import OwnedQuerySet


class BarrierQuerySet(OwnedQuerySet):
    shared_when_teamless = True  # built-in barriers serve every team


class Barrier(models.Model):
    """A communication barrier one seat speaks under (SocialVeil's two-layer design).

    The *style directive* is the high-level instruction; the parameterisation spells it out over
    four operational dimensions (narrative stance, interaction tactics, confusion mechanisms,
    exemplar templates) plus quantitative cues. ``none`` is the barrier-free baseline.
    """

    NONE = "none"

    team = models.ForeignKey(
        "Team", on_delete=models.PROTECT, null=True, blank=True, related_name="barriers",
        help_text="Empty for Parley's built-in barriers, which every team shares read-only.",
    )
    key = models.SlugField(max_length=50, help_text="Unique among the built-in barriers and the team's own.")
    name = models.CharField(max_length=100)
    definition = models.TextField()
    example = models.TextField(blank=True, help_text="A short utterance that shows the barrier.")
    style_directive = models.TextField(blank=True, help_text="The high-level instruction to the barrier seat.")
    narrative_stance = models.TextField(blank=True, help_text="The overall way of speaking.")
    interaction_tactics = models.TextField(blank=True, help_text="Linguistic devices to use.")
    confusion_mechanisms = models.TextField(blank=True, help_text="Behaviours that block understanding.")
    exemplar_templates = models.TextField(
        blank=True,
        help_text="One template a line; {topic}, {partner} and {goal} are filled in by the scripted model.",
    )
    builtin = models.BooleanField(default=False, editable=False, help_text="Seeded with Parley.")
    position = models.PositiveSmallIntegerField(default=100, help_text="Order in lists and forms.")

    objects = BarrierQuerySet.as_manager()

    class Meta:
        ordering = ["position", "key"]
        constraints = [
            models.UniqueConstraint(fields=["team", "key"], name="barrier_key_per_team"),
            models.UniqueConstraint(fields=["key"], condition=Q(team__isnull=True), name="barrier_builtin_key_unique"),
            # built-in barriers are shared; every other barrier belongs to one team
            models.CheckConstraint(condition=Q(builtin=True) ^ Q(team__isnull=False), name="barrier_builtin_is_shared"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """A barrier a researcher adds belongs to a team, and never takes a built-in barrier's key
        (a condition key must mean one thing wherever the team looks it up)."""
        if self.builtin:
            return
        if self.team_id is None:
            raise ValidationError({"team": "Choose the team this barrier belongs to."})
        if Barrier.objects.filter(team__isnull=True, key=self.key).exclude(pk=self.pk).exists():
            raise ValidationError({"key": f"“{self.key}” is the key of a built-in barrier; choose another."})

    @property
    def is_baseline(self) -> bool:
        return self.key == self.NONE

    @property
    def templates(self) -> list[str]:
        return [line.strip() for line in self.exemplar_templates.splitlines() if line.strip()]


class BarrierCue(models.Model):
    """A quantitative cue that makes a barrier reproducible, e.g. 'vague referents: 60% of nouns'."""

    class Dimension(models.TextChoices):
        NARRATIVE_STANCE = "narrative_stance", "narrative stance"
        INTERACTION_TACTICS = "interaction_tactics", "interaction tactics"
        CONFUSION_MECHANISMS = "confusion_mechanisms", "confusion mechanisms"

    barrier = models.ForeignKey(Barrier, on_delete=models.CASCADE, related_name="cues")
    dimension = models.CharField(max_length=30, choices=Dimension)
    instruction = models.CharField(max_length=300, help_text="What to do, in the imperative.")
    rate = models.FloatField(help_text="How often, as a share between 0 and 1.")
    unit = models.CharField(max_length=100, help_text="Share of what, e.g. 'of concrete referents'.")

    class Meta:
        ordering = ["barrier", "dimension", "pk"]
        constraints = [
            models.CheckConstraint(condition=models.Q(rate__gte=0, rate__lte=1), name="barrier_cue_rate_is_share"),
        ]

    def __str__(self) -> str:
        return f"{self.instruction} ({self.rate:.0%} {self.unit})"


def check_positions(positions: object) -> str | None:
    """Why ``positions`` is not a list of distinct role positions (integers from 0), or None if it is."""
    if not isinstance(positions, list) or not positions:
        return "Give at least one role position, as a list such as [0]."
    if not all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= 32_767 for p in positions):
        return "Role positions are whole numbers from 0 (the first role)."
    if len(set(positions)) != len(positions):
        return "A role position is listed twice."
    return None


class ScenarioBarrier(models.Model):
    """How one scenario is played under one barrier, when its source says so (SocialVeil's barrier files).

    SocialVeil writes the barrier prompt into each scenario of a barrier file (``barrier_prompts.agentA``)
    and appends a short trait note to the barrier agent's profile. Such a row replaces the barrier's
    generic style directive for this scenario only, adds the trait note to the barrier seat's own
    profile, and names which roles speak under the barrier (``barrier_positions``): a run plays every
    condition of the scenario with those seats, so conditions stay comparable. Without a row the
    barrier is played as defined.
    """

    scenario = models.ForeignKey("Scenario", on_delete=models.CASCADE, related_name="barrier_prompts")
    barrier = models.ForeignKey(Barrier, on_delete=models.CASCADE, related_name="scenario_prompts")
    style_directive = models.TextField(help_text="Told to the barrier seat instead of the barrier's own directive.")
    trait_note = models.TextField(
        blank=True, help_text="Added to the barrier seat's own profile, e.g. 'Tends to keep references implicit.'"
    )
    barrier_positions = models.JSONField(
        default=list, help_text="The roles (0 = first) that speak under the barrier, e.g. [0]."
    )

    class Meta:
        ordering = ["scenario", "barrier__position", "barrier__key"]
        constraints = [
            models.UniqueConstraint(fields=["scenario", "barrier"], name="scenario_barrier_unique"),
            models.CheckConstraint(condition=~Q(style_directive=""), name="scenario_barrier_has_directive"),
        ]

    def __str__(self) -> str:
        return f"{self.scenario} · {self.barrier}"

    def clean(self) -> None:
        problem = check_positions(self.barrier_positions)
        if problem:
            raise ValidationError({"barrier_positions": problem})
        if self.barrier_id and self.barrier.is_baseline:
            raise ValidationError({"barrier": "The no-barrier baseline has no prompt to replace."})
        if self.barrier_id and self.scenario_id and self.barrier.team_id not in (None, self.scenario.team_id):
            raise ValidationError({"barrier": "Choose a built-in barrier or one of the scenario's team."})
        if self.scenario_id and self.barrier_positions and not problem:
            known = set(self.scenario.roles.values_list("position", flat=True))
            missing = [p for p in self.barrier_positions if p not in known]
            if known and missing:
                raise ValidationError({"barrier_positions": f"The scenario has no role at {missing[0]}."})
