"""The ProMediate report from hand-built traces: Table 1's cells, undefined and missing cells, the reading chosen,
Table 2, the CSV and JSON shapes, the figures' escaping, and whose episodes it reads."""

import csv
import io
import json
import math

import pytest

from benchmark.models import Episode
from benchmark.results.promediate import tables
from benchmark.results.promediate.build import build_promediate
from benchmark.results.promediate.figures import promediate_figures
from benchmark.results.promediate.traces import ProMediateFilters, load_records
from benchmark.results.tables import report_json
from tests.benchmark.promediate_report_data import mi_answers, negotiation_episode, negotiation_scenario
from tests.builders import default_team, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def experiment():
    """Competing mode: two Social conversations (CC 18 % and 9 %), one NoAgent; another team's stays apart."""
    scenario = negotiation_scenario()
    social_a = negotiation_episode(scenario, high=0.8)
    social_b = negotiation_episode(scenario, high=0.5, run_id=2)
    mi_answers(social_a, {4: (4, None, None, 5), 9: (3, 3, 3, 3)})  # two dimensions not applicable
    mi_answers(social_b, {4: (5, 5, 5, 5), 9: (2, 2, 2, 2)})
    noagent = negotiation_episode(scenario, condition="none", high=0.6)
    other = negotiation_episode(negotiation_scenario(make_team(), codename="elsewhere"), high=1.0, model="other-team")
    return {"social": [social_a, social_b], "noagent": noagent, "other": other}


def report_for(**filters):
    return build_promediate(ProMediateFilters(**filters), Episode.objects.of_team(default_team()), resamples=200)


def test_table_one_cells_hold_mean_n_se_and_a_scenario_bootstrap_interval(experiment):
    report, _ = report_for()

    cells = report["table1"]["cells"]
    cc = cells["consensus_change"]["competing"]["social"]
    assert cc["n"] == 2
    assert cc["mean"] == pytest.approx(13.5)  # (18 + 9) / 2, in %
    assert cc["se"] == pytest.approx(4.5)  # sd(18, 9) / √2
    assert cc["ci95"] is None  # one scenario: no interval to draw
    assert cc["clusters"] == 1
    assert cells["intervention_frequency"]["competing"]["social"]["mean"] == pytest.approx(100 * 2 / 12)
    assert cells["mediator_intelligence"]["competing"]["social"]["mean"] == pytest.approx((3.75 + 3.5) / 2)
    noagent_cc = cells["consensus_change"]["competing"]["none"]
    assert noagent_cc["n"] == 1
    # 0.2 until point 7, then 0.6: last ten (4·0.2 + 6·0.6)/10 − first ten (7·0.2 + 3·0.6)/10
    assert noagent_cc["mean"] == pytest.approx(100 * ((0.8 + 3.6) / 10 - (1.4 + 1.8) / 10))


def test_mediator_metrics_are_not_defined_without_a_mediator_and_absent_conditions_are_missing(experiment):
    report, _ = report_for()

    cells = report["table1"]["cells"]
    assert report["table1"]["modes"] == ["competing"]
    assert report["table1"]["conditions"] == ["none", "generic", "social"]
    for key in ("response_latency", "mediator_effectiveness", "mediator_intelligence", "intervention_frequency"):
        assert cells[key]["competing"]["none"]["defined"] is False
    assert cells["consensus_change"]["competing"]["none"]["defined"] is True
    generic = cells["consensus_change"]["competing"]["generic"]
    assert generic["missing"] is True and generic["n"] == 0
    header, rows = tables.table1_grid(report)
    row = {name: dict(zip(header, cells_text, strict=True)) for name, cells_text in ((r[0], r) for r in rows)}
    assert row["RL (turns)"]["competing / NoAgent"] == "-"
    assert row["MI (1–5)"]["competing / NoAgent"] == "-"
    assert row["CC (%)"]["competing / Generic"] == "missing"
    assert row["CC (%)"]["competing / Social"].startswith("13.50 ± 4.50")
    assert row["CC (%)"]["competing / Social"].endswith("n=2")


