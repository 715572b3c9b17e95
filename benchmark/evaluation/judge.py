"""The automated judge: a respondent that answers instruments about a finished episode.

The judge answers instruments like any respondent, and its answers are ``Response`` and
``Answer`` rows like an annotator's. By default it answers the two presets of
``benchmark.evaluation.rubrics``: Sotopia-EVAL's seven goal-oriented questions for each seat and
SocialVeil's two barrier-aware questions (appendix G) for the episode. One call per episode asks
for every question of every instrument, each as reasoning followed by a score; the prompt, the
reply's shape and its validation are all read from the questions (their rubric, scope and range
``low``..``high``), so an instrument of bounded numeric questions asked per seat or per episode
can be judged without code. The judge sees everything the characters could not see of each other
(their goals, private knowledge, secrets) but not the barrier condition nor which models played,
so its answers stay blind to the experiment's design.

Why it is built this way:

- Temperature 0, as SocialVeil runs its evaluator, so a re-run gives the same verdict as far as
  the provider allows.
- A verdict is stored whole or not at all. :func:`validate_verdict` names the seat and question
  of every problem, so the gateway's one repair request tells the model exactly what to fix; if
  the repaired reply is still unusable the whole evaluation is asked again, up to ``retries``
  more times, and then the episode is reported as failed with nothing written.
- The judge is a respondent of kind ``judge`` named by its model and prompt version. It answers
  an instrument about an episode once (a database trigger refuses a second response): an episode
  whose instruments it has answered completely is not sent again unless ``force`` is given, and a
  forced re-score replaces the old responses in the same transaction that writes the new ones.
- Several judges: :func:`evaluate_episodes` takes one model or several, and each is its own
  respondent. Their majority is computed when read (``benchmark.evaluation.majority``), never stored.
- The offline ``scripted`` model is not a language model: it answers with the transparent
  heuristics of ``benchmark.evaluation.scripted_judge`` as respondent ``scripted``, prompt
  version ``heuristic-1``, through the same validation and storage.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Count
from django.utils import timezone

from ..agents import llm
from ..agents.batches import map_bounded
from ..agents.prompt import HistoryEntry, describe_turn
from ..models import ActionType, Answer, Episode, Instrument, Question, Relationship, Respondent, Response, Seat
from . import rubrics, scripted_judge
from .respondents import judge_respondent

JUDGE_PROMPT_VERSION = "judge-2025.1"
DEFAULT_RETRIES = 2
EPISODE_KEY = "episode"
SEATS_KEY = "seats"
NUMERIC_KINDS = (Question.Kind.SLIDER, Question.Kind.LIKERT)

SCORED = "scored"
CACHED = "cached"
FAILED = "failed"


# --- the instruments it answers --------------------------------------------------------------------


@dataclass(frozen=True)
class JudgedQuestion:
    """A question as the judge asks it: a plain snapshot, so no query runs mid-call."""

    question_id: int
    instrument_id: int
    key: str
    scope: str
    low: float
    high: float
    rubric: str
    dimension: str

    def contains(self, score: float) -> bool:
        return self.low <= score <= self.high

    @property
    def range_text(self) -> str:
        return f"{self.low:g} to {self.high:g}"


@dataclass(frozen=True)
class Questionnaire:
    """The questions of the instruments one judge call answers, split by scope."""

    instrument_ids: tuple[int, ...]
    seat: tuple[JudgedQuestion, ...]
    episode: tuple[JudgedQuestion, ...]

    def expected_answers(self, seats: int) -> int:
        return seats * len(self.seat) + len(self.episode)


def judge_instruments() -> list[Instrument]:
    """The presets the judge answers by default (Sotopia-EVAL judge, SocialVeil judge), installed
    if a database lost them."""
    return rubrics.install(Instrument, Question)


def questionnaire(instruments: Sequence[Instrument] | None = None) -> Questionnaire:
    """The judge's questions of ``instruments`` (default: :func:`judge_instruments`).

    Raises ``ValueError`` naming the instrument and question the judge cannot answer: only bounded
    numeric questions (Likert, slider, with ``low`` and ``high``) asked per seat or per episode,
    and one key per scope across the instruments, since keys name the answers in the reply.
    """
    instruments = list(instruments) if instruments is not None else judge_instruments()
    if not instruments:
        raise ValueError("the judge needs at least one instrument to answer")
    seat: list[JudgedQuestion] = []
    episode: list[JudgedQuestion] = []
    rows = Question.objects.filter(instrument__in=[i.pk for i in instruments]).select_related("instrument")
    by_instrument: dict[int, list[Question]] = {}
    for question in rows.order_by("position"):
        by_instrument.setdefault(question.instrument_id, []).append(question)
    for instrument in instruments:
        for question in by_instrument.get(instrument.pk, []):
            where = f"{instrument}, question {question.key!r}"
            if question.kind not in NUMERIC_KINDS or question.low is None or question.high is None:
                raise ValueError(f"{where}: the judge answers only bounded numeric (Likert or slider) questions")
            if question.scope not in (Question.Scope.SEAT, Question.Scope.EPISODE):
                raise ValueError(f"{where}: the judge answers questions asked per seat or per episode")
            target = seat if question.scope == Question.Scope.SEAT else episode
            if any(other.key == question.key for other in target):
                raise ValueError(f"{where}: another instrument asks a question with the same key at the same scope")
            target.append(JudgedQuestion(
                question.pk, instrument.pk, question.key, question.scope, question.low, question.high,
                (question.help_text or question.prompt).strip(), question.dimension or question.key,
            ))
    return Questionnaire(tuple(i.pk for i in instruments), tuple(seat), tuple(episode))


# --- the rubric ------------------------------------------------------------------------------------

_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve")


def _count_text(n: int, noun: str) -> str:
    number = _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)
    return f"{number} {noun}{'' if n == 1 else 's'}"


def system_prompt(questions: Questionnaire) -> str:
    """The rubric: what the judge sees, then every question with its range and what a score means."""

    def lines(items: Sequence[JudgedQuestion]) -> str:
        return "\n".join(f"- {q.key} ({q.range_text}): {q.rubric}" for q in items)

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
    parts.append(
        "For every dimension write the reasoning first and then the score. A score is a number "
        "(an integer is best) inside the dimension's range, ends included. Answer with the JSON "
        "object asked for and nothing else."
    )
    return "\n\n".join(parts)


# --- the episode as the judge sees it ---------------------------------------------------------------


@dataclass(frozen=True)
class JudgedSeat:
    """One seat with everything the judge is told about it; ``key`` names it in the reply."""

    key: str
    seat_id: int
    position: int
    name: str
    profile: dict[str, str]
    goal: str
    reason: str
    private_knowledge: str

    @property
    def label(self) -> str:
        return f"{self.key} ({self.name})"


@dataclass(frozen=True)
class EpisodeForJudge:
    """A plain snapshot of an episode, read from the database once, so no query runs mid-call."""

    episode_id: int
    original_context: str
    shared_context: str
    relationship: str
    seats: tuple[JudgedSeat, ...]
    transcript: tuple[HistoryEntry, ...]
    cut_at_cap: bool
    turn_cap: int


def seat_key(position_in_order: int) -> str:
    """The JSON key of the n-th seat (0-based) in speaking order: ``seat_1``, ``seat_2``, ..."""
    return f"seat_{position_in_order + 1}"


def load_episode_for_judge(episode_id: int) -> EpisodeForJudge:
    episode = Episode.objects.select_related("scenario").get(pk=episode_id)
    seats = list(episode.seats.select_related("role", "character").order_by("position"))
    turns = list(episode.turns.order_by("index"))
    by_id = {seat.pk: seat for seat in seats}
    scenario = episode.scenario
    transcript = tuple(
        HistoryEntry(by_id[t.seat_id].character.name, t.action_type, t.content, by_id[t.seat_id].position)
        for t in turns
    )
    left = bool(turns) and turns[-1].action_type == ActionType.LEAVE
    return EpisodeForJudge(
        episode_id=episode.pk,
        original_context=scenario.original_context.strip(),
        shared_context=scenario.context.strip(),
        relationship=Relationship(scenario.relationship).label,
        seats=tuple(_judged_seat(number, seat) for number, seat in enumerate(seats)),
        transcript=transcript,
        cut_at_cap=not left and len(turns) >= episode.turn_cap,
        turn_cap=episode.turn_cap,
    )


def _judged_seat(number: int, seat: Seat) -> JudgedSeat:
    return JudgedSeat(
        key=seat_key(number),
        seat_id=seat.pk,
        position=seat.position,
        name=seat.character.name,
        profile={k: v for k, v in seat.character.profile().items() if v and k != "name"},
        goal=seat.role.goal.strip(),
        reason=seat.role.reason.strip(),
        private_knowledge=seat.role.private_knowledge.strip(),
    )


def build_judge_messages(facts: EpisodeForJudge, questions: Questionnaire) -> list[dict[str, str]]:
    """The system rubric and one user message with the situation, the characters and the transcript."""
    return [
        {"role": "system", "content": system_prompt(questions)},
        {"role": "user", "content": _episode_prompt(facts, questions)},
    ]


def _episode_prompt(facts: EpisodeForJudge, questions: Questionnaire) -> str:
    sections = []
    if facts.original_context:
        sections.append(f"SITUATION (as originally written):\n{facts.original_context}")
    else:
        sections.append(f"SITUATION:\n{facts.shared_context}")
    if facts.original_context and facts.shared_context != facts.original_context:
        sections.append(f"What both characters were told of the situation:\n{facts.shared_context}")
    sections.append(f"Relationship between the characters: {facts.relationship}.")
    for seat in facts.seats:
        lines = [f"CHARACTER {seat.label}"]
        lines.extend(f"- {key.replace('_', ' ')}: {value}" for key, value in seat.profile.items())
        lines.append(f"Goal: {seat.goal}")
        if seat.reason:
            lines.append(f"Reason: {seat.reason}")
        if seat.private_knowledge:
            lines.append(f"Private knowledge: {seat.private_knowledge}")
        sections.append("\n".join(lines))
    transcript = "\n".join(f"{n}. {describe_turn(entry)}" for n, entry in enumerate(facts.transcript, start=1))
    if facts.cut_at_cap:
        transcript += f"\n(The conversation was stopped at its limit of {facts.turn_cap} turns.)"
    sections.append(f"TRANSCRIPT:\n{transcript}")
    sections.append(_reply_format(facts, questions))
    return "\n\n".join(sections)


def _reply_format(facts: EpisodeForJudge, questions: Questionnaire) -> str:
    def entries(items: Sequence[JudgedQuestion], indent: str) -> str:
        return ",\n".join(
            f'{indent}"{q.key}": {{"reasoning": "<why>", "score": <{q.range_text}>}}' for q in items
        )

    blocks = []
    if questions.seat:
        seats = ",\n".join(
            f'    "{seat.key}": {{\n{entries(questions.seat, "      ")}\n    }}' for seat in facts.seats
        )
        blocks.append(f'  "{SEATS_KEY}": {{\n{seats}\n  }}')
    if questions.episode:
        blocks.append(f'  "{EPISODE_KEY}": {{\n{entries(questions.episode, "    ")}\n  }}')
    names = "; ".join(f"{seat.key} is {seat.name}" for seat in facts.seats)
    return (
        f"Judge this conversation and score every dimension ({names}). Reply with exactly this JSON "
        "shape, every key present:\n"
        "{\n" + ",\n".join(blocks) + "\n}"
    )


# --- checking the verdict ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    seat_key: str | None  # None for a question asked once per episode
    key: str
    score: float
    reasoning: str


def validate_verdict(
    data: dict[str, Any], seat_keys: Sequence[str], questions: Questionnaire, names: dict[str, str] | None = None
) -> list[Score]:
    """Check a judge's reply and return its scores; raise ``ValueError`` naming every problem.

    The message is written for the model (it is shown to it in the repair request): each problem
    names the seat (with the character's name) or the episode, and the question's key.
    """
    names = names or {}
    problems: list[str] = []
    scores: list[Score] = []

    def section(value: Any, where: str) -> dict[str, Any] | None:
        if value is None:
            problems.append(f"{where} is missing")
            return None
        if not isinstance(value, dict):
            problems.append(f"{where} must be a JSON object")
            return None
        return value

    def check(block: dict[str, Any], question: JudgedQuestion, where: str, key: str | None) -> None:
        entry = block.get(question.key)
        if entry is None:
            problems.append(f"{where}: '{question.key}' is missing")
            return
        if not isinstance(entry, dict):
            problems.append(f"{where}: '{question.key}' must be an object with 'reasoning' and 'score'")
            return
        reasoning = entry.get("reasoning")
        if not isinstance(reasoning, str) or not reasoning.strip():
            problems.append(f"{where}: '{question.key}' needs a non-empty 'reasoning' text")
        score = entry.get("score")
        bounds = f"between {question.low:g} and {question.high:g}"
        if score is None:
            problems.append(f"{where}: '{question.key}' has no 'score'")
        elif isinstance(score, bool) or not isinstance(score, (int, float)):
            problems.append(f"{where}: '{question.key}' score must be a number, got {score!r}")
        elif not math.isfinite(score):
            # Python's JSON reader takes 1e999 for infinity, and NaN and Infinity for numbers.
            problems.append(
                f"{where}: '{question.key}' score is not a finite number (it reads as {score!r}); it must be {bounds}"
            )
        elif not question.contains(score):
            problems.append(f"{where}: '{question.key}' score {score:g} is out of range; it must be {bounds}")
        elif isinstance(reasoning, str) and reasoning.strip():
            scores.append(Score(key, question.key, float(score), reasoning.strip()))

    if not isinstance(data, dict):
        wanted = " and ".join(f"'{k}'" for k, asked in ((SEATS_KEY, questions.seat), (EPISODE_KEY, questions.episode))
                              if asked)
        raise ValueError(f"expected a JSON object with {wanted}")
    if questions.seat:
        seats = section(data.get(SEATS_KEY), f"'{SEATS_KEY}'")
        if seats is not None:
            for key in seat_keys:
                where = f"{key} ({names[key]})" if key in names else key
                block = section(seats.get(key), f"'{SEATS_KEY}' → {where}")
                if block is not None:
                    for question in questions.seat:
                        check(block, question, where, key)
    if questions.episode:
        episode = section(data.get(EPISODE_KEY), f"'{EPISODE_KEY}'")
        if episode is not None:
            for question in questions.episode:
                check(episode, question, EPISODE_KEY, None)
    if problems:
        raise ValueError("; ".join(problems))
    return scores


# --- storing it ------------------------------------------------------------------------------------


@dataclass
class JudgeResult:
    """What happened to one episode with one judge: scored, taken from the cache, or failed (nothing stored)."""

    episode_id: int
    outcome: str
    model: str
    prompt_version: str
    answers: list[Answer] = field(default_factory=list)
    error: str = ""
    attempts: int = 0
    usage: llm.Usage | None = None

    @property
    def ok(self) -> bool:
        return self.outcome != FAILED


def default_retries() -> int:
    """Whole-evaluation retries after a reply that stays unusable even after its repair."""
    return int(getattr(settings, "PARLEY_JUDGE_RETRIES", DEFAULT_RETRIES))


def respondent_name(model: str) -> tuple[str, str]:
    """The (model, prompt version) of the judge respondent that ``model`` answers as."""
    if llm.is_scripted(model):
        return scripted_judge.RESPONDENT, scripted_judge.PROMPT_VERSION
    return model, JUDGE_PROMPT_VERSION


def judge_models(value: str | Sequence[str]) -> list[str]:
    """One judge model or several: a list, or one text with names separated by commas.

    Names are stripped and kept once each, in order. Raises ``ValueError`` when none is left.
    """
    items = value.split(",") if isinstance(value, str) else list(value)
    models = list(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))
    if not models:
        raise ValueError("name at least one judge model (a litellm model name, or 'scripted')")
    return models


def complete_episode_ids(episode_ids: Iterable[int], *, respondent: Respondent, questions: Questionnaire) -> set[int]:
    """The episodes for which ``respondent`` has answered every question: the cache hits.

    A respondent answers each question once per seat (or once per episode), so a complete set is
    exactly the seat questions times the seats plus the episode questions.
    """
    ids = list(episode_ids)
    seats = dict(Episode.objects.filter(pk__in=ids).annotate(n=Count("seats")).values_list("pk", "n"))
    stored = dict(
        Answer.objects.filter(
            response__episode_id__in=ids, response__respondent=respondent,
            response__instrument_id__in=questions.instrument_ids,
        )
        .values("response__episode_id")
        .annotate(n=Count("pk"))
        .values_list("response__episode_id", "n")
    )
    expected = {pk: questions.expected_answers(n) for pk, n in seats.items() if n}
    return {pk for pk, n in expected.items() if stored.get(pk) == n}


def _number_text(number: float) -> str:
    """The answer's text: ``7`` rather than ``7.0``, otherwise the shortest exact form."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def store_verdict(
    facts: EpisodeForJudge,
    scores: Sequence[Score],
    *,
    respondent: Respondent,
    questions: Questionnaire,
    usage: llm.Usage | None,
) -> list[Answer]:
    """Replace ``respondent``'s responses to the instruments about the episode with ``scores``, all or nothing.

    One response per instrument; each carries the usage of the one call that produced the set.
    Returns the answers written, each with its ``response``.
    """
    expected = questions.expected_answers(len(facts.seats))
    if len(scores) != expected:
        raise ValueError(f"a verdict for episode {facts.episode_id} needs {expected} scores, got {len(scores)}")
    positions = {seat.key: seat.position for seat in facts.seats}
    asked = {(q.scope == Question.Scope.SEAT, q.key): q for q in (*questions.seat, *questions.episode)}
    for score in scores:
        question = asked[(score.seat_key is not None, score.key)]
        if not question.contains(score.score):  # validate_verdict let it by
            raise ValueError(f"{score.key} score {score.score} is out of range {question.range_text}")
    created = timezone.now()
    with transaction.atomic():
        Response.objects.filter(
            episode_id=facts.episode_id, respondent=respondent, instrument_id__in=questions.instrument_ids
        ).delete()
        responses = {
            instrument_id: Response.objects.create(
                instrument_id=instrument_id, episode_id=facts.episode_id, respondent=respondent, created_at=created,
                latency_ms=usage.latency_ms if usage else None,
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
            )
            for instrument_id in questions.instrument_ids
        }
        answers = []
        for score in scores:
            question = asked[(score.seat_key is not None, score.key)]
            answers.append(Answer(
                response=responses[question.instrument_id], question_id=question.question_id,
                seat_position=None if score.seat_key is None else positions[score.seat_key],
                value=_number_text(score.score), number=score.score, reasoning=score.reasoning,
            ))
        return Answer.objects.bulk_create(answers)


