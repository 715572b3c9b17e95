"""What the judge asks: the questions of the instruments it answers, and the rubric that explains them.

The judge answers questions asked per seat or per episode, of any instrument; by default the two
presets of ``benchmark.instruments.rubrics``. Bounded numeric questions (Likert, slider:
``low``..``high``) are scored as they always were; a question of any other kind with a model part
(``kind.instruction``: categorical, yes/no, ranking, a per-item choice...) is answered as its kind
says, bound to each episode by ``kind.for_item`` (:func:`bind`; a question the item has nothing for
is not asked about it) so a per-item choice shows that item's choices and never its correct one.
Multi-valued kinds (several rows per answer), spans over the transcript, pairwise comparisons (two
items) and kinds with no model part are refused by name.
Everything the judge is told about a question (its key, range and rubric, the question's help
text) is read from the question, so the prompt and the validation follow the instrument's data.
For the presets the rubric reads exactly as it did when the dimensions were code, so the judge's
prompt version did not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..instruments import rubrics
from ..instruments.kinds import get_kind
from ..models import Instrument, Question


@dataclass(frozen=True)
class JudgedQuestion:
    """A question as the judge asks it: a plain snapshot, so no query runs mid-call."""

    question_id: int
    instrument_id: int
    key: str
    scope: str
    low: float | None  # None for a kind that is not scored (its kind reads the answer)
    high: float | None
    rubric: str
    dimension: str
    kind: str  # the question's kind, which reads the model's value (``agents.respondent.read_value``)
    question: Question | None = None  # the question itself, for a kind that is not scored (``bind``)

    @property
    def scored(self) -> bool:
        """A bounded number (the presets' questions): asked and checked by its range, as always."""
        return self.question is None

    def contains(self, score: float) -> bool:
        return self.low <= score <= self.high

    @property
    def range_text(self) -> str:
        return f"{self.low:g} to {self.high:g}"


@dataclass(frozen=True)
class Questionnaire:
    """The questions of the instruments one judge call answers, split by scope (``turn``: asked of
    every language agent's turn, ``judge_briefing.agent_turn_indexes``)."""

    instrument_ids: tuple[int, ...]
    seat: tuple[JudgedQuestion, ...]
    episode: tuple[JudgedQuestion, ...]
    turn: tuple[JudgedQuestion, ...] = ()

    def expected_answers(self, seats: int, turns: int = 0) -> int:
        return seats * len(self.seat) + len(self.episode) + turns * len(self.turn)

    @property
    def all(self) -> tuple[JudgedQuestion, ...]:
        return (*self.seat, *self.episode, *self.turn)


def judge_instruments() -> list[Instrument]:
    """The presets the judge answers by default (Sotopia-EVAL judge, SocialVeil judge), installed
    if a database lost them."""
    return rubrics.install(Instrument, Question)


def questionnaire(instruments: Sequence[Instrument] | None = None) -> Questionnaire:
    """The judge's questions of ``instruments`` (default: :func:`judge_instruments`).

    Raises ``ValueError`` naming the instrument and question the judge cannot answer: a numeric
    question without bounds, a kind with no model part or several rows per answer, a scope other
    than per seat, per episode or per turn, and a key used twice at one scope across the
    instruments, since keys name the answers in the reply.
    """
    instruments = list(instruments) if instruments is not None else judge_instruments()
    if not instruments:
        raise ValueError("the judge needs at least one instrument to answer")
    seat: list[JudgedQuestion] = []
    episode: list[JudgedQuestion] = []
    turn: list[JudgedQuestion] = []
    rows = Question.objects.filter(instrument__in=[i.pk for i in instruments]).select_related("instrument")
    by_instrument: dict[int, list[Question]] = {}
    for question in rows.order_by("position"):
        by_instrument.setdefault(question.instrument_id, []).append(question)
    for instrument in instruments:
        for question in by_instrument.get(instrument.pk, []):
            where = f"{instrument}, question {question.key!r}"
            kind = get_kind(question.kind)
            scored = kind.numeric and question.low is not None and question.high is not None
            if kind.numeric and not scored:
                raise ValueError(f"{where}: the judge answers a numeric question only with bounds (low and high)")
            if not scored and (kind.multi_valued or kind.whole_transcript or kind.compares_two
                               or not _has_model_part(kind, question)):
                raise ValueError(f"{where}: the judge cannot answer a {kind.label} question")
            if question.scope not in (Question.Scope.SEAT, Question.Scope.EPISODE, Question.Scope.TURN):
                raise ValueError(f"{where}: the judge answers questions asked per seat, per episode or per turn")
            target = {Question.Scope.SEAT: seat, Question.Scope.EPISODE: episode}.get(question.scope, turn)
            if any(other.key == question.key for other in target):
                raise ValueError(f"{where}: another instrument asks a question with the same key at the same scope")
            target.append(JudgedQuestion(
                question.pk, instrument.pk, question.key, question.scope, question.low, question.high,
                (question.help_text or question.prompt).strip(), question.dimension or question.key, question.kind,
                None if scored else question,
            ))
    return Questionnaire(tuple(i.pk for i in instruments), tuple(seat), tuple(episode), tuple(turn))


def _has_model_part(kind, question: Question) -> bool:
    """Whether a model can be told how to answer the kind (``instruction``, a required part)."""
    try:
        kind.instruction(question)
    except NotImplementedError:
        return False
    return True


def bind(questions: Questionnaire, episode) -> dict[int, Question | None]:
    """Each unscored question bound to ``episode`` (``kind.for_item``), by question id; None when the
    item has nothing for it (it is not asked about this episode). Run it where queries may run."""
    return {
        q.question_id: get_kind(q.kind).for_item(q.question, episode)
        for q in questions.all if not q.scored
    }


def answer_text(question: Question) -> str:
    """How a model is to answer a bound, unscored question: its kind's instruction, then what each
    choice means when its label says more than its value (a per-item choice's "0" = its text)."""
    kind = get_kind(question.kind)
    text = kind.instruction(question)
    labelled = [(str(c.get("value")), str(c.get("label") or "")) for c in kind.choices(question)]
    meanings = [f"{value!r} = {label}" for value, label in labelled if label and label != value]
    return f"{text} ({'; '.join(meanings)})" if meanings else text


# --- the rubric ------------------------------------------------------------------------------------

_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve")


def _count_text(n: int, noun: str) -> str:
    number = _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)
    return f"{number} {noun}{'' if n == 1 else 's'}"