def test_undefined_conversation_values_are_left_out_and_counted(experiment):
    report, frame = report_for()

    # No drop in agreement: no response latency in either Social conversation; both interventions lie
    # within five turns of an end, so no ME either.
    rl = report["table1"]["cells"]["response_latency"]["competing"]["social"]
    assert (rl["n"], rl["excluded"], rl["mean"]) == (0, 2, None)
    assert rl["notes"]
    me = report["table1"]["cells"]["mediator_effectiveness"]["competing"]["social"]
    assert (me["n"], me["excluded"]) == (0, 2)
    assert "2 undefined" in tables.cell_text(rl)
    social_rows = frame[frame["condition"] == "social"]
    assert social_rows["response_latency"].isna().all()
    assert all(social_rows["response_latency_note"])


def test_another_teams_episodes_never_appear(experiment):
    report, frame = report_for()

    assert report["counts"]["episodes"] == 3
    assert set(frame["episode"]) == {e.pk for e in [*experiment["social"], experiment["noagent"]]}
    assert "other-team" not in report_json(report)


def test_the_mediator_model_filter_keeps_the_noagent_baseline(experiment):
    scenario = experiment["noagent"].scenario
    negotiation_episode(scenario, model="o4-mini", high=0.9, run_id=3)

    report, frame = report_for(mediator_model="o4-mini")

    assert sorted(frame["condition"]) == ["none", "social"]
    assert report["table1"]["cells"]["consensus_change"]["competing"]["social"]["n"] == 1
    assert "1 episode(s) left out: another mediator model" not in report["notes"]
    assert any("another mediator model" in note for note in report["notes"])


def test_table_two_compares_the_social_mediators_models(experiment):
    negotiation_episode(experiment["noagent"].scenario, model="o4-mini", high=0.5, change=4, run_id=3)

    report, _ = report_for()

    table = report["table2"]
    assert table["models"] == ["gpt-4.1", "o4-mini"]
    assert tables.table2_title(report) == "Table 2: the Social mediator per mediator model (hmo-test)"
    assert table["cells"]["consensus_change"]["gpt-4.1"]["n"] == 2
    # 0.2 until point 4, then 0.5: last ten (1·0.2 + 9·0.5)/10 − first ten (4·0.2 + 6·0.5)/10
    assert table["cells"]["consensus_change"]["o4-mini"]["mean"] == pytest.approx(100 * (0.47 - 0.38))


def test_the_latest_reading_is_reported_unless_a_judge_is_named(experiment):
    episode = experiment["noagent"]
    scenario = episode.scenario
    # a second reading of every episode by a later judge, stored after the first: all pairs at 0.5 throughout
    for each in [*experiment["social"], episode]:
        topics = list(scenario.topics.all())
        seats = list(each.seats.exclude(position=3).order_by("position"))
        for topic in topics:
            for i, a in enumerate(seats):
                for b in seats[i + 1 :]:
                    each.pair_agreements.create(
                        point=0, topic=topic, seat_a=a, seat_b=b, overall=0.5, judge="gpt-4.1", prompt_version="v2"
                    )

    latest, _ = report_for()
    named, _ = report_for(judge="scripted")

    assert latest["table1"]["cells"]["consensus_change"]["competing"]["none"]["mean"] == pytest.approx(0.0)
    assert latest["counts"]["judges"] == ["gpt-4.1 v2"]
    assert named["table1"]["cells"]["consensus_change"]["competing"]["none"]["mean"] == pytest.approx(12.0)


def test_episodes_without_a_trace_are_left_out_and_said(experiment):
    Episode.objects.filter(pk=experiment["noagent"].pk).update(tag="pm")
    experiment["noagent"].pair_agreements.all().delete()

    report, _ = report_for()

    assert report["counts"]["episodes"] == 2
    assert report["notes"] == ["1 episode(s) left out: no consensus trace (run evaluate --promediate)"]


