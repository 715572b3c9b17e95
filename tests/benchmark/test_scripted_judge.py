"""The offline scripted judge: transparent heuristics answering the judge's questions within their ranges."""

import pytest
from asgiref.sync import async_to_sync

from benchmark.demo.content import SCENARIOS
from benchmark.demo.install import beats_of, install_scenario
from benchmark.evaluation import judge, scripted_judge
from benchmark.evaluation.judge_questions import questionnaire
from benchmark.models import Answer, Barrier, Episode, Instrument, Question
from benchmark.runs.simulation import create_episode, run_episode
from tests.builders import default_team, make_team

pytestmark = pytest.mark.django_db


def demo_episode(condition: str, codename: str = "report-deadline") -> Episode:
    spec = next(s for s in SCENARIOS if s.codename == codename)
    episode = create_episode(
        install_scenario(spec, default_team()), Barrier.objects.get(key=condition),
        models={0: "scripted", 1: "scripted"},
    )
    return async_to_sync(run_episode)(episode, seed=3, beats=beats_of(spec))


def within_range(answers, questions) -> bool:
    asked = {(q.scope == "seat", q.key): q for q in (*questions.seat, *questions.episode)}
    return all(asked[(seat is not None, key)].contains(score) for seat, key, score, _ in answers)


def test_scripted_judge_scores_every_dimension_within_range():
    episode = demo_episode("semantic")
    questions = questionnaire()
    answers = scripted_judge.answer(episode, questions)
    assert len(answers) == 2 * len(questions.seat) + len(questions.episode) == 16
    assert within_range(answers, questions)
    assert {seat for seat, *_ in answers} == {None, 0, 1}
    assert {key for seat, key, *_ in answers if seat is None} == {"unresolved_confusion", "mutual_understanding"}
    assert all(reasoning.startswith(scripted_judge.DISCLAIMER) for *_, reasoning in answers)


def test_scripted_judge_scores_an_empty_episode_within_range():
    spec = SCENARIOS[0]
    episode = create_episode(install_scenario(spec, default_team()), Barrier.objects.get(key="none"))
    questions = questionnaire()
    assert within_range(scripted_judge.answer(episode, questions), questions)


def test_scripted_judge_rates_barrier_episodes_as_less_mutually_understood():
    def understanding(condition: str) -> float:
        answers = scripted_judge.answer(demo_episode(condition), questionnaire())
        return next(score for _, key, score, _ in answers if key == "mutual_understanding")

    assert understanding("semantic") < understanding("none")
    assert understanding("emotional") < understanding("none")


def test_scripted_scores_are_clamped_to_each_question_own_range():
    instrument = Instrument.objects.create(team=make_team(), name="Narrow goal")
    Question.objects.create(instrument=instrument, key="reached", position=0, kind="slider", prompt="Reached?",
                            low=0, high=1, scope="seat", dimension="goal")
    answers = scripted_judge.answer(demo_episode("none"), questionnaire([instrument]))
    assert {score for *_, score, _ in answers} <= {0.0, 1.0}


def test_a_question_without_a_heuristic_is_refused_by_name():
    instrument = Instrument.objects.create(team=make_team(), name="Warmth")
    Question.objects.create(instrument=instrument, key="warmth", position=0, kind="slider", prompt="Warm?",
                            low=0, high=3, scope="episode", dimension="warmth")
    with pytest.raises(ValueError, match="no heuristic for question 'warmth' \\(dimension 'warmth'\\)"):
        scripted_judge.answer(demo_episode("none"), questionnaire([instrument]))


def test_saved_scripted_answers_are_labelled_and_replace_the_previous_ones():
    episode = demo_episode("emotional")
    for _ in range(2):
        assert async_to_sync(judge.evaluate_episode)(episode, model="scripted", force=True).ok
    answers = Answer.objects.filter(response__episode=episode)
    assert answers.count() == 16
    assert set(answers.values_list("response__respondent__model", "response__respondent__prompt_version")) == {
        ("scripted", "heuristic-1")
    }
    assert all("not a model judgement" in a.reasoning for a in answers)
