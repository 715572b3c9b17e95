"""Reading an annotation form: the answers and spans an annotator posted for one item.

An annotation form posts, per question and target (``benchmark.instruments.targets``: the episode,
or each seat, goal or agent turn for questions asked that way), the fields named by ``field_name``:
``answer-<key>[-<seat>|-g<goal id>|-t<turn index>]``, ``rationale-…`` and, for
span questions, ``spans-<key>`` holding a JSON array of spans. A multi-label question posts its
``answer-…`` field once per picked label. ``parse_form`` reads them strictly on submit and
leniently for an autosaved draft (see its docstring). Each answer is checked against its question
by ``benchmark.instruments.values``, the rule every respondent's answers follow; what this module
adds is the annotator's side: field names, messages that name the character, drafts, and spans.
``FormValues`` goes the other way: the values to show in the form again, posted or stored.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.http import QueryDict

from benchmark.episodes.turn_times import TurnTime
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.targets import GOAL, SEAT, TURN, Target
from benchmark.instruments.values import check_labels, check_value, what_to_answer
from benchmark.models import ActionType, Instrument, Question, Seat, SocialAttribute, Turn

from .models import Annotation
from .span_forms import SpanRules, SpanValue, read_spans, span_json

FIELD_PARTS = ("answer", "rationale", "spans")


EPISODE = Target.episode()


def field_name(question: Question, target: Target = EPISODE, part: str = "answer") -> str:
    """The form field for one part of a question about ``target``: ``answer-<key>`` (the episode),
    ``answer-<key>-<seat>``, ``answer-<key>-g<goal id>``, ``answer-<key>-t<turn index>``; ``rationale-…``;
    ``spans-<key>``."""
    if part not in FIELD_PARTS:
        raise ValueError(f"unknown field part {part!r}; use one of {', '.join(FIELD_PARTS)}")
    if part == "spans":
        return f"{part}-{question.key}"
    kind = target.kind
    if kind == GOAL:
        return f"{part}-{question.key}-g{target.goal}"
    if kind == SEAT:
        return f"{part}-{question.key}-{target.seat}"
    if kind == TURN:
        return f"{part}-{question.key}-t{target.turn}"
    if target != EPISODE:
        raise ValueError(f"a form has no field for {target.describe()} (a span is marked, not answered)")
    return f"{part}-{question.key}"


@dataclass(frozen=True)
class GoalRef:
    """A goal a per-goal question is asked about, as the form names it: whose it is and what it says."""

    pk: int
    character: str
    text: str

    @property
    def label(self) -> str:
        """``Character: goal text`` (long goals cut short), for messages."""
        text = self.text if len(self.text) <= 60 else self.text[:57].rstrip() + "…"
        return f"{self.character}: {text}"


def question_label(question: Question) -> str:
    """A short name for the question in messages, made from its key: ``social_rules`` → ``Social rules``."""
    return question.key.replace("_", " ").replace("-", " ").capitalize()


@dataclass
class AnswerValue:
    """One answer as read from the form; ``number`` is set only for a valid Likert or slider value.

    A multi-label answer is one ``AnswerValue`` per picked label, each with the question's rationale.
    """

    question: Question
    target: Target  # the episode, or the seat, goal or turn of a question asked per seat, goal or turn
    value: str
    number: float | None
    rationale: str


@dataclass
class ParsedForm:
    """What ``parse_form`` read: the answers and spans to store, and problems keyed by field name."""

    answers: list[AnswerValue] = field(default_factory=list)
    spans: list[SpanValue] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def answer(self, key: str, target: Target = EPISODE) -> AnswerValue | None:
        """The answer to the question with ``key`` about ``target``, if one was read (a multi-label's first label)."""
        return next((a for a in self.answers if a.question.key == key and a.target == target), None)

    def extend(self, other: ParsedForm) -> None:
        """Add what ``other`` read (another instrument's questions on the same page)."""
        self.answers.extend(other.answers)
        self.spans.extend(other.spans)
        self.errors.update(other.errors)

    def labels(self, key: str, target: Target = EPISODE) -> list[str]:
        """The labels read for the multi-label question with ``key`` about ``target``."""
        return [a.value for a in self.answers if a.question.key == key and a.target == target]


def parse_form(
    instrument: Instrument,
    data: Mapping[str, Any],
    *,
    seats: Sequence[int],
    turn_lengths: Sequence[int],
    complete: bool,
    seat_labels: Mapping[int, str] | None = None,
    goals: Sequence[GoalRef] = (),
    questions: Sequence[Question] | None = None,
    agent_turns: Sequence[int] = (),
    turn_times: Sequence[TurnTime] = (),
    default_seat: int | None = None,
    spans_need_rationale: bool = True,
) -> ParsedForm:
    """Read an annotation form for ``instrument`` (a QueryDict, or a dict of field name → text or list of texts).

    ``seats`` are the episode's seat positions (per-seat questions are read once for each);
    ``turn_lengths[i]`` is the length of turn i's content, against which span anchors are checked;
    ``seat_labels`` optionally names seats in messages (e.g. the character's name; otherwise
    "seat 1" for position 0); ``goals`` are the episode's goals, each read once for a per-goal question
    and named in messages by character and text; ``questions``, when given, are the instrument's
    questions the form asks (the probes an annotator is asked, ``annotator.probes``), else all of them;
    ``agent_turns`` are the indexes of the turns a per-turn question is asked of (the agents' turns).
    Spans (``annotator.span_forms``) are checked against the turns' times (``turn_times``: index, start_s,
    end_s), the seats (``default_seat`` is the one a span is about when it names none) and the study's
    rule ``spans_need_rationale``.

    With ``complete=True`` (submitting) every required answer must be present and valid, required
    rationales written, and every span complete; values are stripped. With ``complete=False``
    (autosaving a draft) nothing is required and whatever was typed is kept as typed: ``value`` as
    entered, ``number`` only when it is a valid value, spans even without rationale, correction or
    attributes. Only what cannot be stored at all is dropped —
    unreadable spans JSON, a span without a known label or anchored outside the transcript,
    unknown attributes — and each drop is reported in ``errors``, so a draft's ``ok`` means nothing
    was lost. The instrument's questions are assumed to pass ``check_questions``, span questions to be
    asked once per episode (``Study.clean``).
    """
    parsed = ParsedForm()
    seat_positions = list(dict.fromkeys(seats))
    span_rules = SpanRules(turn_lengths, turn_times, seat_positions, default_seat, spans_need_rationale)
    known_attributes: set[str] | None = None
    for question in instrument.questions.all() if questions is None else questions:
        kind = get_kind(question.kind)
        if kind.whole_transcript:
            if known_attributes is None:
                known_attributes = set(SocialAttribute.objects.values_list("key", flat=True))
            found, problem = read_spans(question, _field_text(data, field_name(question, part="spans")), span_rules,
                                        complete=complete, known=known_attributes)
            parsed.spans.extend(found)
            if problem:
                parsed.errors[field_name(question, part="spans")] = f"{question_label(question)}: {problem}"
            continue
        if question.scope == Question.Scope.GOAL:
            slots = [(Target.of_goal(goal.pk), f"{question_label(question)} ({goal.label})") for goal in goals]
        elif question.per_seat:
            slots = [
                (Target.of_seat(seat),
                 f"{question_label(question)} ({(seat_labels or {}).get(seat) or f'seat {seat + 1}'})")
                for seat in seat_positions
            ]
        elif question.scope == Question.Scope.TURN:
            slots = [(Target.of_turn(turn), f"{question_label(question)} ({Target.of_turn(turn).describe()})")
                     for turn in agent_turns]
        else:
            slots = [(EPISODE, question_label(question))]
        for target, where in slots:
            read = _read_labels if kind.posts_several_values else _read_answer
            read(question, target, data, parsed, complete=complete, where=where)
    return parsed


def agent_turns(seats: Sequence[Seat], turns: Sequence[Turn]) -> list[int]:
    """The indexes of the turns a per-turn question is asked of (``parse_form``'s ``agent_turns``): a language
    agent's turns that did something (not "did nothing", not leaving)."""
    agents = {seat.pk for seat in seats if seat.player == Seat.Player.AGENT}
    return [turn.index for turn in turns
            if turn.seat_id in agents and turn.action_type not in (ActionType.NONE, ActionType.LEAVE)]


def typed(text: str) -> str:
    """``text`` without NUL characters: no keyboard types one, and PostgreSQL cannot store one in text
    (a draft saved as posted was a 500 there)."""
    return text.replace("\x00", "")


def _field_text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    return "" if value is None else typed(str(value))


def _field_texts(data: Mapping[str, Any], name: str) -> list[str]:
    """Every value posted under ``name`` (checkboxes post one per ticked box)."""
    if hasattr(data, "getlist"):
        values = data.getlist(name)
    else:
        value = data.get(name)
        values = value if isinstance(value, list | tuple) else [] if value is None else [value]
    return [typed(str(value)) for value in values]


def _read_answer(
    question: Question, target: Target, data: Mapping[str, Any], parsed: ParsedForm, *, complete: bool, where: str,
) -> None:
    name = field_name(question, target)
    rationale_name = field_name(question, target, "rationale")
    value = _field_text(data, name)
    rationale = _field_text(data, rationale_name) if question.rationale != "none" else ""
    if not complete:
        if value or rationale:
            number = check_value(question, value.strip())[1] if get_kind(question.kind).numeric else None
            parsed.answers.append(AnswerValue(question, target, value, number, rationale))
        return
    value, rationale = value.strip(), rationale.strip()
    if not value:
        if question.required:
            parsed.errors[name] = f"{where}: {what_to_answer(question)}"
        elif rationale:
            parsed.errors[name] = f"{where}: you gave a reason but no answer; answer the question or clear the reason."
        return
    value, number, problem = check_value(question, value)
    if problem:
        parsed.errors[name] = f"{where}: {problem}"
        return
    if question.rationale == "required" and not rationale:
        parsed.errors[rationale_name] = f"{where}: say briefly why you chose this answer."
    parsed.answers.append(AnswerValue(question, target, value, number, rationale))


def _read_labels(
    question: Question, target: Target, data: Mapping[str, Any], parsed: ParsedForm, *, complete: bool, where: str,
) -> None:
    """A multi-label answer: one value per picked label, each label once (drafts keep what was posted)."""
    name = field_name(question, target)
    rationale_name = field_name(question, target, "rationale")
    labels = list(dict.fromkeys(label.strip() for label in _field_texts(data, name) if label.strip()))
    rationale = _field_text(data, rationale_name) if question.rationale != "none" else ""
    if complete:
        rationale = rationale.strip()
        if not labels:
            if question.required:
                parsed.errors[name] = f"{where}: {what_to_answer(question)}"
            elif rationale:
                parsed.errors[name] = (
                    f"{where}: you gave a reason but picked nothing; pick a label or clear the reason."
                )
            return
        labels, problem = check_labels(question, labels)
        if problem:
            parsed.errors[name] = f"{where}: {problem}"
            return
        if question.rationale == "required" and not rationale:
            parsed.errors[rationale_name] = f"{where}: say briefly why you chose these labels."
    elif not labels and rationale:
        labels = [""]  # a draft's reason written before any pick
    elif labels and not get_kind(question.kind).multi_valued:
        labels = get_kind(question.kind).check_values(question, labels)[0][:1]  # one row: the kind's text of them
    parsed.answers.extend(AnswerValue(question, target, label, None, rationale) for label in labels)


# The form's values when it is shown again


class FormValues:
    """Field values for the form: what was just posted, or what a stored annotation holds (its probes too)."""

    def __init__(self, posted: QueryDict | None, stored: dict[tuple[int, Target, str], list[str]]) -> None:
        self._posted = posted
        self._stored = stored

    @classmethod
    def posted(cls, data: QueryDict) -> FormValues:
        return cls(data, {})

    @classmethod
    def stored(cls, annotation: Annotation | None) -> FormValues:
        stored: dict[tuple[int, Target, str], list[str]] = defaultdict(list)
        if annotation is not None:
            responses = [annotation.response] + ([annotation.probes_response] if annotation.probes_response_id else [])
            for response in responses:
                for answer in response.answers.all():
                    where = (answer.question_id, Target.of(answer))
                    if answer.value:
                        stored[(*where, "answer")].append(answer.value)
                    stored[(*where, "rationale")][:] = [answer.reasoning]
            spans = defaultdict(list)
            for span in annotation.spans.all():
                spans[span.question_id].append(span_json(span))
            for question_id, rows in spans.items():
                stored[question_id, EPISODE, "spans"] = [json.dumps(rows)]
        return cls(None, dict(stored))

    def get(self, question: Question, target: Target, part: str) -> str:
        values = self.get_all(question, target, part)
        kind = get_kind(question.kind)
        if self._posted is not None and part == "answer" and kind.posts_several_values and not kind.multi_valued:
            return next(iter(kind.check_values(question, values)[0]), "")  # the posted places as the one stored text
        return values[-1] if values else ""

    def get_all(self, question: Question, target: Target, part: str) -> list[str]:
        """Every value of the field (several for a multi-label question's picked labels)."""
        if self._posted is not None:
            return self._posted.getlist(field_name(question, target, part))
        if part == "spans":
            target = EPISODE
        return self._stored.get((question.pk, target, part), [])