def test_topic_mentions_feed_topic_level_efficiency(experiment):
    scenario = experiment["noagent"].scenario
    # topic 0 mentioned by every turn from 1 on (11 mentions, w = 2); topic 1 by none
    episode = negotiation_episode(scenario, mentions={index: [0] if index else [] for index in range(12)}, run_id=4)

    records, _ = load_records(Episode.objects.filter(pk=episode.pk), ProMediateFilters())

    trace = records[0].trace
    assert trace.utterances[0].mentions == frozenset()
    assert trace.utterances[1].mentions == frozenset({str(scenario.topics.get(position=0).pk)})
    report, frame = report_for(tag="pm")
    row = frame[frame["episode"] == episode.pk].iloc[0]
    # points after the mentioning turns 1..11 are 2..12: first two 0.2, last two 0.8 → 0.6 / 11 on topic 0, 0 on 1
    assert row["topic_level_efficiency"] == pytest.approx(100 * (0.6 / 11) / 2)


def test_records_label_mode_condition_model_and_mediator_turns(experiment):
    records, _ = load_records(Episode.objects.of_team(default_team()), ProMediateFilters())

    social = next(r for r in records if r.episode_id == experiment["social"][0].pk)
    assert (social.mode, social.condition, social.mediator_model, social.run_id) == (
        "competing",
        "social",
        "gpt-4.1",
        1,
    )
    assert social.mediator_turns == [4, 9]
    assert social.trace.utterances[4].mi == (4, None, None, 5)  # not applicable: no number
    assert social.trace.parties == ("0", "1", "2")
    noagent = next(r for r in records if r.episode_id == experiment["noagent"].pk)
    assert (noagent.condition, noagent.mediator_model, noagent.mediator_turns) == ("none", "", [])


def test_csv_tables_have_their_columns_and_one_row_per_cell(experiment):
    report, frame = report_for()

    rows = list(csv.DictReader(io.StringIO(tables.csv_table("table1", report, frame))))
    assert list(rows[0]) == list(tables.COLUMNS["table1"])
    assert len(rows) == len(report["metrics"]) * 1 * 3
    social_cc = next(r for r in rows if r["metric"] == "CC" and r["condition"] == "Social")
    assert float(social_cc["mean"]) == pytest.approx(13.5)
    assert social_cc["n"] == "2"
    conversations = list(csv.DictReader(io.StringIO(tables.csv_table("conversations", report, frame))))
    assert len(conversations) == 3
    assert {"episode", "scenario", "mode", "condition", "consensus_change", "consensus_change_note"} <= set(
        conversations[0]
    )
    assert list(csv.DictReader(io.StringIO(tables.csv_table("me-mi", report, frame))))[0]["n"] == "0"
    with pytest.raises(ValueError, match="unknown table"):
        tables.csv_table("nope", report, frame)


def test_json_is_strict_and_holds_every_table(experiment):
    report, _ = report_for()

    data = json.loads(report_json(report))
    assert {"table1", "table2", "table3", "me_mi", "trajectories", "methods", "filters", "counts"} <= set(data)
    assert data["table3"]["loadings"] is None and "needs more conversations than metrics" in data["table3"]["note"]
    assert data["methods"]["metric_options"].startswith("preset upstream")
    assert data["trajectories"]["single"]["mediator_points"] == [5, 10]
    assert all(isinstance(v, float) and math.isfinite(v) for v in data["trajectories"]["single"]["overall"])


def test_the_paper_preset_is_named_in_the_method_notes(experiment):
    report, _ = report_for(preset="paper")

    assert "mean_of_dims" in report["methods"]["metric_options"]
    assert "the mean of the five dimensions" in report["methods"]["consensus"]


