from django.db import models

from .teams import OwnedQuerySet


class Relationship(models.IntegerChoices):
    """How well the characters know each other; numbered as Sotopia numbers them."""

    STRANGER = 0, "strangers"
    KNOW_BY_NAME = 1, "know each other by name"
    ACQUAINTANCE = 2, "acquaintances"
    FRIEND = 3, "friends"
    ROMANTIC = 4, "romantic partners"
    FAMILY = 5, "family"


def relationship_label(relationship: int | None) -> str:
    """A scenario's relationship in words; ``None`` is a relationship no one recorded (an imported log)."""
    return "unknown" if relationship is None else str(Relationship(relationship).label)


# What one side may see of the other's profile, by relationship (Sotopia's visibility rule):
# close ties see everything but the secret, acquaintances see the public face, strangers nothing.
_PUBLIC_FACE = ("name", "occupation", "pronouns", "public_info")
_ALL_BUT_SECRET = (
    "name", "age", "gender", "pronouns", "occupation", "big_five", "moral_values",
    "personal_values", "personality", "decision_style", "public_info",
)
VISIBLE_FIELDS: dict[int, tuple[str, ...]] = {
    Relationship.STRANGER: (),
    Relationship.KNOW_BY_NAME: ("name",),
    Relationship.ACQUAINTANCE: _PUBLIC_FACE,
    Relationship.FRIEND: _ALL_BUT_SECRET,
    Relationship.ROMANTIC: _ALL_BUT_SECRET,
    Relationship.FAMILY: _ALL_BUT_SECRET,
}


# How each field of ``Character.profile()`` is labelled wherever a profile is shown or prompted.
PROFILE_LABELS: dict[str, str] = {
    "name": "Name",
    "age": "Age",
    "gender": "Gender",
    "pronouns": "Pronouns",
    "occupation": "Occupation",
    "big_five": "Big Five traits",
    "moral_values": "Moral values",
    "personal_values": "Personal values",
    "personality": "Personality",
    "decision_style": "Decision style",
    "public_info": "Public information",
    "secret": "Secret",
}


class Character(models.Model):
    """A persona an agent or a participant plays: who they are, what they value, what they hide."""

    team = models.ForeignKey("Team", on_delete=models.PROTECT, related_name="characters")
    external_id = models.CharField(
        max_length=100, null=True, blank=True,
        help_text="Identifier in the source this character was imported from (e.g. a Sotopia pk); unique per team.",
    )
    first_name = models.CharField(max_length=100)
    last_name = models.CharField(max_length=100, blank=True)
    age = models.PositiveSmallIntegerField(null=True, blank=True)
    gender = models.CharField(max_length=50, blank=True)
    pronouns = models.CharField(max_length=50, blank=True)
    occupation = models.CharField(max_length=200, blank=True)
    big_five = models.CharField(max_length=300, blank=True, help_text="e.g. 'Openness - High; ...'")
    mbti = models.CharField("MBTI", max_length=4, blank=True)
    moral_values = models.CharField(max_length=300, blank=True, help_text="Comma-separated.")
    personal_values = models.CharField(
        max_length=300, blank=True, help_text="Schwartz personal values, comma-separated."
    )
    personality = models.TextField(blank=True, help_text="Personality and values in prose.")
    decision_style = models.CharField(max_length=200, blank=True)
    public_info = models.TextField(blank=True)
    secret = models.TextField(blank=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["first_name", "last_name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "external_id"], name="character_external_id_per_team"),
            models.CheckConstraint(
                condition=models.Q(age__isnull=True) | models.Q(age__lte=130), name="character_age_plausible"
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()

    def profile(self) -> dict[str, str]:
        """Every profile field as display text, the secret included."""
        return {
            "name": self.name,
            "age": "" if self.age is None else str(self.age),
            "gender": self.gender,
            "pronouns": self.pronouns,
            "occupation": self.occupation,
            "big_five": self.big_five,
            "moral_values": self.moral_values,
            "personal_values": self.personal_values,
            "personality": self.personality,
            "decision_style": self.decision_style,
            "public_info": self.public_info,
            "secret": self.secret,
        }

    def visible_to(self, relationship: int | None) -> dict[str, str]:
        """The part of this profile that someone in ``relationship`` with the character may see; when
        the relationship is unknown (``None``), no more than a stranger sees."""
        fields = VISIBLE_FIELDS[Relationship(relationship)] if relationship is not None else ()
        profile = self.profile()
        return {field: profile[field] for field in fields if profile[field]}
