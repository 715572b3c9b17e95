"""The ProMediate evaluation pass over one episode: read it, run the five judges, store the trace whole.

One pass by one judge (a language model, or ``scripted`` for the offline heuristics) produces, for
one episode:

- ``Attitude`` rows: every party's starting stance per topic (point 0) and each change after one of
  its own turns (J1; "no mention" keeps the earlier stance, so only changes are stored). A starting
  stance the brief ranks (``Preference.ranking``) is written deterministically; one it only words is
  read by J1 from the brief's text;
- ``PairAgreement`` rows: every pair on every topic at point 0, then after each party turn the pairs
  containing the speaker on the topics it took a stance on (J2), lower seat first;
- ``TopicTag`` rows: whether every turn mentions every topic (J4, or derived from J1 with
  ``mentions="attitudes"``: a party turn mentions the topics it took a stance on, a mediator's
  intervention the topics it addresses) and which topics each intervention addresses (J5);
- the MI judge's answers (J3) to the per-intervention instrument, as judge respondent
  (model, prompt version), one per intervention, "not applicable" allowed.

All rows carry the judge's name and the pass's prompt version. The pass is **cached** per judge and
prompt version: an episode that has them is skipped unless ``force``, which replaces them in the same
transaction that writes the new ones. It is **all or nothing** per episode: the models are asked
first, and the rows are written in one transaction only once every answer is in (a J2 reply that
stays unusable is the one exception: stored as a failed pair, as ``model_judges`` explains).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.db import DatabaseError, transaction

from ...agents import llm
from ...agents.batches import map_bounded
from ...instruments.interventions import (
    InterventionAnswerError,
    intervention_instrument,
    store_intervention_answers,
)
from ...instruments.presets import INTERVENTION_DIMENSIONS
from ...instruments.respondents import judge_respondent
from ...models import Attitude, Episode, PairAgreement, Response, TopicTag, Turn
from . import model_judges, prompts, scripted
from .attitudes import Attitudes, PairRequest, describe_stance, normalise_attitude, trace
from .negotiation import Negotiation, NegotiationProblem, load_negotiation

SCRIPTED_JUDGE = "scripted"
SCRIPTED_VERSION = "promediate-heuristic-1"
MENTIONS = ("judge", "attitudes")
DERIVED_SUFFIX = "+mentions-from-attitudes"

EVALUATED, CACHED, FAILED = "evaluated", "cached", "failed"


class PassFailed(Exception):
    """A judge could not give an answer the pass needs; the message names the judge and the turn."""


def judge_name(model: str, mentions: str = "judge") -> tuple[str, str]:
    """The (judge, prompt version) a pass by ``model`` stores its rows under."""
    if mentions not in MENTIONS:
        raise ValueError(f"mentions must be one of {', '.join(MENTIONS)}, not {mentions!r}")
    name, version = (SCRIPTED_JUDGE, SCRIPTED_VERSION) if llm.is_scripted(model) else (model, prompts.PROMPT_VERSION)
    return name, version + (DERIVED_SUFFIX if mentions == "attitudes" else "")


@dataclass
class PassResult:
    episode_id: int
    outcome: str
    judge: str
    prompt_version: str
    error: str = ""
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome != FAILED


@dataclass(frozen=True)
class Readings:
    """Everything the judges said about one episode, before anything is stored."""

    changes: tuple
    pairs: tuple[tuple[PairRequest, model_judges.PairScore], ...]
    mentions: dict[int, frozenset[str]]  # turn index -> topic keys it mentions
    addressed: dict[int, frozenset[str]]  # intervention index -> topic keys it addresses
    ratings: dict[int, dict[str, tuple[float | None, str]]]  # intervention index -> key -> (score, reasoning)


# --- the judges, scripted or by a model ----------------------------------------------------------------


async def read_episode(
    negotiation: Negotiation, *, model: str, mentions: str = "judge", concurrency: int = 4, retries: int | None = None
) -> Readings:
    """Ask the judges everything about one episode (no database access)."""
    if llm.is_scripted(model):
        return _scripted_readings(negotiation, mentions)
    questions = await sync_to_async(_rating_questions)()
    # A turn with no words (a party that passed, or left) states nothing and mentions nothing: no call.
    spoken = [u for u in negotiation.utterances if u.text.strip()]
    parties = [u for u in spoken if not u.by_mediator and negotiation.party(u.seat_position)]
    interventions = [u for u in negotiation.utterances if u.index in negotiation.interventions]
    unranked = _unranked_briefs(negotiation)

    ask = {"model": model, "retries": retries}
    jobs: dict[tuple[str, int], tuple[str, Callable[[], Awaitable[Any]]]] = {}
    for u in parties:
        jobs["attitudes", u.index] = (
            f"attitudes of turn {u.index}",
            lambda u=u: model_judges.attitudes(negotiation, u, **ask),
        )
    for position, briefs in unranked.items():
        name = negotiation.party(position).name  # type: ignore[union-attr]
        jobs["brief", position] = (
            f"starting attitudes of {name}",
            lambda name=name, briefs=briefs: model_judges.brief_attitudes(negotiation, name, briefs, **ask),
        )
    for u in spoken if mentions == "judge" else ():
        jobs["mentions", u.index] = (
            f"topics mentioned in turn {u.index}",
            lambda u=u: model_judges.mentions(negotiation, u, **ask),
        )
    for u in interventions:
        jobs["addressed", u.index] = (
            f"topics addressed by turn {u.index}",
            lambda u=u: model_judges.addressed(negotiation, u, **ask),
        )
        jobs["rating", u.index] = (
            f"mediator intelligence of turn {u.index}",
            lambda u=u: model_judges.intervention(negotiation.since_mediator(u.index), u, questions, **ask),
        )
    results = dict(zip(jobs, await _run_all(list(jobs.values()), concurrency), strict=True))

    initial = _initial(negotiation, {position: results["brief", position] for position in unranked})
    steps = trace(negotiation, initial, {u.index: results["attitudes", u.index] for u in parties})
    asked = {request.question: request for request in steps.pairs}  # pairs alike are asked once
    pair_jobs = [
        (
            f"agreement of seats {r.a} and {r.b} on {r.topic} at point {r.point}",
            lambda r=r: model_judges.pair(negotiation, negotiation.topic(r.topic), r.attitude_a, r.attitude_b, **ask),
        )
        for r in asked.values()
    ]
    scores = dict(zip(asked, await _run_all(pair_jobs, concurrency), strict=True))
    addressed = {u.index: results["addressed", u.index] for u in interventions}
    ratings = {
        u.index: {answer.asked.key: (answer.number, answer.reasoning) for answer in results["rating", u.index]}
        for u in interventions
    }
    tagged = (
        {u.index: results.get(("mentions", u.index), frozenset()) for u in negotiation.utterances}
        if mentions == "judge"
        else _derived_mentions(negotiation, steps.mentioned, addressed)
    )
    return Readings(steps.changes, tuple((r, scores[r.question]) for r in steps.pairs), tagged, addressed, ratings)


def _scripted_readings(negotiation: Negotiation, mentions: str) -> Readings:
    unranked = _unranked_briefs(negotiation)
    initial = _initial(
        negotiation,
        {
            position: {key: scripted.brief_attitude(negotiation.topic(key), text) for key, text in briefs.items()}
            for position, briefs in unranked.items()
        },
    )
    extracted = {
        u.index: scripted.extract_attitudes(negotiation, u.text)
        for u in negotiation.utterances
        if not u.by_mediator and negotiation.party(u.seat_position)
    }
    steps = trace(negotiation, initial, extracted)
    pairs = []
    for request in steps.pairs:
        score, reasoning = scripted.score_pair(negotiation.topic(request.topic), request.attitude_a, request.attitude_b)
        pairs.append((request, model_judges.PairScore((score,) * len(prompts.DIMENSIONS), score, reasoning)))
    addressed = {
        u.index: scripted.mentioned_topics(negotiation, u.text)
        for u in negotiation.utterances
        if u.index in negotiation.interventions
    }
    ratings = {
        index: scripted.rate_intervention(negotiation, negotiation.since_mediator(index), _text(negotiation, index))
        for index in negotiation.interventions
    }
    tagged = (
        {u.index: scripted.mentioned_topics(negotiation, u.text) for u in negotiation.utterances}
        if mentions == "judge"
        else _derived_mentions(negotiation, steps.mentioned, addressed)
    )
    return Readings(steps.changes, tuple(pairs), tagged, addressed, ratings)


def _unranked_briefs(negotiation: Negotiation) -> dict[int, dict[str, str]]:
    """Per party, the topics whose starting stance the brief words but does not rank: {topic key: text}."""
    found: dict[int, dict[str, str]] = {}
    for party in negotiation.parties:
        for topic in negotiation.topics:
            stance = negotiation.stances.get((party.position, topic.id))
            if stance is not None and not stance.ranking and stance.text.strip():
                found.setdefault(party.position, {})[topic.key] = stance.text.strip()
    return found


def _initial(negotiation: Negotiation, read: dict[int, dict[str, str | None]]) -> Attitudes:
    """The starting attitudes: a ranked stance in words; else what J1 read from the brief; else none."""
    initial: Attitudes = {}
    for party in negotiation.parties:
        for topic in negotiation.topics:
            stance = negotiation.stances.get((party.position, topic.id))
            ranked = describe_stance(topic, stance) if stance is not None else None
            initial[(party.position, topic.key)] = ranked or normalise_attitude(
                read.get(party.position, {}).get(topic.key)
            )
    return initial


def _derived_mentions(
    negotiation: Negotiation, stated: dict[int, frozenset[str]], addressed: dict[int, frozenset[str]]
) -> dict[int, frozenset[str]]:
    """Mentions without J4: a party turn mentions the topics it took a stance on (J1), an intervention the
    topics it addresses (J5), any other turn (the welcome) none."""
    return {u.index: stated.get(u.index) or addressed.get(u.index) or frozenset() for u in negotiation.utterances}


def _text(negotiation: Negotiation, index: int) -> str:
    return next(u.text for u in negotiation.utterances if u.index == index)


async def _run_all(jobs: Sequence[tuple[str, Callable[[], Awaitable[Any]]]], concurrency: int) -> list[Any]:
    """Every job's result in order; the first failure (named by its job) once all have finished."""

    async def one(job: tuple[str, Callable[[], Awaitable[Any]]]) -> Any:
        what, call = job
        try:
            return await call()
        except llm.LLMError as error:
            return PassFailed(f"{what}: {error}")

    results = await map_bounded(jobs, one, concurrency=concurrency)
    failure = next((result for result in results if isinstance(result, PassFailed)), None)
    if failure is not None:
        raise failure
    return results


