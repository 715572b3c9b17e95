import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmark.models import Episode, Seat
from benchmark.results.build import (
    ResultFilters,
    ResultsProblem,
    build_results,
    choose_evaluator,
    evaluator_choices,
    read_scores,
    results_table,
)
from benchmark.stats.linguistic import signature
from tests.benchmark.results_data import BARRIER_LINE, PARTNER_LINE, judged_experiment
from tests.builders import make_episode, make_scores

pytestmark = pytest.mark.django_db


def _judge(filters: ResultFilters | None = None):
    filters = filters or ResultFilters()
    scores = read_scores(filters, Episode.objects.all())
    return choose_evaluator(filters, evaluator_choices(filters, scores), scores.named)


def _table(filters: ResultFilters | None = None):
    filters = filters or ResultFilters()
    return results_table(read_scores(filters, Episode.objects.all()), _judge(filters))


def test_the_judge_is_the_evaluator_with_most_scores_but_never_human_mean():
    judged_experiment()

    judge = _judge()

    assert (judge.evaluator, judge.prompt_version) == ("judge-a", "v1")


def test_on_a_tie_a_model_judge_wins_over_the_scripted_heuristic():
    episode = make_episode()
    for evaluator in ("scripted", "vertex_ai/judge"):
        make_scores(episode, [("unresolved_confusion", None, 3)], evaluator=evaluator)

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

    table = _table()

    assert len(table) == 2 * len(episodes)
    barrier = table[table["seat_role"] == "barrier"]
    assert set(barrier["seat"]) == {0} and set(barrier["model"]) == {"barrier-model"}
    assert set(table["partner_model"]) == {"partner-model"}
    assert set(table["barrier_model"]) == {"barrier-model"}
    assert sorted(table["condition"].unique()) == ["emotional", "none", "semantic"]
    assert set(table["difficulty"]) == {"hard", "standard"}


def test_per_seat_scores_sit_on_their_seat_and_episode_scores_on_every_row():
    episodes = judged_experiment()

    table = _table().set_index(["episode", "seat"])

    hard_semantic = episodes[1]
    assert table.loc[(hard_semantic.pk, 1), "goal"] == 4
    assert table.loc[(hard_semantic.pk, 0), "goal"] == 0
    assert table.loc[(hard_semantic.pk, 0), "mutual_understanding"] == 2
    assert table.loc[(hard_semantic.pk, 1), "mutual_understanding"] == 2


def test_linguistic_features_come_from_spoken_turns_of_the_barrier_seat_and_of_everyone():
    episodes = judged_experiment()

    row = _table().iloc[0]

    assert row["episode"] == episodes[0].pk
    barrier, transcript = signature([BARRIER_LINE]), signature([BARRIER_LINE, PARTNER_LINE])
    assert row["barrier_speech.hedges"] == pytest.approx(barrier.hedges)
    assert row["barrier_speech.vague_pronouns"] == pytest.approx(barrier.vague_pronouns)
    assert row["transcript.self_focus"] == pytest.approx(transcript.self_focus)
    assert row["transcript.sentiment"] == pytest.approx(transcript.sentiment)


def test_an_episode_without_a_barrier_seat_counts_every_seat_as_partner():
    episode = make_episode(barrier="none", barrier_seat=None, seat_fields={"model": "m"})
    make_scores(episode, [("goal", 0, 5)], evaluator="j")

    table = _table()

    assert set(table["seat_role"]) == {"partner"}
    assert set(table["partner_model"]) == {"m"}
    assert table["barrier_speech.hedges"].isna().all()


def test_filters_select_episodes_by_tag():
    judged_experiment(tag="exp")
    judged_experiment(tag="other", partner_model="other-model")

    table = _table(ResultFilters(tag="other"))

    assert set(table["tag"]) == {"other"}
    assert set(table["partner_model"]) == {"other-model"}


def test_filters_select_episodes_by_partner_strategy():
    episodes = judged_experiment()
    Seat.objects.filter(episode=episodes[0], carries_barrier=False).update(strategy=Seat.Strategy.REPAIR)

    table = _table(ResultFilters(strategy="repair"))

    assert set(table["episode"]) == {episodes[0].pk}
    assert set(table["strategy"]) == {"repair"}


def test_filters_select_episodes_by_source():
    judged_experiment()

    filters = ResultFilters(source="imported")

    assert _judge(filters) is None
    assert _table(filters).empty


def test_build_results_reports_the_judges_numbers_as_strict_json():
    judged_experiment()

    report, _ = build_results(ResultFilters(), Episode.objects.all(), resamples=100, seed=1)

    json.dumps(report, allow_nan=False)
    assert report["evaluator"] == {"evaluator": "judge-a", "prompt_version": "v1", "scores": 96, "kind": "judge",
                                   "members": []}
    assert [o["evaluator"] for o in report["other_evaluators"]] == ["human mean", "scripted"]
    assert [o["kind"] for o in report["other_evaluators"]] == ["annotator", "judge"]
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
    keys = [*report, *cell, *report["deviations"][0], *report["correlations"]["all"][0], *report["counts"],
            *report["evaluators"][0], *report["filters"]]
    assert [key for key in keys if f"`{key}`" not in schema] == []

