"""The annotation item page, built from plain values so no template can reach what annotators must not see.

``ItemPage`` gathers, in a fixed number of queries, the scenario context, every character's name and
profile (a goal or secret only where a question rates it: ``_speakers``), the transcript text and the
instrument's questions with their stored or posted values: per episode, per character, or once per
goal of every character (labelled with the character's name and the goal's text), then the
scenario's probes when the study asks them (``annotator.probes``), without their correct option,
and none a goal on the page would answer. Its ``context`` holds no model instance at all — not the
assignment, study, annotation, question, barrier or social attribute either, since any of them leads
through its relations to an episode (``assignment.item.episode``, ``question.answers``,
``barrier.episodes``) — only the dataclasses below, each with exactly what the page shows. So an
episode's barrier, tag, source, settings or external id, a seat's model, strategy or barrier flag,
a turn's model, an evaluation, or another annotator's answers cannot reach the page, whatever a
template asks for (``tests/annotator/test_item_page_context.py`` walks the context to hold this).

An item that shows a window of its episode (``annotator.windows``) shows only those turns, asks its
per-turn questions of its ``target_turn`` alone, and highlights it, its speaker named "Mediator"; a snippet
comparison shows its two windows one after the other. The episode's condition (its barrier) is named only
when the instrument's preset rates how it came across (``PresetSpec.shows_condition``: ProMediate's
conversation quality asks how strongly the conflict mode shows). A SHREC human-baseline item shows its task above
its excerpt and asks that task's question alone (``annotator.human_baseline.page``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch, Q
from django.http import QueryDict
from django.utils import timezone

from benchmark.instruments import presets
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.targets import Target
from benchmark.models import PROFILE_LABELS, Answer, Barrier, Question, Relationship, Seat, SocialAttribute, Turn

from . import answer_forms, item_media, span_review
from . import assignment as assignments
from .answer_forms import FormValues, GoalRef
from .human_baseline.page import questions_for, task_view
from .models import Annotation, Assignment, Span, StudyItem
from .probes import asked_of_annotators, probes_for
from .transcript import MEDIATOR, item_conversations, rated_speaker, rated_turns


@dataclass(frozen=True)
class ItemRef:
    """The assignment as the page knows it: its id, for the form's URLs."""

    pk: int


@dataclass(frozen=True)
class StudyRef:
    """The study as the page names it."""

    title: str
    slug: str


@dataclass(frozen=True)
class VersionRef:
    """The annotation version on show, and which browser tab made its latest save (``annotator.drafts``)."""

    version: int
    status: str
    submitted_at: Any  # datetime | None
    saved_by_tab: str = ""
    tab_save: int = 0


@dataclass(frozen=True)
class QuestionView:
    """A question as the form asks it."""

    key: str
    kind: str
    prompt: str
    help_text: str
    required: bool
    rationale: str
    options: dict[str, Any]
    widget_template: str = ""  # the kind's widget partial
    whole_transcript: bool = False  # the kind is answered on the transcript (spans), not in a fieldset

    @classmethod
    def of(cls, question: Question) -> QuestionView:
        """The question without what an annotator must not see (its kind's hidden options, e.g. a
        multiple-choice question's correct value)."""
        kind = get_kind(question.kind)
        options = {name: value for name, value in (question.options or {}).items() if name not in kind.hidden_options}
        return cls(
            key=question.key, kind=question.kind, prompt=question.prompt, help_text=question.help_text,
            required=question.required, rationale=question.rationale, options=options,
            widget_template=kind.widget_template, whole_transcript=kind.whole_transcript,
        )


@dataclass(frozen=True)
class BarrierView:
    """A barrier as the reference panel describes it (every offered condition alike)."""

    key: str
    name: str
    definition: str
    example: str


@dataclass(frozen=True)
class AttributeView:
    """A social attribute a span can be tagged with, with its definition."""

    key: str
    name: str
    definition: str


@dataclass
class _Option:
    value: str
    label: str
    description: str
    shortcut: str  # the digit that picks it

    @property
    def short(self) -> str:
        """What a compact widget shows: a point's number, else the label (say, "Not applicable")."""
        return self.value if self.value.lstrip("-").replace(".", "", 1).isdigit() else self.label