def system_prompt(questions: Questionnaire) -> str:
    """The rubric: what the judge sees, then every question with its range and what a score means."""

    def lines(items: Sequence[JudgedQuestion]) -> str:
        return "\n".join(f"- {q.key} ({q.range_text}): {q.rubric}" if q.scored else f"- {q.key}: {q.rubric}"
                         for q in items)

    parts = [
        "You are an impartial judge of role-play conversations between characters who each pursue a "
        "private social goal. You are shown everything: the situation as originally written, every "
        "character's full profile including their secret, each side's goal, reasons and private "
        "knowledge, and the transcript. The characters themselves did not see each other's goals or "
        "secrets. Base every judgement on what actually happens in the transcript."
    ]
    if questions.seat:
        parts.append(
            f"For EACH character, score these {_count_text(len(questions.seat), 'dimension')}:\n{lines(questions.seat)}"
        )
    if questions.episode:
        parts.append(
            f"For the conversation AS A WHOLE, score these {_count_text(len(questions.episode), 'dimension')}:\n"
            f"{lines(questions.episode)}"
        )
    if questions.turn:
        parts.append(
            f"For EACH reply of a language agent (the turns listed in the reply shape), answer these "
            f"{_count_text(len(questions.turn), 'question')}:\n{lines(questions.turn)}"
        )
    if all(q.scored for q in questions.all):
        parts.append(
            "For every dimension write the reasoning first and then the score. A score is a number "
            "(an integer is best) inside the dimension's range, ends included. Answer with the JSON "
            "object asked for and nothing else."
        )
    else:
        parts.append(
            "For every question write the reasoning first and then the answer. A score is a number "
            "(an integer is best) inside the dimension's range, ends included; any other answer is "
            "written as the reply shape says. Answer with the JSON object asked for and nothing else."
        )
    return "\n\n".join(parts)
