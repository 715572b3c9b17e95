"""Instruments as data: what humans, participants, judges and interviewed agents answer.

An ``Instrument`` is a versioned list of ``Question`` rows. Whoever answers one (a ``Respondent``:
an annotator, a participant, an automated judge, or an agent interviewed about its episode) gives a
``Response`` about one episode, made of typed ``Answer`` rows, one per question (and per seat or
per goal for questions asked that way). Human and automated answers are the same kind of row, so
reports compare them question by question through one code path.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from ..instruments import kinds
from .teams import OwnedQuerySet

# The shipped numeric kinds, for the CheckConstraint below: a constraint's condition is schema, frozen
# into a migration, so it cannot ask the registry. A numeric kind added later gets its bounds from
# ``benchmark.instruments.checks.check_questions`` (every path that saves questions) and the answer
# triggers check its numbers (they read the registry when installed, after every migrate).
CONSTRAINED_NUMERIC_KINDS = ("likert", "slider")


class InstrumentQuerySet(OwnedQuerySet):
    """Presets (no team) are shared, read-only; a team's own instruments are its own."""

    shared_when_teamless = True


class Instrument(models.Model):
    """A versioned list of questions that drives forms, judge prompts, validation, exports and reports.

    Once anything has been answered under it, it is frozen: its questions can no longer change, so
    every stored answer keeps the meaning it was given under. A change is a new version.
    """

    team = models.ForeignKey(
        "Team", on_delete=models.PROTECT, null=True, blank=True, related_name="instruments",
        help_text="Empty for a preset Parley ships (shared, read-only).",
    )
    name = models.CharField(max_length=200)
    preset = models.SlugField(max_length=50, blank=True, help_text="The preset it was made from, if any.")
    version = models.PositiveIntegerField(default=1)
    description = models.TextField(blank=True)
    scenario = models.ForeignKey(
        "Scenario", on_delete=models.CASCADE, null=True, blank=True, related_name="probe_instruments",
        help_text="For an instrument built from a scenario's probes: that scenario.",
    )
    frozen_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = InstrumentQuerySet.as_manager()

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            # A name and version are a preset's, or unique within a team: two teams may each have
            # an instrument of the same name (say, one they imported from the other).
            models.UniqueConstraint(
                fields=["name", "version"], condition=Q(team__isnull=True), name="instrument_preset_name_version_unique"
            ),
            models.UniqueConstraint(
                fields=["team", "name", "version"], condition=Q(team__isnull=False),
                name="instrument_team_name_version_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def frozen(self) -> bool:
        return self.frozen_at is not None


class Question(models.Model):
    """One question of an instrument; ``options`` holds what its kind needs (``benchmark.instruments.checks``).

    ``low`` and ``high`` are the inclusive bounds of a numeric answer (Likert, bounded numeric),
    copied from the options by the checks (the ends of the Likert anchors, the slider's min and
    max) whenever a question is saved through them; a numeric question must have both. The
    database refuses an answer outside them, and an answer to a choice question that is not one
    of its options (``benchmark.instruments.triggers``).
    """

    class Kind:
        """The names of the kinds Parley ships, for code that names one (presets, tests). What a kind
        means — its label, options, checks, widget, ... — is its class in ``benchmark.instruments.kinds``,
        whose registry also gives ``kind`` its choices."""

        CATEGORICAL = "categorical"
        LIKERT = "likert"
        SLIDER = "slider"
        YES_NO = "yes_no"
        MULTIPLE_CHOICE = "multiple_choice"
        MULTI_LABEL = "multi_label"
        SPAN = "span"
        TEXT = "text"
        PAIRWISE = "pairwise"

    class Scope(models.TextChoices):
        EPISODE = "episode", "once per episode"
        SEAT = "seat", "once per seat"
        GOAL = "goal", "once per goal"
        TURN = "turn", "once per turn"
        SPAN = "span", "any number of spans of turns"

    instrument = models.ForeignKey(Instrument, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=50, help_text="Stable name used in exports and reports.")
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=20, choices=kinds.choices)  # a callable: a new kind needs no migration
    label = models.CharField(
        max_length=100, blank=True, help_text="A short name for tables, figures and pages; the key when empty."
    )
    prompt = models.TextField()
    help_text = models.TextField(blank=True)
    required = models.BooleanField(default=True)
    scope = models.CharField(max_length=10, choices=Scope, default=Scope.EPISODE)
    rationale = models.CharField(
        max_length=10,
        choices=[("none", "no rationale"), ("optional", "optional"), ("required", "required")],
        default="none",
    )
    options = models.JSONField(default=dict, blank=True)
    low = models.FloatField(null=True, blank=True, help_text="Lowest numeric answer allowed.")
    high = models.FloatField(null=True, blank=True, help_text="Highest numeric answer allowed.")
    dimension = models.CharField(
        max_length=30, blank=True,
        help_text="The construct this question measures (e.g. 'goal'), so answers to different instruments "
        "about the same construct can be compared.",
    )
    truth = models.CharField(
        max_length=30, blank=True,
        help_text="Where the true answer comes from, if anywhere, e.g. 'episode.barrier' (for accuracy).",
    )

    class Meta:
        ordering = ["instrument", "position"]
        constraints = [
            models.UniqueConstraint(fields=["instrument", "key"], name="instrument_question_key_unique"),
            models.UniqueConstraint(fields=["instrument", "position"], name="instrument_question_position_unique"),
            models.CheckConstraint(condition=~Q(key=""), name="instrument_question_key_not_empty"),
            models.CheckConstraint(
                condition=Q(low__isnull=True, high__isnull=True) | Q(low__lte=models.F("high")),
                name="question_bounds_ordered",
            ),
            models.CheckConstraint(
                condition=~Q(kind__in=CONSTRAINED_NUMERIC_KINDS) | Q(low__isnull=False, high__isnull=False),
                name="question_numeric_has_bounds",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.instrument} · {self.key}"

    @property
    def per_seat(self) -> bool:
        return self.scope == self.Scope.SEAT

    @property
    def name(self) -> str:
        """What tables and pages call the question: its label, else its key."""
        return self.label or self.key

    @property
    def range_text(self) -> str:
        """'0 to 10' for a bounded question, '' for one without bounds."""
        if self.low is None or self.high is None:
            return ""
        return f"{self.low:g} to {self.high:g}"


class SocialAttribute(models.Model):
    """One of SHREC's seven social attributes a span question may offer (seeded; definitions on hover)."""

    key = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=100)
    definition = models.TextField()
    example = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]

    def __str__(self) -> str:
        return self.name


