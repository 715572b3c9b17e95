"""The automated judge: a respondent that answers instruments about a finished episode.

The judge answers instruments like any respondent, and its answers are ``Response`` and
``Answer`` rows like an annotator's. By default it answers the two presets of
``benchmark.instruments.rubrics``: Sotopia-EVAL's seven goal-oriented questions for each seat and
SocialVeil's two barrier-aware questions (appendix G) for the episode. One call per episode asks
for every question of every instrument, each as reasoning followed by a score; the prompt, the
reply's shape and its validation are all read from the questions (their rubric, scope and range
``low``..``high``), so an instrument of bounded numeric questions asked per seat or per episode
can be judged without code. A question of any other kind with a model part (a category, yes/no,
a ranking, a per-item choice bound to the episode by ``kind.for_item``...) is told and checked by
its kind, and a question asked per turn is answered once per language agent's turn. The judge
sees everything the characters could not see of each other (their goals, private knowledge,
secrets) but not the barrier condition nor which models played, so its answers stay blind to the
experiment's design.

Why it is built this way:

- Temperature 0, as SocialVeil runs its evaluator, so a re-run gives the same answers as far as
  the provider allows.
- The answers are stored whole or not at all. The model is asked through
  ``benchmark.agents.respondent.ask_instrument``, as every model respondent is: the reply is checked
  question by question (:func:`~.judge_answers.judge_asked` lists what is asked), each problem named by
  its seat and question, so the gateway's one repair request tells the model exactly what to fix; if
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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.db import DatabaseError

from ..agents import llm
from ..agents.batches import map_bounded
from ..agents.respondent import Answered, ask_instrument, read_value
from ..instruments.respondents import judge_respondent
from ..instruments.values import format_number
from ..models import Answer, Episode, Instrument, Respondent
from . import scripted_judge
from .judge_answers import complete_episode_ids, judge_asked, seats_of, store_answers
from .judge_briefing import build_judge_messages, load_episode_for_judge
from .judge_questions import Questionnaire, bind, questionnaire

JUDGE_PROMPT_VERSION = "judge-2025.1"

SCORED = "scored"
CACHED = "cached"
FAILED = "failed"


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


def _store_scripted(episode_id: int, questions: Questionnaire, respondent: Respondent) -> list[Answer]:
    try:
        facts = load_episode_for_judge(episode_id)
    except Episode.DoesNotExist:
        raise ValueError(f"episode {episode_id} does not exist") from None
    if not facts.transcript:
        raise ValueError(f"episode {episode_id} has no turns to judge")
    episode = Episode.objects.get(pk=episode_id)
    items = judge_asked(seats_of(facts), questions, _bound(episode_id, questions), facts.agent_turns)
    asked = {(item.target.seat, item.key): item for item in items}
    answers = [
        Answered(asked[(position, key)], format_number(value), float(value), reasoning)
        for position, key, value, reasoning in scripted_judge.answer(episode, questions)
    ]
    transcript = scripted_judge.transcript_text(episode) if any(item.question for item in items) else ""
    for item in items:
        if item.question is not None:
            raw, reasoning = scripted_judge.answer_by_kind(item.question, transcript)
            value, number, problem = read_value(item, raw)
            if problem:
                raise ValueError(f"the scripted judge's answer to {item.key!r} was refused: {problem}")
            answers.append(Answered(item, value, number, reasoning))
    return store_answers(facts, answers, respondent=respondent, questions=questions, usage=None,
                         expected=len(items))


def _bound(episode_id: int, questions: Questionnaire) -> dict[int, object]:
    """The questions answered by their kind, bound to the episode (none for the presets: no query)."""
    if all(q.scored for q in questions.all):
        return {}
    episode = Episode.objects.select_related("scenario").prefetch_related("scenario__probes").get(pk=episode_id)
    return bind(questions, episode)


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

    bound = await sync_to_async(_bound)(episode_id, questions)
    asked = judge_asked(seats_of(facts), questions, bound, facts.agent_turns)
    try:
        reply = await ask_instrument(
            build_judge_messages(facts, questions, bound), asked, model=model,
            names={seat.key: seat.label for seat in facts.seats}, retries=retries,
        )
    except llm.LLMOutputError as error:
        result.attempts, result.error = error.attempts, str(error)
        return result
    except llm.LLMError as error:
        result.error = str(error)
        return result
    result.usage, result.attempts = reply.usage, reply.attempts
    try:
        result.answers = await sync_to_async(store_answers)(
            facts, reply.answers, respondent=respondent, questions=questions, usage=reply.usage,
            expected=len(asked),
        )
    except (DatabaseError, ValueError) as error:
        result.error = f"could not store the answers about episode {episode_id}: {error}"
        return result
    result.outcome = SCORED
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
