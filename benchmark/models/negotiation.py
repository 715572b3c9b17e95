"""Multi-party negotiations with a mediator (ProMediate): the topics under negotiation, each party's
preferences on them, the decisions taken while an episode plays, and the consensus trace read from it.

Series indices. A negotiation's consensus is a series with one point before anything is said
(``point`` 0: the parties' starting attitudes) and one after each utterance (``point`` k + 1 is the
state after the turn of index k; turn 0 is the opening line). Attitudes and pair scores are stored
only where they change; every later point carries them forward (``benchmark.stats.promediate``).

Each reading of a trace is one judge's: ``judge`` is the model (or ``scripted`` or ``upstream`` for an
imported run) and ``prompt_version`` the wording it was asked with, so two judges' traces of one
episode live side by side and a pass is cached per judge and prompt version.
"""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from .teams import OwnedQuerySet


class Topic(models.Model):
    """One issue of a negotiation scenario, with its options (``[{"key": "a", "text": "..."}, ...]``)."""

    scenario = models.ForeignKey("Scenario", on_delete=models.CASCADE, related_name="topics")
    position = models.PositiveSmallIntegerField()
    title = models.CharField(max_length=300)
    question = models.TextField(blank=True, help_text="What the parties must settle on this topic.")
    options = models.JSONField(default=list, blank=True, help_text='[{"key": "a", "text": "..."}, ...]')

    class Meta:
        ordering = ["scenario", "position"]
        constraints = [
            models.UniqueConstraint(fields=["scenario", "position"], name="topic_position_unique"),
            models.CheckConstraint(condition=~Q(title=""), name="topic_has_title"),
        ]

    def __str__(self) -> str:
        return self.title

    def option_keys(self) -> list[str]:
        return [str(option["key"]) for option in self.options]


class Preference(models.Model):
    """What one party wants on one topic, as its private brief states it.

    ``ranking`` lists option keys from most to least wanted (as far as the brief ranks them);
    ``unacceptable`` the keys it refuses; ``text`` the brief's own words on the topic (conditions such
    as "only if 2a" that a ranking cannot hold).
    """

    role = models.ForeignKey("Role", on_delete=models.CASCADE, related_name="preferences")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="preferences")
    ranking = models.JSONField(default=list, blank=True)
    unacceptable = models.JSONField(default=list, blank=True)
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["topic", "role__position"]
        constraints = [models.UniqueConstraint(fields=["role", "topic"], name="preference_once_per_topic")]

    def __str__(self) -> str:
        return f"{self.role} on {self.topic}"


class EpisodeOwnedQuerySet(OwnedQuerySet):
    team_path = "episode__team"


class MediatorDecision(models.Model):
    """Whether the mediator spoke after one utterance, and why: one row per chance to intervene,
    spoken or not, so response latency can be counted in turns and in seconds.

    ``after_index`` is the index of the turn it reacted to. ``turn`` is the mediator's turn when it
    intervened. ``candidates`` are the strategies it weighed (``[{"text", "rating"}]``) and ``chosen``
    the one it voiced. ``decided_ms`` is the time the decision took (model calls, or a person's
    thinking), ``failed`` marks a reply that was not the JSON asked for even after a retry (``raw``
    keeps it; the decision then counts as "did not intervene").
    """

    class By(models.TextChoices):
        AGENT = "agent", "a model"
        SCRIPTED = "scripted", "the scripted mediator"
        HUMAN = "human", "a person"

    episode = models.ForeignKey("Episode", on_delete=models.CASCADE, related_name="mediator_decisions")
    after_index = models.PositiveIntegerField()
    by = models.CharField(max_length=10, choices=By, default=By.AGENT)
    policy = models.CharField(max_length=20, help_text="generic, social, innerthought or human.")
    model = models.CharField(max_length=200, blank=True)
    engaged = models.BooleanField()
    rating = models.FloatField(null=True, blank=True)
    reason = models.TextField(blank=True)
    candidates = models.JSONField(default=list, blank=True)
    chosen = models.TextField(blank=True)
    turn = models.OneToOneField(
        "Turn", null=True, blank=True, on_delete=models.SET_NULL, related_name="mediator_decision"
    )
    decided_ms = models.PositiveIntegerField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    failed = models.BooleanField(default=False)
    raw = models.TextField(blank=True)

    objects = EpisodeOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["episode", "after_index"]
        constraints = [
            models.UniqueConstraint(fields=["episode", "after_index"], name="mediator_decision_once_per_turn"),
        ]

    def __str__(self) -> str:
        return f"{self.episode} after turn {self.after_index}: {'intervene' if self.engaged else 'wait'}"


