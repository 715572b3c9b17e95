from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from .characters import Relationship, relationship_label
from .teams import OwnedQuerySet


class Difficulty(models.TextChoices):
    STANDARD = "standard", "standard"
    HARD = "hard", "hard"


class Category(models.TextChoices):
    """AgentSense's scenario categories: how wide the social space of the interaction is."""

    PERSONAL_DOMAIN = "personal_domain", "personal domain"  # home, family, close friends, partners
    SMALL_SOCIETY = "small_society", "small society"  # school, workplace, community
    LARGE_SOCIETY = "large_society", "large society"  # public spaces, online, international meetings


class GoalType(models.TextChoices):
    """AgentSense's eight goal types, grouped by ERG theory's three needs (``ERG``)."""

    INFORMATION_ACQUISITION = "information_acquisition", "information acquisition"
    INFORMATION_PROVISION = "information_provision", "information provision"
    RELATIONSHIP_BUILDING = "relationship_building", "relationship building"
    RELATIONSHIP_MAINTENANCE = "relationship_maintenance", "relationship maintenance"
    IDENTITY_RECOGNITION = "identity_recognition", "identity recognition"
    COOPERATION = "cooperation", "cooperation"
    COMPETITION = "competition", "competition"
    CONFLICT_RESOLUTION = "conflict_resolution", "conflict resolution"


# ERG need of each goal type: existence, relatedness or growth.
ERG = {
    GoalType.INFORMATION_ACQUISITION: "existence",
    GoalType.INFORMATION_PROVISION: "existence",
    GoalType.RELATIONSHIP_BUILDING: "relatedness",
    GoalType.RELATIONSHIP_MAINTENANCE: "relatedness",
    GoalType.IDENTITY_RECOGNITION: "relatedness",
    GoalType.COOPERATION: "growth",
    GoalType.COMPETITION: "growth",
    GoalType.CONFLICT_RESOLUTION: "growth",
}


class TurnTaking(models.TextChoices):
    ROUND_ROBIN = "round_robin", "round robin"
    RANDOM_AFTER_GREETING = "random_after_greeting", "random order after a greeting"
    PROMEDIATE = "promediate", "mediator first, then the most motivated party (ProMediate)"


class Scenario(models.Model):
    """A social situation with two or more roles, each with one or more private goals.

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
    relationship = models.PositiveSmallIntegerField(
        choices=Relationship, default=Relationship.STRANGER, null=True, blank=True,
        help_text="How the characters know each other; empty: unknown (an imported log that does not say).",
    )
    category = models.CharField(
        max_length=20, choices=Category, blank=True,
        help_text="AgentSense's scenario category: personal domain, small society or large society.",
    )
    turn_taking = models.CharField(
        max_length=30, choices=TurnTaking, default=TurnTaking.ROUND_ROBIN,
        help_text="Who speaks next: each role in turn, a greeting by one role and then random order, or a "
        "negotiation where the mediator decides first and then the most motivated party speaks.",
    )
    greeter_position = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="For random order: the role (0 = first) that opens with a greeting; for ProMediate: the mediator.",
    )
    turn_cap = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The most turns an episode of this scenario may take; empty: the run's cap."
    )
    is_template = models.BooleanField(
        default=False, help_text="A template: its roles are character slots with constraints, filled to make scenarios."
    )
    template = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="instances",
        help_text="The template this scenario was instantiated from, if any.",
    )
    settings = models.JSONField(
        default=dict, blank=True,
        help_text="What the source says about playing it (a ProMediate case: topics source, thresholds).",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["codename", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["team", "external_id"], name="scenario_external_id_per_team"),
            models.CheckConstraint(
                condition=models.Q(relationship__isnull=True) | models.Q(relationship__lte=5),
                name="scenario_relationship_known",
            ),
            models.CheckConstraint(
                condition=models.Q(turn_cap__isnull=True) | models.Q(turn_cap__gte=1), name="scenario_turn_cap_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(template__isnull=True) | models.Q(is_template=False),
                name="scenario_template_not_nested",
            ),
        ]

    def __str__(self) -> str:
        return self.codename or f"scenario {self.pk}"

    @property
    def relationship_label(self) -> str:
        """The relationship in words, "unknown" when none was recorded."""
        return relationship_label(self.relationship)

    def clean(self) -> None:
        if self.is_template and self.template_id:
            raise ValidationError({"template": "A template cannot itself be made from a template."})
        if self.turn_taking == TurnTaking.ROUND_ROBIN and self.greeter_position is not None:
            raise ValidationError(
                {"greeter_position": "Only random order after a greeting and a negotiation have a greeter."}
            )


class Communication(models.TextChoices):
    """AgentSense's pairwise design labels each role by its goals: who transmits, who takes in."""

    SENDER = "sender", "sender"
    RECEIVER = "receiver", "receiver"


