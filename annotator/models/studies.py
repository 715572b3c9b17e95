import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from benchmark.instruments import kinds
from benchmark.models import OwnedQuerySet


def _invite_token() -> str:
    return secrets.token_urlsafe(16)


class Study(models.Model):
    """A set of episodes rated with one instrument by a pool of annotators, k ratings per item."""

    team = models.ForeignKey("benchmark.Team", on_delete=models.PROTECT, related_name="annotation_studies")
    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    instrument = models.ForeignKey("benchmark.Instrument", on_delete=models.PROTECT, related_name="studies")
    instructions = models.TextField(help_text="Shown to annotators before their first item.")
    overlap = models.PositiveSmallIntegerField(
        default=3, help_text="k: how many different annotators rate each item."
    )
    lease_minutes = models.PositiveIntegerField(
        default=60, help_text="An item claimed but not submitted within this time goes back to the pool."
    )
    min_seconds_per_item = models.PositiveIntegerField(
        default=30, help_text="Submissions faster than this are flagged for review."
    )
    seed = models.PositiveIntegerField(default=0, help_text="Makes each annotator's item order reproducible.")
    spans_need_rationale = models.BooleanField(
        default=True,
        help_text="Annotators must give every span a rationale, and every error a correction (SHREC's protocol).",
    )
    invite_token = models.CharField(max_length=40, unique=True, default=_invite_token, editable=False)
    is_open = models.BooleanField(default=True, help_text="Annotators can claim items while the study is open.")
    closed_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When the study was closed (until reopened). A study that is neither open nor closed is paused.",
    )
    qualification_pass_mark = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(100)],
        help_text="Percent of known answers an annotator must match on the qualification items to go on; "
        "blank: no qualification.",
    )
    qualification_retry = models.BooleanField(
        default=False, help_text="An annotator below the pass mark may take the qualification items a second time.",
    )
    checks_warn_after = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)],
        help_text="Warn an annotator after this many failed attention or gold checks; blank: never.",
    )
    checks_pause_after = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)],
        help_text="Pause an annotator's assignments after this many failed checks, until a researcher restores "
        "them; blank: never.",
    )
    crowd_link = models.BooleanField(
        default=False,
        help_text="Annotators may also come from a crowd platform's link (participant id in the URL, no account).",
    )
    completion_code = models.CharField(
        max_length=60, blank=True, help_text="Shown to a crowd annotator who has finished, e.g. Prolific's code.",
    )
    screen_out_code = models.CharField(
        max_length=60, blank=True, help_text="Shown to a crowd annotator who failed qualification or comprehension.",
    )
    comprehension_instrument = models.ForeignKey(
        "benchmark.Instrument", on_delete=models.PROTECT, null=True, blank=True, related_name="comprehension_studies",
        help_text="Questions with correct answers asked before the first item (two attempts); blank: none.",
    )
    curators_blinded = models.BooleanField(
        default=True, help_text="Curators, researchers included, see no condition or model while adjudicating.",
    )
    max_annotators = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="Most annotators",
        help_text="Once the pool has this many annotators, the invite link takes no one new. Blank: no limit.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="created_studies"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="annotation_studies", blank=True
    )

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="study_overlap_positive"),
            models.CheckConstraint(condition=Q(lease_minutes__gte=1), name="study_lease_positive"),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def phase(self) -> str:
        """'open' (items can be claimed), 'paused' (for now) or 'closed' (until reopened)."""
        if self.is_open:
            return "open"
        return "closed" if self.closed_at else "paused"

    def clean(self) -> None:
        """Questions are asked per episode, per character or per goal; a span is marked on the transcript,
        so a span question asked per seat or per goal does not fit."""
        if self.instrument_id is None:
            return
        misplaced = list(
            self.instrument.questions.filter(kind__in=kinds.names(lambda kind: kind.whole_transcript))
            .exclude(scope="episode").values_list("key", flat=True)
        )
        if misplaced:
            raise ValidationError({"instrument": (
                f"{self.instrument} asks the span question {', '.join(misplaced)} per character or per goal; spans "
                "are marked once on the whole conversation: ask it once per episode, or choose another instrument."
            )})