def test_figures_draw_user_text_as_written_and_escaped(experiment):
    scenario = negotiation_scenario(codename="tricky", topics=("<b>$x$ & y</b>", "Term"))
    negotiation_episode(scenario, model="<script>alert(1)</script>", run_id=5)
    episode = Episode.objects.get(scenario=scenario)

    report, _ = report_for(episode=episode.pk)
    figures = promediate_figures(report)

    svg = figures["trajectory"].svg
    assert "<script>" not in svg and "<b>" not in svg
    assert "&lt;b&gt;$x$ &amp; y&lt;/b&gt;" in svg
    assert "&lt;script&gt;" in svg
    assert figures["mean-trajectories"] is not None
    assert figures["me-mi"] is None  # no intervention has an ME value


# Twenty-four turns, interventions at 8 and 16, both addressing topic 0.
LONG = (3, 0, 1, 2, 0, 1, 2, 0, 3, 1, 2, 0, 1, 2, 0, 1, 3, 2, 0, 1, 2, 0, 1, 2)


@pytest.fixture
def interventions():
    """Two Social conversations whose interventions have ME values: (−4 %, MI 4), (10 %, 2), (−2 %, 3), (3 %, 5)."""
    scenario = negotiation_scenario(codename="long-case")
    first = negotiation_episode(
        scenario,
        speakers=LONG,
        scores=((0, 0.5), (12, 0.3), (20, 0.6)),
        addressed={8: [0], 16: [0]},
        seconds_apart=10,
        tag="long",
    )
    second = negotiation_episode(
        scenario,
        speakers=LONG,
        scores=((0, 0.5), (12, 0.4), (20, 0.45)),
        addressed={8: [0], 16: [0]},
        seconds_apart=10,
        tag="long",
        run_id=2,
    )
    mi_answers(first, {8: (4, 4, 4, 4), 16: (2, 2, 2, 2)})
    mi_answers(second, {8: (3, 3, 3, 3), 16: (5, 5, 5, 5)})
    return first, second


def test_me_and_mi_correlate_over_interventions(interventions):
    report, frame = report_for(tag="long")

    me = report["table1"]["cells"]["mediator_effectiveness"]["competing"]["social"]
    # first: (−0.04 + 0.10) / 2 = 3 %; second: (−0.02 + 0.03) / 2 = 0.5 %
    assert me["n"] == 2 and me["mean"] == pytest.approx(1.75)
    points = sorted(report["me_mi"]["points"])
    assert [me for me, _ in points] == pytest.approx([-4, -2, 3, 10])
    assert [mi for _, mi in points] == [4, 3, 5, 2]
    assert report["me_mi"]["n"] == 4
    assert report["me_mi"]["rho"] == pytest.approx(-0.4)  # 1 − 6·14 / (4·15)
    assert promediate_figures(report)["me-mi"] is not None


def test_response_latency_in_turns_and_in_seconds(interventions):
    report, _ = report_for(tag="long")

    cells = report["table1"]["cells"]
    # first: drops at points 12..19; the mediator answers 12..15 at turn 16 (4, 3, 2, 1 turns), 16..19 never
    turns = cells["response_latency"]["competing"]["social"]
    assert (turns["n"], turns["mean"], turns["excluded"]) == (1, pytest.approx(2.5), 1)  # 0.5 − 0.4 is no drop
    seconds = cells["response_latency_seconds"]["competing"]["social"]
    assert seconds["mean"] == pytest.approx(35.0)  # turn 16 after turns 11..14, 10 s apart: 50, 40, 30, 20


def test_under_the_paper_preset_an_unanswered_drop_is_infinite_and_left_out_with_a_note(interventions):
    report, _ = report_for(tag="long", preset="paper")

    rl = report["table1"]["cells"]["response_latency"]["competing"]["social"]
    assert rl["n"] == 0 and rl["excluded"] == 2
    assert any("RL = ∞" in note for note in rl["notes"])


