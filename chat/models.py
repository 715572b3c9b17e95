"""Chat studies: a researcher's design, and each participant's way through it.

A participant arrives from a study link, consents, is assigned a scenario × condition cell, and
plays one seat of a ``benchmark.Episode`` against an agent; the episode is the transcript, so a
finished chat is an ordinary episode (source ``human_chat``) that annotation can take up.
"""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from benchmark.instruments import kinds
from benchmark.models import OwnedQuerySet, Question, Scenario, Seat
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.scenarios.turn_taking import expected_turns, turn_cap_for

DEFAULT_CONSENT = """\
You are invited to take part in a research study on how people and AI agents communicate.

You will read a short scenario, then hold a text conversation with an AI agent playing another \
character. The agent may communicate in ways that are hard to follow; that is part of the study. \
Afterwards you answer four short questions. It takes about 10 to 15 minutes.

What you write is stored with a pseudonymous id and used for research only. Do not share personal \
information in the chat. You may stop at any time by closing the page.

By continuing you confirm that you are 18 or older and agree to take part."""



def participant_kinds() -> list[str]:
    """The kinds of question a participant can answer on their own about the chat they just had (a kind's
    ``participants``): no spans or pairwise comparisons (those need the transcript in front of them), no
    quiz with a correct answer."""
    return kinds.names(lambda kind: kind.participants)


# Codes people read and type: capitals and digits without the look-alikes 0/O, 1/I/L, and no U.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
RESUME_CODE_LENGTH = 8


