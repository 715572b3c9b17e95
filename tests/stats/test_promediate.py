"""ProMediate's consensus series and metrics against the spec's hand-computed checks PM-A1…PM-A8."""

import itertools
import math
import statistics

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from benchmark.stats.accuracy import MI_GROUPS_COARSE, MI_GROUPS_FINE, grouped_accuracy
from benchmark.stats.consensus import PairReading, Series, consensus_series, normalise_attitude, rescore
from benchmark.stats.kappa import cohen_kappa_from_pairs
from benchmark.stats.promediate import (
    PAPER,
    UPSTREAM,
    UPSTREAM_EXACT,
    EpisodeTrace,
    MetricOptions,
    Utterance,
    consensus_change,
    episode_metrics,
    intervention_frequency,
    mediator_effectiveness,
    mediator_intelligence,
    response_latency,
    success_rate,
    topic_level_efficiency,
    upstream_results,
)
from benchmark.stats.promediate_tables import me_mi_spearman, table_cell

TOL = 1e-9


def letter_scorer(topic, x, y):
    """PM-A1's scorer: 1 − |ord(x) − ord(y)| / 2 on option letters."""
    return 1 - abs(ord(x) - ord(y)) / 2


def party(name, **kwargs):
    return Utterance(name, False, **kwargs)


def mediator(**kwargs):
    return Utterance("Mediator", True, **kwargs)


# PM-A1 ----------------------------------------------------------------------------------------------

A1_INITIAL = {"A": {"T1": "a", "T2": "a"}, "B": {"T1": "b", "T2": "a"}, "C": {"T1": "b", "T2": "b"}}
A1_UTTERANCES = [
    ("Mediator", None),
    ("A", {"T1": "b", "T2": "No Mention"}),
    ("C", {"T2": "c"}),
    ("Mediator", None),
    ("B", {"T1": "c", "T2": "b"}),
    ("C", {"T1": "no explicit mention.", "T2": "b"}),
]
A1_T1 = [2 / 3, 2 / 3, 1.0, 1.0, 1.0, 2 / 3, 2 / 3]
A1_T2 = [2 / 3, 2 / 3, 2 / 3, 1 / 3, 1 / 3, 1 / 3, 2 / 3]
A1_OVERALL = [2 / 3, 2 / 3, 5 / 6, 2 / 3, 2 / 3, 1 / 2, 2 / 3]


@pytest.mark.parametrize("parties", [("A", "B", "C"), ("B", "C", "A")])
def test_consensus_trajectory_with_fixed_attitudes_does_not_depend_on_party_order(parties):
    readings = rescore(parties, ("T1", "T2"), A1_INITIAL, A1_UTTERANCES, letter_scorer)
    series = consensus_series(parties, ("T1", "T2"), 7, readings)
    assert series.topics["T1"] == pytest.approx(A1_T1, abs=TOL)
    assert series.topics["T2"] == pytest.approx(A1_T2, abs=TOL)
    assert series.overall == pytest.approx(A1_OVERALL, abs=TOL)
    cc = consensus_change(series.overall)
    assert cc.value is None and "10" in cc.note


@pytest.mark.parametrize("seed", range(4))
def test_series_of_a_random_episode_is_the_same_for_every_party_order(seed):
    rng = np.random.default_rng(seed)
    parties, topics = ["P1", "P2", "P3", "P4", "P5"], ["T1", "T2", "T3"]
    letters = list("abcde")
    initial = {p: {t: str(rng.choice(letters)) for t in topics} for p in parties}
    utterances = [("Mediator", None)]
    for _ in range(40):
        speaker = str(rng.choice([*parties, "Mediator"]))
        stated = {t: str(rng.choice([*letters, "No mention"])) for t in topics}
        utterances.append((speaker, None if speaker == "Mediator" else stated))
    series = []
    for order in (parties, parties[::-1], [parties[i] for i in rng.permutation(5)]):
        readings = rescore(order, topics, initial, utterances, letter_scorer)
        series.append(consensus_series(order, topics, len(utterances) + 1, readings))
    for other in series[1:]:
        assert other.overall == pytest.approx(series[0].overall, abs=1e-12)
        for t in topics:
            assert other.topics[t] == pytest.approx(series[0].topics[t], abs=1e-12)
    assert len(set(series[0].overall)) > 3