def test_table_three_marks_salient_loadings():
    import numpy as np
    import pandas as pd

    from benchmark.results.promediate.build import FACTOR_METRICS, table_three

    rng = np.random.default_rng(3)
    first, second = rng.normal(size=(2, 40))
    columns = {
        "consensus_change": first + 0.2 * rng.normal(size=40),
        "topic_level_efficiency": first + 0.3 * rng.normal(size=40),
        "mediator_effectiveness": second + 0.3 * rng.normal(size=40),
        "response_latency": second + 0.4 * rng.normal(size=40),
        "mediator_intelligence": rng.normal(size=40),
    }
    table = table_three(pd.DataFrame(columns))
    report = {"table3": table}

    assert table["metrics"] == list(FACTOR_METRICS) and table["n"] == 40
    header, rows = tables.table3_grid(report)
    assert header == ["metric", "factor 1", "factor 2", "uniqueness"]
    by_metric = {row[0]: row for row in rows}
    assert by_metric["consensus_change"][1].endswith("*") != by_metric["consensus_change"][2].endswith("*")
    assert not by_metric["mediator_intelligence"][1].endswith("*")
    assert not by_metric["mediator_intelligence"][2].endswith("*")


def test_the_report_reads_what_the_scripted_evaluation_pass_stored():
    from django.core.management import call_command

    from benchmark.evaluation.promediate import passes
    from tests.benchmark import promediate_world

    episode = promediate_world.negotiation_episode(
        settings={"promediate": {"mediator": "social", "mediator_model": "scripted", "run_id": 1}}
    )
    call_command("evaluate", "--promediate", "--ids", str(episode.pk), stdout=io.StringIO(), stderr=io.StringIO())

    records, skipped = load_records(Episode.objects.filter(pk=episode.pk), ProMediateFilters())

    assert skipped == {}
    (record,) = records
    assert (record.judge, record.prompt_version) == ("scripted", passes.SCRIPTED_VERSION)
    assert record.party_names == {"1": "Alice", "2": "Bob", "3": "Carol"}
    assert record.mediator_turns == [3]
    trace = record.trace
    assert all(utterance.mentions is not None for utterance in trace.utterances)
    assert trace.utterances[3].addressed is not None and trace.utterances[3].mi is not None
    assert len(trace.utterances[3].mi) == 4
    report, frame = build_promediate(ProMediateFilters(), Episode.objects.filter(pk=episode.pk), resamples=0)
    assert report["counts"] == {
        "episodes": 1,
        "scenarios": 1,
        "left_out": 0,
        "judges": [f"scripted {passes.SCRIPTED_VERSION}"],
    }
    assert 0 <= frame.iloc[0]["mediator_intelligence"] <= 5  # NaN would fail
    assert report["table1"]["cells"]["intervention_frequency"]["general"]["social"]["mean"] == pytest.approx(100 / 6)


