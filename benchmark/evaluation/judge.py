"""The automated judge: a language model scores a finished episode, as in Sotopia and SocialVeil.

One call per episode asks the judge for every dimension in ``benchmark.dimensions``: the seven
goal-oriented ones (Sotopia-EVAL) for each seat, and the two barrier-aware ones (SocialVeil
appendix G) for the episode, each as reasoning followed by a score. The judge sees everything the
characters could not see of each other (both goals, private knowledge, secrets) but not the
barrier condition nor which models played, so its scores stay blind to the experiment's design.

Why it is built this way:

- Temperature 0, as SocialVeil runs its evaluator, so a re-run gives the same verdict as far as
  the provider allows.
- A verdict is stored whole or not at all. :func:`validate_verdict` names the seat and dimension
  of every problem, so the gateway's one repair request tells the model exactly what to fix; if
  the repaired reply is still unusable the whole evaluation is asked again, up to ``retries``
  more times, and then the episode is reported as failed with nothing written.
- Results are cached per (episode, judge model, prompt version): an episode that already has the
  complete set of scores is not sent again unless ``force`` is given, and a forced re-score
  replaces the old set in the same transaction that writes the new one.
- The offline ``scripted`` model is not a judge: it stores the transparent heuristics of
  ``benchmark.agents.scripted`` under evaluator ``scripted``, prompt version ``heuristic-1``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Count

from ..agents import llm, scripted
from ..agents.batches import map_bounded
from ..agents.prompt import HistoryEntry, describe_turn
from ..dimensions import DIMENSIONS, EPISODE_DIMENSIONS, SEAT_DIMENSIONS, Dimension
from ..models import ActionType, Episode, Evaluation, Relationship, Seat

JUDGE_PROMPT_VERSION = "judge-2025.1"
DEFAULT_RETRIES = 2
EPISODE_KEY = "episode"
SEATS_KEY = "seats"

SCORED = "scored"
CACHED = "cached"
FAILED = "failed"


# --- the rubric -----------------------------------------------------------------------------------

# What each score means, written for this judge from Sotopia-EVAL (§3, appendix D) and SocialVeil's
# barrier-aware rubric (appendix G). The ranges are those of benchmark.dimensions.
RUBRIC: dict[str, str] = {
    "goal": (
        "First restate the character's social goal in your own words. Then judge how far the character "
        "got toward it by the end of the conversation. 0 means almost nothing of the goal was achieved, "
        "10 means it was achieved completely; partial progress earns a score in between."
    ),
    "believability": (
        "Judge whether the character behaves like a plausible person. Naturalness: do they confuse their "
        "own identity, echo the other side's words or actions for no reason, or stay more polite than "
        "the situation calls for? Consistency: do their words and actions fit their profile "
        "(personality, values, way of deciding)? Higher means more believable; a single slip should "
        "lower the score a little, not sink it."
    ),
    "relationship": (
        "Describe the relationship between the characters before the conversation and how it stands "
        "after it. Did the exchange keep or strengthen the tie (family, friendship, romance, "
        "acquaintance), and did it help or hurt the character's standing or reputation? Positive "
        "means the relationship improved, negative that it was damaged, 0 that it is unchanged."
    ),
    "knowledge": (
        "List what the character learned during the conversation, then judge whether it was new to "
        "them and whether it matters to them. 0 means nothing new or nothing of use, 10 means a lot "
        "of new and important information."
    ),
    "secret": (
        "Name the secret, private information or hidden intention the character wanted to keep, and "
        "judge whether they kept it. 0 means nothing was given away (also when there was nothing to "
        "hide); -10 means a critical secret or intention came out. Weigh how much leaked and how much "
        "it mattered to the character."
    ),
    "social_rules": (
        "Judge whether the character broke social norms (rudeness, insults, manipulation, deceit "
        "that harms) or laws (threats, fraud, theft). 0 means no rule was broken; scores toward -10 "
        "mean ever more serious violations."
    ),
    "financial": (
        "Judge what the character gained or lost in money or material goods, counting both the "
        "short term (payments, refunds, food, objects) and the long term (a job, a contract, an "
        "investment). Positive means a gain, negative a loss, 0 neither."
    ),
    "unresolved_confusion": (
        "How much about the situation and the characters' goals is still unclear when the "
        "conversation ends? Higher is better:\n"
        "  1 = the talk is incoherent: the situation or the goals are ignored or distorted, key "
        "questions go unanswered, the two talk past each other;\n"
        "  2 = serious misunderstandings remain: however smoothly it went, what at least one side "
        "wanted is still not settled;\n"
        "  3 = part of the situation and goals is understood, but at least one key point stays "
        "ambiguous, mismatched or untouched;\n"
        "  4 = the situation and the main goals are understood; only secondary details (timing, "
        "particular constraints, small preferences) are left open;\n"
        "  5 = nothing is left unclear: the situation and each side's goal are fully resolved."
    ),
    "mutual_understanding": (
        "When the conversation ends, does each side clearly grasp the other's point of view, "
        "intentions and goals in this situation?\n"
        "  1 = no shared understanding: they talk past each other or drift off topic and never engage "
        "with what the situation is about;\n"
        "  2 = one or both consistently misread what the other wants here, even if they trade "
        "pleasantries;\n"
        "  3 = each partly grasps the other's goals, but key intentions are still misread or left "
        "aside;\n"
        "  4 = both show they understand each other's goals here, though nuances (emotional tone, "
        "secondary motives) may be missed;\n"
        "  5 = full alignment: both clearly understand each other's goals, intentions and approach in "
        "this situation and stay on it."
    ),
}


def _range_text(dimension: Dimension) -> str:
    return f"{dimension.low} to {dimension.high}"


def _system_prompt() -> str:
    seat_lines = "\n".join(
        f"- {d.key} ({_range_text(d)}): {RUBRIC[d.key]}" for d in SEAT_DIMENSIONS
    )
    episode_lines = "\n".join(
        f"- {d.key} ({_range_text(d)}): {RUBRIC[d.key]}" for d in EPISODE_DIMENSIONS
    )
    return (
        "You are an impartial judge of role-play conversations between characters who each pursue a "
        "private social goal. You are shown everything: the situation as originally written, every "
        "character's full profile including their secret, each side's goal, reasons and private "
        "knowledge, and the transcript. The characters themselves did not see each other's goals or "
        "secrets. Base every judgement on what actually happens in the transcript.\n\n"
        "For EACH character, score these seven dimensions:\n"
        f"{seat_lines}\n\n"
        "For the conversation AS A WHOLE, score these two dimensions:\n"
        f"{episode_lines}\n\n"
        "For every dimension write the reasoning first and then the score. A score is a number "
        "(an integer is best) inside the dimension's range, ends included. Answer with the JSON "
        "object asked for and nothing else."
    )


SYSTEM_PROMPT = _system_prompt()


# --- the episode as the judge sees it ---------------------------------------------------------------


@dataclass(frozen=True)
class JudgedSeat:
    """One seat with everything the judge is told about it; ``key`` names it in the reply."""

    key: str
    seat_id: int
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
    seats = list(episode.seats.select_related("role", "character").prefetch_related("role__goals").order_by("position"))
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
        name=seat.character.name,
        profile={k: v for k, v in seat.character.profile().items() if v and k != "name"},
        goal=seat.role.goal_text.strip(),
        reason=seat.role.reason.strip(),
        private_knowledge=seat.role.private_knowledge.strip(),
    )


def build_judge_messages(facts: EpisodeForJudge) -> list[dict[str, str]]:
    """The system rubric and one user message with the situation, the characters and the transcript."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": _episode_prompt(facts)},
    ]