@dataclass
class _Field:
    """One input of a question (one per character for per-seat questions), its value and its errors."""

    name: str
    value: str = ""
    values: list[str] = field(default_factory=list)  # a multi-label question's picked labels
    error: str = ""
    rationale_name: str = ""
    rationale_value: str = ""
    rationale_error: str = ""
    seat_name: str = ""
    goal_text: str = ""  # for a question asked per goal: the goal it is about
    turn_number: int | None = None  # for a question asked per turn: the turn it is about, as people count


@dataclass
class _Entry:
    """A question as the form shows it: one stop for the j / k keys."""

    question: QuestionView
    answer: _Field
    options: list[_Option] = field(default_factory=list)
    widget: dict[str, Any] = field(default_factory=dict)  # what else the kind's widget shows (a slider's ends)
    numbered: bool = False  # show each option's value before its label (Likert points)
    spans: str = "[]"
    span_labels: list[str] = field(default_factory=list)


@dataclass
class _Section:
    title: str
    entries: list[_Entry]


@dataclass
class _Speaker:
    name: str
    profile: list[tuple[str, str]]
    goal: str  # empty unless a question rates it (``_speakers``)


class ItemPage:
    """What the item page needs of an assignment, read in a fixed number of queries."""

    def __init__(self, assignment: Assignment, *, with_answers: bool = True, rows: _Rows | None = None) -> None:
        """``assignment`` unsaved (or of pk 0): a fresh rating's page; ``rows``: the episodes' seats and turns, read
        already for many pages (``fresh_pages``)."""
        self.assignment = assignment
        self.item: StudyItem = assignment.item
        annotations = (
            Annotation.objects.filter(assignment_id=assignment.pk)
            .select_related("response__instrument", "probes_response__instrument")
            .order_by("-version")
        )
        if with_answers:
            annotations = annotations.prefetch_related(
                Prefetch("response__answers", queryset=Answer.objects.order_by("pk")),
                Prefetch("probes_response__answers", queryset=Answer.objects.order_by("pk")),
                Prefetch("spans", queryset=Span.objects.prefetch_related("attributes").order_by("pk")),
            )
        self.annotation: Annotation | None = annotations.first() if assignment.pk else None
        self.instrument = self.annotation.response.instrument if self.annotation else self.item.study.instrument
        episode, task_item = self.item.episode, self.item.task_item  # a per-item choice brings the item's own
        questions = questions_for(task_item, self.instrument.questions.all())
        asked = (get_kind(question.kind).for_item(question, episode, task_item) for question in questions)
        self.questions = [question for question in asked if question is not None]
        if self.annotation is None:
            self.probes = probes_for(self.instrument, self.item.episode.scenario)
        else:
            self.probes = self.annotation.probes_response.instrument if self.annotation.probes_response_id else None
        probe_questions = list(self.probes.questions.all()) if self.probes else []
        self.probe_questions = asked_of_annotators(probe_questions, self.questions)
        episodes = [self.item.episode_id] + ([self.item.compared_episode_id] if self.item.compared_episode_id else [])
        seats, turns = rows or _episode_rows(episodes)
        self.seats = {episode: seats.get(episode, []) for episode in episodes}
        self.turns = {episode: turns.get(episode, []) for episode in episodes}

    @classmethod
    def fresh_pages(cls, items: list[StudyItem]) -> dict[int, ItemPage]:
        """A fresh rating's page of each item, by item pk, their episodes read together (imported ratings)."""
        rows = _episode_rows([pk for item in items for pk in (item.episode_id, item.compared_episode_id) if pk])
        return {item.pk: cls(Assignment(item=item), with_answers=False, rows=rows) for item in items}

    @property
    def main_seats(self) -> list[Seat]:
        return self.seats[self.item.episode_id]

    @property
    def goals(self) -> list[GoalRef]:
        """Every goal of every character of the item's episode, seat by seat."""
        return [
            GoalRef(goal.pk, seat.character.name, goal.text)
            for seat in self.main_seats
            for goal in seat.role.goals.all()
        ]

    def rated_turns(self) -> list[int]:
        """The turns a per-turn question is asked of (``transcript.rated_turns``)."""
        return rated_turns(self.item, self.main_seats, self.turns[self.item.episode_id])

    def parse(self, data: QueryDict, *, complete: bool) -> answer_forms.ParsedForm:
        """The posted form read for the study's instrument and, when the study asks them, the probes."""
        common = {
            "seats": [seat.position for seat in self.main_seats],
            "turn_lengths": _turn_lengths(self.turns[self.item.episode_id]),
            "complete": complete,
            "seat_labels": {seat.position: seat.character.name for seat in self.main_seats},
            "goals": self.goals,
            "agent_turns": self.rated_turns(),
            **item_media.span_rules(self.main_seats, self.turns[self.item.episode_id], self.item.study),
        }
        parsed = answer_forms.parse_form(self.instrument, data, questions=self.questions, **common)
        if self.probes is not None:
            parsed.extend(answer_forms.parse_form(self.probes, data, questions=self.probe_questions, **common))
        return parsed

    def context(self, annotator: Any, values: FormValues, *, errors: dict[str, str] | None = None) -> dict[str, Any]:
        """The template's context; ``annotator`` is the signed-in user, whose assignment this is."""
        errors = errors or {}
        assignment, item, study = self.assignment, self.item, self.item.study
        read_only = self.annotation is not None and self.annotation.status == Annotation.Status.SUBMITTED
        sections = _sections(self.questions, self.main_seats, values, errors, pairwise=bool(item.compared_episode_id))
        if self.probe_questions:
            sections.append(_Section(
                title="What the characters kept to themselves",
                entries=[_entry(question, None, values, errors) for question in self.probe_questions],
            ))
        anchors = dict(pair for section in sections for entry in section.entries for pair in _anchors(entry))
        has_spans = any(get_kind(question.kind).whole_transcript for question in self.questions)
        per_turn = [question for question in self.questions if question.scope == Question.Scope.TURN]
        conversations = item_conversations(
            item, self.seats, self.turns, has_spans=has_spans, guide=[QuestionView.of(q) for q in per_turn],
            rate=lambda index: [_entry(question, None, values, errors, turn=index) for question in per_turn],
        )
        for shown in conversations:
            for turn in shown.turns:
                for entry in turn.ratings:
                    anchors.update(_anchors(entry))
        # Every item the annotator holds counts, not only this one: a submitted item reopened while
        # another is claimed would otherwise drop that claim from the total ("2 of 47" of 48).
        mine = Assignment.objects.filter(item__study=study, annotator=annotator)
        submitted = mine.filter(status=Assignment.Status.SUBMITTED).count()
        in_progress = mine.filter(
            Q(pk=assignment.pk) | Q(lease_expires_at__gte=timezone.now()), status=Assignment.Status.CLAIMED
        ).count()
        annotation = self.annotation
        return {
            "assignment": ItemRef(assignment.pk),
            "study": StudyRef(study.title, study.slug),
            "annotation": VersionRef(annotation.version, annotation.status, annotation.submitted_at,
                                     annotation.saved_by_tab, annotation.tab_save) if annotation else None,
            "read_only": read_only,
            "revision": self.annotation.revision if self.annotation and not read_only else 0,
            "saved_at": timezone.localtime(self.annotation.updated_at) if self.annotation else None,
            "context_text": item.episode.scenario.context,
            "relationship": item.episode.scenario.relationship_label,
            "speakers": _speakers(self.main_seats, self.questions, mediator=rated_speaker(item, self.turns)),
            "conversations": conversations,
            "pairwise": len(conversations) > 1 and not item.windowed,
            "excerpts": item.windowed,
            "rates_one_turn": item.target_turn is not None,
            "condition": self._condition(),
            "attention_instruction": item.attention_instruction if item.kind == StudyItem.Kind.ATTENTION else "",
            "task": task_view(item.task_item),  # a human-baseline item's task (SHREC), above its excerpt
            "review": span_review.review_view(item.reviewed_span),  # a span review item's mark (SHREC)
            "sections": sections,
            "errors": errors,
            "error_links": [(anchors.get(name, ""), message) for name, message in errors.items()],
            "barriers": reference_barriers(self.questions, study.team_id),
            "attributes": span_attributes(self.questions),
            "has_spans": has_spans,
            "rating_guide": conversations[0].rating_guide,
            "progress": progress_bar(submitted, in_progress, assignments.remaining_for(study, annotator)),
            **item_media.page(assignment.pk, item, self.main_seats),
        }

    def _condition(self) -> BarrierView | None:
        """The episode's condition, named only when the preset rates how it came across (``shows_condition``)."""
        spec = presets.PRESETS.get(self.instrument.preset)
        if spec is None or not spec.shows_condition:
            return None
        barrier = self.item.episode.barrier
        return BarrierView(barrier.key, barrier.name, barrier.definition, barrier.example)