class Respondent(models.Model):
    """Who answered: a person (annotator, participant) or a model (judge, interviewed agent)."""

    class Kind(models.TextChoices):
        ANNOTATOR = "annotator", "human annotator"
        PARTICIPANT = "participant", "participant"
        JUDGE = "judge", "automated judge"
        AGENT = "agent", "interviewed agent"
        GOLD = "gold", "adjudicated gold"

    kind = models.CharField(max_length=20, choices=Kind)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="respondents"
    )
    model = models.CharField(max_length=200, blank=True, help_text="For judges and agents: the model's name.")
    prompt_version = models.CharField(max_length=50, blank=True)
    label = models.CharField(
        max_length=200, blank=True, help_text="A name when there is no user or model, e.g. 'human mean'."
    )

    class Meta:
        ordering = ["kind", "model", "label", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "user"], condition=Q(user__isnull=False),
                                    name="respondent_unique_user"),
            models.UniqueConstraint(fields=["kind", "model", "prompt_version", "label"],
                                    condition=Q(user__isnull=True), name="respondent_unique_name"),
            models.CheckConstraint(
                condition=~Q(kind__in=["judge", "agent"]) | ~Q(model=""), name="respondent_model_named"
            ),
        ]

    @property
    def name(self) -> str:
        """The model (judge, agent) or label (say, 'human mean'), else the user's name."""
        if self.model or self.label or not self.user_id:
            return self.model or self.label
        return self.user.get_username()

    def __str__(self) -> str:
        if self.user_id:
            return f"{self.get_kind_display()} {self.user}"
        name = self.model or self.label
        return f"{name} ({self.prompt_version})" if self.prompt_version else name


class ResponseQuerySet(OwnedQuerySet):
    team_path = "episode__team"