class Membership(models.Model):
    """An annotator in a study's pool; ``instructions_read_at`` gates the queue."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    joined_at = models.DateTimeField(auto_now_add=True)
    instructions_read_at = models.DateTimeField(null=True, blank=True)
    is_curator = models.BooleanField(default=False, help_text="A trusted annotator who may adjudicate items.")
    removed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a researcher removed the annotator; their submitted work is kept.",
    )
    comprehension_failures = models.PositiveSmallIntegerField(default=0)
    comprehension_passed_at = models.DateTimeField(null=True, blank=True)
    qualification_attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Qualification attempts finished (1, or 2 when a second is allowed)."
    )
    qualified_at = models.DateTimeField(null=True, blank=True)
    disqualified_at = models.DateTimeField(
        null=True, blank=True, help_text="When the annotator failed qualification or comprehension: no more items.",
    )
    warned_at = models.DateTimeField(null=True, blank=True, help_text="When failed checks last warned them.")
    paused_at = models.DateTimeField(
        null=True, blank=True, help_text="When failed checks paused their assignments; empty once restored.",
    )
    restored_at = models.DateTimeField(
        null=True, blank=True, help_text="When a researcher last restored them: only checks failed since count.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "annotator"], name="membership_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in {self.study}"


class StudyItem(models.Model):
    """One episode to rate in a study; gold and attention items carry known answers (ItemKey).

    An item may show only a window of its episode (``first_turn`` to ``last_turn``, turn indexes,
    inclusive) and ask its per-turn questions of one turn only (``target_turn``): a ProMediate
    intervention is rated on the turns that led up to it (``annotator.windows``), so one episode gives
    as many items as its mediator intervened. A snippet comparison shows two windows of the same
    episode, the second (``second_first_turn`` to ``second_last_turn``) after the first. A span review item
    (``annotator.span_review``) shows another annotator's span (``reviewed_span``) and is offered only to its
    ``reviewer``.
    """

    class Kind(models.TextChoices):
        REGULAR = "regular", "regular"
        GOLD = "gold", "gold (known answers)"
        ATTENTION = "attention", "attention check"
        TRAINING = "training", "training (answer shown after)"
        QUALIFICATION = "qualification", "qualification (scored against a pass mark)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    episode = models.ForeignKey("benchmark.Episode", on_delete=models.PROTECT, related_name="study_items")
    compared_episode = models.ForeignKey(
        "benchmark.Episode", on_delete=models.PROTECT, null=True, blank=True, related_name="compared_in_items",
        help_text="The second episode, for pairwise comparison questions.",
    )
    position = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=Kind, default=Kind.REGULAR)
    attention_instruction = models.TextField(
        blank=True, help_text="For attention checks: the instruction shown inside the item."
    )
    explanation = models.TextField(
        blank=True, help_text="For training items: the researcher's explanation, shown with the correct answers.",
    )
    first_turn = models.PositiveIntegerField(
        null=True, blank=True, help_text="The first turn shown (its index); empty: the whole episode."
    )
    last_turn = models.PositiveIntegerField(null=True, blank=True, help_text="The last turn shown (its index).")
    target_turn = models.PositiveIntegerField(
        null=True, blank=True, help_text="The one turn the per-turn questions are about (e.g. a mediator's message)."
    )
    second_first_turn = models.PositiveIntegerField(
        null=True, blank=True, help_text="For a snippet comparison: the second window's first turn."
    )
    second_last_turn = models.PositiveIntegerField(
        null=True, blank=True, help_text="For a snippet comparison: the second window's last turn."
    )
    task_item = models.ForeignKey(
        "benchmark.TaskItem", on_delete=models.PROTECT, null=True, blank=True, related_name="study_items",
        help_text="For a human-baseline study: the SHREC task item answered (its excerpt and options).",
    )
    reviewed_span = models.ForeignKey(
        "annotator.Span", on_delete=models.PROTECT, null=True, blank=True, related_name="review_items",
        help_text="For a span review study (SHREC's protocol): the other annotator's unmatched span reviewed.",
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="review_items",
        help_text="The one annotator who may take this item (a span review is for the other annotator only); "
        "empty: anyone in the study's pool.",
    )

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "position"], name="study_item_position_unique"),
            models.UniqueConstraint(
                fields=["study", "episode"], condition=Q(compared_episode__isnull=True, first_turn__isnull=True),
                name="study_item_episode_once",
            ),
            models.UniqueConstraint(
                fields=["study", "episode", "target_turn"], condition=Q(target_turn__isnull=False),
                name="study_item_target_turn_once",
            ),
            models.UniqueConstraint(
                fields=["study", "task_item"], condition=Q(task_item__isnull=False), name="study_item_task_item_once",
            ),
            models.UniqueConstraint(
                fields=["study", "reviewed_span"], condition=Q(reviewed_span__isnull=False),
                name="study_item_reviewed_span_once",
            ),
            models.UniqueConstraint(
                fields=["study", "episode", "first_turn", "second_first_turn"],
                condition=Q(second_first_turn__isnull=False), name="study_item_snippets_once",
            ),
            models.CheckConstraint(
                condition=Q(first_turn__isnull=True, last_turn__isnull=True)
                | Q(first_turn__isnull=False, last_turn__isnull=False, last_turn__gte=F("first_turn")),
                name="study_item_window_ordered",
            ),
            models.CheckConstraint(
                condition=Q(target_turn__isnull=True)
                | Q(first_turn__isnull=False, first_turn__lte=F("target_turn"), last_turn__gte=F("target_turn")),
                name="study_item_target_in_window",
            ),
            models.CheckConstraint(
                condition=Q(second_first_turn__isnull=True, second_last_turn__isnull=True)
                | Q(
                    first_turn__isnull=False, second_first_turn__gt=F("last_turn"), second_last_turn__isnull=False,
                    second_last_turn__gte=F("second_first_turn"),
                ),
                name="study_item_second_window_after_first",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study} · item {self.position + 1}"

    @property
    def windowed(self) -> bool:
        """Whether the item shows only part of its episode."""
        return self.first_turn is not None

    @property
    def window_label(self) -> str:
        """The turns shown, as people count them (from 1): 'turns 5–9, rating turn 9'; 'turns 1–6 and 11–16'."""
        shown = " and ".join(f"{first + 1}–{last + 1}" for first, last in self.windows())
        if not shown:
            return ""
        rated = f", rating turn {self.target_turn + 1}" if self.target_turn is not None else ""
        return f"turns {shown}{rated}"

    def windows(self) -> list[tuple[int, int]]:
        """The stretches of turns shown (indexes, inclusive): one, or two for a snippet comparison."""
        if self.first_turn is None:
            return []
        shown = [(self.first_turn, self.last_turn)]
        if self.second_first_turn is not None:
            shown.append((self.second_first_turn, self.second_last_turn))
        return shown


class ItemKey(models.Model):
    """The known answer to one question of a gold or attention item."""

    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="keys")
    question = models.ForeignKey("benchmark.Question", on_delete=models.CASCADE, related_name="item_keys")
    seat_position = models.PositiveSmallIntegerField(null=True, blank=True)
    value = models.CharField(max_length=200)
    tolerance = models.FloatField(default=0, help_text="For numeric answers: how far off still counts as right.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "question", "seat_position"], name="item_key_unique"),
        ]


class Assignment(models.Model):
    """An item given to one annotator: claimed (with a lease), submitted, or released.

    The database guarantees an annotator never holds the same item twice; ``annotator.assignment``
    guarantees no item gets more than k live assignments (claimed within the lease, or submitted).
    """

    class Status(models.TextChoices):
        CLAIMED = "claimed", "in progress"
        SUBMITTED = "submitted", "submitted"
        RELEASED = "released", "released (lease ran out)"

    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=20, choices=Status, default=Status.CLAIMED)
    claimed_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0, help_text="Time on the item page, summed over visits.")

    class Meta:
        ordering = ["item", "claimed_at"]
        indexes = [models.Index(fields=["annotator", "status"]), models.Index(fields=["item", "status"])]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="assignment_once_per_annotator"),
            models.CheckConstraint(
                condition=~Q(status="submitted") | Q(submitted_at__isnull=False), name="assignment_submitted_has_time"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} → {self.annotator}"


class Invitation(models.Model):
    """An invitation to a study's pool by username or e-mail; accepted when the person joins."""

    study = models.ForeignKey("Study", on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="study_invitations",
    )
    email = models.EmailField(blank=True)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(user__isnull=False) | ~Q(email=""), name="invitation_names_someone"),
            models.UniqueConstraint(fields=["study", "user"], condition=Q(user__isnull=False),
                                    name="invitation_user_once"),
            models.UniqueConstraint(fields=["study", "email"], condition=~Q(email=""), name="invitation_email_once"),
        ]

    def __str__(self) -> str:
        return f"invitation to {self.study} for {self.user or self.email}"