def random_code(length: int) -> str:
    """A code of ``length`` characters drawn from ``CODE_ALPHABET`` by a cryptographic generator."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def default_screen_out_code() -> str:
    """A fresh screen-out code for a new study (researchers may replace it with the platform's)."""
    return f"SCREEN-{random_code(6)}"


def default_technical_problem_code() -> str:
    """A fresh technical-problem code for a new study (researchers may replace it with the platform's)."""
    return f"TECH-{random_code(6)}"


def new_resume_code() -> str:
    """A participant's resume code: 8 characters, about 39 bits, so it cannot be guessed online."""
    return random_code(RESUME_CODE_LENGTH)


# The agent mediator of a negotiation a participant takes a party's seat in: the simulation's conditions
# (``benchmark.runs.options.MEDIATORS``).
NO_MEDIATOR = "none"
MEDIATOR_CONDITIONS = [
    ("none", "none: no mediator"),
    ("generic", "generic: a plain mediator"),
    ("social", "social: a mediator that tracks the parties' agreement"),
]
DEFAULT_MEDIATOR = "generic"


class ChatStudy(models.Model):
    """A researcher's design for human–agent role-play: which scenarios, conditions and settings."""

    team = models.ForeignKey("benchmark.Team", on_delete=models.PROTECT, related_name="chat_studies")
    slug = models.SlugField(max_length=60, unique=True, help_text="The study link is /s/<slug>/.")
    title = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="chat_studies"
    )
    scenarios = models.ManyToManyField("benchmark.Scenario", related_name="chat_studies")
    human_position = models.PositiveSmallIntegerField(
        default=1,
        help_text="The role the participant plays (0 = the scenario's first role); the agent plays the other.",
    )
    agent_model = models.CharField(
        max_length=200,
        blank=True,
        help_text="A litellm model name; blank uses the configured agent model, or the offline scripted one.",
    )
    seat_models = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Models of particular agent seats, as SEAT=MODEL separated by commas: SEAT is a role position "
        "(0 = the first) or a role label, sender or receiver (e.g. 0=openai/gpt-4o,receiver=scripted). Seats not "
        "named get the agent model.",
    )
    partner_strategy = models.CharField(
        max_length=20,
        choices=Seat.Strategy,
        default=Seat.Strategy.DEFAULT,
        help_text="The participant is the barrier agent's partner; 'repair' adds advice to ask and paraphrase "
        "to their briefing.",
    )
    turn_cap = models.PositiveSmallIntegerField(default=20, help_text="Turns of both sides together.")
    intervene_window = models.FloatField(
        default=15.0,
        validators=[MinValueValidator(0.1)],
        help_text="Negotiations, participant as the mediator: seconds after each party's message to choose to "
        "intervene; saying nothing lets the parties continue.",
    )
    claim_window = models.FloatField(
        default=20.0,
        validators=[MinValueValidator(0.1)],
        help_text="Negotiations, participant as a party: seconds to ask for the floor each time it opens; saying "
        "nothing lets the most eager of the others speak.",
    )
    mediator_condition = models.CharField(
        max_length=10,
        blank=True,
        choices=MEDIATOR_CONDITIONS,
        help_text="Negotiations, participant as a party: who sits in the mediator's chair. 'none' leaves it empty "
        "(an agent party opens the meeting); 'generic' and 'social' are the simulation's two agent mediators, "
        "playing the mediator seat's model (models by seat, else the agent model). Empty means generic.",
    )
    inactivity_timeout = models.PositiveIntegerField(
        default=600, help_text="Seconds without a participant action before the chat ends."
    )
    max_message_chars = models.PositiveIntegerField(default=1000)
    messages_per_minute = models.PositiveSmallIntegerField(
        default=12, help_text="Most messages one participant may send in a minute."
    )
    consent_text = models.TextField(default=DEFAULT_CONSENT)
    instrument = models.ForeignKey(
        "benchmark.Instrument", on_delete=models.PROTECT, null=True, blank=True, related_name="chat_studies",
        verbose_name="questionnaire",
        help_text="What participants answer after the chat: a preset or one of the team's instruments, every "
        "question asked once per episode. Empty: no questions, only the completion code.",
    )
    completion_code = models.CharField(max_length=60, help_text="Shown at the end, e.g. Prolific's code.")
    min_participant_turns = models.PositiveSmallIntegerField(
        default=3,
        help_text="Messages (say, non-verbal or action) the participant must send before their chat counts. "
        "Leaving earlier, or going quiet past the inactivity timeout earlier, ends the study with the screen-out "
        "code instead of the questions and the completion code, and frees their place. 0 turns this off.",
    )
    screen_out_code = models.CharField(
        max_length=60,
        default=default_screen_out_code,
        help_text="Shown instead of the completion code to participants who stop before the minimum "
        "(on Prolific, a screen-out or return code).",
    )
    technical_problem_code = models.CharField(
        max_length=60,
        default=default_technical_problem_code,
        help_text="Shown instead of the completion code when the agent fails for a technical reason before the "
        "participant reached the minimum: they could not finish, but may have provoked the failure, so review "
        "these (on Prolific, give this code the manual-review action).",
    )
    return_url = models.URLField(
        max_length=500, blank=True, help_text="Where the completion page sends participants back to."
    )
    is_open = models.BooleanField(default=True, help_text="Closed studies take no new participants.")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "chat studies"
        constraints = [
            models.CheckConstraint(condition=Q(turn_cap__gte=2), name="chat_study_turn_cap_at_least_two"),
            models.CheckConstraint(
                condition=~Q(screen_out_code=F("completion_code")),
                name="chat_study_screen_out_code_differs",
                violation_error_message="The screen-out code must differ from the completion code.",
            ),
            models.CheckConstraint(
                condition=~Q(technical_problem_code=F("completion_code")),
                name="chat_study_technical_problem_code_differs",
                violation_error_message="The technical-problem code must differ from the completion code.",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        try:
            self.seat_model_map()
        except RunOptionsError as problem:
            raise ValidationError({"seat_models": str(problem)}) from None
        if self.instrument_id is not None and self.team_id is not None:
            problem = self.questionnaire_problem()
            if problem:
                raise ValidationError({"instrument": problem})

    def questionnaire_problem(self) -> str:
        """Why the study cannot ask its instrument; empty when it can (a preset or the team's own, every
        question asked once per episode and of a kind participants answer)."""
        instrument = self.instrument
        if instrument.team_id not in (None, self.team_id):
            return f"“{instrument}” belongs to another team."
        for question in instrument.questions.all():
            if question.scope != Question.Scope.EPISODE:
                return (f"Question {question.position + 1} ({question.key}) is asked {question.get_scope_display()}; "
                        "participants answer questions once per episode.")
            # A participant answers on their own about the chat they just had: no spans or pairwise
            # comparisons (those need the transcript in front of them), no quiz with a correct answer.
            if question.kind not in participant_kinds():
                return (f"Question {question.position + 1} ({question.key}) is a {question.get_kind_display()} "
                        "question, which participants cannot answer after a chat.")
        return ""

    def seat_model_map(self) -> dict[str, str]:
        """``seat_models`` as {"<position>" | "sender" | "receiver": model}, read as runs read theirs
        (``benchmark.runs.options.RunOptions.seat_model_map``); ``RunOptionsError`` names a bad entry."""
        entries = tuple(entry.strip() for entry in self.seat_models.split(",") if entry.strip())
        return RunOptions(seat_models=entries).seat_model_map()

    def participant_turns_in(self, scenario: Scenario) -> float:
        """How many turns the participant takes in ``scenario`` before its turn cap, in the scenario's turn order.

        Exact under round robin. Under random order after a greeting each chat draws its own order, so this
        is the expected count (``turn_taking.expected_turns``); the briefing tells each participant theirs.
        """
        positions = list(scenario.roles.values_list("position", flat=True))
        return expected_turns(
            scenario.turn_taking, positions, self.human_position, turn_cap_for(scenario, self.turn_cap),
            greeter=scenario.greeter_position,
        )

    @property
    def episode_tag(self) -> str:
        """The tag every episode of this study carries (annotation studies can add episodes by tag)."""
        return f"chat:{self.slug}"


class ChatCondition(models.Model):
    """One barrier condition of a chat study and how many participants each scenario needs in it."""

    study = models.ForeignKey(ChatStudy, on_delete=models.CASCADE, related_name="conditions")
    barrier = models.ForeignKey("benchmark.Barrier", on_delete=models.PROTECT, related_name="+")
    target = models.PositiveIntegerField(default=5, help_text="Participants wanted per scenario in this condition.")

    class Meta:
        ordering = ["study", "barrier__key"]
        constraints = [
            models.UniqueConstraint(fields=["study", "barrier"], name="chat_condition_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study} · {self.barrier}"


class Participant(models.Model):
    """One person's way through a chat study, from the link to the completion code.

    ``participant_id`` is the recruiting platform's id (Prolific's ``PROLIFIC_PID``) or a generic
    one; it is unique per study, so the same person cannot start a second episode. The id is no
    secret (it travels in links), so it does not open the participant's pages by itself: the first
    browser that brings it is bound to it (``browser_token``, see ``chat.access``), and another
    browser gets in only with the ``resume_code`` shown to the participant, or after a researcher
    released the id.
    """

    class Stage(models.TextChoices):
        CONSENT = "consent", "consent"
        BRIEFING = "briefing", "briefing"
        CHAT = "chat", "chat"
        QUESTIONNAIRE = "questionnaire", "questionnaire"
        DONE = "done", "done"
        SCREENED_OUT = "screened_out", "screened out"
        TECHNICAL_PROBLEM = "technical_problem", "technical problem"
        DECLINED = "declined", "declined consent"

    study = models.ForeignKey(ChatStudy, on_delete=models.CASCADE, related_name="participants")
    participant_id = models.CharField(max_length=100)
    prolific_pid = models.CharField(max_length=100, blank=True)
    prolific_study_id = models.CharField(max_length=100, blank=True)
    prolific_session_id = models.CharField(max_length=100, blank=True)
    stage = models.CharField(max_length=20, choices=Stage, default=Stage.CONSENT)
    scenario = models.ForeignKey(
        "benchmark.Scenario", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    barrier = models.ForeignKey("benchmark.Barrier", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    episode = models.OneToOneField(
        "benchmark.Episode", on_delete=models.PROTECT, null=True, blank=True, related_name="participant"
    )
    response = models.OneToOneField(
        "benchmark.Response", on_delete=models.PROTECT, null=True, blank=True, related_name="participant",
        help_text="The participant's answers to the study's questionnaire, written when they submit it.",
    )
    browser_token = models.CharField(
        max_length=64, blank=True, editable=False,
        help_text="The token of the one browser session that may act as this participant; blank: the next "
        "browser that brings the id takes it.",
    )
    resume_code = models.CharField(
        max_length=RESUME_CODE_LENGTH, default=new_resume_code, editable=False,
        help_text="Shown only to the participant; moves their chat to another browser.",
    )
    agent_lease_until = models.DateTimeField(
        null=True, blank=True, help_text="While set in the future, one server process is writing the agent's turn."
    )
    agent_lease_owner = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    consented_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["study", "participant_id"], name="one_participant_id_per_study"),
        ]
        indexes = [models.Index(fields=["study", "scenario", "barrier", "stage"])]

    def __str__(self) -> str:
        return f"{self.participant_id} in {self.study}"

    def clean(self) -> None:
        if (self.scenario_id is None) != (self.barrier_id is None):
            raise ValidationError("A participant is assigned a scenario and a condition together.")

    @property
    def resume_code_display(self) -> str:
        """The resume code as shown to people, in two groups of four (``K7QM-2XPD``)."""
        half = len(self.resume_code) // 2
        return f"{self.resume_code[:half]}-{self.resume_code[half:]}"

    @property
    def outcome(self) -> str:
        """Which code the participant was given: ``completed``, ``screened_out``, ``technical_problem``,
        ``declined``, or "" yet."""
        return {
            self.Stage.DONE: "completed",
            self.Stage.SCREENED_OUT: "screened_out",
            self.Stage.TECHNICAL_PROBLEM: "technical_problem",
            self.Stage.DECLINED: "declined",
        }.get(self.stage, "")


class ChatConnection(models.Model):
    """One open chat socket of a participant, held as a lease that its server process renews.

    Counting these rows caps the sockets one participant may hold across every server process
    (``chat.connections``); a row whose process died stops counting once its lease runs out.
    ``server`` names the process holding the socket, which renews all its rows in one statement.
    """

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="connections")
    key = models.CharField(max_length=64, unique=True)
    server = models.CharField(max_length=300, db_index=True, default="")
    opened_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["participant", "expires_at"])]

    def __str__(self) -> str:
        return f"socket {self.key} of {self.participant_id}"