_Rows = tuple[dict[int, list[Seat]], dict[int, list[Turn]]]


def _episode_rows(episodes: list[int]) -> _Rows:
    """The seats (with characters, roles and goals) and turns of ``episodes``, by episode pk, in four queries."""
    seats: dict[int, list[Seat]] = defaultdict(list)
    turns: dict[int, list[Turn]] = defaultdict(list)
    rows = Seat.objects.filter(episode_id__in=episodes).select_related("character", "role")
    for seat in rows.prefetch_related("role__goals").order_by("position"):
        seats[seat.episode_id].append(seat)
    rows = Turn.objects.filter(episode_id__in=episodes).order_by("index")
    for turn in rows.only("episode_id", "index", "seat_id", "action_type", "content", "start_s", "end_s"):
        turns[turn.episode_id].append(turn)
    return seats, turns


def _turn_lengths(turns: list[Turn]) -> list[int]:
    """Characters in each turn by index, against which span anchors are checked."""
    lengths = [0] * (max((turn.index for turn in turns), default=-1) + 1)
    for turn in turns:
        lengths[turn.index] = len(turn.content)
    return lengths


def _anchors(entry: _Entry) -> list[tuple[str, str]]:
    """(field name, id on the page) for an entry's fields, for the links of the error summary."""
    anchors = [(entry.answer.name, f"q-{entry.answer.name}")]
    if entry.answer.rationale_name:
        anchors.append((entry.answer.rationale_name, entry.answer.rationale_name))
    return anchors