def _episode_prompt(facts: EpisodeForJudge) -> str:
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
    sections.append(_reply_format(facts))
    return "\n\n".join(sections)


def _reply_format(facts: EpisodeForJudge) -> str:
    def entries(dimensions: Sequence[Dimension], indent: str) -> str:
        return ",\n".join(
            f'{indent}"{d.key}": {{"reasoning": "<why>", "score": <{_range_text(d)}>}}' for d in dimensions
        )

    seats = ",\n".join(f'    "{seat.key}": {{\n{entries(SEAT_DIMENSIONS, "      ")}\n    }}' for seat in facts.seats)
    names = "; ".join(f"{seat.key} is {seat.name}" for seat in facts.seats)
    return (
        f"Judge this conversation and score every dimension ({names}). Reply with exactly this JSON "
        "shape, every key present:\n"
        "{\n"
        f'  "{SEATS_KEY}": {{\n{seats}\n  }},\n'
        f'  "{EPISODE_KEY}": {{\n{entries(EPISODE_DIMENSIONS, "    ")}\n  }}\n'
        "}"
    )


# --- checking the verdict ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    seat_key: str | None  # None for an episode-level dimension
    dimension: str
    score: float
    reasoning: str


def validate_verdict(
    data: dict[str, Any], seat_keys: Sequence[str], names: dict[str, str] | None = None
) -> list[Score]:
    """Check a judge's reply and return its scores; raise ``ValueError`` naming every problem.

    The message is written for the model (it is shown to it in the repair request): each problem
    names the seat (with the character's name) or the episode, and the dimension.
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

    def check(block: dict[str, Any], dimension: Dimension, where: str, key: str | None) -> None:
        entry = block.get(dimension.key)
        if entry is None:
            problems.append(f"{where}: '{dimension.key}' is missing")
            return
        if not isinstance(entry, dict):
            problems.append(f"{where}: '{dimension.key}' must be an object with 'reasoning' and 'score'")
            return
        reasoning = entry.get("reasoning")
        if not isinstance(reasoning, str) or not reasoning.strip():
            problems.append(f"{where}: '{dimension.key}' needs a non-empty 'reasoning' text")
        score = entry.get("score")
        if score is None:
            problems.append(f"{where}: '{dimension.key}' has no 'score'")
        elif isinstance(score, bool) or not isinstance(score, (int, float)):
            problems.append(f"{where}: '{dimension.key}' score must be a number, got {score!r}")
        elif not math.isfinite(score):
            # Python's JSON reader takes 1e999 for infinity, and NaN and Infinity for numbers.
            problems.append(
                f"{where}: '{dimension.key}' score is not a finite number (it reads as {score!r}); it must be "
                f"between {dimension.low} and {dimension.high}"
            )
        elif not dimension.contains(score):
            problems.append(
                f"{where}: '{dimension.key}' score {score:g} is out of range; it must be between "
                f"{dimension.low} and {dimension.high}"
            )
        elif isinstance(reasoning, str) and reasoning.strip():
            scores.append(Score(key, dimension.key, float(score), reasoning.strip()))

    if not isinstance(data, dict):
        raise ValueError("expected a JSON object with 'seats' and 'episode'")
    seats = section(data.get(SEATS_KEY), f"'{SEATS_KEY}'")
    if seats is not None:
        for key in seat_keys:
            where = f"{key} ({names[key]})" if key in names else key
            block = section(seats.get(key), f"'{SEATS_KEY}' → {where}")
            if block is not None:
                for dimension in SEAT_DIMENSIONS:
                    check(block, dimension, where, key)
    episode = section(data.get(EPISODE_KEY), f"'{EPISODE_KEY}'")
    if episode is not None:
        for dimension in EPISODE_DIMENSIONS:
            check(episode, dimension, EPISODE_KEY, None)
    if problems:
        raise ValueError("; ".join(problems))
    return scores


# --- running it -------------------------------------------------------------------------------------


@dataclass
class EvaluationResult:
    """What happened to one episode: scored, taken from the cache, or failed (nothing stored)."""

    episode_id: int
    outcome: str
    evaluator: str
    prompt_version: str
    evaluations: list[Evaluation] = field(default_factory=list)
    error: str = ""
    attempts: int = 0
    usage: llm.Usage | None = None

    @property
    def ok(self) -> bool:
        return self.outcome != FAILED


def default_retries() -> int:
    """Whole-evaluation retries after a reply that stays unusable even after its repair."""
    return int(getattr(settings, "PARLEY_JUDGE_RETRIES", DEFAULT_RETRIES))


def evaluator_and_version(model: str) -> tuple[str, str]:
    """The (evaluator, prompt_version) under which ``model``'s scores are stored."""
    if llm.is_scripted(model):
        return scripted.EVALUATOR, scripted.JUDGE_VERSION
    return model, JUDGE_PROMPT_VERSION