def _rating_questions() -> list[Any]:
    instrument = intervention_instrument()
    return list(instrument.questions.filter(key__in=INTERVENTION_DIMENSIONS).order_by("position"))


# --- storing ------------------------------------------------------------------------------------------


def is_cached(episode_id: int, judge: str, version: str) -> bool:
    """Whether a complete pass of this judge and prompt version is stored (it is stored whole or not at all,
    and every pass tags every turn, so its tags stand for it)."""
    return TopicTag.objects.filter(turn__episode_id=episode_id, judge=judge, prompt_version=version).exists()


def forget(episode_id: int, judge: str, version: str) -> None:
    """Remove one judge's pass over an episode (before a forced one is stored)."""
    Attitude.objects.filter(episode_id=episode_id, judge=judge, prompt_version=version).delete()
    PairAgreement.objects.filter(episode_id=episode_id, judge=judge, prompt_version=version).delete()
    TopicTag.objects.filter(turn__episode_id=episode_id, judge=judge, prompt_version=version).delete()
    Response.objects.filter(
        episode_id=episode_id,
        instrument__preset=intervention_instrument().preset,
        respondent__kind="judge",
        respondent__model=judge,
        respondent__prompt_version=version,
    ).delete()


def store(negotiation: Negotiation, readings: Readings, judge: str, version: str, *, force: bool) -> dict[str, int]:
    """Write one pass's rows in one transaction; returns what was written, by kind."""
    topics = {topic.key: topic.id for topic in negotiation.topics}
    seats = {party.position: party.seat_id for party in negotiation.parties}
    with transaction.atomic():
        if force:
            forget(negotiation.episode_id, judge, version)
        Attitude.objects.bulk_create(
            Attitude(
                episode_id=negotiation.episode_id,
                point=change.point,
                seat_id=seats[change.position],
                topic_id=topics[change.topic],
                text=change.text,
                judge=judge,
                prompt_version=version,
            )
            for change in readings.changes
        )
        PairAgreement.objects.bulk_create(
            PairAgreement(
                episode_id=negotiation.episode_id,
                point=request.point,
                topic_id=topics[request.topic],
                seat_a_id=seats[request.a],
                seat_b_id=seats[request.b],
                overall=score.overall,
                reasoning=score.reasoning,
                failed=score.failed,
                judge=judge,
                prompt_version=version,
                **dict(zip(PairAgreement.DIMENSIONS, score.dimensions, strict=True)),
            )
            for request, score in readings.pairs
        )
        turns = dict(Turn.objects.filter(episode_id=negotiation.episode_id).values_list("index", "pk"))
        tags = [
            TopicTag(
                turn_id=turns[index],
                topic_id=topics[topic.key],
                kind=kind,
                value=topic.key in found,
                judge=judge,
                prompt_version=version,
            )
            for kind, readings_of_kind in (
                (TopicTag.Kind.MENTION, readings.mentions),
                (TopicTag.Kind.ADDRESSED, readings.addressed),
            )
            for index, found in sorted(readings_of_kind.items())
            for topic in negotiation.topics
        ]
        TopicTag.objects.bulk_create(tags)
        if readings.ratings:
            respondent = judge_respondent(judge, version)
            episode = Episode.objects.get(pk=negotiation.episode_id)
            for index, rated in sorted(readings.ratings.items()):
                store_intervention_answers(
                    episode,
                    index,
                    respondent,
                    {key: score for key, (score, _) in rated.items()},
                    reasoning={key: reasoning for key, (_, reasoning) in rated.items()},
                )
    return {
        "attitudes": len(readings.changes),
        "pairs": len(readings.pairs),
        "failed pairs": sum(1 for _, score in readings.pairs if score.failed),
        "tags": len(tags),
        "interventions": len(readings.ratings),
    }