def test_rescore_touches_only_pairs_with_the_speaker_on_mentioned_topics():
    readings = rescore(("A", "B", "C"), ("T1", "T2"), A1_INITIAL, A1_UTTERANCES, letter_scorer)
    assert sum(1 for r in readings if r.point == 0) == 6
    assert not [r for r in readings if r.point in (1, 4)]  # mediator turns change nothing
    after_a = {(r.topic, r.pair) for r in readings if r.point == 2}
    assert after_a == {("T1", ("A", "B")), ("T1", ("A", "C"))}
    after_b = {(r.topic, r.pair) for r in readings if r.point == 5}
    assert after_b == {(t, p) for t in ("T1", "T2") for p in (("A", "B"), ("B", "C"))}


def test_rescore_passes_dimension_scores_through():
    readings = rescore(("A", "B"), ("T",), {"A": {"T": "a"}, "B": {"T": "a"}}, [], lambda t, x, y: (0.4, (0.2, 0.6)))
    assert readings == [PairReading(0, "T", "A", "B", 0.4, (0.2, 0.6))]


# PM-A2 ----------------------------------------------------------------------------------------------


def test_pair_aggregation_counts_null_as_zero_and_mean_of_dims():
    parties = ("P1", "P2", "P3")
    pairs = [("P1", "P2"), ("P1", "P3"), ("P2", "P3")]
    dims_a = [(0.2, 0.4, 0.0, 0.6, 0.3), (0.6, 0.6, 0.4, 0.8, 0.6), (0.1, 0.2, 0.0, 0.3, 0.1)]
    readings = [
        PairReading(0, "A", *pair, overall, dims)
        for pair, overall, dims in zip(pairs, [0.2, 0.5, None], dims_a, strict=True)
    ]
    readings += [PairReading(0, "B", *pair, overall) for pair, overall in zip(pairs, [0.9, 0.6, 0.3], strict=True)]
    series = consensus_series(parties, ("A", "B"), 1, readings)
    assert series.topics["A"][0] == pytest.approx(0.7 / 3, abs=TOL)
    assert series.topics["B"][0] == pytest.approx(0.6, abs=TOL)
    assert series.overall[0] == pytest.approx(0.416667, abs=1e-6)
    dims_series = consensus_series(parties, ("A", "B"), 1, readings, pair_score="mean_of_dims")
    assert dims_series.topics["A"][0] == pytest.approx((0.30 + 0.60 + 0.14) / 3, abs=TOL)
    assert dims_series.topics["A"][0] == pytest.approx(0.346667, abs=1e-6)


def test_pair_never_scored_counts_zero_and_scores_carry_forward():
    readings = [PairReading(0, "T", "A", "B", 0.9), PairReading(2, "T", "B", "A", 0.3)]
    series = consensus_series(("A", "B", "C"), ("T",), 4, readings)
    assert series.topics["T"] == pytest.approx([0.3, 0.3, 0.1, 0.1], abs=TOL)


def test_pair_reading_normalises_the_pair_key():
    assert PairReading(3, "T", "Lee", "Alex", 0.5).pair == ("Alex", "Lee")


@pytest.mark.parametrize(
    ("reading", "message"),
    [
        (PairReading(0, "X", "A", "B", 1.0), "unknown topic 'X'"),
        (PairReading(0, "T", "A", "Z", 1.0), "unknown party 'Z'"),
        (PairReading(5, "T", "A", "B", 1.0), "outside 0…2"),
    ],
)
def test_consensus_series_refuses_readings_it_cannot_place(reading, message):
    with pytest.raises(ValueError, match=message):
        consensus_series(("A", "B"), ("T",), 3, [reading])


@pytest.mark.parametrize(
    ("parties", "topics", "points", "message"),
    [
        (("A",), ("T",), 1, "at least two distinct parties"),
        (("A", "A"), ("T",), 1, "at least two distinct parties"),
        (("A", "B"), (), 1, "at least one topic"),
        (("A", "B"), ("T",), 0, "at least one point"),
    ],
)
def test_consensus_series_refuses_an_impossible_shape(parties, topics, points, message):
    with pytest.raises(ValueError, match=message):
        consensus_series(parties, topics, points, [])


