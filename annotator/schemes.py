"""Annotation schemes as data: the shipped presets, checks on a scheme, and reading an annotation form.

A scheme is a list of ``Question`` rows. What a question needs beyond its prompt lives in its
``options`` (JSON), by kind:

- **categorical**: ``choices`` — at least two ``{"value", "label", "description"?}`` with distinct
  values (the value is what is stored and exported; the label is what the annotator sees).
- **likert**: ``anchors`` — at least three ``{"value": int, "label", "description"}`` whose values
  are consecutive whole numbers in rising order (1, 2, 3, 4, 5).
- **slider**: ``min`` < ``max`` and ``step`` > 0, the range a whole number of steps; optional
  ``labels`` ``{"min": ..., "max": ...}`` saying what the two ends mean.
- **span**: ``labels`` — a non-empty subset of ``["error", "competency"]``; ``attributes`` — the keys
  of the ``SocialAttribute`` rows a span may be tagged with (all must exist).
- **text**: optional ``max_length`` (a whole number > 0; 2000 when absent).
- **pairwise**: ``choices`` as for categorical, e.g. A / B / tie for two episodes side by side.

Option names outside these are refused, so a typo cannot silently fall back to a default.
``check_options`` checks one question's options; ``check_questions`` checks a
whole list (keys, positions, dimensions, sources of truth). Once an annotation has been submitted
under a scheme it is frozen (``freeze``); ``check_editable`` refuses changes to a frozen scheme and
``new_version`` copies it so it can be changed.

An annotation form posts, per question (and per seat for ``per_seat`` questions), the fields named
by ``field_name``: ``answer-<key>[-<seat>]``, ``rationale-<key>[-<seat>]`` and, for span questions,
``spans-<key>`` holding a JSON array of spans. ``parse_form`` reads them strictly on submit and
leniently for an autosaved draft (see its docstring).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmark.evaluation.rubrics import JUDGE_DIMENSIONS
from benchmark.models import Barrier

from .models import Question, Scheme, SocialAttribute

Kind = Question.Kind

DEFAULT_TEXT_MAX_LENGTH = 2000
SPAN_LABELS = ("error", "competency")
CHOICE_VALUE_MAX_LENGTH = 200  # ItemKey.value holds a known answer in a CharField of this size.
NUMERIC_KINDS = (Kind.LIKERT, Kind.SLIDER)
CHOICE_KINDS = (Kind.CATEGORICAL, Kind.PAIRWISE)
FIELD_PARTS = ("answer", "rationale", "spans")

# Where a question's true answer can come from, and which kind of question can use it.
TRUTH_SOURCES: dict[str, tuple[str, ...]] = {"episode.barrier": (Kind.CATEGORICAL,)}

_OPTION_NAMES: dict[str, tuple[str, ...]] = {
    Kind.CATEGORICAL: ("choices",),
    Kind.LIKERT: ("anchors",),
    Kind.SLIDER: ("min", "max", "step", "labels"),
    Kind.SPAN: ("labels", "attributes"),
    Kind.TEXT: ("max_length",),
    Kind.PAIRWISE: ("choices",),
}
_KEY_PATTERN = re.compile(r"^[-a-zA-Z0-9_]+$")
_KEY_MAX_LENGTH = 50


# ---------------------------------------------------------------------------------------------
# Presets


@dataclass(frozen=True)
class QuestionSpec:
    """A question of a preset, as it becomes a ``Question`` row (position from its place in the list)."""

    key: str
    kind: str
    prompt: str
    help_text: str = ""
    required: bool = True
    per_seat: bool = False
    rationale: str = "none"
    options: dict[str, Any] = field(default_factory=dict)
    dimension: str = ""
    truth: str = ""

    def build(self, scheme: Scheme, position: int) -> Question:
        return Question(
            scheme=scheme, key=self.key, position=position, kind=self.kind, prompt=self.prompt,
            help_text=self.help_text, required=self.required, per_seat=self.per_seat, rationale=self.rationale,
            options=copy.deepcopy(self.options), dimension=self.dimension, truth=self.truth,
        )


@dataclass(frozen=True)
class PresetSpec:
    """A scheme Parley ships, installed with ``install_preset``.

    ``seats_needed`` is the fewest seats an episode must have for the questions to make sense (a
    mediator rating needs two parties and the mediator); ``seats_reason`` says why, for messages.
    """

    name: str
    description: str
    questions: tuple[QuestionSpec, ...]
    seats_needed: int = 2
    seats_reason: str = ""


def _anchors(*anchors: tuple[int, str, str]) -> dict[str, Any]:
    return {"anchors": [{"value": value, "label": label, "description": text} for value, label, text in anchors]}


def _slider(low: int, high: int, low_means: str, high_means: str) -> dict[str, Any]:
    return {"min": low, "max": high, "step": 1, "labels": {"min": low_means, "max": high_means}}


def _sotopia_question(key: str, prompt: str, help_text: str, low_means: str, high_means: str) -> QuestionSpec:
    _, dimension = JUDGE_DIMENSIONS[key]
    return QuestionSpec(
        key=key, kind=Kind.SLIDER, prompt=prompt, help_text=help_text, per_seat=True, rationale="required",
        options=_slider(dimension.low, dimension.high, low_means, high_means), dimension=key,
    )


SOCIALVEIL = PresetSpec(
    name="SocialVeil human evaluation",
    description=(
        "Name the communication barrier one side spoke under, then rate how much confusion was left "
        "and how well the two sides came to understand each other (after SocialVeil's human study)."
    ),
    questions=(
        QuestionSpec(
            key="barrier_type", kind=Kind.CATEGORICAL, rationale="optional", truth="episode.barrier",
            prompt="Which communication barrier, if any, shaped the way one side spoke?",
            help_text=(
                "Go by the dialogue alone. Pick the barrier whose signs are clearest; pick 'No barrier' "
                "when both sides speak plainly and any misunderstanding looks like an ordinary slip."
            ),
            options={"choices": [
                {"value": "semantic", "label": "Semantic vagueness", "description": (
                    "One side leaves things unnamed: 'it', 'that thing' or 'the stuff' stand in for people, "
                    "amounts and times, so the other side has to guess or keep asking what is meant."
                )},
                {"value": "sociocultural", "label": "Sociocultural mismatch", "description": (
                    "The two follow different habits of directness and politeness: hints, face-saving and "
                    "soft refusals get taken literally, so a 'no' passes for 'later' or polite assent for a yes."
                )},
                {"value": "emotional", "label": "Emotional interference", "description": (
                    "Strong feeling such as worry, anger or hurt takes over one side's turns; the facts the "
                    "task needs come late, in fragments or not at all."
                )},
                {"value": "none", "label": "No barrier", "description": (
                    "Both sides say what they mean clearly and directly; nothing systematic gets in the way."
                )},
            ]},
        ),
        QuestionSpec(
            key="unresolved_confusion", kind=Kind.LIKERT, rationale="optional", dimension="unresolved_confusion",
            prompt=(
                "When the conversation ended, how much confusion about the situation and each side's goals "
                "was left?"
            ),
            help_text="Higher means less confusion: 5 when everything was cleared up, 1 when the talk fell apart.",
            options=_anchors(
                (1, "Incoherent", "The talk does not hang together: the situation and goals are ignored or "
                                  "twisted, key questions go unanswered and the two talk past each other."),
                (2, "Much confusion", "Serious misunderstandings about the situation or the goals remain; even "
                                      "if the exchange sounds smooth, what at least one side wants is still unclear."),
                (3, "Some confusion", "Parts of the situation and goals are understood, but at least one key "
                                      "point stays vague, misread or never taken up."),
                (4, "Little confusion", "The situation and the main goals are clear; only side details such as "
                                        "timing, exact limits or small preferences are left open."),
                (5, "No confusion left", "The situation and what each side wants are fully cleared up; "
                                         "nothing remains ambiguous."),
            ),
        ),
        QuestionSpec(
            key="mutual_understanding", kind=Kind.LIKERT, rationale="optional", dimension="mutual_understanding",
            prompt=(
                "When the conversation ended, how well did the two sides understand each other's views, "
                "intentions and goals in this situation?"
            ),
            help_text="Judge understanding of the situation at hand, not general friendliness.",
            options=_anchors(
                (1, "Talking past each other", "They drift off topic or at cross purposes; neither takes up "
                                               "the other's aims and nothing is shared."),
                (2, "Little understanding", "One or both keep misreading the other's aims; they may agree on "
                                            "pleasantries but miss what the situation is about."),
                (3, "Partial understanding", "Each grasps part of the other's aims, but key intentions are "
                                             "still misread or pushed aside."),
                (4, "Good understanding", "Both show they understand each other's aims here, though finer "
                                          "points such as emotional tone or secondary motives slip by."),
                (5, "Full alignment", "Both clearly understand each other's goals, intentions and strategies "
                                      "in this situation, and the talk stays on it."),
            ),
        ),
    ),
)

SOTOPIA_EVAL = PresetSpec(
    name="Sotopia-EVAL",
    description=(
        "Rate each character on Sotopia's seven dimensions, each on its own range, and give the reason "
        "for every score. The annotator sees both characters' goals and backgrounds, although the "
        "characters themselves only knew part of each other's."
    ),
    questions=(
        _sotopia_question(
            "goal", "How far did this character get toward their own social goal?",
            "Reread the character's goal first. 0 means no progress at all; give points for real effort or "
            "partial success, at least 5 once the main goal is met even if a stretch target was missed, "
            "and 10 when the goal is fully achieved.",
            "No progress", "Goal fully achieved",
        ),
        _sotopia_question(
            "believability", "How natural, and how true to their profile, was this character's behaviour?",
            "Watch for slips such as confusing who is who, echoing the other side for no reason or "
            "politeness that does not fit the moment, and check that choices suit the character's "
            "personality and values. One small slip should cost a little, not everything. "
            "0 = not believable at all, 10 = entirely believable.",
            "Not believable", "Entirely believable",
        ),
        _sotopia_question(
            "relationship", "How did the conversation change this character's relationship with the other side?",
            "Compare the relationship before and after, including the character's standing or reputation. "
            "0 means no real change; above 0 it improved, below 0 it got worse. Keep the ends for extremes: "
            "+5 is strangers becoming close friends, -5 a bond broken for good. Merely reaching an "
            "agreement is worth about 0 or 1.",
            "Broken for good", "Greatly improved",
        ),
        _sotopia_question(
            "knowledge", "How much new and important information did this character gain?",
            "Ask what the character learned, whether it was new to them and whether it matters to them. "
            "0 = nothing new; 10 = new knowledge that is important in general, not just handy in this one "
            "exchange.",
            "Nothing new", "Important new knowledge",
        ),
        _sotopia_question(
            "secret", "Did this character keep what they wanted to keep hidden?",
            "First name the secret or hidden intention, then judge how much of it came out and how much it "
            "mattered. 0 = nothing revealed; -10 = a critical secret given away. Weigh its importance: "
            "letting slip a planned surprise is not -10, confessing a grave secret is.",
            "Critical secret revealed", "Nothing revealed",
        ),
        _sotopia_question(
            "social_rules", "Did this character break social norms or laws in this conversation?",
            "Count only what happens in the conversation. 0 = no rule broken; a lapse of manners costs a "
            "point or two; -10 is kept for serious crimes.",
            "Serious crime", "No rule broken",
        ),
        _sotopia_question(
            "financial", "Did this character gain or lose money or material goods?",
            "Include short-term gains such as cash or food and long-term ones such as a job or shares. Judge "
            "by the real value and by what it means to the character: a meal is worth about +1. Leave out "
            "health, feelings and other non-material effects. 0 = no change, +5 = a large gain, "
            "-5 = a large loss.",
            "Large loss", "Large gain",
        ),
    ),
)

SHREC_SPANS = PresetSpec(
    name="SHREC error and competency spans",
    description=(
        "Mark stretches of the conversation where an agent made a social error or showed social "
        "competence, tag the social attributes involved, explain each mark and, for errors, say what "
        "the agent should have done instead (after the SHREC annotation guidelines)."
    ),
    questions=(
        QuestionSpec(
            key="spans", kind=Kind.SPAN, required=False,
            prompt="Mark the moments where an agent made a social error or showed social competence.",
            help_text=(
                "Select the words or turns, then label the span. An error is behaviour that goes against "
                "what the other person could reasonably expect and makes the agent seem less socially "
                "capable; a competency is noticing social cues and answering them the way the other person "
                "would hope. Tag every social attribute involved, say why you marked it and, for an error, "
                "write what the agent should have done. Spans may overlap; leave none if nothing stands out."
            ),
            options={
                "labels": list(SPAN_LABELS),
                "attributes": [
                    "emotions", "engagement", "conversational-mechanics", "knowledge-state",
                    "intention", "social-context", "social-norms",
                ],
            },
        ),
        QuestionSpec(
            key="overall_comment", kind=Kind.TEXT, required=False,
            prompt="Anything else about the agents' social behaviour worth noting?",
            help_text="Optional. Patterns across the whole conversation that no single span captures.",
            options={"max_length": DEFAULT_TEXT_MAX_LENGTH},
        ),
    ),
)


def _mediator_question(key: str, prompt: str, help_text: str, *anchors: tuple[int, str, str]) -> QuestionSpec:
    return QuestionSpec(
        key=key, kind=Kind.LIKERT, prompt=prompt, help_text=help_text, rationale="optional", options=_anchors(*anchors)
    )


PROMEDIATE = PresetSpec(
    name="ProMediate mediator rating",
    description=(
        "Rate an AI mediator's message in a multi-party negotiation on four kinds of obstacle it may "
        "address, each on its own, and judge which of two conversation excerpts is closer to agreement "
        "(after ProMediate's human evaluation)."
    ),
    questions=(
        _mediator_question(
            "perception_alignment", "Did the mediator help the parties see the issues the same way?",
            "Read the conversation so far, then the mediator's message. Look for misunderstandings cleared "
            "up and shared goals brought to light.",
            (1, "Missed", "Left diverging views alone, even when a party stated them plainly."),
            (2, "Slight", "Touched a divergence only in passing, or too late to make a difference."),
            (3, "Obvious ones only", "Took up plain divergences but missed subtle or unspoken ones."),
            (4, "Most", "Took up most divergences, including some that were only implied."),
            (5, "Ahead of it", "Kept watch on the group and surfaced subtle divergences before they grew."),
        ),
        _mediator_question(
            "emotional_dynamics", "Did the mediator deal with the feelings in the conversation?",
            "Think of negative emotions such as anger, distrust or grief: did the message ease tension or "
            "build empathy?",
            (1, "Ignored", "Passed over emotional cues and left the tension as it was."),
            (2, "Token", "Noticed the emotion but answered it in a perfunctory way."),
            (3, "Surface only", "Acknowledged open displays of feeling but missed what lay beneath them."),
            (4, "Attentive", "Answered most emotional signals and eased some of the tension."),
            (5, "Skilful", "Handled the emotions well and made it feel safe to speak."),
        ),
        _mediator_question(
            "cognitive_challenges", "Did the mediator help the parties reason more clearly?",
            "Think of faulty reasoning, biases such as anchoring on a first number, or too few options on "
            "the table.",
            (1, "Missed", "Let flawed reasoning and thinking traps pass."),
            (2, "Slight", "Hinted at a reasoning problem without helping to fix it."),
            (3, "Basic fixes", "Corrected plain reasoning errors but not the deeper ones."),
            (4, "Helpful", "Fixed most reasoning problems, including some less obvious ones."),
            (5, "Proactive", "Spotted and resolved complex reasoning problems on its own initiative."),
        ),
        _mediator_question(
            "communication_breakdowns", "Did the mediator get the conversation working again?",
            "Think of restoring dialogue, reframing what was said, summing up key points and helping the "
            "parties reconnect.",
            (1, "No repair", "Did not respond to breakdowns or confusion."),
            (2, "Slight", "Acknowledged a breakdown without really repairing it."),
            (3, "Surface repair", "Repaired the visible breakdowns but left gaps in how the issues were framed."),
            (4, "Good repair", "Repaired most breakdowns and reconnected the parties."),
            (5, "Restored", "Got the dialogue going again and reframed it constructively."),
        ),
        QuestionSpec(
            key="closer_to_agreement", kind=Kind.PAIRWISE, required=False, rationale="optional",
            prompt="Which conversation handled the conflict better: in which are the parties closer to agreement?",
            help_text=(
                "Only for items that pair two excerpts of the same negotiation. Judge how far the parties "
                "agree on the issues, not how polite they are; choose 'About the same' only when you "
                "really cannot tell."
            ),
            options={"choices": [
                {"value": "A", "label": "Conversation A"},
                {"value": "B", "label": "Conversation B"},
                {"value": "tie", "label": "About the same"},
            ]},
        ),
    ),
    seats_needed=3,
    seats_reason=(
        "its questions rate a mediator's turns in a multi-party negotiation, so every episode needs at "
        "least three seats (two parties and the mediator); a two-person conversation has no mediator"
    ),
)


def preset_misfit(key: str, seats: int) -> str:
    """Why episodes with ``seats`` seats cannot be rated with preset ``key``; empty when they can.

    The one check behind the study form and the demo loader, so that no annotator is asked to rate
    someone (a mediator) who is not in the conversation.
    """
    spec = PRESETS.get(key)
    if spec is None or seats >= spec.seats_needed:
        return ""
    return spec.seats_reason


PRESETS: dict[str, PresetSpec] = {
    "socialveil": SOCIALVEIL,
    "sotopia-eval": SOTOPIA_EVAL,
    "shrec-spans": SHREC_SPANS,
    "promediate": PROMEDIATE,
}


def install_preset(key: str) -> Scheme:
    """The newest scheme made from preset ``key``, created (version 1, with its questions) if there is none.

    Safe to call twice, or from two processes at once. Should a scheme of another origin already
    use the preset's name, the preset takes the next free version of that name.
    """
    try:
        spec = PRESETS[key]
    except KeyError:
        raise ValueError(f"unknown preset {key!r}; known presets: {', '.join(PRESETS)}") from None
    for attempt in range(3):
        existing = Scheme.objects.filter(preset=key).order_by("-version", "-pk").first()
        if existing is not None:
            return existing
        try:
            with transaction.atomic():
                scheme = Scheme.objects.create(
                    name=spec.name, version=_next_version(spec.name), preset=key, description=spec.description
                )
                Question.objects.bulk_create(q.build(scheme, position) for position, q in enumerate(spec.questions))
                return scheme
        except IntegrityError:  # someone else created it (or took the version) meanwhile: look again
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------------
# Checking options, questions and schemes


def check_options(kind: str, options: Any) -> None:
    """Refuse options that do not fit the question kind; each message names the option's path.

    Raises ``ValidationError`` listing every problem, e.g. ``options.anchors[2].value: expected 3
    (anchor values must be consecutive whole numbers, rising)``. Span attributes are checked
    against the ``SocialAttribute`` table.
    """
    problems = option_problems(kind, options)
    if problems:
        raise ValidationError([ValidationError(problem, code="invalid_options") for problem in problems])


def option_problems(kind: str, options: Any) -> list[str]:
    """What is wrong with ``options`` for a question of ``kind``, as messages (empty when fine)."""
    if kind not in _OPTION_NAMES:
        return [f"kind: {kind!r} is not a question kind; use one of {', '.join(_OPTION_NAMES)}"]
    if not isinstance(options, dict):
        return ["options: must be an object of named options"]
    allowed = _OPTION_NAMES[kind]
    problems = [
        f"options.{name}: {kind} questions take no such option (they take {', '.join(allowed)})"
        for name in options if name not in allowed
    ]
    return problems + _KIND_CHECKS[kind](options)


def check_questions(questions: Iterable[Question]) -> None:
    """Refuse a list of questions that cannot form a scheme; usable on unsaved rows (e.g. in a formset).

    Checks at least one question, keys that are unique slugs and cannot collide as form fields,
    positions 0..n-1, and each question on its own (see ``question_problems``). Raises one
    ``ValidationError`` listing every problem.
    """
    questions = list(questions)
    problems = []
    if not questions:
        problems.append("questions: add at least one question")
    keys = [q.key for q in questions]
    for key in sorted({k for k in keys if keys.count(k) > 1}):
        problems.append(f"{key}: more than one question uses this key")
    positions = sorted(q.position for q in questions)
    if questions and positions != list(range(len(questions))):
        problems.append(
            f"positions: number the questions 0 to {len(questions) - 1} without gaps or repeats "
            f"(found {', '.join(str(p) for p in positions)})"
        )
    per_seat_keys = {q.key for q in questions if q.per_seat}
    for key in keys:
        base, _, seat = key.rpartition("-")
        if seat.isdigit() and base in per_seat_keys:
            problems.append(f"{key}: clashes with the per-seat fields of question {base!r}; choose another key")
    for question in questions:
        problems.extend(question_problems(question))
    if problems:
        raise ValidationError([ValidationError(problem, code="invalid_scheme") for problem in problems])


def question_problems(question: Question) -> list[str]:
    """What is wrong with one question on its own, each message starting with its key."""
    key = question.key or "(no key)"
    problems = []
    if not question.key or not _KEY_PATTERN.match(question.key) or len(question.key) > _KEY_MAX_LENGTH:
        problems.append(f"key: use up to {_KEY_MAX_LENGTH} letters, digits, hyphens or underscores")
    if not (question.prompt or "").strip():
        problems.append("prompt: write the question the annotator answers")
    problems.extend(option_problems(question.kind, question.options))
    if question.kind == Kind.SPAN:
        if question.per_seat:
            problems.append("per_seat: span questions cover the whole transcript; they cannot be asked per seat")
        if question.rationale != "none":
            problems.append("rationale: span questions ask for a rationale on every span; set it to 'none'")
    if question.dimension:
        problems.extend(_dimension_problems(question))
    if question.truth:
        problems.extend(_truth_problems(question))
    return [f"{key}: {problem}" for problem in problems]


def check_editable(scheme: Scheme) -> None:
    """Refuse changes to a frozen scheme, reading the database so a stale copy cannot slip through.

    Call it from a form's ``clean`` (the message then shows on the form) or from an admin's
    ``save_model``/``delete_model`` as a last guard.
    """
    frozen_at = scheme.frozen_at
    if frozen_at is None and scheme.pk is not None:
        frozen_at = Scheme.objects.filter(pk=scheme.pk).values_list("frozen_at", flat=True).first()
    if frozen_at is not None:
        since = timezone.localtime(frozen_at).strftime("%Y-%m-%d %H:%M")
        raise ValidationError(
            f"“{scheme}” is frozen since {since}: annotations were submitted under it, so its questions "
            "can no longer change; make a new version to edit it.",
            code="frozen",
        )


def freeze(scheme: Scheme) -> None:
    """Mark the scheme frozen, once: the first call sets ``frozen_at``, later calls keep it."""
    if scheme.pk is None:
        raise ValueError("save the scheme before freezing it")
    Scheme.objects.filter(pk=scheme.pk, frozen_at__isnull=True).update(frozen_at=timezone.now())
    scheme.frozen_at = Scheme.objects.values_list("frozen_at", flat=True).get(pk=scheme.pk)


def new_version(scheme: Scheme) -> Scheme:
    """An editable copy of ``scheme`` (same name, preset and questions) under the next free version.

    Copying the newest version gives ``version + 1``; copying an older one still never collides.
    """
    if scheme.pk is None:
        raise ValueError("save the scheme before copying it")
    questions = list(scheme.questions.all())
    for attempt in range(3):
        try:
            with transaction.atomic():
                copy_ = Scheme.objects.create(
                    name=scheme.name, version=_next_version(scheme.name), preset=scheme.preset,
                    description=scheme.description,
                )
                Question.objects.bulk_create(_copy_question(q, copy_) for q in questions)
                return copy_
        except IntegrityError:  # another copy took the version meanwhile
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _next_version(name: str) -> int:
    versions = Scheme.objects.filter(name=name).values_list("version", flat=True)
    return max(versions, default=0) + 1


def _copy_question(question: Question, scheme: Scheme) -> Question:
    return Question(
        scheme=scheme, key=question.key, position=question.position, kind=question.kind, prompt=question.prompt,
        help_text=question.help_text, required=question.required, per_seat=question.per_seat,
        rationale=question.rationale, options=copy.deepcopy(question.options), dimension=question.dimension,
        truth=question.truth,
    )


def _dimension_problems(question: Question) -> list[str]:
    found = JUDGE_DIMENSIONS.get(question.dimension)
    if found is None:
        known = ", ".join(JUDGE_DIMENSIONS)
        return [f"dimension: {question.dimension!r} is not an evaluation dimension; use one of {known}"]
    dimension = found[1]
    problems = []
    if question.kind not in NUMERIC_KINDS:
        problems.append("dimension: only Likert and slider questions can measure a dimension")
    if question.per_seat != dimension.per_seat:
        asked = "per seat" if dimension.per_seat else "once per episode"
        problems.append(f"per_seat: {dimension.key} is scored {asked}, so the question must be asked the same way")
    return problems


def _truth_problems(question: Question) -> list[str]:
    kinds = TRUTH_SOURCES.get(question.truth)
    if kinds is None:
        return [f"truth: {question.truth!r} is not a known source; use one of {', '.join(TRUTH_SOURCES)}"]
    if question.kind not in kinds or question.per_seat:
        return [f"truth: {question.truth} can only check a categorical question asked once per episode"]
    if question.truth == "episode.barrier":
        values = {c.get("value") for c in _choices_of(question)}
        unknown = sorted(str(v) for v in values - set(Barrier.objects.values_list("key", flat=True)))
        if unknown:
            return [f"options.choices: no barrier has the key {', '.join(unknown)}, so it could never match the truth"]
    return []


def _choices_of(question: Question) -> list[dict[str, Any]]:
    choices = question.options.get("choices") if isinstance(question.options, dict) else None
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text_problems(path: str, value: Any, *, required: bool) -> list[str]:
    if value is None:
        return [f"{path}: is missing"] if required else []
    if not isinstance(value, str):
        return [f"{path}: must be text"]
    if required and not value.strip():
        return [f"{path}: must not be empty"]
    return []


def _unknown_key_problems(path: str, item: dict[str, Any], allowed: Sequence[str]) -> list[str]:
    return [f"{path}.{name}: not a field here (use {', '.join(allowed)})" for name in item if name not in allowed]


def _choice_problems(options: dict[str, Any]) -> list[str]:
    choices = options.get("choices")
    if not isinstance(choices, list):
        return ["options.choices: give a list of choices, each {value, label}"]
    problems = []
    if len(choices) < 2:
        problems.append("options.choices: give at least two choices")
    seen: set[str] = set()
    for index, choice in enumerate(choices):
        path = f"options.choices[{index}]"
        if not isinstance(choice, dict):
            problems.append(f"{path}: must be an object with a value and a label")
            continue
        problems.extend(_unknown_key_problems(path, choice, ("value", "label", "description")))
        value = choice.get("value")
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{path}.value: must be non-empty text")
        elif value != value.strip() or len(value) > CHOICE_VALUE_MAX_LENGTH:
            problems.append(f"{path}.value: use at most {CHOICE_VALUE_MAX_LENGTH} characters, no outer spaces")
        elif value in seen:
            problems.append(f"{path}.value: {value!r} is already the value of an earlier choice")
        else:
            seen.add(value)
        problems.extend(_text_problems(f"{path}.label", choice.get("label"), required=True))
        if "description" in choice:
            problems.extend(_text_problems(f"{path}.description", choice["description"], required=False))
    return problems


def _likert_problems(options: dict[str, Any]) -> list[str]:
    anchors = options.get("anchors")
    if not isinstance(anchors, list):
        return ["options.anchors: give a list of anchors, each {value, label, description}"]
    problems = []
    if len(anchors) < 3:
        problems.append("options.anchors: give at least three anchors")
    previous: int | None = None
    for index, anchor in enumerate(anchors):
        path = f"options.anchors[{index}]"
        if not isinstance(anchor, dict):
            problems.append(f"{path}: must be an object with a value, a label and a description")
            previous = None
            continue
        problems.extend(_unknown_key_problems(path, anchor, ("value", "label", "description")))
        value = anchor.get("value")
        if not _is_whole(value):
            problems.append(f"{path}.value: must be a whole number")
            value = None
        elif previous is not None and value != previous + 1:
            problems.append(
                f"{path}.value: expected {previous + 1} (anchor values must be consecutive whole numbers, rising)"
            )
        previous = value
        problems.extend(_text_problems(f"{path}.label", anchor.get("label"), required=True))
        problems.extend(_text_problems(f"{path}.description", anchor.get("description"), required=True))
    return problems


def _slider_problems(options: dict[str, Any]) -> list[str]:
    problems = [
        f"options.{name}: must be a number" for name in ("min", "max", "step") if not _is_number(options.get(name))
    ]
    if not problems:
        low, high, step = options["min"], options["max"], options["step"]
        if low >= high:
            problems.append(f"options.max: must be greater than min ({low})")
        if step <= 0:
            problems.append("options.step: must be greater than 0")
        elif low < high and not _on_grid(high, low, step):
            problems.append(f"options.step: the range {low} to {high} must be a whole number of steps of {step}")
    if "labels" in options:
        labels = options["labels"]
        if not isinstance(labels, dict):
            problems.append('options.labels: must be an object {"min": ..., "max": ...}')
        else:
            problems.extend(_unknown_key_problems("options.labels", labels, ("min", "max")))
            for end in ("min", "max"):
                if end in labels:
                    problems.extend(_text_problems(f"options.labels.{end}", labels[end], required=True))
    return problems


def _span_problems(options: dict[str, Any]) -> list[str]:
    problems = []
    labels = options.get("labels")
    if not isinstance(labels, list) or not labels:
        problems.append(f"options.labels: give a non-empty list drawn from {', '.join(SPAN_LABELS)}")
    else:
        for index, label in enumerate(labels):
            if label not in SPAN_LABELS:
                problems.append(f"options.labels[{index}]: {label!r} is not a span label; use {', '.join(SPAN_LABELS)}")
            elif labels.index(label) != index:
                problems.append(f"options.labels[{index}]: {label!r} is listed twice")
    attributes = options.get("attributes")
    if not isinstance(attributes, list) or not attributes:
        problems.append("options.attributes: give a non-empty list of social attribute keys")
    else:
        known = set(SocialAttribute.objects.values_list("key", flat=True))
        for index, key in enumerate(attributes):
            if not isinstance(key, str) or key not in known:
                problems.append(
                    f"options.attributes[{index}]: {key!r} is not a social attribute; "
                    f"use one of {', '.join(sorted(known)) or '(none defined)'}"
                )
            elif attributes.index(key) != index:
                problems.append(f"options.attributes[{index}]: {key!r} is listed twice")
    return problems


def _text_option_problems(options: dict[str, Any]) -> list[str]:
    if "max_length" in options and not (_is_whole(options["max_length"]) and options["max_length"] > 0):
        return ["options.max_length: must be a whole number greater than 0"]
    return []


_KIND_CHECKS = {
    Kind.CATEGORICAL: _choice_problems,
    Kind.LIKERT: _likert_problems,
    Kind.SLIDER: _slider_problems,
    Kind.SPAN: _span_problems,
    Kind.TEXT: _text_option_problems,
    Kind.PAIRWISE: _choice_problems,
}


# ---------------------------------------------------------------------------------------------
# Reading an annotation form


def field_name(question: Question, seat: int | None = None, part: str = "answer") -> str:
    """The form field for one part of a question: ``answer-<key>[-<seat>]``, ``rationale-…``, ``spans-<key>``."""
    if part not in FIELD_PARTS:
        raise ValueError(f"unknown field part {part!r}; use one of {', '.join(FIELD_PARTS)}")
    if part == "spans" or seat is None:
        return f"{part}-{question.key}"
    return f"{part}-{question.key}-{seat}"


def question_label(question: Question) -> str:
    """A short name for the question in messages, made from its key: ``social_rules`` → ``Social rules``."""
    return question.key.replace("_", " ").replace("-", " ").capitalize()


@dataclass
class AnswerValue:
    """One answer as read from the form; ``number`` is set only for a valid Likert or slider value."""

    question: Question
    seat: int | None
    value: str
    number: float | None
    rationale: str


@dataclass
class SpanValue:
    """One marked span as read from the form (turn indexes inclusive, character end exclusive)."""

    question: Question
    label: str
    start_turn: int
    end_turn: int
    start_char: int | None
    end_char: int | None
    attributes: list[str]
    rationale: str
    correction: str

    @property
    def is_complete(self) -> bool:
        """Ready to submit: a rationale, a correction if it is an error, and at least one attribute."""
        return self.fits_span_table and bool(self.attributes)

    @property
    def fits_span_table(self) -> bool:
        """Meets the ``Span`` table's constraints (a rationale; a correction for an error)."""
        return bool(self.rationale.strip()) and (self.label != "error" or bool(self.correction.strip()))


