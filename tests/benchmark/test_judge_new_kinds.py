"""The judge answers an instrument of the new kinds: a ranking and a per-item choice (a probe's options).

The real litellm path against tests/fake_llm.py: each question is told to the judge by its kind (a
per-item choice bound to the episode, its item's choices shown and the correct one never), the reply is
checked by the question's kind, a bad reply is sent back with the kind's repair message and repaired,
and the answers are stored as the judge's Answer rows. The scripted judge answers the same offline.
The judge also rates each language agent's turn of the per-turn preset (one answer per turn).
"""

import json

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents import llm
from benchmark.evaluation import judge, scripted_judge
from benchmark.instruments.kinds.base import SCRIPTED
from benchmark.instruments.presets import TURN_RATING_PRESET, install_preset
from benchmark.models import ActionType, Answer, Episode, Instrument, Probe, Question
from tests.builders import make_episode, make_scenario
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

PROMPT_MARK = "Judge this conversation"
PLANTED = "a gambling debt"
TURNS = [(ActionType.SPEAK, "I hear you are short of money lately, is it a debt?"),
         (ActionType.SPEAK, "Let us stay calm; a gambling debt is not something I discuss."),
         (ActionType.LEAVE, "")]


@pytest.fixture
def instrument() -> Instrument:
    instrument = Instrument.objects.create(name="New kinds for the judge")
    Question.objects.create(instrument=instrument, key="order", position=0, kind="ranking", scope="episode",
                            prompt="Order the tones", help_text="Which tone did the talk have most?",
                            options={"choices": [{"value": "calm", "label": "Calm"}, {"value": "firm", "label": "Firm"},
                                                 {"value": "warm", "label": "Warm"}]})
    Question.objects.create(instrument=instrument, key="hidden", position=1, kind="item_choice", scope="episode",
                            prompt="What does the neighbour hide?",
                            options={"source": "scenario.probe", "position": 0})
    return instrument


def probed_episode(*, probe: bool = True) -> Episode:
    """A demo-like episode whose scenario has a probe at position 0 (the correct option is the second)."""
    scenario = make_scenario()
    if probe:
        Probe.objects.create(scenario=scenario, about=scenario.roles.first(), position=0, topic="private_info",
                             text="What does the neighbour hide?", options=["a new dog", PLANTED], correct=1)
    return make_episode(scenario=scenario, turns=TURNS)


def entry(value, reasoning="Because of the transcript."):
    return {"reasoning": reasoning, "answer": value}


def evaluate(episode: Episode, instrument: Instrument, model: str = FAKE_MODEL) -> judge.JudgeResult:
    return async_to_sync(judge.evaluate_episodes)([episode], models=[model], instruments=[instrument])[0]


def stored(episode: Episode) -> dict[str, Answer]:
    return {a.question.key: a for a in Answer.objects.filter(response__episode=episode).select_related("question")}


def test_the_judge_answers_a_ranking_and_an_items_choice_repairing_a_bad_reply_by_their_kinds(fake_llm, instrument):
    episode = probed_episode()
    fake_llm.enqueue(text=json.dumps({"episode": {"order": entry(["calm", "firm"]), "hidden": entry("7")}}))
    fake_llm.enqueue(text=json.dumps({"episode": {"order": entry(["warm", "calm", "firm"]),
                                                  "hidden": entry("1.")}}))

    result = evaluate(episode, instrument)

    assert result.outcome == judge.SCORED, result.error
    system, user = (message["content"] for message in fake_llm.requests[0]["messages"])
    assert "- order: Which tone did the talk have most?" in system
    assert "- hidden: What does the neighbour hide?" in system
    assert ('"order": {"reasoning": "<why>", "answer": <a JSON list of all of these values in order, best first, '
            "each exactly once: 'calm', 'firm', 'warm' ('calm' = Calm; 'firm' = Firm; 'warm' = Warm)>}") in user
    assert f"""'0' = a new dog; '1' = {PLANTED}""" in user  # the item's own choices
    assert "correct" not in (system + user).lower()  # which one is right is never shown
    repair = fake_llm.prompts[1]
    assert "Your answer to 'order' was not accepted:" in repair
    assert "Your answer to 'hidden' was not accepted:" in repair
    answers = stored(episode)
    assert json.loads(answers["order"].value) == ["warm", "calm", "firm"]
    assert (answers["hidden"].value, answers["hidden"].seat_position, answers["hidden"].reasoning) == (
        "1", None, "Because of the transcript.")
    assert {a.response.respondent.model for a in answers.values()} == {FAKE_MODEL}