def test_rescore_refuses_missing_starting_attitudes_and_unknown_topics():
    with pytest.raises(ValueError, match="starting attitudes missing for B"):
        rescore(("A", "B"), ("T",), {"A": {"T": "a"}}, [], letter_scorer)
    with pytest.raises(ValueError, match="utterance 1 by A: unknown topic 'X'"):
        rescore(("A", "B"), ("T1",), A1_INITIAL, [("Mediator", None), ("A", {"X": "a"})], letter_scorer)


# PM-A3 ----------------------------------------------------------------------------------------------


def test_consensus_change_on_a_linear_series():
    c = [0.20 + 0.01 * k for k in range(25)]
    assert consensus_change(c).value == pytest.approx(0.15, abs=TOL)


def test_consensus_change_with_overlapping_windows():
    c = [0.30, 0.32, 0.35, 0.30, 0.28, 0.31, 0.33, 0.36, 0.40, 0.42, 0.45, 0.47]
    result = consensus_change(c)
    assert result.value == pytest.approx(0.030, abs=TOL)
    assert "overlap" in result.note


def test_consensus_change_needs_ten_points():
    result = consensus_change([0.5] * 9)
    assert result.value is None and result.n == 9


# PM-A4 ----------------------------------------------------------------------------------------------


def rl_utterances(k_total, mediator_at, seconds=None):
    out = []
    for k in range(k_total):
        when = None if seconds is None else seconds[k]
        out.append(mediator(seconds=when) if k == 0 or k in mediator_at else party(f"P{k % 2}", seconds=when))
    return out


def test_response_latency_skips_unanswered_events():
    c = [0.5] * 11 + [0.35] * 10
    result = response_latency(c, rl_utterances(20, {5, 14}))
    assert result.value == pytest.approx(2.0, abs=TOL)
    assert result.n == 3 and "7 of 10" in result.note


def test_response_latency_infinite_when_an_event_gets_no_reply():
    c = [0.5] * 11 + [0.35] * 10
    result = response_latency(c, rl_utterances(20, {5, 14}), PAPER)
    assert result.value == math.inf
    assert result.note == "no reply to 7 of 10 events"


def test_response_latency_in_seconds():
    c = [0.5] * 11 + [0.35] * 10
    seconds = [10.0 * k for k in range(20)]
    result = response_latency(c, rl_utterances(20, {5, 14}, seconds), unit="seconds")
    # Events at points 11, 12, 13 follow utterances 10, 11, 12; the reply is utterance 14.
    assert result.value == pytest.approx((40 + 30 + 20) / 3, abs=TOL)
    missing = response_latency(c, rl_utterances(20, {5, 14}), unit="seconds")
    assert missing.value is None and "times" in missing.note


def test_response_latency_drop_of_exactly_point_one_is_no_event():
    c = [0.5] * 11 + [0.4] * 10
    result = response_latency(c, rl_utterances(20, {5, 14}))
    assert result.value is None and result.n == 0


def test_response_latency_without_a_mediator_is_undefined():
    utterances = [party("A")] + [party(f"P{k % 2}") for k in range(1, 20)]
    result = response_latency([0.5] * 11 + [0.35] * 10, utterances)
    assert result.value is None and "no mediator" in result.note


# PM-A5 ----------------------------------------------------------------------------------------------


def me_series(k_total=20):
    x = [0.3] * (k_total + 1)
    x[5:11] = [0.40, 0.50, 0.40, 0.50, 0.40, 0.45]
    x[10:16] = [0.45, 0.45, 0.50, 0.55, 0.60, 0.65]
    y = [0.55] * (k_total + 1)
    y[5], y[10], y[15] = 0.6, 0.5, 0.45
    return Series({"X": x, "Y": y}, [0.0] * (k_total + 1))


def me_utterances(k_total=20, at=None):
    at = at or {10: frozenset({"X"})}
    return [
        mediator() if k == 0 else mediator(addressed=at[k]) if k in at else party(f"P{k % 2}") for k in range(k_total)
    ]