class PartyThought(models.Model):
    """A thought a party had after one utterance, rated for how much it wanted to say it.

    ``rating`` is the motivation after the silence bonus (what the floor was decided on);
    ``raw_rating`` what the party's rater gave. ``selected``: it passed the party's threshold;
    ``spoken``: it became the next turn.
    """

    episode = models.ForeignKey("Episode", on_delete=models.CASCADE, related_name="party_thoughts")
    after_index = models.PositiveIntegerField()
    seat = models.ForeignKey("Seat", on_delete=models.CASCADE, related_name="thoughts")
    content = models.TextField()
    raw_rating = models.FloatField(null=True, blank=True)
    rating = models.FloatField(null=True, blank=True)
    selected = models.BooleanField(default=False)
    spoken = models.BooleanField(default=False)

    objects = EpisodeOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["episode", "after_index", "seat__position", "pk"]
        indexes = [models.Index(fields=["episode", "after_index"], name="party_thought_episode_turn")]

    def __str__(self) -> str:
        return f"{self.seat} after turn {self.after_index}: {self.content[:40]}"


class Attitude(models.Model):
    """One party's stance on one topic from ``point`` on, as one judge read it (free text; "no mention"
    readings are not stored: the earlier stance carries forward)."""

    episode = models.ForeignKey("Episode", on_delete=models.CASCADE, related_name="attitudes")
    point = models.PositiveIntegerField(help_text="0 = the starting attitudes; k + 1 = after turn k.")
    seat = models.ForeignKey("Seat", on_delete=models.CASCADE, related_name="attitudes")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="attitudes")
    text = models.TextField()
    judge = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=50, blank=True)

    objects = EpisodeOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["episode", "judge", "prompt_version", "point", "seat__position", "topic__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["episode", "judge", "prompt_version", "point", "seat", "topic"], name="attitude_once_per_point"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.seat} on {self.topic} at {self.point}"


class PairAgreement(models.Model):
    """How far two parties agree on one topic from ``point`` on, as one judge scored it: the five
    dimensions and the judge's own overall score, each in [0, 1] (null when the reply lacked it).

    The pair is unordered: ``seat_a`` is always the seat with the lower position (``save`` puts them in
    that order), which is what makes a pair's key the same whichever of the two spoke.
    """

    DIMENSIONS = (
        "shared_goals",
        "common_understanding",
        "agreement_on_terms",
        "tone_and_willingness",
        "shared_decision_making",
    )

    episode = models.ForeignKey("Episode", on_delete=models.CASCADE, related_name="pair_agreements")
    point = models.PositiveIntegerField(help_text="0 = the starting attitudes; k + 1 = after turn k.")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="pair_agreements")
    seat_a = models.ForeignKey("Seat", on_delete=models.CASCADE, related_name="+")
    seat_b = models.ForeignKey("Seat", on_delete=models.CASCADE, related_name="+")
    shared_goals = models.FloatField(null=True, blank=True)
    common_understanding = models.FloatField(null=True, blank=True)
    agreement_on_terms = models.FloatField(null=True, blank=True)
    tone_and_willingness = models.FloatField(null=True, blank=True)
    shared_decision_making = models.FloatField(null=True, blank=True)
    overall = models.FloatField(null=True, blank=True)
    reasoning = models.TextField(blank=True)
    failed = models.BooleanField(default=False, help_text="The reply was not the JSON asked for.")
    judge = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=50, blank=True)

    objects = EpisodeOwnedQuerySet.as_manager()

    class Meta:
        ordering = [
            "episode",
            "judge",
            "prompt_version",
            "point",
            "topic__position",
            "seat_a__position",
            "seat_b__position",
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["episode", "judge", "prompt_version", "point", "topic", "seat_a", "seat_b"],
                name="pair_agreement_once_per_point",
            ),
            models.CheckConstraint(condition=~Q(seat_a=F("seat_b")), name="pair_agreement_two_seats"),
        ]

    def __str__(self) -> str:
        return f"{self.seat_a} and {self.seat_b} on {self.topic} at {self.point}"

    def save(self, *args, **kwargs) -> None:
        if self.seat_a.position > self.seat_b.position:
            self.seat_a, self.seat_b = self.seat_b, self.seat_a
        super().save(*args, **kwargs)

    def dimensions(self) -> list[float | None]:
        return [getattr(self, name) for name in self.DIMENSIONS]


class TurnOwnedQuerySet(OwnedQuerySet):
    team_path = "turn__episode__team"


class TopicTag(models.Model):
    """Whether one turn mentions one topic (every turn), or addresses it (a mediator's turn), as one
    tagger read it."""

    class Kind(models.TextChoices):
        MENTION = "mention", "mentions the topic"
        ADDRESSED = "addressed", "addresses the topic (a mediator's intervention)"

    turn = models.ForeignKey("Turn", on_delete=models.CASCADE, related_name="topic_tags")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="tags")
    kind = models.CharField(max_length=10, choices=Kind)
    value = models.BooleanField()
    judge = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=50, blank=True)

    objects = TurnOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["turn", "kind", "topic__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["turn", "topic", "kind", "judge", "prompt_version"], name="topic_tag_once_per_reading"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.turn} {self.kind} {self.topic}: {self.value}"
