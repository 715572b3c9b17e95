"""AgentSense's analyses on hand-made records, against numbers worked out by hand in the comments."""

import numpy as np
import pandas as pd
import pytest

from benchmark.stats import goal_completion as goals
from benchmark.stats.agentsense import agentsense_report
from benchmark.stats.bootstrap import clustered_mean
from benchmark.stats.implicit_reasoning import character_accuracy, reasoning_by_model
from benchmark.stats.perspective_agreement import judges_fleiss, perspective_agreement

LABELS = {"template": "", "category": "small_society", "communication": "", "goal_type": "cooperation",
          "erg": "growth"}


def answer(episode, scenario, model, seat, goal, perspective, respondent, value, **labels):
    return {"episode": episode, "scenario": scenario, "model": model, "seat": seat, "goal": goal,
            "perspective": perspective, "respondent": respondent, "value": value, **{**LABELS, **labels}}


def goal_answers(goal, episode, scenario, model, seat, self_value, other_value, judge_values, **labels):
    rows = [answer(episode, scenario, model, seat, goal, "self", model, self_value, **labels),
            answer(episode, scenario, model, seat, goal, "other", "partner", other_value, **labels)]
    rows += [answer(episode, scenario, model, seat, goal, "judge", f"j{index + 1}", value, **labels)
             for index, value in enumerate(judge_values)]
    return rows


@pytest.fixture
def records():
    # Episode 1 (scenario s1): seat 0 (model A) holds g1 and g2, seat 1 (model B) holds g3.
    # Episode 2 (scenario s2): seat 0 (A) holds g4, seat 1 (B) holds g5. Three judges each.
    rows = [
        *goal_answers("g1", 1, "s1", "A", 0, 1, 0, (1, 0, 1)),  # judges: average 2/3, majority 1
        *goal_answers("g2", 1, "s1", "A", 0, 1, 1, (0, 0, 1), erg="existence", goal_type="information_provision"),
        *goal_answers("g3", 1, "s1", "B", 1, 0, 1, (1, 1, 1)),  # average 1, majority 1
        *goal_answers("g4", 2, "s2", "A", 0, 1, 1, (1, 1, 0)),  # average 2/3, majority 1
        *goal_answers("g5", 2, "s2", "B", 1, 1, 0, (0, 0, 0)),  # average 0, majority 0
    ]
    return pd.DataFrame(rows)


def characters_of(records):
    return goals.character_scores(goals.goal_views(records))


def test_completion_is_the_mean_over_goals_then_over_characters(records):
    completion = goals.completion_by_model(characters_of(records), resamples=0)

    # Characters: (1, 0) has g1, g2; (1, 1) g3; (2, 0) g4; (2, 1) g5.
    assert completion["self"]["A"]["mean"] == pytest.approx(1.0)
    assert completion["self"]["B"]["mean"] == pytest.approx(0.5)  # 0 and 1
    assert completion["other"]["A"]["mean"] == pytest.approx(0.75)  # (0 + 1) / 2 = 0.5, then 1
    assert completion["judge:j2"]["A"]["mean"] == pytest.approx(0.5)  # (0 + 0) / 2, then 1
    assert completion["judges_average"]["A"]["mean"] == pytest.approx((0.5 + 2 / 3) / 2)  # (2/3 + 1/3) / 2, 2/3
    assert completion["judges_majority"]["A"]["mean"] == pytest.approx(0.75)  # (1 + 0) / 2, then 1
    assert completion["judges_majority"]["B"]["mean"] == pytest.approx(0.5)  # 1, 0
    assert completion["self"]["A"]["n"] == 2
    assert completion["self"]["A"]["clusters"] == 2
    assert list(completion) == ["self", "other", "judge:j1", "judge:j2", "judge:j3", "judges_average",
                                "judges_majority"]


def test_a_tie_between_judges_counts_as_yes():
    rows = goal_answers("g1", 1, "s1", "A", 0, 0, 0, (1, 0))

    views = goals.goal_views(pd.DataFrame(rows)).set_index("view")["score"]

    assert views["judges_majority"] == 1.0
    assert views["judges_average"] == 0.5


def test_self_minus_external_is_taken_per_character(records):
    difference = goals.view_difference(characters_of(records), "self", "judges_majority", resamples=200)

    # Per character: 1 - 0.5, 0 - 1, 1 - 1, 1 - 0.
    assert difference["all"]["mean"] == pytest.approx((0.5 - 1 + 0 + 1) / 4)
    assert difference["by_model"]["A"]["mean"] == pytest.approx(0.25)
    assert difference["by_model"]["B"]["mean"] == pytest.approx(0.0)
    low, high = difference["all"]["ci95"]
    assert low <= high


