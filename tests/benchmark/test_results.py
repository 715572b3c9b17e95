import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmark.models import Episode, Evaluation, Seat
from benchmark.results.build import (
    ResultFilters,
    ResultsProblem,
    build_results,
    choose_evaluator,
    evaluator_choices,
    results_table,
)
from benchmark.stats.linguistic import signature
from tests.benchmark.results_data import BARRIER_LINE, PARTNER_LINE, judged_experiment
from tests.builders import make_episode

pytestmark = pytest.mark.django_db


def _judge(filters: ResultFilters | None = None):
    filters = filters or ResultFilters()
    return choose_evaluator(filters, evaluator_choices(filters, Episode.objects.all()))


def test_the_judge_is_the_evaluator_with_most_scores_but_never_human_mean():
    judged_experiment()

    judge = _judge()

    assert (judge.evaluator, judge.prompt_version) == ("judge-a", "v1")


def test_on_a_tie_a_model_judge_wins_over_the_scripted_heuristic():
    episode = make_episode()
    for evaluator in ("scripted", "vertex_ai/judge"):
        Evaluation.objects.create(episode=episode, evaluator=evaluator, dimension="unresolved_confusion", score=3)

    assert _judge().evaluator == "vertex_ai/judge"


def test_a_named_evaluator_is_used_even_with_fewer_scores():
    judged_experiment()

    judge = _judge(ResultFilters(evaluator="scripted"))

    assert (judge.evaluator, judge.prompt_version, judge.scores) == ("scripted", "heuristic-1", 6)


def test_an_evaluator_without_scores_is_refused_naming_the_ones_that_have_some():
    judged_experiment()

    with pytest.raises(ResultsProblem, match=r"'gpt-judge' has no scores .*human mean, judge-a, scripted"):
        _judge(ResultFilters(evaluator="gpt-judge"))


def test_a_prompt_version_without_scores_is_refused():
    judged_experiment()

    with pytest.raises(ResultsProblem, match="prompt version 'v9'"):
        _judge(ResultFilters(evaluator="judge-a", prompt_version="v9"))


def test_the_table_has_one_row_per_episode_and_seat_with_its_role_and_models():
    episodes = judged_experiment()

    table = results_table(ResultFilters(), _judge(), Episode.objects.all())

    assert len(table) == 2 * len(episodes)
    barrier = table[table["seat_role"] == "barrier"]
    assert set(barrier["seat"]) == {0} and set(barrier["model"]) == {"barrier-model"}
    assert set(table["partner_model"]) == {"partner-model"}
    assert set(table["barrier_model"]) == {"barrier-model"}
    assert sorted(table["condition"].unique()) == ["emotional", "none", "semantic"]
    assert set(table["difficulty"]) == {"hard", "standard"}


def test_per_seat_scores_sit_on_their_seat_and_episode_scores_on_every_row():
    episodes = judged_experiment()

    table = results_table(ResultFilters(), _judge(), Episode.objects.all()).set_index(["episode", "seat"])

    hard_semantic = episodes[1]
    assert table.loc[(hard_semantic.pk, 1), "goal"] == 4
    assert table.loc[(hard_semantic.pk, 0), "goal"] == 0
    assert table.loc[(hard_semantic.pk, 0), "mutual_understanding"] == 2
    assert table.loc[(hard_semantic.pk, 1), "mutual_understanding"] == 2


def test_linguistic_features_come_from_spoken_turns_of_the_barrier_seat_and_of_everyone():
    episodes = judged_experiment()

    row = results_table(ResultFilters(), _judge(), Episode.objects.all()).iloc[0]

    assert row["episode"] == episodes[0].pk
    barrier, transcript = signature([BARRIER_LINE]), signature([BARRIER_LINE, PARTNER_LINE])
    assert row["barrier_speech.hedges"] == pytest.approx(barrier.hedges)
    assert row["barrier_speech.vague_pronouns"] == pytest.approx(barrier.vague_pronouns)
    assert row["transcript.self_focus"] == pytest.approx(transcript.self_focus)
    assert row["transcript.sentiment"] == pytest.approx(transcript.sentiment)


