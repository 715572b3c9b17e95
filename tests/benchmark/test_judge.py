"""The automated judge: a respondent to instruments, with strict verdicts, repair and retry, all-or-nothing
storage, caching, and several judges at once."""

import json
import math

import pytest
from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction

from benchmark.agents.respondent import check_reply
from benchmark.evaluation import judge, scripted_judge
from benchmark.evaluation.judge_answers import judge_asked, store_answers
from benchmark.evaluation.judge_briefing import load_episode_for_judge, seat_key
from benchmark.evaluation.judge_questions import Questionnaire, judge_instruments, questionnaire
from benchmark.instruments.rubrics import SOCIALVEIL_JUDGE, SOTOPIA_EVAL
from benchmark.models import ActionType, Answer, Episode, Instrument, Question, Respondent, Response
from tests.builders import make_character, make_episode, make_scenario, make_team
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

PROMPT_MARK = "Judge this conversation"


def verdict(seats: int = 2, *, seat_score: float = 3, episode_score: float = 4, **overrides) -> dict:
    """A complete, valid verdict; ``overrides`` maps 'seat_1.goal' or 'episode.mutual_understanding' to an entry."""
    data = {
        "seats": {
            seat_key(n): {
                d.key: {"reasoning": f"Why {d.key} for seat {n + 1}.", "score": max(d.low, min(d.high, seat_score))}
                for d in SOTOPIA_EVAL.questions
            }
            for n in range(seats)
        },
        "episode": {d.key: {"reasoning": f"Why {d.key}.", "score": episode_score} for d in SOCIALVEIL_JUDGE.questions},
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


def evaluate(episode: Episode, **options) -> judge.JudgeResult:
    options.setdefault("model", FAKE_MODEL)
    return async_to_sync(judge.evaluate_episode)(episode, **options)


def stored(episode: Episode, model: str = FAKE_MODEL) -> list[Answer]:
    """The judge's answers about the episode, by seat (episode-level first) and question key."""
    return list(
        Answer.objects.filter(response__episode=episode, response__respondent__model=model)
        .select_related("question", "response__respondent")
        .order_by("seat_position", "question__key")
    )


def questions() -> Questionnaire:
    return questionnaire()


def check_answers(data: dict, seats: dict[str, int], names: dict[str, str] | None = None) -> list:
    """The judge's reply checked as the judge checks it: seat keys to positions, and their characters' names."""
    labels = {key: f"{key} ({name})" for key, name in (names or {}).items()}
    return check_reply(data, judge_asked(seats, questions()), labels)


def test_a_valid_verdict_stores_seven_scores_per_seat_and_two_per_episode(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply(seat_score=6, episode_score=2))

    result = evaluate(episode)

    assert result.outcome == judge.SCORED
    rows = stored(episode)
    assert len(rows) == 7 * 2 + 2 == len(result.answers)
    assert {r.seat_position for r in rows} == {0, 1, None}
    respondent = Respondent.objects.get(model=FAKE_MODEL)
    assert (respondent.kind, respondent.prompt_version) == ("judge", judge.JUDGE_PROMPT_VERSION)
    by_key = {(r.seat_position, r.question.key): r for r in rows}
    assert by_key[(0, "goal")].number == 6 and by_key[(0, "goal")].value == "6"
    assert by_key[(1, "secret")].number == 0  # 6 clamped into [-10, 0] by the helper
    assert by_key[(None, "mutual_understanding")].number == 2
    assert by_key[(1, "goal")].reasoning == "Why goal for seat 2."
    assert all(r.question.dimension == r.question.key for r in rows)  # so reports match human answers by it


def test_a_verdict_is_one_response_per_instrument_with_the_usage_of_the_call(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())

    evaluate(episode)

    responses = Response.objects.filter(episode=episode).select_related("instrument")
    assert sorted(r.instrument.name for r in responses) == ["SocialVeil judge", "Sotopia-EVAL judge"]
    assert [r.answers.count() for r in responses.order_by("instrument__name")] == [2, 14]
    assert all(r.prompt_tokens and r.latency_ms is not None and r.seat_position is None for r in responses)


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
    assert {r.number for r in stored(episode) if r.question.key == "goal"} == {7}


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
    assert all(math.isfinite(number) for number in Answer.objects.values_list("number", flat=True))


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
    assert not Response.objects.filter(episode=episode).exists()


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
    assert not Response.objects.filter(episode=episode).exists()


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
    assert len(stored(episode, "openai/another-judge")) == 16


def test_an_incomplete_set_is_scored_again(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())
    evaluate(episode)
    Answer.objects.filter(response__episode=episode, question__key="knowledge", seat_position=1).delete()

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
    assert {r.number for r in rows if r.question.key == "goal"} == {8}
    assert Response.objects.filter(episode=episode).count() == 2


def test_a_forced_rescore_that_fails_keeps_the_old_set(fake_llm, episode):
    fake_llm.enqueue(text=reply(seat_score=2))
    evaluate(episode)
    fake_llm.reply_when(PROMPT_MARK, "still not JSON")

    result = evaluate(episode, force=True, retries=0)

    assert result.outcome == judge.FAILED
    assert {r.number for r in stored(episode) if r.question.key == "goal"} == {2}
    assert len(stored(episode)) == 16


def test_the_scripted_model_stores_the_heuristic_scores_without_a_request(fake_llm, episode):
    result = evaluate(episode, model="scripted")

    assert result.outcome == judge.SCORED
    assert (result.model, result.prompt_version) == (scripted_judge.RESPONDENT, scripted_judge.PROMPT_VERSION)
    rows = stored(episode, scripted_judge.RESPONDENT)
    assert len(rows) == 16
    assert {r.response.respondent.prompt_version for r in rows} == {scripted_judge.PROMPT_VERSION}
    assert all(r.reasoning.startswith(scripted_judge.DISCLAIMER) for r in rows)
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
        [episode, *others], models=FAKE_MODEL, concurrency=3, on_result=seen.append
    )

    assert [r.episode_id for r in results] == [episode.pk, *(o.pk for o in others)]
    assert [r.outcome for r in results] == [judge.SCORED, judge.CACHED, judge.SCORED, judge.SCORED]
    assert sorted(r.episode_id for r in seen) == sorted(r.episode_id for r in results)
    assert len(fake_llm.requests) == 1 + 3


