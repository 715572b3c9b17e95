"""The automated judge: strict verdicts, repair and retry, all-or-nothing storage, caching."""

import json
import math

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents import scripted
from benchmark.dimensions import EPISODE_DIMENSIONS, SEAT_DIMENSIONS
from benchmark.evaluation import judge
from benchmark.models import ActionType, Episode, Evaluation
from tests.builders import make_character, make_episode, make_scenario
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

PROMPT_MARK = "Judge this conversation"


def verdict(seats: int = 2, *, seat_score: float = 3, episode_score: float = 4, **overrides) -> dict:
    """A complete, valid verdict; ``overrides`` maps 'seat_1.goal' or 'episode.mutual_understanding' to an entry."""
    data = {
        "seats": {
            judge.seat_key(n): {
                d.key: {"reasoning": f"Why {d.key} for seat {n + 1}.", "score": max(d.low, min(d.high, seat_score))}
                for d in SEAT_DIMENSIONS
            }
            for n in range(seats)
        },
        "episode": {d.key: {"reasoning": f"Why {d.key}.", "score": episode_score} for d in EPISODE_DIMENSIONS},
    }
    for path, entry in overrides.items():
        section, key = path.split(".")
        block = data["episode"] if section == "episode" else data["seats"][section]
        if entry is None:
            del block[key]
        else:
            block[key] = entry
    return data


def reply(**kwargs) -> str:
    return json.dumps(verdict(**kwargs))


@pytest.fixture
def episode() -> Episode:
    scenario = make_scenario(
        context="Two people meet outside a building about a bicycle.",
        original_context="Dmitri sells a road bike listed at 220 euros; Aisha has a tight budget.",
        roles=[
            {
                "goal": "Sell the bike for at least 200 euros.",
                "private_knowledge": "The chain needs replacing soon.",
                "character": make_character(first_name="Dmitri", secret="He never rode it after a crash."),
            },
            {
                "goal": "Buy the bike for 160 euros or less.",
                "reason": "Her savings are for rent.",
                "character": make_character(first_name="Aisha", secret="She already bought a helmet."),
            },
        ],
    )
    return make_episode(
        scenario=scenario,
        barrier="semantic",
        turns=[(ActionType.SPEAK, "Hi, is this the bike?"), (ActionType.SPEAK, "Yes, it's that thing."),
               (ActionType.LEAVE, "")],
    )


def evaluate(episode: Episode, **options) -> judge.EvaluationResult:
    options.setdefault("model", FAKE_MODEL)
    return async_to_sync(judge.evaluate_episode)(episode, **options)


def stored(episode: Episode, evaluator: str = FAKE_MODEL) -> list[Evaluation]:
    return list(Evaluation.objects.filter(episode=episode, evaluator=evaluator).order_by("seat__position", "dimension"))


def test_a_valid_verdict_stores_seven_scores_per_seat_and_two_per_episode(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply(seat_score=6, episode_score=2))

    result = evaluate(episode)

    assert result.outcome == judge.SCORED
    rows = stored(episode)
    assert len(rows) == 7 * 2 + 2 == len(result.evaluations)
    assert {(r.seat.position if r.seat else None) for r in rows} == {0, 1, None}
    assert {r.prompt_version for r in rows} == {judge.JUDGE_PROMPT_VERSION}
    by_key = {(r.seat.position if r.seat else None, r.dimension): r for r in rows}
    assert by_key[(0, "goal")].score == 6
    assert by_key[(1, "secret")].score == 0  # 6 clamped into [-10, 0] by the helper
    assert by_key[(None, "mutual_understanding")].score == 2
    assert by_key[(1, "goal")].reasoning == "Why goal for seat 2."
    assert by_key[(0, "goal")].prompt_tokens is not None and by_key[(0, "goal")].latency_ms is not None


def test_the_judge_is_called_at_temperature_zero(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())

    evaluate(episode)

    assert [request["temperature"] for request in fake_llm.requests] == [0]


def test_the_judge_sees_both_goals_secrets_and_the_transcript_but_not_the_condition(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())

    evaluate(episode)

    prompt = fake_llm.prompts[0]
    for text in [
        "Sell the bike for at least 200 euros.", "Buy the bike for 160 euros or less.", "Her savings are for rent.",
        "The chain needs replacing soon.", "He never rode it after a crash.", "She already bought a helmet.",
        "listed at 220 euros", "Two people meet outside a building", "Yes, it's that thing.", "left the conversation",
    ]:
        assert text in prompt, text
    assert episode.barrier.name not in prompt
    assert "seat_1 is Dmitri Tester; seat_2 is Aisha Tester" in prompt


def test_malformed_json_is_repaired_and_then_stored(fake_llm, episode):
    fake_llm.enqueue(text="Here are my scores: goal 7, believability 8...")
    fake_llm.enqueue(text=reply())

    result = evaluate(episode)

    assert result.outcome == judge.SCORED
    assert len(fake_llm.requests) == 2
    assert "Your previous reply could not be used" in fake_llm.prompts[1]
    assert len(stored(episode)) == 16