# --- running it -------------------------------------------------------------------------------------------


async def evaluate_negotiation(
    episode_id: int,
    *,
    model: str,
    mentions: str = "judge",
    force: bool = False,
    concurrency: int = 4,
    retries: int | None = None,
) -> PassResult:
    """One judge's pass over one episode: cached, evaluated (everything stored), or failed (nothing stored)."""
    judge, version = judge_name(model, mentions)
    result = PassResult(episode_id, FAILED, judge, version)
    if not force and await sync_to_async(is_cached)(episode_id, judge, version):
        result.outcome = CACHED
        return result
    try:
        negotiation = await sync_to_async(load_negotiation)(episode_id)
        readings = await read_episode(
            negotiation, model=model, mentions=mentions, concurrency=concurrency, retries=retries
        )
        result.counts = await sync_to_async(store)(negotiation, readings, judge, version, force=force)
    except (NegotiationProblem, PassFailed, InterventionAnswerError) as error:
        result.error = str(error)
        return result
    except DatabaseError as error:
        result.error = f"could not store the evaluation of episode {episode_id}: {error}"
        return result
    result.outcome = EVALUATED
    return result


async def evaluate_negotiations(
    episode_ids: Iterable[int],
    *,
    model: str,
    mentions: str = "judge",
    force: bool = False,
    concurrency: int = 4,
    retries: int | None = None,
    on_result: Callable[[PassResult], None] | None = None,
) -> list[PassResult]:
    """The pass over several episodes, one after another (each asks its judges ``concurrency`` at a time)."""
    results = []
    for episode_id in episode_ids:
        result = await evaluate_negotiation(
            episode_id, model=model, mentions=mentions, force=force, concurrency=concurrency, retries=retries
        )
        if on_result is not None:
            on_result(result)
        results.append(result)
    return results
