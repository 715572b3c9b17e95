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

from benchmark.instruments.checks import is_whole
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.targets import GOAL, SEAT, TURN, Target
from benchmark.instruments.values import check_labels, check_value, what_to_answer
from benchmark.models import ActionType, Instrument, Question, Seat, SocialAttribute, Turn

from .models import Annotation, Span

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
) -> ParsedForm:
    """Read an annotation form for ``instrument`` (a QueryDict, or a dict of field name → text or list of texts).

    ``seats`` are the episode's seat positions (per-seat questions are read once for each);
    ``turn_lengths[i]`` is the length of turn i's content, against which span anchors are checked;
    ``seat_labels`` optionally names seats in messages (e.g. the character's name; otherwise
    "seat 1" for position 0); ``goals`` are the episode's goals, each read once for a per-goal question
    and named in messages by character and text; ``questions``, when given, are the instrument's
    questions the form asks (the probes an annotator is asked, ``annotator.probes``), else all of them;
    ``agent_turns`` are the indexes of the turns a per-turn question is asked of (the agents' turns).

    With ``complete=True`` (submitting) every required answer must be present and valid, required
    rationales written, and every span complete; values are stripped. With ``complete=False``
    (autosaving a draft) nothing is required and whatever was typed is kept as typed: ``value`` as
    entered, ``number`` only when it is a valid value, spans even without rationale, correction or
    attributes (see ``SpanValue.fits_span_table``). Only what cannot be stored at all is dropped —
    unreadable spans JSON, a span without a known label or anchored outside the transcript,
    unknown attributes — and each drop is reported in ``errors``, so a draft's ``ok`` means nothing
    was lost. The instrument's questions are assumed to pass ``check_questions``, span questions to be
    asked once per episode (``Study.clean``).
    """
    parsed = ParsedForm()
    seat_positions = list(dict.fromkeys(seats))
    known_attributes: set[str] | None = None
    for question in instrument.questions.all() if questions is None else questions:
        kind = get_kind(question.kind)
        if kind.whole_transcript:
            if known_attributes is None:
                known_attributes = set(SocialAttribute.objects.values_list("key", flat=True))
            _read_spans(question, data, parsed, turn_lengths=turn_lengths, complete=complete, known=known_attributes)
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


def _typed(text: str) -> str:
    """``text`` without NUL characters: no keyboard types one, and PostgreSQL cannot store one in text
    (a draft saved as posted was a 500 there)."""
    return text.replace("\x00", "")


def _field_text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    return "" if value is None else _typed(str(value))


def _field_texts(data: Mapping[str, Any], name: str) -> list[str]:
    """Every value posted under ``name`` (checkboxes post one per ticked box)."""
    if hasattr(data, "getlist"):
        values = data.getlist(name)
    else:
        value = data.get(name)
        values = value if isinstance(value, list | tuple) else [] if value is None else [value]
    return [_typed(str(value)) for value in values]


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
        except (ValueError, RecursionError):  # deep nesting ([[[[…) is a RecursionError
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
        texts[part] = _typed(text or "")
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
    if not (is_whole(start_turn) and is_whole(end_turn)):
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
    if not (is_whole(start_char) and is_whole(end_char)) or start_char < 0 or end_char < 0:
        return unsound, "start_char and end_char must be whole numbers from 0"
    for name, offset, turn in (("start_char", start_char, start_turn), ("end_char", end_char, end_turn)):
        if offset > turn_lengths[turn]:
            return unsound, f"{name} {offset} is past the end of turn {turn} ({turn_lengths[turn]} characters)"
    if start_turn == end_turn and end_char <= start_char:
        return unsound, f"the character range {start_char}–{end_char} is empty or reversed"
    return (start_turn, end_turn, start_char, end_char), ""


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
                spans[span.question_id].append(_span_json(span))
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


def _span_json(span: Span) -> dict[str, Any]:
    """A stored span as the span editor (static/annotator/spans.js) and ``parse_form`` read it."""
    return {
        "label": span.label,
        "start_turn": span.start_turn,
        "end_turn": span.end_turn,
        "start_char": span.start_char,
        "end_char": span.end_char,
        "attributes": [attribute.key for attribute in span.attributes.all()],
        "rationale": span.rationale,
        "correction": span.correction,
    }