def test_an_out_of_range_score_is_named_in_the_repair_and_only_the_valid_reply_is_stored(fake_llm, episode):
    fake_llm.enqueue(text=reply(**{"seat_1.goal": {"reasoning": "Fully done.", "score": 12}}))
    fake_llm.enqueue(text=reply(seat_score=7))

    result = evaluate(episode)

    assert result.outcome == judge.SCORED
    assert "seat_1 (Dmitri Tester): 'goal' score 12 is out of range; it must be between 0 and 10" in (
        fake_llm.prompts[1]
    )
    assert {r.score for r in stored(episode) if r.dimension == "goal"} == {7}


def test_a_missing_dimension_is_named_in_the_repair(fake_llm, episode):
    fake_llm.enqueue(text=reply(**{"seat_2.secret": None}))
    fake_llm.enqueue(text=reply())

    evaluate(episode)

    assert "seat_2 (Aisha Tester): 'secret' is missing" in fake_llm.prompts[1]


def test_a_missing_episode_section_is_named_in_the_repair(fake_llm, episode):
    data = verdict()
    del data["episode"]
    fake_llm.enqueue(text=json.dumps(data))
    fake_llm.enqueue(text=reply())

    evaluate(episode)

    assert "'episode' is missing" in fake_llm.prompts[1]


def test_reasoning_is_required(fake_llm, episode):
    fake_llm.enqueue(text=reply(**{"episode.unresolved_confusion": {"reasoning": " ", "score": 3}}))
    fake_llm.enqueue(text=reply())

    evaluate(episode)

    assert "episode: 'unresolved_confusion' needs a non-empty 'reasoning' text" in fake_llm.prompts[1]


def test_a_score_that_is_not_a_number_is_named_in_the_repair(fake_llm, episode):
    fake_llm.enqueue(text=reply(**{"seat_1.financial": {"reasoning": "Lost a little.", "score": "-1"}}))
    fake_llm.enqueue(text=reply())

    evaluate(episode)

    assert "seat_1 (Dmitri Tester): 'financial' score must be a number, got '-1'" in fake_llm.prompts[1]


@pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity"])
def test_a_score_that_is_not_finite_is_named_in_the_repair_and_never_stored(fake_llm, episode, number):
    bad = reply(**{"seat_1.goal": {"reasoning": "Reached it.", "score": 123456}}).replace("123456", number)
    fake_llm.enqueue(text=bad)
    fake_llm.enqueue(text=reply())

    evaluate(episode)

    assert "seat_1 (Dmitri Tester): 'goal' score is not a finite number" in fake_llm.prompts[1]
    assert "it must be between 0 and 10" in fake_llm.prompts[1]
    assert all(math.isfinite(score) for score in Evaluation.objects.values_list("score", flat=True))


def test_when_the_repair_fails_the_whole_evaluation_is_asked_again(fake_llm, episode):
    bad = reply(**{"episode.mutual_understanding": {"reasoning": "Good.", "score": 0}})
    for text in [bad, bad, reply()]:
        fake_llm.enqueue(text=text)

    result = evaluate(episode, retries=1)

    assert result.outcome == judge.SCORED
    assert result.attempts == 2
    assert len(fake_llm.requests) == 3
    assert len(stored(episode)) == 16


def test_after_the_last_retry_nothing_is_stored_and_the_error_is_reported(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply(**{"seat_2.relationship": {"reasoning": "Much better.", "score": 9}}))

    result = evaluate(episode, retries=2)

    assert result.outcome == judge.FAILED
    assert len(fake_llm.requests) == 3 * 2  # three evaluations, each with its repair
    assert "'relationship' score 9 is out of range" in result.error
    assert "after 3 attempts" in result.error
    assert Evaluation.objects.filter(episode=episode).count() == 0


def test_retries_default_to_the_setting(fake_llm, episode, settings):
    settings.PARLEY_JUDGE_RETRIES = 0
    fake_llm.reply_when(PROMPT_MARK, "no JSON here")

    result = evaluate(episode)

    assert result.outcome == judge.FAILED
    assert len(fake_llm.requests) == 2


def test_an_unreachable_model_fails_the_episode_without_storing(fake_llm, episode):
    for _ in range(3):
        fake_llm.enqueue(status=500)

    result = evaluate(episode)

    assert result.outcome == judge.FAILED
    assert "unavailable" in result.error
    assert Evaluation.objects.filter(episode=episode).count() == 0


def test_a_complete_set_is_a_cache_hit_that_makes_no_request(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())
    evaluate(episode)
    fake_llm.reset()

    result = evaluate(episode)

    assert result.outcome == judge.CACHED
    assert fake_llm.requests == []


def test_the_cache_is_per_judge_model(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())
    evaluate(episode)

    result = evaluate(episode, model="openai/another-judge")

    assert result.outcome == judge.SCORED
    assert len(fake_llm.requests) == 2
    assert Evaluation.objects.filter(episode=episode, evaluator="openai/another-judge").count() == 16