def test_an_episode_without_a_barrier_seat_counts_every_seat_as_partner():
    episode = make_episode(barrier="none", barrier_seat=None, seat_fields={"model": "m"})
    seat = episode.seats.first()
    Evaluation.objects.create(episode=episode, seat=seat, evaluator="j", dimension="goal", score=5)

    table = results_table(ResultFilters(), _judge(), Episode.objects.all())

    assert set(table["seat_role"]) == {"partner"}
    assert set(table["partner_model"]) == {"m"}
    assert table["barrier_speech.hedges"].isna().all()


def test_filters_select_episodes_by_tag():
    judged_experiment(tag="exp")
    judged_experiment(tag="other", partner_model="other-model")

    table = results_table(ResultFilters(tag="other"), _judge(ResultFilters(tag="other")), Episode.objects.all())

    assert set(table["tag"]) == {"other"}
    assert set(table["partner_model"]) == {"other-model"}


def test_filters_select_episodes_by_partner_strategy():
    episodes = judged_experiment()
    Seat.objects.filter(episode=episodes[0], carries_barrier=False).update(strategy=Seat.Strategy.REPAIR)

    filters = ResultFilters(strategy="repair")
    table = results_table(filters, _judge(filters), Episode.objects.all())

    assert set(table["episode"]) == {episodes[0].pk}
    assert set(table["strategy"]) == {"repair"}


def test_filters_select_episodes_by_source():
    judged_experiment()

    filters = ResultFilters(source="imported")

    assert _judge(filters) is None
    assert results_table(filters, None, Episode.objects.all()).empty


def test_build_results_reports_the_judges_numbers_as_strict_json():
    judged_experiment()

    report, _ = build_results(ResultFilters(), Episode.objects.all(), resamples=100, seed=1)

    json.dumps(report, allow_nan=False)
    assert report["evaluator"] == {"evaluator": "judge-a", "prompt_version": "v1", "scores": 96}
    assert [o["evaluator"] for o in report["other_evaluators"]] == ["human mean", "scripted"]
    goal = report["means"]["partner-model"]
    assert goal["none"]["goal"]["mean"] == 7
    assert goal["semantic"]["goal"]["percent_change"] == pytest.approx(-250 / 7)
    assert report["means_by_difficulty"]["hard"]["partner-model"]["none"]["goal"]["mean"] == 8
    assert report["conditions"] == ["none", "semantic", "emotional"]
    assert report["condition_labels"]["none"] == "No barrier"


def test_build_results_on_the_barrier_seat_groups_by_the_barrier_model():
    judged_experiment()

    report, _ = build_results(ResultFilters(seat_role="barrier"), Episode.objects.all(), resamples=0)

    assert report["models"] == ["barrier-model"]
    assert report["seat_role"] == "barrier"


def test_build_results_without_scores_says_so():
    make_episode()

    report, table = build_results(ResultFilters(), Episode.objects.all(), resamples=10)

    assert table.empty
    assert report["evaluator"] is None and report["means"] == {}
    assert report["notes"][0].startswith("no judge scores on the selected episodes")


def test_query_count_does_not_grow_with_the_number_of_episodes():
    judged_experiment(tag="one")

    with CaptureQueriesContext(connection) as small:
        build_results(ResultFilters(), Episode.objects.all(), resamples=0)
    judged_experiment(tag="two")
    judged_experiment(tag="three")
    with CaptureQueriesContext(connection) as large:
        build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    assert len(large.captured_queries) == len(small.captured_queries)


def test_every_key_of_the_report_is_documented():
    from pathlib import Path

    judged_experiment()
    report, _ = build_results(ResultFilters(), Episode.objects.all(), resamples=10)
    schema = (Path(__file__).resolve().parents[2] / "docs" / "results-schema.md").read_text(encoding="utf-8")

    cell = report["means"]["partner-model"]["semantic"]["goal"]
    keys = [*report, *cell, *report["deviations"][0], *report["correlations"]["all"][0], *report["counts"]]
    assert [key for key in keys if f"`{key}`" not in schema] == []