def _sections(
    questions: list[Question], seats: list[Seat], values: FormValues, errors: dict[str, str], *, pairwise: bool
) -> list[_Section]:
    """The form, question by question; consecutive per-seat and per-goal questions are grouped per character
    (a per-goal question once for each of the character's goals)."""
    sections: list[_Section] = []
    run: list[Question] = []

    def close_run() -> None:
        for seat in seats:
            entries = [
                entry
                for question in run
                for entry in (
                    [_entry(question, seat, values, errors, goal=goal) for goal in seat.role.goals.all()]
                    if question.scope == Question.Scope.GOAL else [_entry(question, seat, values, errors)]
                )
            ]
            if entries:
                sections.append(_Section(title=f"About {seat.character.name}", entries=entries))
        run.clear()

    for question in questions:
        if get_kind(question.kind).compares_two and not pairwise and not question.required:
            continue  # asked only of items that pair two conversations
        if question.scope == Question.Scope.TURN:
            continue  # shown beside each turn it is asked of (``_conversation``)
        if question.per_seat or question.scope == Question.Scope.GOAL:
            run.append(question)
            continue
        if run:
            close_run()
        sections.append(_Section(title="", entries=[_entry(question, None, values, errors)]))
    if run:
        close_run()
    return sections


def _entry(
    question: Question, seat: Seat | None, values: FormValues, errors: dict[str, str], *, goal: Any = None,
    turn: int | None = None,
) -> _Entry:
    """One stop of the form; ``goal`` (a ``Goal`` of ``seat``'s role) for a question asked per goal, ``turn`` (an
    index) for a question asked per turn."""
    options = question.options or {}
    kind = get_kind(question.kind)
    if kind.whole_transcript:
        name = answer_forms.field_name(question, part="spans")
        return _Entry(
            question=QuestionView.of(question),
            answer=_Field(name=name, error=errors.get(name, "")),
            spans=values.get(question, Target.episode(), "spans") or "[]",
            span_labels=list(options.get("labels", [])),
        )
    if goal is not None:
        target = Target.of_goal(goal.pk)
    elif turn is not None:
        target = Target.of_turn(turn)
    elif seat is not None:
        target = Target.of_seat(seat.position)
    else:
        target = Target.episode()
    name = answer_forms.field_name(question, target)
    answer = _Field(
        name=name,
        value=values.get(question, target, "answer"),
        values=values.get_all(question, target, "answer") if kind.multi_valued else [],
        error=errors.get(name, ""),
        seat_name=seat.character.name if seat else "",
        goal_text=goal.text if goal is not None else "",
        turn_number=None if turn is None else turn + 1,
    )
    if question.rationale != "none":
        answer.rationale_name = answer_forms.field_name(question, target, "rationale")
        answer.rationale_value = values.get(question, target, "rationale")
        answer.rationale_error = errors.get(answer.rationale_name, "")
    choices = kind.widget_options(question)
    entry = _Entry(
        question=QuestionView.of(question),
        answer=answer,
        numbered=kind.numbered,
        options=[
            _Option(
                value=str(choice.get("value", "")),
                label=str(choice.get("label") or choice.get("value", "")),
                description=str(choice.get("description", "")),
                shortcut=str(number) if number <= 9 else "",
            )
            for number, choice in enumerate(choices or [], start=1)
        ],
    )
    entry.widget = kind.widget_data(question, answer.value)
    return entry