def test_an_incomplete_set_is_scored_again(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())
    evaluate(episode)
    Evaluation.objects.filter(episode=episode, dimension="knowledge", seat__position=1).delete()

    result = evaluate(episode)

    assert result.outcome == judge.SCORED
    assert len(stored(episode)) == 16


def test_force_replaces_the_stored_set(fake_llm, episode):
    fake_llm.enqueue(text=reply(seat_score=2))
    fake_llm.enqueue(text=reply(seat_score=8))
    evaluate(episode)
    old = {row.pk for row in stored(episode)}

    result = evaluate(episode, force=True)

    rows = stored(episode)
    assert result.outcome == judge.SCORED
    assert len(rows) == 16
    assert not old & {row.pk for row in rows}
    assert {r.score for r in rows if r.dimension == "goal"} == {8}


def test_a_forced_rescore_that_fails_keeps_the_old_set(fake_llm, episode):
    fake_llm.enqueue(text=reply(seat_score=2))
    evaluate(episode)
    fake_llm.reply_when(PROMPT_MARK, "still not JSON")

    result = evaluate(episode, force=True, retries=0)

    assert result.outcome == judge.FAILED
    assert {r.score for r in stored(episode) if r.dimension == "goal"} == {2}
    assert len(stored(episode)) == 16


def test_the_scripted_model_stores_the_heuristic_scores_without_a_request(fake_llm, episode):
    result = evaluate(episode, model="scripted")

    assert result.outcome == judge.SCORED
    assert (result.evaluator, result.prompt_version) == (scripted.EVALUATOR, scripted.JUDGE_VERSION)
    rows = stored(episode, evaluator=scripted.EVALUATOR)
    assert len(rows) == 16
    assert {r.prompt_version for r in rows} == {scripted.JUDGE_VERSION}
    assert all(r.reasoning.startswith(scripted.JUDGE_DISCLAIMER) for r in rows)
    assert fake_llm.requests == []


def test_the_scripted_model_is_cached_too(episode):
    evaluate(episode, model="scripted")

    assert evaluate(episode, model="scripted").outcome == judge.CACHED


def test_an_episode_without_turns_is_not_judged(fake_llm):
    empty = make_episode(turns=0)

    result = evaluate(empty)

    assert result.outcome == judge.FAILED
    assert "has no turns" in result.error
    assert fake_llm.requests == []


def test_a_batch_scores_each_episode_once_and_reports_in_order(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())
    others = [make_episode(turns=3) for _ in range(3)]
    evaluate(others[0])
    seen = []

    results = async_to_sync(judge.evaluate_episodes)(
        [episode, *others], model=FAKE_MODEL, concurrency=3, on_result=seen.append
    )

    assert [r.episode_id for r in results] == [episode.pk, *(o.pk for o in others)]
    assert [r.outcome for r in results] == [judge.SCORED, judge.CACHED, judge.SCORED, judge.SCORED]
    assert sorted(r.episode_id for r in seen) == sorted(r.episode_id for r in results)
    assert len(fake_llm.requests) == 1 + 3


def test_validate_verdict_returns_every_score():
    scores = judge.validate_verdict(verdict(seats=3), ["seat_1", "seat_2", "seat_3"])

    assert len(scores) == 7 * 3 + 2
    assert {s.seat_key for s in scores} == {"seat_1", "seat_2", "seat_3", None}


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"reasoning": "ok", "score": True}, "'goal' score must be a number, got True"),
        ({"reasoning": "ok", "score": -0.5}, "'goal' score -0.5 is out of range"),
        ({"reasoning": "ok"}, "'goal' has no 'score'"),
        ({"score": 5}, "'goal' needs a non-empty 'reasoning' text"),
        (5, "'goal' must be an object with 'reasoning' and 'score'"),
    ],
)
def test_validate_verdict_names_the_seat_and_dimension(entry, problem):
    with pytest.raises(ValueError) as error:
        judge.validate_verdict(verdict(**{"seat_2.goal": entry}), ["seat_1", "seat_2"], {"seat_2": "Aisha"})

    assert f"seat_2 (Aisha): {problem}" in str(error.value)


def test_validate_verdict_lists_every_problem_at_once():
    data = verdict(**{"seat_1.goal": None, "episode.unresolved_confusion": {"reasoning": "x", "score": 6}})

    with pytest.raises(ValueError) as error:
        judge.validate_verdict(data, ["seat_1", "seat_2"])

    assert "seat_1: 'goal' is missing" in str(error.value)
    assert "episode: 'unresolved_confusion' score 6 is out of range" in str(error.value)


def test_store_verdict_refuses_an_incomplete_set(episode):
    facts = judge.load_episode_for_judge(episode.pk)
    scores = judge.validate_verdict(verdict(), ["seat_1", "seat_2"])[:-1]

    with pytest.raises(ValueError, match="needs 16 scores, got 15"):
        judge.store_verdict(facts, scores, evaluator=FAKE_MODEL, usage=None)
    assert Evaluation.objects.count() == 0