def test_mediator_effectiveness_endpoint_slopes():
    result = mediator_effectiveness(me_series(), me_utterances())
    assert result.value == pytest.approx(0.03, abs=TOL)
    assert result.parts == pytest.approx((0.03,), abs=TOL)


def test_mediator_effectiveness_least_squares_slopes():
    result = mediator_effectiveness(me_series(), me_utterances(), PAPER)
    assert result.value == pytest.approx(0.0414286, abs=1e-7)
    assert result.value == pytest.approx(0.0428571428571 - 0.0014285714286, abs=TOL)


def test_mediator_effectiveness_averages_the_addressed_topics():
    result = mediator_effectiveness(me_series(), me_utterances(at={10: frozenset({"X", "Y"})}))
    assert result.value == pytest.approx(0.02, abs=TOL)


def test_mediator_effectiveness_excludes_edges_none_and_untagged_turns():
    at = {3: frozenset({"X"}), 8: frozenset(), 10: frozenset({"X"}), 12: None, 15: frozenset({"X"})}
    utterances = [
        mediator() if k == 0 else Utterance("Mediator", True, addressed=at[k]) if k in at else party("P")
        for k in range(20)
    ]
    result = mediator_effectiveness(me_series(), utterances)
    assert result.value == pytest.approx(0.03, abs=TOL)
    assert result.parts[0] is None and result.parts[1] is None and result.parts[3] is None
    assert result.parts[4] is None  # m = 15 = K − 5
    assert result.n == 1
    assert "too near" in result.note and "addresses no topic" in result.note and "not tagged" in result.note


def test_mediator_effectiveness_undefined_without_interventions():
    only_welcome = [mediator()] + [party("P")] * 19
    assert mediator_effectiveness(me_series(), only_welcome).value is None
    no_agent = [party("P")] * 20
    assert "no mediator" in mediator_effectiveness(me_series(), no_agent).note


# PM-A6 ----------------------------------------------------------------------------------------------


def tle_case(scores_by_topic, k_total=30):
    """Topic t is mentioned by utterances 1…n; c_T after them holds the given scores."""
    topics = {}
    utterances = [mediator(mentions=frozenset())] + [party("P", mentions=frozenset()) for _ in range(k_total - 1)]
    for topic, scores in scores_by_topic.items():
        c = [0.0] * (k_total + 1)
        for k, score in enumerate(scores, start=1):
            c[k + 1] = score
            utterances[k] = Utterance("P", False, mentions=utterances[k].mentions | {topic})
        topics[topic] = c
    return Series(topics, [0.0] * (k_total + 1)), utterances


def test_topic_level_efficiency():
    first = [0.20, 0.25, 0.30, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60]
    series, utterances = tle_case({"T1": first, "T2": [0.1, 0.9, 0.2, 0.8]})
    result = topic_level_efficiency(series, utterances)
    assert result.parts == pytest.approx((0.035, 0.0), abs=TOL)
    assert result.value == pytest.approx(0.0175, abs=TOL)


def test_topic_level_efficiency_twelve_mentions():
    twelve = [0.5, 0.4, 0.45, 0.5, 0.6, 0.55, 0.3, 0.35, 0.4, 0.45, 0.5, 0.5]
    series, utterances = tle_case({"T": twelve})
    assert topic_level_efficiency(series, utterances).value == pytest.approx(0.05 / 12, abs=TOL)


def test_topic_level_efficiency_needs_mention_tags():
    series, utterances = tle_case({"T": [0.1] * 5})
    utterances[3] = party("P")
    result = topic_level_efficiency(series, utterances)
    assert result.value is None and "1 of 30" in result.note


def test_topic_level_efficiency_upstream_duplicate_line_lookup():
    series, utterances = tle_case({"T": [0.1, 0.2, 0.3, 0.4, 0.9]})
    utterances = [
        Utterance(u.speaker, u.mediator, mentions=u.mentions, text=f"line {k}") for k, u in enumerate(utterances)
    ]
    utterances[5] = Utterance("P", False, mentions=frozenset({"T"}), text="line 1")
    # Utterance 5 repeats utterance 1's line: upstream reads c_T after utterance 1 (0.1) instead of 0.9.
    assert topic_level_efficiency(series, utterances, UPSTREAM).value == pytest.approx((0.9 - 0.1) / 5, abs=TOL)
    assert topic_level_efficiency(series, utterances, UPSTREAM_EXACT).value == pytest.approx(0.0, abs=TOL)