def _speakers(seats: list[Seat], questions: list[Question], *, mediator: int | None = None) -> list[_Speaker]:
    """Each character's profile as a close friend sees it, with the secret or the goal only when a question per
    character rates it (Sotopia's *secret*, *goal*); never a role's reason or private knowledge, which the
    scenario's probes test (``annotator.probes``). A question per goal shows its goal beside itself. The
    ``mediator`` seat (pk) is named "Mediator", as the transcript names it."""
    rated = {question.dimension for question in questions if question.per_seat}
    speakers = []
    for seat in seats:
        profile = seat.character.visible_to(Relationship.FAMILY)
        if "secret" in rated and seat.character.secret:
            profile["secret"] = seat.character.secret
        speakers.append(
            _Speaker(
                name=MEDIATOR if seat.pk == mediator else seat.character.name,
                profile=[
                    (label, profile[key]) for key, label in PROFILE_LABELS.items() if key in profile and key != "name"
                ],
                goal=seat.role.goal_text if "goal" in rated else "",
            )
        )
    return speakers


def reference_barriers(questions: list[Question], team_id: int) -> list[BarrierView]:
    """The barriers a barrier-type question offers (built-in or the study team's), for the reference
    panel (none if it asks no such thing).

    The panel describes every condition alike, so it tells nothing about this item's.
    """
    asked = [question for question in questions if question.truth == "episode.barrier"]
    if not asked:
        return []
    offered = {str(choice.get("value")) for question in asked for choice in question.options.get("choices", [])}
    team_barriers = Barrier.objects.filter(Q(team__isnull=True) | Q(team_id=team_id), key__in=offered)
    return [
        BarrierView(barrier.key, barrier.name, barrier.definition, barrier.example)
        for barrier in team_barriers.only("key", "name", "definition", "example")
    ]


def span_attributes(questions: list[Question]) -> list[AttributeView]:
    """The social attributes the instrument's span questions offer, in their usual order."""
    spans = [question for question in questions if get_kind(question.kind).whole_transcript]
    keys = {key for question in spans for key in question.options.get("attributes", [])}
    rows = SocialAttribute.objects.filter(key__in=keys).values_list("key", "name", "definition") if keys else []
    return [AttributeView(key, name, definition) for key, name, definition in rows]


def progress_bar(submitted: int, in_progress: int, remaining: int) -> dict[str, int | str]:
    """Submitted of the items the annotator has or can still get."""
    total = submitted + in_progress + remaining
    return {
        "done": submitted, "total": total, "percent": round(100 * submitted / total) if total else 100,
        "label": f"{submitted} of {total} submitted",
    }