def test_check_answers_returns_every_score():
    answers = check_answers(verdict(seats=3), {"seat_1": 0, "seat_2": 1, "seat_3": 2})

    assert len(answers) == 7 * 3 + 2
    assert {a.asked.target.seat for a in answers} == {0, 1, 2, None}


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
def test_check_answers_names_the_seat_and_dimension(entry, problem):
    with pytest.raises(ValueError) as error:
        check_answers(
            verdict(**{"seat_2.goal": entry}), {"seat_1": 0, "seat_2": 1}, {"seat_2": "Aisha"}
        )

    assert f"seat_2 (Aisha): {problem}" in str(error.value)


def test_check_answers_lists_every_problem_at_once():
    data = verdict(**{"seat_1.goal": None, "episode.unresolved_confusion": {"reasoning": "x", "score": 6}})

    with pytest.raises(ValueError) as error:
        check_answers(data, {"seat_1": 0, "seat_2": 1})

    assert "seat_1: 'goal' is missing" in str(error.value)
    assert "episode: 'unresolved_confusion' score 6 is out of range" in str(error.value)


def test_store_answers_refuses_an_incomplete_set(episode):
    facts = load_episode_for_judge(episode.pk)
    answers = check_answers(verdict(), {"seat_1": 0, "seat_2": 1})[:-1]
    respondent = Respondent.objects.create(kind="judge", model=FAKE_MODEL)

    with pytest.raises(ValueError, match="needs 16 scores, got 15"):
        store_answers(facts, answers, respondent=respondent, questions=questions(), usage=None)
    assert Answer.objects.count() == 0


# --- the judge's instruments ------------------------------------------------------------------------


def test_the_two_presets_carry_the_nine_dimensions_with_their_ranges_and_scopes():
    found = {
        question.key: (question.instrument.name, question.scope, question.low, question.high, question.dimension)
        for question in Question.objects.filter(instrument__preset__in=["sotopia-eval-judge", "socialveil-judge"])
        .select_related("instrument")
    }

    assert found == {
        "goal": ("Sotopia-EVAL judge", "seat", 0, 10, "goal"),
        "believability": ("Sotopia-EVAL judge", "seat", 0, 10, "believability"),
        "relationship": ("Sotopia-EVAL judge", "seat", -5, 5, "relationship"),
        "knowledge": ("Sotopia-EVAL judge", "seat", 0, 10, "knowledge"),
        "secret": ("Sotopia-EVAL judge", "seat", -10, 0, "secret"),
        "social_rules": ("Sotopia-EVAL judge", "seat", -10, 0, "social_rules"),
        "financial": ("Sotopia-EVAL judge", "seat", -5, 5, "financial"),
        "unresolved_confusion": ("SocialVeil judge", "episode", 1, 5, "unresolved_confusion"),
        "mutual_understanding": ("SocialVeil judge", "episode", 1, 5, "mutual_understanding"),
    }
    assert set(Instrument.objects.filter(preset__in=["sotopia-eval-judge", "socialveil-judge"])
               .values_list("team", flat=True)) == {None}