# PM-A7 ----------------------------------------------------------------------------------------------


def mi_utterances():
    scores = [(4, None, None, 5), (None, None, None, None), (3, 3, 3, 3)]
    return [mediator()] + [u for s in scores for u in (party("P"), mediator(mi=s))]


def test_mediator_intelligence_all_not_applicable_counts_zero_upstream():
    result = mediator_intelligence(mi_utterances())
    assert result.value == pytest.approx(2.5, abs=TOL)
    assert result.parts == (4.5, 0.0, 3.0)


def test_mediator_intelligence_all_not_applicable_excluded():
    result = mediator_intelligence(mi_utterances(), PAPER)
    assert result.value == pytest.approx(3.75, abs=TOL)
    assert result.parts == (4.5, None, 3.0)


def test_mediator_intelligence_leaves_out_turns_not_judged():
    utterances = mi_utterances() + [party("P"), mediator()]
    result = mediator_intelligence(utterances)
    assert result.value == pytest.approx(2.5, abs=TOL)
    assert result.parts[-1] is None and "1 interventions not judged" in result.note


# PM-A8 ----------------------------------------------------------------------------------------------


def test_intervention_frequency_leaves_out_the_welcome():
    utterances = [mediator()] + [mediator() if k in (4, 9, 15) else party("P") for k in range(1, 21)]
    assert intervention_frequency(utterances).value == pytest.approx(3 / 21, abs=TOL)
    assert intervention_frequency(utterances).value == pytest.approx(0.142857, abs=1e-6)


def test_intervention_frequency_no_agent():
    utterances = [party("P")] * 20
    assert intervention_frequency(utterances).value is None
    assert intervention_frequency(utterances, UPSTREAM_EXACT).value == pytest.approx(-1 / 20, abs=TOL)


def test_success_rate_counts_an_exact_ninety_percent():
    exact = Series({"T": [0.0] * 5 + [0.9] * 10, "U": [0.2] * 15, "short": [1.0] * 9}, [0.0] * 15)
    result = success_rate(exact)
    assert result.value == pytest.approx(0.5, abs=TOL) and result.n == 2
    # Five 0.95 then five 0.85 average 0.9 exactly, but upstream's left-to-right sum / 10 gives
    # 0.8999999999999998: a success for Parley, none upstream.
    rounding = Series({"T": [0.0] * 5 + [0.95] * 5 + [0.85] * 5}, [0.0] * 15)
    assert success_rate(rounding).value == 1.0
    assert success_rate(rounding, UPSTREAM_EXACT).value == 0.0


def test_success_rate_max_variant():
    series = Series({"T": [0.0] * 10 + [0.95] + [0.1] * 4, "U": [0.2] * 15}, [0.0] * 15)
    assert success_rate(series).value == 0.0
    assert success_rate(series, use="max").value == pytest.approx(0.5, abs=TOL)
    assert success_rate(Series({"T": [1.0] * 5}, [1.0] * 5)).value is None


# Attitudes, options, episodes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["No Mention", "no mention.", "No explicit mention", "No explicit mention in this speech.", "  ", None]
)
def test_no_mention_spellings_mean_no_attitude(text):
    assert normalise_attitude(text) is None


def test_attitude_text_is_kept():
    assert normalise_attitude("  Prefers (b), a two-year term. ") == "Prefers (b), a two-year term."


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"pair_score": "average"}, "pair_score must be one of llm_overall, mean_of_dims; got 'average'"),
        ({"me_slope": "fit"}, "me_slope must be one of endpoint, ols"),
        ({"rl_no_reply": "ignore"}, "rl_no_reply must be one of skip, infinite"),
        ({"mi_all_na": "drop"}, "mi_all_na must be one of zero, exclude"),
        ({"window": 0}, "window must be a whole number"),
    ],
)
def test_bad_options_are_refused_with_the_allowed_values(options, message):
    with pytest.raises(ValueError, match=message):
        MetricOptions(**options)