class Response(models.Model):
    """One respondent's answers to one instrument about one episode.

    For an interviewed agent, ``seat_position`` is the seat that answered (its answers about its
    own seat are its self-assessment, about the others its view of them). A judge answers an
    instrument about an episode once: a database trigger refuses a second response of the same
    judge respondent (same episode, instrument and seat), as a unique constraint would; re-judging
    replaces the response in one transaction. Usage (latency, tokens) is that of the call that
    produced the response; one judge call that answers several instruments puts its usage on each.

    ``status`` says whether the answers count: a **draft** is still being written (an annotator's
    autosaved form keeps what was typed, so the database checks its answers only once it leaves
    draft); a **submitted** response is final; a **superseded** one was replaced by a later
    version of the same work (an annotator's edit). Reports and pages read submitted responses.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        SUBMITTED = "submitted", "submitted"
        SUPERSEDED = "superseded", "superseded by a later version"

    instrument = models.ForeignKey(Instrument, on_delete=models.PROTECT, related_name="responses")
    episode = models.ForeignKey("Episode", on_delete=models.CASCADE, related_name="responses")
    respondent = models.ForeignKey(Respondent, on_delete=models.PROTECT, related_name="responses")
    seat_position = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status, default=Status.SUBMITTED)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)

    objects = ResponseQuerySet.as_manager()

    class Meta:
        ordering = ["episode", "respondent", "created_at", "pk"]
        indexes = [models.Index(fields=["episode", "instrument"])]

    def __str__(self) -> str:
        return f"{self.respondent} on {self.episode} ({self.instrument})"


class AnswerQuerySet(OwnedQuerySet):
    team_path = "response__episode__team"


class Answer(models.Model):
    """One typed answer: to one question, about one target (``benchmark.instruments.targets``).

    The target is the episode (no target column set), a seat, a goal, a turn or a span of turns
    (``turn`` to ``end_turn``, optionally ``start_char`` in the first to ``end_char`` in the last);
    read and write it as a :class:`~benchmark.instruments.targets.Target` (``Target.of(answer)``,
    ``Answer(**target.columns())``), never column by column. The question's ``scope`` says which
    kind of target its answers have; a database trigger refuses any other.

    ``value`` is the answer as text (a choice's value, free text); ``number`` is set for numeric
    kinds so statistics never parse strings. A multi-label answer is one row per chosen label.
    Database triggers (``benchmark.instruments.triggers``) refuse a second row for a single-valued
    question about the same target (spans excepted: a question asked of spans takes any number)
    and, outside drafts, a value the question does not allow.
    """

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="answers")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="answers")
    seat_position = models.PositiveSmallIntegerField(null=True, blank=True)
    goal = models.ForeignKey("Goal", on_delete=models.PROTECT, null=True, blank=True, related_name="answers")
    turn = models.PositiveIntegerField(
        null=True, blank=True, help_text="The turn (its index) the answer is about, or a span's first turn."
    )
    end_turn = models.PositiveIntegerField(null=True, blank=True, help_text="A span's last turn (inclusive).")
    start_char = models.PositiveIntegerField(
        null=True, blank=True, help_text="Where a span starts in its first turn's text (inclusive)."
    )
    end_char = models.PositiveIntegerField(
        null=True, blank=True, help_text="Where a span ends in its last turn's text (exclusive)."
    )
    value = models.TextField(blank=True)
    number = models.FloatField(null=True, blank=True)
    reasoning = models.TextField(blank=True)

    objects = AnswerQuerySet.as_manager()

    class Meta:
        ordering = ["response", "question__position", "seat_position", "goal", "turn", "end_turn", "start_char"]
        constraints = [
            # One answer per question and target (a multi-label answer: one row per label). One
            # conditional constraint per target kind rather than one, because NULLs are distinct in a
            # unique index. Spans have none: a span question takes any number of spans.
            models.UniqueConstraint(
                fields=["response", "question", "value"],
                condition=Q(seat_position__isnull=True, goal__isnull=True, turn__isnull=True),
                name="answer_once_per_episode",
            ),
            models.UniqueConstraint(
                fields=["response", "question", "seat_position", "value"],
                condition=Q(seat_position__isnull=False, goal__isnull=True, turn__isnull=True),
                name="answer_once_per_seat",
            ),
            models.UniqueConstraint(
                fields=["response", "question", "goal", "value"], condition=Q(goal__isnull=False),
                name="answer_once_per_goal",
            ),
            models.UniqueConstraint(
                fields=["response", "question", "turn", "value"],
                condition=Q(turn__isnull=False, end_turn__isnull=True, goal__isnull=True),
                name="answer_once_per_turn",
            ),
            models.CheckConstraint(
                condition=Q(end_turn__isnull=True) | Q(turn__isnull=False, end_turn__gte=models.F("turn")),
                name="answer_span_ordered",
            ),
            models.CheckConstraint(
                condition=Q(start_char__isnull=True, end_char__isnull=True)
                | Q(end_turn__isnull=False, start_char__isnull=False, end_char__isnull=False),
                name="answer_span_characters_paired",
            ),
            models.CheckConstraint(
                condition=~Q(end_turn=models.F("turn"), start_char__isnull=False)
                | Q(end_char__gt=models.F("start_char")),
                name="answer_span_characters_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.question.key} = {self.value if self.number is None else f'{self.number:g}'}"