class Role(models.Model):
    """One side of a scenario: its goals (``Goal`` rows), why, and what only it knows.

    ``character`` is the default persona for the slot; an episode's seat may cast someone else.
    On a template's role, ``min_age``, ``max_age``, ``gender`` and ``occupation`` constrain who may
    fill the slot (``benchmark.scenarios.templates``); empty ones allow anyone.
    """

    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="roles")
    position = models.PositiveSmallIntegerField(help_text="0 for the first role, 1 for the second, ...")
    character = models.ForeignKey(
        "Character", on_delete=models.SET_NULL, null=True, blank=True, related_name="roles"
    )
    reason = models.TextField(blank=True, help_text="Why the character wants this.")
    private_knowledge = models.TextField(blank=True, help_text="Facts only this side knows.")
    communication = models.CharField(
        max_length=10, choices=Communication, blank=True,
        help_text="Sender (shares information or opinions) or receiver (takes them in and responds), after AgentSense.",
    )
    # Slot constraints, for a template's roles: a character must satisfy them to fill the slot.
    min_age = models.PositiveSmallIntegerField(null=True, blank=True)
    max_age = models.PositiveSmallIntegerField(null=True, blank=True)
    gender = models.CharField(max_length=50, blank=True)
    occupation = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["scenario", "position"]
        constraints = [
            models.UniqueConstraint(fields=["scenario", "position"], name="role_position_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.scenario} · role {self.position + 1}"

    def clean(self) -> None:
        if self.min_age is not None and self.max_age is not None and self.min_age > self.max_age:
            raise ValidationError({"max_age": "The oldest age allowed is below the youngest."})

    @property
    def goal_text(self) -> str:
        """The role's goals as one text, one goal a line, as agents, judges and people read them.

        Reads ``goals`` through the prefetch cache when there is one.
        """
        return "\n".join(goal.text for goal in self.goals.all())

    @property
    def slot_constraints(self) -> dict[str, object]:
        """The template slot's constraints that are set, by name."""
        values = {
            "min_age": self.min_age, "max_age": self.max_age, "gender": self.gender, "occupation": self.occupation
        }
        return {name: value for name, value in values.items() if value not in (None, "")}


def goal_lines(text: str) -> list[str]:
    """Goals written as one text, one a line: the non-empty lines, stripped, in order.

    How a goal text from before goals were rows (a Sotopia goal with its hints, a Parley file's
    ``goal`` string) becomes ``Goal`` rows.
    """
    return [line.strip() for line in text.splitlines() if line.strip()]


class Goal(models.Model):
    """One of a role's goals, with optional AgentSense goal type (its ERG need follows) and free tags."""

    role = models.ForeignKey(Role, on_delete=models.CASCADE, related_name="goals")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    goal_type = models.CharField(
        max_length=30, choices=GoalType, blank=True,
        help_text="AgentSense's goal type; its ERG need (existence, relatedness, growth) follows from it.",
    )
    tags = models.JSONField(default=list, blank=True, help_text='A list of short labels, e.g. ["relatedness"].')

    class Meta:
        ordering = ["role", "position"]
        constraints = [
            models.UniqueConstraint(fields=["role", "position"], name="goal_position_unique"),
            models.CheckConstraint(condition=~models.Q(text=""), name="goal_has_text"),
        ]

    def __str__(self) -> str:
        return f"{self.role} · goal {self.position + 1}"

    @property
    def erg(self) -> str:
        """The goal type's ERG need (existence, relatedness or growth), or "" without a type."""
        return ERG.get(self.goal_type, "")

    def clean(self) -> None:
        if not isinstance(self.tags, list) or not all(isinstance(t, str) and t.strip() for t in self.tags):
            raise ValidationError({"tags": "Tags are a list of non-empty texts."})


class Probe(models.Model):
    """A multiple-choice question about one role's private information, goal or reason.

    ``options`` is a list of option texts and ``correct`` the index of the right one. ``asked_of``
    says who may be asked it: the other roles (did they infer it?), the role itself, or anyone.
    """

    class Topic(models.TextChoices):
        PRIVATE_INFO = "private_info", "private information"
        GOAL = "goal", "goal"
        REASON = "reason", "reason"

    class AskedOf(models.TextChoices):
        OTHERS = "others", "the other roles"
        SELF = "self", "the role itself"
        ANYONE = "anyone", "anyone, observers included"

    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="probes")
    about = models.ForeignKey(Role, on_delete=models.CASCADE, related_name="probes")
    position = models.PositiveSmallIntegerField()
    topic = models.CharField(max_length=20, choices=Topic)
    text = models.TextField()
    options = models.JSONField(default=list)
    correct = models.PositiveSmallIntegerField(help_text="Index (from 0) of the correct option.")
    asked_of = models.CharField(max_length=10, choices=AskedOf, default=AskedOf.OTHERS)

    class Meta:
        ordering = ["scenario", "position"]
        constraints = [
            models.UniqueConstraint(fields=["scenario", "position"], name="probe_position_unique"),
            models.CheckConstraint(condition=~models.Q(text=""), name="probe_has_text"),
        ]

    def __str__(self) -> str:
        return f"{self.scenario} · probe {self.position + 1}"

    def clean(self) -> None:
        if not isinstance(self.options, list) or len(self.options) < 2 or not all(
            isinstance(o, str) and o.strip() for o in self.options
        ):
            raise ValidationError({"options": "A probe needs at least two options, each a non-empty text."})
        if self.correct >= len(self.options):
            raise ValidationError({"correct": f"Pick an option from 0 to {len(self.options) - 1}."})
        if self.about_id and self.scenario_id and self.about.scenario_id != self.scenario_id:
            raise ValidationError({"about": "The role must belong to the probe's scenario."})