def test_an_item_without_choices_for_the_question_is_not_asked_it(fake_llm, instrument):
    episode = probed_episode(probe=False)
    fake_llm.reply_when(PROMPT_MARK, json.dumps({"episode": {"order": entry(["firm", "warm", "calm"])}}))

    result = evaluate(episode, instrument)

    assert result.outcome == judge.SCORED, result.error
    assert '"hidden"' not in fake_llm.requests[0]["messages"][1]["content"]
    assert list(stored(episode)) == ["order"]
    assert evaluate(episode, instrument).outcome == judge.CACHED  # answered completely: not asked again
    assert len(fake_llm.requests) == 1


def test_a_reply_still_wrong_after_its_repair_stores_nothing(fake_llm, instrument, settings):
    settings.PARLEY_JUDGE_RETRIES = 0
    episode = probed_episode()
    fake_llm.reply_when(PROMPT_MARK, json.dumps({"episode": {"order": entry(["calm", "calm", "firm"]),
                                                             "hidden": entry("0")}}))

    result = evaluate(episode, instrument)

    assert result.outcome == judge.FAILED
    assert "Your answer to 'order' was not accepted" in result.error
    assert not Answer.objects.filter(response__episode=episode).exists()


def test_the_scripted_judge_answers_them_offline_by_their_kinds(instrument):
    episode = probed_episode()

    result = evaluate(episode, instrument, model=llm.SCRIPTED)

    assert result.outcome == judge.SCORED, result.error
    answers = stored(episode)
    assert answers["hidden"].value == "1"  # the choice sharing the most words with the transcript
    assert sorted(json.loads(answers["order"].value)) == ["calm", "firm", "warm"]
    assert json.loads(answers["order"].value)[0] == "calm"  # said in the transcript
    assert all(a.reasoning.startswith(SCRIPTED) for a in answers.values())  # the kind's heuristic says so
    assert {a.response.respondent.model for a in answers.values()} == {scripted_judge.RESPONDENT}


def test_the_judge_rates_each_agent_turn_of_the_per_turn_preset(fake_llm):
    rating = install_preset(TURN_RATING_PRESET)
    episode = probed_episode(probe=False)
    spoken = episode.turns.exclude(action_type=ActionType.LEAVE).order_by("index")
    indexes = list(spoken.values_list("index", flat=True))
    turn = {"helpfulness": {"reasoning": "It moves on.", "score": 4}, "comment": entry("Direct.")}
    fake_llm.enqueue(text=json.dumps({"turns": {"turn_1": turn, "turn_2": {**turn, "helpfulness": {
        "reasoning": "Shuts the talk down.", "score": 9}}}}))
    fake_llm.enqueue(text=json.dumps({"turns": {"turn_1": turn, "turn_2": {**turn, "helpfulness": {
        "reasoning": "Shuts the talk down.", "score": 2}}}}))

    result = evaluate(episode, rating)

    assert result.outcome == judge.SCORED, result.error
    system, user = (message["content"] for message in fake_llm.requests[0]["messages"])
    assert "For EACH reply of a language agent" in system
    assert '"turn_3"' not in user  # leaving is not a reply to rate
    assert "helpfulness" in fake_llm.prompts[1] and "out of range" in fake_llm.prompts[1]
    rows = Answer.objects.filter(response__episode=episode).select_related("question")
    assert sorted((a.turn, a.question.key, a.value) for a in rows) == sorted(
        [(indexes[0], "helpfulness", "4"), (indexes[0], "comment", "Direct."),
         (indexes[1], "helpfulness", "2"), (indexes[1], "comment", "Direct.")])
    assert {a.seat_position for a in rows} == {None}
    assert evaluate(episode, rating).outcome == judge.CACHED


def test_the_scripted_judge_refuses_a_per_turn_score_it_has_no_heuristic_for_by_name():
    result = evaluate(probed_episode(probe=False), install_preset(TURN_RATING_PRESET), model=llm.SCRIPTED)

    assert result.outcome == judge.FAILED
    assert "no heuristic for question 'helpfulness' (dimension 'turn_helpfulness') asked per turn" in result.error
    assert not Answer.objects.exists()