def test_goal_type_breakdown_counts_goals_not_characters(records):
    views = goals.goal_views(records)

    by_erg = goals.completion_by_label(views, "erg", "judges_majority", resamples=0)

    assert by_erg["A"]["existence"] == {"mean": 0.0, "ci95": None, "n": 1, "clusters": 1}  # g2
    assert by_erg["A"]["growth"]["mean"] == pytest.approx(1.0)  # g1 and g4
    assert by_erg["A"]["growth"]["n"] == 2


def test_cohen_kappa_of_self_against_the_judges_majority(records):
    agreement = perspective_agreement(records, goals.goal_views(records), resamples=200)
    pair = next(p for p in agreement["pairs"] if (p["first"], p["second"]) == ("self", "judges_majority"))

    # self 1 1 0 1 1 vs majority 1 0 1 1 0: p_o = 2/5, p_e = 4/5 * 3/5 + 1/5 * 2/5 = 0.56.
    assert pair["n"] == 5
    assert pair["percent_agreement"] == pytest.approx(0.4)
    assert pair["kappa"] == pytest.approx((0.4 - 0.56) / (1 - 0.56))
    assert pair["kappa_ci95"] is not None


def test_judge_pairs_use_cohen_and_all_judges_fleiss(records):
    agreement = perspective_agreement(records, goals.goal_views(records), resamples=0)
    pair = next(p for p in agreement["pairs"] if (p["first"], p["second"]) == ("judge:j1", "judge:j2"))

    # j1 1 0 1 1 0 vs j2 0 0 1 1 0: p_o = 4/5, p_e = 3/5 * 2/5 + 2/5 * 3/5 = 0.48.
    assert pair["kappa"] == pytest.approx(0.32 / 0.52)
    # Votes per goal (yes, no): (2, 1), (1, 2), (3, 0), (2, 1), (0, 3): P = 3/5, P_e = (8/15)^2 + (7/15)^2.
    assert agreement["judges"]["kappa"] == pytest.approx(22 / 112)
    assert agreement["judges"]["judges"] == 3
    assert agreement["judges"]["percent_agreement"] == pytest.approx(0.6)


def test_without_judges_the_external_analyses_say_so(records):
    no_judges = records[records["perspective"] != "judge"]

    report = agentsense_report(no_judges, pd.DataFrame(columns=["episode", "scenario", "template", "model", "seat",
                                                                "defender_seat", "defender_model", "blind", "value"]),
                               resamples=0)

    assert report["views"] == ["self", "other"]
    assert report["primary_view"] == "other"
    assert report["overestimation"]["self"]["all"]["n"] == 0
    assert report["agreement"]["judges"]["kappa"] is None
    assert any("no external judge" in note for note in report["notes"])
    assert any("no probe answers" in note for note in report["notes"])
    assert [(p["first"], p["second"]) for p in report["agreement"]["pairs"]] == [("self", "others_majority")]


def test_all_yes_answers_have_no_kappa_but_full_agreement():
    rows = [row for goal in ("g1", "g2") for row in goal_answers(goal, 1, "s1", "A", 0, 1, 1, (1, 1))]
    records = pd.DataFrame(rows)

    agreement = perspective_agreement(records, goals.goal_views(records), resamples=100)
    pair = agreement["pairs"][0]

    assert pair["kappa"] is None
    assert pair["percent_agreement"] == 1.0
    assert any("undefined" in note for note in pair["notes"])
    assert judges_fleiss(records, resamples=0)["kappa"] is None


def test_psi_is_the_mean_over_templates_of_the_sample_sd_over_their_scenarios():
    units = pd.DataFrame({
        "model": ["A"] * 7,
        "scenario": ["s1", "s1", "s2", "s3", "s4", "s5", "s6"],
        "template": ["T", "T", "T", "T", "U", "U", ""],
        "score": [1.0, 1.0, 0.5, 0.0, 0.2, 0.6, 0.9],
    })

    psi = goals.profile_sensitivity(units, resamples=0)["A"]

    # T: scenario metrics 1, 0.5, 0 -> SD (n - 1) = 0.5; U: 0.2, 0.6 -> sqrt(0.08); s6 has no template.
    assert psi["psi"] == pytest.approx((0.5 + np.sqrt(0.08)) / 2)
    assert psi["by_template"] == pytest.approx({"T": 0.5, "U": np.sqrt(0.08)})
    assert psi["templates"] == 2
    assert psi["notes"] == ["1 template(s) with a single scenario left out (no standard deviation)"]