def test_the_prompt_reads_each_question_its_range_and_rubric(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())

    evaluate(episode)

    system = fake_llm.requests[0]["messages"][0]["content"]
    assert "For EACH character, score these seven dimensions:" in system
    assert "For the conversation AS A WHOLE, score these two dimensions:" in system
    assert "- relationship (-5 to 5): Describe the relationship between the characters" in system
    assert "- unresolved_confusion (1 to 5): How much about the situation" in system
    assert '"secret": {"reasoning": "<why>", "score": <-10 to 0>}' in fake_llm.prompts[0]


@pytest.fixture
def warmth() -> Instrument:
    """A team's own instrument: one bounded question per episode the judge can answer."""
    instrument = Instrument.objects.create(team=make_team(), name="Warmth check")
    Question.objects.create(
        instrument=instrument, key="warmth", position=0, kind="slider", prompt="How warm was it?", low=0, high=3,
        help_text="0 = cold, 3 = warm throughout.", scope="episode", dimension="warmth",
    )
    return instrument


def test_any_instrument_of_bounded_questions_can_be_judged(fake_llm, episode, warmth):
    fake_llm.reply_when(PROMPT_MARK, json.dumps({"episode": {"warmth": {"reasoning": "Polite.", "score": 2}}}))

    results = async_to_sync(judge.evaluate_episodes)([episode], models=[FAKE_MODEL], instruments=[warmth])

    assert [r.outcome for r in results] == [judge.SCORED]
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert "- warmth (0 to 3): 0 = cold, 3 = warm throughout." in system
    assert "For EACH character" not in system
    answer = Answer.objects.get(response__instrument=warmth)
    assert (answer.number, answer.reasoning, answer.seat_position) == (2, "Polite.", None)


def test_an_out_of_range_answer_to_any_instrument_is_sent_back_by_its_own_range(fake_llm, episode, warmth):
    fake_llm.enqueue(text=json.dumps({"episode": {"warmth": {"reasoning": "Very.", "score": 5}}}))
    fake_llm.enqueue(text=json.dumps({"episode": {"warmth": {"reasoning": "Very.", "score": 3}}}))

    async_to_sync(judge.evaluate_episodes)([episode], models=[FAKE_MODEL], instruments=[warmth])

    assert "'warmth' score 5 is out of range; it must be between 0 and 3" in fake_llm.prompts[1]


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"kind": "span"}, "the judge cannot answer a span"),
        ({"kind": "multi_label"}, "the judge cannot answer a multi"),
        ({"kind": "slider", "low": 0, "high": 3, "scope": "goal"}, "the judge answers questions asked per seat"),
    ],
)
def test_a_question_the_judge_cannot_answer_is_refused_by_name(fields, problem):
    instrument = Instrument.objects.create(team=make_team(), name="Odd one")
    Question.objects.create(instrument=instrument, key="odd", position=0, prompt="?", **fields)

    with pytest.raises(ValueError, match=rf"Odd one v1, question 'odd': {problem}"):
        questionnaire([instrument])


def test_several_judges_each_answer_as_their_own_respondent(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())

    results = async_to_sync(judge.evaluate_episodes)(
        [episode], models="openai/judge-one, scripted ,openai/judge-one", concurrency=2
    )

    assert [(r.model, r.outcome) for r in results] == [("openai/judge-one", judge.SCORED), ("scripted", judge.SCORED)]
    assert len(fake_llm.requests) == 1
    kinds = set(Respondent.objects.filter(responses__episode=episode).values_list("kind", "model", "prompt_version"))
    assert kinds == {("judge", "openai/judge-one", judge.JUDGE_PROMPT_VERSION), ("judge", "scripted", "heuristic-1")}
    assert Response.objects.filter(episode=episode).count() == 4


def test_judge_models_reads_one_name_or_several():
    assert judge.judge_models("scripted") == ["scripted"]
    assert judge.judge_models(" a ,b,, a") == ["a", "b"]
    with pytest.raises(ValueError, match="at least one judge model"):
        judge.judge_models(" , ")


def test_the_database_refuses_a_second_response_of_the_same_judge(fake_llm, episode):
    fake_llm.reply_when(PROMPT_MARK, reply())
    evaluate(episode)
    first = Response.objects.filter(episode=episode).first()

    with pytest.raises(IntegrityError), transaction.atomic():
        Response.objects.create(episode=episode, respondent=first.respondent, instrument=first.instrument)
    other = Respondent.objects.create(kind="judge", model="openai/other")
    Response.objects.create(episode=episode, respondent=other, instrument=first.instrument)  # another judge may


def test_a_person_may_answer_the_same_instrument_about_an_episode_again(episode):
    instrument = judge_instruments()[0]
    rater = Respondent.objects.create(kind="annotator", label="human mean")
    for _ in range(2):
        Response.objects.create(episode=episode, respondent=rater, instrument=instrument)

    assert Response.objects.filter(respondent=rater).count() == 2