# --- several judges, their majority, and other kinds of respondent -------------------------------


def test_the_majority_is_the_median_of_every_judge_per_episode_seat_and_dimension():
    episode = make_episode(barrier="none", tag="exp")
    for judge, goal in (("judge-a", 2), ("judge-b", 9), ("judge-c", 4)):
        make_scores(episode, [("goal", 1, goal), ("mutual_understanding", None, goal // 2 + 1)], evaluator=judge)

    report, table = build_results(ResultFilters(evaluator="majority"), Episode.objects.all(), resamples=0)

    assert report["evaluator"]["evaluator"] == "majority"
    assert [m["evaluator"] for m in report["evaluator"]["members"]] == ["judge-a", "judge-b", "judge-c"]
    partner = table[table["seat"] == 1].iloc[0]
    assert (partner["goal"], partner["mutual_understanding"]) == (4, 3)
    assert report["means"][report["models"][0]]["none"]["goal"]["mean"] == 4


def test_the_majority_of_an_even_number_of_judges_takes_the_mean_of_the_middle_two():
    episode = make_episode(barrier="none")
    for judge, goal in (("judge-a", 2), ("judge-b", 5)):
        make_scores(episode, [("goal", 1, goal)], evaluator=judge)

    _, table = build_results(ResultFilters(evaluator="majority"), Episode.objects.all(), resamples=0)

    assert table[table["seat"] == 1]["goal"].tolist() == [3.5]


def test_the_report_sets_every_judge_and_their_majority_side_by_side():
    judged_experiment()

    report, _ = build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    names = [entry["evaluator"] for entry in report["evaluators"]]
    assert names == ["judge-a", "scripted", "majority"]
    judge_a, scripted, majority = report["evaluators"]
    assert judge_a["means"]["none"]["goal"]["mean"] == 7
    assert scripted["means"]["none"]["goal"]["mean"] == 1
    assert majority["means"]["none"]["goal"]["mean"] == 4  # the median of 7 and 1 on each partner seat
    assert majority["means"]["none"]["knowledge"]["mean"] == 0  # scripted did not score it: judge-a alone


def test_naming_the_human_mean_reads_the_annotators_it_belongs_to():
    judged_experiment()

    report, table = build_results(ResultFilters(evaluator="human mean"), Episode.objects.all(), resamples=0)

    assert (report["respondent_kind"], report["evaluator"]["evaluator"]) == ("annotator", "human mean")
    assert set(table["goal"]) == {10}
    assert [o["evaluator"] for o in report["other_evaluators"]] == ["judge-a", "scripted"]


def test_a_majority_needs_two_judges():
    make_scores(make_episode(), [("goal", 0, 5)], evaluator="judge-a")

    with pytest.raises(ResultsProblem, match="a majority needs at least two judges .* there is 1"):
        build_results(ResultFilters(evaluator="majority"), Episode.objects.all(), resamples=0)


def test_results_can_be_read_for_another_kind_of_respondent():
    judged_experiment()

    report, table = build_results(ResultFilters(respondent_kind="annotator"), Episode.objects.all(), resamples=0)

    assert report["evaluator"]["evaluator"] == "human mean"
    assert report["evaluator"]["kind"] == "annotator"
    assert set(table["goal"]) == {10}
    assert [entry["evaluator"] for entry in report["evaluators"]] == ["human mean"]


def test_an_unknown_respondent_kind_is_refused():
    with pytest.raises(ResultsProblem, match="respondent kind must be one of annotator, participant, judge, agent"):
        build_results(ResultFilters(respondent_kind="oracle"), Episode.objects.all(), resamples=0)


def test_each_seat_of_a_pairwise_episode_reports_under_its_own_model():
    """Sotopia pits two models against each other with no barrier seat; each model gets its own row, its
    score the mean over the seats it played (Sotopia's per-model scores, averaged over partners)."""
    for first, second, goals in (("gpt-3.5-turbo", "gpt-4", (4, 8)), ("gpt-4", "gpt-3.5-turbo", (9, 6))):
        episode = make_episode(barrier_seat=None, source=Episode.Source.IMPORTED)
        Seat.objects.filter(episode=episode, position=0).update(model=first)
        Seat.objects.filter(episode=episode, position=1).update(model=second)
        make_scores(episode, [("goal", 0, goals[0]), ("goal", 1, goals[1])], evaluator="gpt-4")

    report, _ = build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    assert report["models"] == ["gpt-3.5-turbo", "gpt-4"]
    assert report["means"]["gpt-3.5-turbo"]["none"]["goal"]["mean"] == 5  # (4 + 6) / 2
    assert report["means"]["gpt-4"]["none"]["goal"]["mean"] == 8.5  # (8 + 9) / 2