def test_bad_pair_score_in_consensus_series_is_refused():
    with pytest.raises(ValueError, match="pair_score must be one of"):
        consensus_series(("A", "B"), ("T",), 1, [], pair_score="overall")


def a1_trace(mi=None):
    speakers = [u[0] for u in A1_UTTERANCES]
    readings = rescore(("A", "B", "C"), ("T1", "T2"), A1_INITIAL, A1_UTTERANCES, letter_scorer)
    utterances = tuple(
        Utterance(s, s == "Mediator", mentions=frozenset(), mi=mi if s == "Mediator" else None) for s in speakers
    )
    return EpisodeTrace(("A", "B", "C"), ("T1", "T2"), utterances, tuple(readings))


def test_episode_metrics_on_a_short_episode():
    metrics = episode_metrics(a1_trace(mi=(4, 4, None, None)))
    assert metrics["consensus_change"].value is None
    assert metrics["response_latency"].value is None
    assert metrics["mediator_effectiveness"].value is None  # m = 3 ≤ 5
    assert metrics["mediator_intelligence"].value == 4.0
    assert metrics["intervention_frequency"].value == pytest.approx(1 / 6, abs=TOL)
    assert metrics["topic_level_efficiency"].value == 0.0
    assert metrics["success_rate"].value is None


def test_episode_without_events_or_utterances():
    empty = EpisodeTrace(("A", "B"), ("T",), (), (PairReading(0, "T", "A", "B", 1.0),))
    metrics = episode_metrics(empty)
    assert all(value.value is None for key, value in metrics.items() if key != "topic_level_efficiency")
    assert metrics["topic_level_efficiency"].value == 0.0


def test_upstream_results_row_uses_the_csv_sentinels():
    row = upstream_results(a1_trace(mi=(4, 4, None, None)))
    assert list(row) == [
        "intervene_yield",
        "latency",
        "success_rate",
        "success_rate_max",
        "consensus_change",
        "frequency",
        "mean_topic_efficiency",
        "monitoring_score",
        "planning_score",
        "simple_score",
        "intervene_per_step",
        "topic_efficiencies",
    ]
    assert row["intervene_yield"] == -1 and row["latency"] == -1 and row["intervene_per_step"] == [-1]
    assert row["consensus_change"] is None and row["simple_score"] == 4.0
    assert row["monitoring_score"] == 0 and row["topic_efficiencies"] == [0.0, 0.0]


def test_upstream_results_no_agent_row():
    utterances = tuple(Utterance(s, False, mentions=frozenset()) for s in ("A", "B", "C", "A"))
    trace = EpisodeTrace(("A", "B", "C"), ("T",), utterances, ())
    row = upstream_results(trace)
    assert row["frequency"] == pytest.approx(-0.25, abs=TOL)
    assert row["simple_score"] == row["intervene_per_step"] == row["monitoring_score"] == -1
    assert row["intervene_yield"] == row["latency"] == -1


# Report helpers -------------------------------------------------------------------------------------


def test_table_cell_leaves_out_undefined_values():
    cell = table_cell([0.1, None, 0.3, math.inf, 0.2], ["s1", "s1", "s2", "s2", "s3"], resamples=200)
    assert cell["mean"] == pytest.approx(0.2, abs=TOL)
    assert cell["n"] == 3 and cell["excluded"] == 2 and cell["clusters"] == 3
    assert cell["se"] == pytest.approx(statistics.stdev([0.1, 0.3, 0.2]) / math.sqrt(3), abs=TOL)
    low, high = cell["ci95"]
    assert 0.1 <= low <= 0.2 <= high <= 0.3


def test_table_cell_with_one_value():
    cell = table_cell([0.4], ["s1"])
    assert cell["mean"] == 0.4 and cell["se"] is None and cell["ci95"] is None