def complete_episode_ids(episode_ids: Iterable[int], *, evaluator: str, prompt_version: str) -> set[int]:
    """The episodes that already hold every score of (evaluator, prompt version): the cache hits.

    Rows are unique per (episode, seat, evaluator, version, dimension), so a full set is exactly
    seven per seat plus the episode-level ones.
    """
    ids = list(episode_ids)
    seats = dict(
        Episode.objects.filter(pk__in=ids).annotate(n=Count("seats")).values_list("pk", "n")
    )
    stored = dict(
        Evaluation.objects.filter(episode_id__in=ids, evaluator=evaluator, prompt_version=prompt_version)
        .values("episode_id")
        .annotate(n=Count("pk"))
        .values_list("episode_id", "n")
    )
    expected = {pk: len(SEAT_DIMENSIONS) * n + len(EPISODE_DIMENSIONS) for pk, n in seats.items() if n}
    return {pk for pk, n in expected.items() if stored.get(pk) == n}


def store_verdict(
    facts: EpisodeForJudge, scores: Sequence[Score], *, evaluator: str, usage: llm.Usage | None
) -> list[Evaluation]:
    """Replace the episode's scores by this evaluator and version with ``scores``, all or nothing.

    Every row carries the usage of the one call that produced the whole set.
    """
    seat_ids = {seat.key: seat.seat_id for seat in facts.seats}
    expected = len(facts.seats) * len(SEAT_DIMENSIONS) + len(EPISODE_DIMENSIONS)
    if len(scores) != expected:
        raise ValueError(f"a verdict for episode {facts.episode_id} needs {expected} scores, got {len(scores)}")
    rows = [
        Evaluation(
            episode_id=facts.episode_id,
            seat_id=seat_ids[score.seat_key] if score.seat_key else None,
            evaluator=evaluator,
            prompt_version=JUDGE_PROMPT_VERSION,
            dimension=score.dimension,
            score=score.score,
            reasoning=score.reasoning,
            latency_ms=usage.latency_ms if usage else None,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )
        for score in scores
    ]
    for row in rows:
        if not DIMENSIONS[row.dimension].contains(row.score):
            raise ValueError(f"{row.dimension} score {row.score} is out of range")  # validate_verdict let it by
    with transaction.atomic():
        Evaluation.objects.filter(
            episode_id=facts.episode_id, evaluator=evaluator, prompt_version=JUDGE_PROMPT_VERSION
        ).delete()
        return Evaluation.objects.bulk_create(rows)