@dataclass
class ParsedForm:
    """What ``parse_form`` read: the answers and spans to store, and problems keyed by field name."""

    answers: list[AnswerValue] = field(default_factory=list)
    spans: list[SpanValue] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def answer(self, key: str, seat: int | None = None) -> AnswerValue | None:
        """The answer to the question with ``key`` (for ``seat``), if one was read."""
        return next((a for a in self.answers if a.question.key == key and a.seat == seat), None)


def parse_form(
    scheme: Scheme,
    data: Mapping[str, Any],
    *,
    seats: Sequence[int],
    turn_lengths: Sequence[int],
    complete: bool,
    seat_labels: Mapping[int, str] | None = None,
) -> ParsedForm:
    """Read an annotation form for ``scheme`` (a QueryDict or a dict of field name → text).

    ``seats`` are the episode's seat positions (per-seat questions are read once for each);
    ``turn_lengths[i]`` is the length of turn i's content, against which span anchors are checked;
    ``seat_labels`` optionally names seats in messages (e.g. the character's name; otherwise
    "seat 1" for position 0).

    With ``complete=True`` (submitting) every required answer must be present and valid, required
    rationales written, and every span complete; values are stripped. With ``complete=False``
    (autosaving a draft) nothing is required and whatever was typed is kept as typed: ``value`` as
    entered, ``number`` only when it is a valid value, spans even without rationale, correction or
    attributes (see ``SpanValue.fits_span_table``). Only what cannot be stored at all is dropped —
    unreadable spans JSON, a span without a known label or anchored outside the transcript,
    unknown attributes — and each drop is reported in ``errors``, so a draft's ``ok`` means nothing
    was lost. The scheme's questions are assumed to pass ``check_questions``.
    """
    parsed = ParsedForm()
    seat_positions = list(dict.fromkeys(seats))
    known_attributes: set[str] | None = None
    for question in scheme.questions.all():
        if question.kind == Kind.SPAN:
            if known_attributes is None:
                known_attributes = set(SocialAttribute.objects.values_list("key", flat=True))
            _read_spans(question, data, parsed, turn_lengths=turn_lengths, complete=complete, known=known_attributes)
            continue
        for seat in seat_positions if question.per_seat else [None]:
            where = question_label(question)
            if seat is not None:
                where += f" ({(seat_labels or {}).get(seat) or f'seat {seat + 1}'})"
            _read_answer(question, seat, data, parsed, complete=complete, where=where)
    return parsed