def test_me_mi_spearman_matches_scipy_on_defined_pairs():
    me = [0.01, None, 0.03, -0.02, 0.05, 0.0]
    mi = [4.0, 3.0, None, 3.5, 4.5, 2.0]
    result = me_mi_spearman(me, mi)
    assert result["n"] == 4
    assert result["rho"] == pytest.approx(0.8, abs=TOL)
    short = me_mi_spearman([0.1, 0.2], [1.0, 2.0])
    assert short["rho"] is None and "at least 3" in short["note"]


# PM-A9 ----------------------------------------------------------------------------------------------

SNIPPETS = (
    [("increased", "increased")] * 25
    + [("decreased", "decreased")] * 20
    + [("increased", "decreased")] * 8
    + [("decreased", "increased")] * 7
)


def test_snippet_comparison_kappa():
    result = cohen_kappa_from_pairs(SNIPPETS, ["increased", "decreased"])
    p_e = (33 * 32 + 27 * 28) / 60**2
    assert p_e == pytest.approx(0.503333, abs=1e-6)
    assert result.value == pytest.approx((0.75 - p_e) / (1 - p_e), abs=TOL)
    assert result.value == pytest.approx(0.496644, abs=1e-6)
    humans, judges = zip(*SNIPPETS, strict=True)
    assert result.value == pytest.approx(cohen_kappa_score(humans, judges), abs=TOL)


def test_snippet_comparison_kappa_leaves_out_missing_labels_and_refuses_unknown_ones():
    result = cohen_kappa_from_pairs([*SNIPPETS, ("increased", None)], ["increased", "decreased"])
    assert result.value == pytest.approx(0.496644, abs=1e-6) and result.excluded_items == 1
    with pytest.raises(ValueError, match="tie"):
        cohen_kappa_from_pairs([("increased", "tie")], ["increased", "decreased"])


MI_PAIRS = [(5, 4), (4, 5), (3, 4), (2, 1), (5, 3), (4, 4), (1, 3), (3, 3), (5, 5), (2, 4)]


def test_mi_grouped_accuracy():
    assert grouped_accuracy(MI_PAIRS, [(v,) for v in range(1, 6)]) == pytest.approx(0.3, abs=TOL)
    assert grouped_accuracy(MI_PAIRS, MI_GROUPS_FINE) == pytest.approx(0.6, abs=TOL)
    assert grouped_accuracy(MI_PAIRS, MI_GROUPS_COARSE) == pytest.approx(0.8, abs=TOL)


def test_mi_grouped_accuracy_not_applicable_and_bad_values():
    assert grouped_accuracy([(None, 4), (4, None)], MI_GROUPS_FINE) is None
    assert grouped_accuracy([*MI_PAIRS, (None, 3)], MI_GROUPS_FINE) == pytest.approx(0.6, abs=TOL)
    with pytest.raises(ValueError, match="none of the groups"):
        grouped_accuracy([(6, 4)], MI_GROUPS_FINE)


# Upstream reproduction -------------------------------------------------------------------------------