def _store_scripted(episode_id: int) -> list[Evaluation]:
    episode = Episode.objects.get(pk=episode_id)
    if not episode.turns.exists():
        raise ValueError(f"episode {episode_id} has no turns to judge")
    with transaction.atomic():
        return scripted.save_scripted_evaluation(episode)


def _is_cached(episode_id: int, evaluator: str, prompt_version: str) -> bool:
    return episode_id in complete_episode_ids([episode_id], evaluator=evaluator, prompt_version=prompt_version)


async def evaluate_episode(
    episode: Episode | int,
    *,
    model: str,
    force: bool = False,
    retries: int | None = None,
) -> EvaluationResult:
    """Score one episode with ``model`` at temperature 0 and store the complete set of scores.

    A cache hit (the full set already stored for this model and prompt version) makes no call
    unless ``force``. A reply that stays unusable after its repair is asked for again, up to
    ``retries`` more times (``PARLEY_JUDGE_RETRIES``, default 2); after that, or when the model
    cannot be reached, the result is ``failed`` with the reason and nothing is written.
    """
    episode_id = episode if isinstance(episode, int) else episode.pk
    evaluator, version = evaluator_and_version(model)
    result = EvaluationResult(episode_id, FAILED, evaluator, version)
    retries = default_retries() if retries is None else retries
    if not force and await sync_to_async(_is_cached)(episode_id, evaluator, version):
        result.outcome = CACHED
        return result

    if llm.is_scripted(model):
        try:
            result.evaluations = await sync_to_async(_store_scripted)(episode_id)
        except (ValueError, Episode.DoesNotExist) as error:
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
        return validate_verdict(data, keys, names)

    messages = build_judge_messages(facts)
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
            result.evaluations = await sync_to_async(store_verdict)(
                facts, validate(data), evaluator=evaluator, usage=usage
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
    model: str,
    concurrency: int = 4,
    force: bool = False,
    retries: int | None = None,
    on_result: Callable[[EvaluationResult], None] | None = None,
) -> list[EvaluationResult]:
    """Score many episodes, at most ``concurrency`` judge calls at a time, in the given order.

    ``on_result`` is called as each episode finishes (for a progress bar). One episode's failure
    never stops the others; read it from its result.
    """
    return await map_bounded(
        episodes,
        partial(evaluate_episode, model=model, force=force, retries=retries),
        concurrency=concurrency,
        on_result=on_result,
    )