def _field_text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    return "" if value is None else str(value)


def _read_answer(
    question: Question, seat: int | None, data: Mapping[str, Any], parsed: ParsedForm, *, complete: bool, where: str
) -> None:
    name = field_name(question, seat)
    rationale_name = field_name(question, seat, "rationale")
    value = _field_text(data, name)
    rationale = _field_text(data, rationale_name) if question.rationale != "none" else ""
    if not complete:
        if value or rationale:
            number = _check_value(question, value.strip())[1] if question.kind in NUMERIC_KINDS else None
            parsed.answers.append(AnswerValue(question, seat, value, number, rationale))
        return
    value, rationale = value.strip(), rationale.strip()
    if not value:
        if question.required:
            parsed.errors[name] = f"{where}: {_what_to_answer(question)}"
        elif rationale:
            parsed.errors[name] = f"{where}: you gave a reason but no answer; answer the question or clear the reason."
        return
    value, number, problem = _check_value(question, value)
    if problem:
        parsed.errors[name] = f"{where}: {problem}"
        return
    if question.rationale == "required" and not rationale:
        parsed.errors[rationale_name] = f"{where}: say briefly why you chose this answer."
    parsed.answers.append(AnswerValue(question, seat, value, number, rationale))


def _check_value(question: Question, value: str) -> tuple[str, float | None, str]:
    """(value to store, number, problem) for a non-empty stripped answer; problem is "" when fine."""
    options = question.options
    if question.kind in CHOICE_KINDS:
        if value in {c.get("value") for c in _choices_of(question)}:
            return value, None, ""
        return value, None, f"{value!r} is not one of the choices; {_what_to_answer(question)}"
    if question.kind == Kind.TEXT:
        limit = options.get("max_length", DEFAULT_TEXT_MAX_LENGTH)
        if len(value) > limit:
            return value, None, f"keep the answer to {limit} characters (it has {len(value)})."
        return value, None, ""
    number = _parse_number(value)
    low, high, step = _numeric_range(question)
    if number is None or not low <= number <= high:
        return value, None, _what_to_answer(question)
    if not _on_grid(number, low, step):
        if step == 1 and float(low).is_integer():
            return value, None, f"choose a whole number from {_format_number(low)} to {_format_number(high)}."
        return value, None, (
            f"choose a value from {_format_number(low)} to {_format_number(high)} in steps of {_format_number(step)}."
        )
    return _format_number(number), number, ""