def test_psi_of_one_template_has_no_interval():
    units = pd.DataFrame({"model": ["A", "A"], "scenario": ["s1", "s2"], "template": ["T", "T"],
                          "score": [1.0, 0.0]})

    psi = goals.profile_sensitivity(units, resamples=100)["A"]

    assert psi["psi"] == pytest.approx(np.sqrt(0.5))
    assert psi["ci95"] is None


def probe(seat, model, defender_seat, defender_model, value, blind=False):
    return {"episode": 1, "scenario": "s1", "template": "", "model": model, "seat": seat,
            "defender_seat": defender_seat, "defender_model": defender_model, "blind": blind, "value": value}


def test_attacker_defender_and_blind_accuracy():
    records = pd.DataFrame([
        probe(0, "A", 1, "B", 1), probe(0, "A", 2, "A", 0), probe(0, "A", 0, "A", 1),  # the last is about itself
        probe(1, "B", 0, "A", 1), probe(1, "B", 2, "A", 1),
        probe(2, "A", 0, "A", 0), probe(2, "A", 1, "B", 1),
        probe(0, "A", 1, "B", 0, blind=True), probe(0, "A", 2, "A", 0, blind=True), probe(1, "B", 0, "A", 1, True),
    ])

    scores = reasoning_by_model(character_accuracy(records), resamples=0)

    assert scores["attacker"]["A"]["mean"] == pytest.approx(0.5)  # seat 0: 1/2, seat 2: 1/2
    assert scores["attacker"]["B"]["mean"] == pytest.approx(1.0)
    assert scores["defender"]["A"]["mean"] == pytest.approx(0.5)  # seat 0: 1 - 1/2, seat 2: 1 - 1/2
    assert scores["defender"]["B"]["mean"] == pytest.approx(0.0)  # both guessed seat 1 right
    assert scores["blind"]["A"]["mean"] == 0.0
    assert scores["blind"]["B"]["mean"] == 1.0


def test_pairings_group_episodes_by_sender_and_receiver_model():
    def row(episode, seat, model, communication, score, scenario="s1"):
        return {"view": "judges_majority", "episode": episode, "seat": seat, "model": model,
                "communication": communication, "score": score, "scenario": scenario}

    characters = pd.DataFrame([
        row(1, 0, "A", "sender", 1.0), row(1, 1, "B", "receiver", 0.0), row(1, 2, "B", "", 0.5),
        row(2, 0, "A", "sender", 1.0), row(2, 1, "B", "sender", 1.0), row(2, 2, "A", "receiver", 1.0),
        row(3, 0, "B", "sender", 0.0, "s2"), row(3, 1, "A", "receiver", 1.0, "s2"),
    ])

    pairings = goals.sender_receiver_pairings(characters, "judges_majority", resamples=0)

    cells = {(c["sender_model"], c["receiver_model"]): c for c in pairings["cells"]}
    assert set(cells) == {("A", "B"), ("B", "A")}
    assert cells[("A", "B")]["all"]["mean"] == pytest.approx(0.5)  # 1, 0, 0.5 over three characters
    assert cells[("A", "B")]["senders"]["mean"] == 1.0
    assert cells[("A", "B")]["receivers"]["mean"] == 0.0
    assert cells[("B", "A")]["all"]["mean"] == pytest.approx(0.5)
    assert "1 episode(s) left out" in pairings["notes"][0]


def test_clustered_mean_resamples_whole_clusters():
    cell = clustered_mean([1, 0, 1, 1], ["a", "a", "b", "c"], resamples=500, seed=1)

    assert cell["mean"] == 0.75
    assert (cell["n"], cell["clusters"]) == (4, 3)
    # The lowest possible replicate draws cluster a three times: 3 / 6.
    assert 0.5 <= cell["ci95"][0] <= cell["ci95"][1] <= 1.0
    assert clustered_mean([1, 0], ["a", "a"])["ci95"] is None
    assert clustered_mean([], [])["mean"] is None


def test_bad_records_are_refused_with_the_column_named(records):
    with pytest.raises(ValueError, match="perspective"):
        goals.goal_views(records.assign(perspective="narrator"))
    with pytest.raises(ValueError, match="not 0"):
        goals.goal_views(records.assign(value=2))
    with pytest.raises(ValueError, match="no column goal"):
        goals.goal_views(records.drop(columns="goal"))