def upstream_reference(snapshots, speakers, mentions, addressed, behaviour, topics):
    """scripts/evaluation.py's arithmetic, restated over its own inputs (snapshots as in agreement_scores.json)."""
    series = {topic: [] for topic in topics}
    series["overall"] = []
    for snapshot in snapshots:
        values = []
        for topic in topics:
            pairs = snapshot[topic]
            value = sum(p["overall_consensus_score"] for p in pairs if p["overall_consensus_score"]) / len(pairs)
            series[topic].append(value)
            values.append(value)
        series["overall"].append(sum(values) / len(values))
    k_total = len(speakers)
    turns = [i for i in range(1, k_total) if speakers[i] == "Mediator"]
    overall = series["overall"]
    cc = None if len(overall) < 10 else sum(overall[-10:]) / 10 - sum(overall[:10]) / 10
    latencies = []
    for i in range(10, len(overall)):
        if overall[i - 10] - overall[i] > 0.1:
            later = [m for m in turns if m > i]
            if later:
                latencies.append(later[0] - i)
    latency = sum(latencies) / len(latencies) if latencies else -1
    per_step = []
    for m in turns:
        if m <= 5 or m >= k_total - 5 or not addressed[m]:
            per_step.append(-1)
            continue
        diffs = [(series[t][m + 5] - series[t][m]) / 5 - (series[t][m] - series[t][m - 5]) / 5 for t in addressed[m]]
        per_step.append(statistics.mean(diffs))
    kept = [d for d in per_step if d != -1]
    effectiveness = statistics.mean(kept) if kept else -1
    efficiencies = []
    for topic in topics:
        picked = [series[topic][k + 1] for k in range(k_total) if topic in mentions[k]]
        w = len(picked) // 5
        first = sum(picked[:w]) / w if w else 0
        last = sum(picked[-w:]) / w if w else 0
        efficiencies.append((last - first) / len(picked) if picked else 0)
    successes = [sum(series[t][-10:]) / 10 >= 0.9 for t in topics if len(series[t]) >= 10]
    peaks = [max(series[t][-10:]) >= 0.9 for t in topics if len(series[t]) >= 10]
    per_turn = []
    for scores in behaviour:
        applicable = [s for s in scores if s != -1]
        per_turn.append(sum(applicable) / len(applicable) if applicable else 0)
    return {
        "intervene_yield": effectiveness,
        "latency": latency,
        "success_rate": sum(successes) / len(successes) if successes else 0,
        "success_rate_max": sum(peaks) / len(peaks) if peaks else 0,
        "consensus_change": cc,
        "frequency": (speakers.count("Mediator") - 1) / k_total,
        "mean_topic_efficiency": statistics.mean(efficiencies),
        "monitoring_score": 0,
        "planning_score": 0,
        "simple_score": statistics.mean(per_turn),
        "intervene_per_step": per_step,
        "topic_efficiencies": efficiencies,
    }


@pytest.mark.parametrize("seed", range(6))
def test_upstream_exact_preset_reproduces_upstream_arithmetic(seed):
    rng = np.random.default_rng(seed)
    parties, topics = ("Alex", "Jamie", "Lee"), ("Term", "Price", "Share")
    pairs = list(itertools.combinations(parties, 2))
    k_total = int(rng.integers(25, 60))
    speakers = ["Mediator"]
    for _ in range(1, k_total):
        last = speakers[-1]
        choices = [p for p in (*parties, "Mediator") if p != last]
        speakers.append(str(rng.choice(choices)))
    # "Share" stays near agreement so success rates see both outcomes.
    grid = {t: np.round(rng.random(6) * 0.9 + 0.1, 2) for t in topics}
    grid["Share"] = np.array([0.8, 0.85, 0.9, 0.95, 1.0])
    current = {(t, p): float(rng.choice(grid[t])) for t in topics for p in pairs}
    readings = [PairReading(0, t, *p, current[(t, p)]) for t, p in current]
    snapshots = [{t: [{"overall_consensus_score": current[(t, p)]} for p in pairs] for t in topics}]
    for k, speaker in enumerate(speakers):
        if speaker != "Mediator":
            for t in topics:
                if rng.random() < 0.5:
                    for p in pairs:
                        if speaker in p:
                            current[(t, p)] = float(rng.choice(grid[t]))
                            readings.append(PairReading(k + 1, t, *p, current[(t, p)]))
        snapshots.append({t: [{"overall_consensus_score": current[(t, p)]} for p in pairs] for t in topics})
    mentions = [frozenset(t for t in topics if rng.random() < 0.4) for _ in speakers]
    addressed = [frozenset(t for t in topics if rng.random() < 0.5) for _ in speakers]
    behaviour = {k: tuple(int(rng.choice([-1, 1, 2, 3, 4, 5])) for _ in range(4)) for k in range(k_total)}
    utterances = tuple(
        Utterance(
            s,
            s == "Mediator",
            mentions=mentions[k],
            addressed=addressed[k] if s == "Mediator" else None,
            mi=tuple(None if x == -1 else x for x in behaviour[k]) if s == "Mediator" else None,
        )
        for k, s in enumerate(speakers)
    )
    trace = EpisodeTrace(parties, topics, utterances, tuple(readings))
    turns = [k for k in range(1, k_total) if speakers[k] == "Mediator"]
    expected = upstream_reference(snapshots, speakers, mentions, addressed, [behaviour[k] for k in turns], topics)
    assert upstream_results(trace) == expected