def _what_to_answer(question: Question) -> str:
    if question.kind in CHOICE_KINDS:
        return f"choose one of: {', '.join(str(c.get('label', c.get('value'))) for c in _choices_of(question))}."
    if question.kind in NUMERIC_KINDS:
        low, high, _ = _numeric_range(question)
        return f"choose a value from {_format_number(low)} to {_format_number(high)}."
    return "write an answer."


def _numeric_range(question: Question) -> tuple[float, float, float]:
    options = question.options
    if question.kind == Kind.LIKERT:
        values = [a["value"] for a in options["anchors"]]
        return min(values), max(values), 1
    return options["min"], options["max"], options["step"]


def _parse_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _on_grid(number: float, low: float, step: float) -> bool:
    steps = (number - low) / step
    return abs(steps - round(steps)) < 1e-9 * max(1.0, abs(steps))


def _format_number(number: float) -> str:
    """The number as stored text: ``7`` rather than ``7.0``, otherwise the shortest exact form."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def _read_spans(
    question: Question,
    data: Mapping[str, Any],
    parsed: ParsedForm,
    *,
    turn_lengths: Sequence[int],
    complete: bool,
    known: set[str],
) -> None:
    name = field_name(question, part="spans")
    where = question_label(question)
    raw = _field_text(data, name)
    items: Any = []
    if raw.strip():
        try:
            items = json.loads(raw)
        except ValueError:
            parsed.errors[name] = f"{where}: the marked spans could not be read; reload the page and mark them again."
            return
    if not isinstance(items, list):
        parsed.errors[name] = f"{where}: the marked spans could not be read (expected a list); reload the page."
        return
    allowed = set(question.options.get("attributes", [])) & known
    problems = []
    found = 0
    for number, item in enumerate(items, start=1):
        span, span_problems = _read_span(question, item, turn_lengths=turn_lengths, complete=complete, allowed=allowed)
        if span_problems:
            problems.append(f"span {number}: {', '.join(span_problems)}")
        if span is not None:
            parsed.spans.append(span)
            found += 1
    if complete and question.required and not found and not problems:
        problems.append("mark at least one span")
    if problems:
        parsed.errors[name] = f"{where}: " + "; ".join(problems) + "."


def _read_span(
    question: Question, item: Any, *, turn_lengths: Sequence[int], complete: bool, allowed: set[str]
) -> tuple[SpanValue | None, list[str]]:
    """The span in ``item`` (None when it cannot be stored at all) and what is wrong with it."""
    if not isinstance(item, dict):
        return None, ["not a span (expected an object)"]
    labels = question.options.get("labels", [])
    label = item.get("label")
    if label not in labels:
        return None, [f"label it {' or '.join(labels)}"]
    anchors, problem = _span_anchors(item, turn_lengths)
    if problem:
        return None, [problem]
    problems = []
    attributes = item.get("attributes") or []
    if not isinstance(attributes, list):
        problems.append("attributes must be a list of social attribute keys")
        attributes = []
    kept = []
    for key in attributes:
        if key not in allowed:
            problems.append(f"{key!r} is not one of this question's social attributes")
        elif key not in kept:
            kept.append(key)
    texts = {}
    for part in ("rationale", "correction"):
        text = item.get(part)
        if text is not None and not isinstance(text, str):
            problems.append(f"the {part} must be text")
            text = None
        texts[part] = text or ""
    rationale, correction = texts["rationale"], texts["correction"]
    if complete:
        rationale, correction = rationale.strip(), correction.strip()
        if not rationale:
            problems.append("say why you marked it (rationale)")
        if label == "error" and not correction:
            problems.append("write what the agent should have done instead (correction)")
        if not kept:
            problems.append("choose at least one social attribute")
    return SpanValue(question, label, *anchors, kept, rationale, correction), problems


def _span_anchors(
    item: dict[str, Any], turn_lengths: Sequence[int]
) -> tuple[tuple[int, int, int | None, int | None], str]:
    """(start_turn, end_turn, start_char, end_char) and a problem ("" when the anchors are sound)."""
    unsound = (0, 0, None, None)
    start_turn = item.get("start_turn")
    end_turn = item.get("end_turn", start_turn)
    if end_turn is None:
        end_turn = start_turn
    if not (_is_whole(start_turn) and _is_whole(end_turn)):
        return unsound, "start_turn and end_turn must be whole numbers"
    if start_turn < 0:
        return unsound, f"turn {start_turn} is outside the transcript"
    if end_turn < start_turn:
        return unsound, f"it ends (turn {end_turn}) before it starts (turn {start_turn})"
    if end_turn >= len(turn_lengths):
        return unsound, f"turn {end_turn} is outside the transcript, which has {len(turn_lengths)} turns (from 0)"
    start_char, end_char = item.get("start_char"), item.get("end_char")
    if start_char is None and end_char is None:
        return (start_turn, end_turn, None, None), ""
    if start_char is None or end_char is None:
        return unsound, "give both start_char and end_char, or neither"
    if not (_is_whole(start_char) and _is_whole(end_char)) or start_char < 0 or end_char < 0:
        return unsound, "start_char and end_char must be whole numbers from 0"
    for name, offset, turn in (("start_char", start_char, start_turn), ("end_char", end_char, end_turn)):
        if offset > turn_lengths[turn]:
            return unsound, f"{name} {offset} is past the end of turn {turn} ({turn_lengths[turn]} characters)"
    if start_turn == end_turn and end_char <= start_char:
        return unsound, f"the character range {start_char}–{end_char} is empty or reversed"
    return (start_turn, end_turn, start_char, end_char), ""