def _store_scripted(episode_id: int, questions: Questionnaire, respondent: Respondent) -> list[Answer]:
    try:
        facts = load_episode_for_judge(episode_id)
    except Episode.DoesNotExist:
        raise ValueError(f"episode {episode_id} does not exist") from None
    if not facts.transcript:
        raise ValueError(f"episode {episode_id} has no turns to judge")
    episode = Episode.objects.get(pk=episode_id)
    keys = {seat.position: seat.key for seat in facts.seats}
    scores = [
        Score(None if position is None else keys[position], key, value, reasoning)
        for position, key, value, reasoning in scripted_judge.answer(episode, questions)
    ]
    return store_verdict(facts, scores, respondent=respondent, questions=questions, usage=None)


def _respondent_and_cache(episode_id: int, model: str, questions: Questionnaire) -> tuple[Respondent, bool]:
    respondent = judge_respondent(*respondent_name(model))
    return respondent, episode_id in complete_episode_ids([episode_id], respondent=respondent, questions=questions)


# --- running it -------------------------------------------------------------------------------------


async def evaluate_episode(
    episode: Episode | int,
    *,
    model: str,
    questions: Questionnaire | None = None,
    force: bool = False,
    retries: int | None = None,
) -> JudgeResult:
    """Answer the judge's instruments about one episode with ``model`` at temperature 0, all or nothing.

    A cache hit (every question already answered by this model and prompt version) makes no call
    unless ``force``. A reply that stays unusable after its repair is asked for again, up to
    ``retries`` more times (``PARLEY_JUDGE_RETRIES``, default 2); after that, or when the model
    cannot be reached, the result is ``failed`` with the reason and nothing is written.
    """
    episode_id = episode if isinstance(episode, int) else episode.pk
    name, version = respondent_name(model)
    result = JudgeResult(episode_id, FAILED, name, version)
    retries = default_retries() if retries is None else retries
    if questions is None:
        questions = await sync_to_async(questionnaire)()
    respondent, cached = await sync_to_async(_respondent_and_cache)(episode_id, model, questions)
    if cached and not force:
        result.outcome = CACHED
        return result

    if llm.is_scripted(model):
        try:
            result.answers = await sync_to_async(_store_scripted)(episode_id, questions, respondent)
        except (DatabaseError, ValueError) as error:
            result.error = str(error)
            return result
        result.outcome, result.attempts = SCORED, 1
        return result

    try:
        facts = await sync_to_async(load_episode_for_judge)(episode_id)
    except Episode.DoesNotExist:
        result.error = f"episode {episode_id} does not exist"
        return result
    if not facts.transcript:
        result.error = f"episode {episode_id} has no turns to judge"
        return result
    if not facts.seats:
        result.error = f"episode {episode_id} has no seats to judge"
        return result

    keys = [seat.key for seat in facts.seats]
    names = {seat.key: seat.name for seat in facts.seats}

    def validate(data: dict[str, Any]) -> list[Score]:
        return validate_verdict(data, keys, questions, names)

    messages = build_judge_messages(facts, questions)
    for attempt in range(1, retries + 2):
        result.attempts = attempt
        try:
            data, usage = await llm.complete_json(messages, model=model, temperature=0, validate=validate)
        except llm.LLMOutputError as error:
            result.error = f"{error} (after {attempt} attempt{'s' if attempt > 1 else ''})"
            continue
        except llm.LLMError as error:
            result.error = str(error)
            return result
        result.usage = usage if result.usage is None else result.usage + usage
        try:
            result.answers = await sync_to_async(store_verdict)(
                facts, validate(data), respondent=respondent, questions=questions, usage=usage
            )
        except (DatabaseError, ValueError) as error:
            result.error = f"could not store the scores of episode {episode_id}: {error}"
            return result
        result.outcome, result.error = SCORED, ""
        return result
    return result


async def evaluate_episodes(
    episodes: Iterable[Episode | int],
    *,
    models: str | Sequence[str],
    instruments: Sequence[Instrument] | None = None,
    concurrency: int = 4,
    force: bool = False,
    retries: int | None = None,
    on_result: Callable[[JudgeResult], None] | None = None,
) -> list[JudgeResult]:
    """Have each of ``models`` judge every episode, at most ``concurrency`` calls at a time.

    Results come in order: the first model's episodes in the given order, then the next model's.
    ``on_result`` is called as each (model, episode) finishes (for a progress bar). One failure
    never stops the others; read it from its result.
    """
    names = judge_models(models)
    questions = await sync_to_async(questionnaire)(instruments)
    episodes = list(episodes)
    pairs = [(model, episode) for model in names for episode in episodes]

    async def one(pair: tuple[str, Episode | int]) -> JudgeResult:
        model, episode = pair
        return await evaluate_episode(episode, model=model, questions=questions, force=force, retries=retries)

    return await map_bounded(pairs, one, concurrency=concurrency, on_result=on_result)