def test_the_human_validation_comes_from_the_registered_source_for_the_selected_episodes(experiment, monkeypatch):
    from benchmark.results.promediate import build

    seen = []

    def source(episodes):
        seen.append(sorted(episodes.values_list("pk", flat=True)))
        return {
            "quality": {
                "naturalness": {"mean": 4.18, "n": 60, "by_mode": {"promediate-competing": {"mean": 4.0, "n": 20}}},
                "mode_expression": {"mean": 3.61, "n": 60, "by_mode": {}},
            },
            "snippets": {
                "kappa": 0.63,
                "n": 60,
                "ties_excluded": 1,
                "majority": {"kappa": 0.7, "n": 30},
                "per_annotator": {"A1": {"kappa": 0.5, "n": 10}},
            },
            "interventions": {
                "exact": 0.3,
                "three_groups": 0.73,
                "two_groups": 0.98,
                "n": 40,
                "per_dimension": {
                    "perception_alignment": {"exact": 0.4, "three_groups": 0.8, "two_groups": 1.0, "n": 10}
                },
            },
        }

    monkeypatch.setattr(build, "_HUMAN_VALIDATION", [])
    build.register_human_validation(source)
    build.register_human_validation(source)  # once is enough

    report, frame = report_for(tag="pm")

    assert seen == [sorted(e.pk for e in [*experiment["social"], experiment["noagent"]])]
    rows = list(csv.DictReader(io.StringIO(tables.csv_table("human", report, frame))))
    assert {
        "check": "snippet comparison",
        "scope": "every annotation",
        "statistic": "Cohen's κ vs tracker",
        "value": "0.63",
        "n": "60",
    } in rows
    assert any(row["scope"] == "promediate-competing" and row["value"] == "4.0" for row in rows)
    assert any(
        row["scope"] == "perception alignment"
        and row["statistic"].startswith("accuracy {1–2},{3}")
        and row["value"] == "0.8"
        for row in rows
    )
    text = tables.text_report(report)
    line = next(line for line in text.splitlines() if "accuracy {1–2},{3–5} vs the MI judge" in line)
    assert line.startswith("mediator intelligence") and line.split()[-2:] == ["0.980", "40"]


def test_without_a_source_the_human_section_says_there_are_no_studies(experiment, monkeypatch):
    from benchmark.results.promediate import build

    monkeypatch.setattr(build, "_HUMAN_VALIDATION", [])
    report, frame = report_for()

    assert report["human"] is None
    assert "no human validation studies" in tables.text_report(report)
    assert tables.csv_table("human", report, frame) == "check,scope,statistic,value,n\n"


def test_an_imported_upstream_run_is_reported_with_its_mi_and_the_pair_key_note(tmp_path):
    from tests.benchmark.import_checks import import_file
    from tests.benchmark.promediate_upstream import hmo_run, write_folder
    from tests.benchmark.test_promediate_import import HMO

    import_file(HMO)
    write_folder(tmp_path / "output", hmo_run())
    import_file(tmp_path / "output")

    upstream, frame = report_for(preset="upstream")
    paper, _ = report_for(preset="paper")

    (row,) = frame.to_dict("records")
    assert (row["scenario"], row["mode"], row["condition"], row["mediator_model"], row["run_id"], row["judge"]) == (
        "promediate-hmo",
        "competing",
        "social",
        "gpt-4.1",
        1,
        "upstream",
    )
    # interventions scored (4, n/a, n/a, 5), all n/a, (3, 3, 3, 3): upstream counts the all-n/a one as 0
    assert row["mediator_intelligence"] == pytest.approx((4.5 + 0 + 3) / 3)
    assert paper["table1"]["cells"]["mediator_intelligence"]["competing"]["social"]["mean"] == pytest.approx(3.75)
    assert "imported upstream runs" in upstream["methods"]["imported_runs"]
    kept = Episode.objects.get(source=Episode.Source.IMPORTED).settings["promediate"]["upstream_results"]
    assert row["mediator_intelligence"] == pytest.approx(kept["simple_score"])
    assert row["intervention_frequency"] == pytest.approx(100 * kept["frequency"])


def test_modes_follow_the_papers_columns_and_every_condition_is_a_column():
    scenario = negotiation_scenario()
    for mode, condition in (
        ("competing", "generic"),
        ("general", "social"),
        ("accommodating", "none"),
        ("avoiding", "innerthought"),
    ):
        negotiation_episode(scenario, mode=mode, condition=condition)

    report, _ = report_for()

    assert report["table1"]["modes"] == ["accommodating", "avoiding", "general", "competing"]
    assert report["table1"]["conditions"] == ["none", "generic", "social", "innerthought"]
    header, _ = tables.table1_grid(report)
    assert header[1:4] == ["accommodating / NoAgent", "accommodating / Generic", "accommodating / Social"]
    assert "avoiding / InnerThought" in header
