"""ProMediate cases imported complete (PM-1, acceptance check PM-A10), the conflict modes as built-in barriers
(PM-2), and bad cases refused whole, naming file, record and field."""

import json
from pathlib import Path

import pytest

from benchmark.importing.promediate_modes import BARRIERS, MODES, PERSONAS
from benchmark.importing.promediate_runs import MI_KEYS
from benchmark.importing.promediate_topics import opinion_blocks, read_options, read_preferences
from benchmark.importing.records import Origin, TopicDraft
from benchmark.models import Answer, Barrier, Episode, Preference, Scenario, ScenarioBarrier, Topic
from benchmark.stats.consensus import PairReading, consensus_series
from benchmark.stats.promediate import PRESETS, EpisodeTrace, Utterance, upstream_results
from benchmark.stats.promediate_slots import upstream_slot_readings
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts

pytestmark = pytest.mark.django_db

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
HMO = SHARED / "data" / "promediate" / "hmo.json"
# PM-A10: case -> (topics, turn cap); the files are the ones upstream ships, read where they are kept.
CASES = {
    SHARED / "data" / "promediate" / "hmo.json": (5, 60),
    SHARED / "realdata" / "promediate" / "williams.json": (3, 60),
    SHARED / "data" / "promediate" / "francis.json": (4, 80),
    SHARED / "realdata" / "promediate" / "ias.json": (4, 64),
    SHARED / "realdata" / "promediate" / "flagship.json": (4, 96),
    SHARED / "realdata" / "promediate" / "river.json": (3, 72),
}


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def scenario_of(path: Path) -> Scenario:
    return Scenario.objects.get(external_id=f"promediate-{path.stem}")


@pytest.mark.parametrize("path", CASES, ids=lambda path: path.stem)
def test_every_case_keeps_its_topics_with_options_the_budget_and_a_role_per_party_and_the_mediator(path):
    topics, cap = CASES[path]
    case = json.loads(path.read_text())

    import_file(path)

    scenario = scenario_of(path)
    stored = list(scenario.topics.all())
    settings = scenario.settings["promediate"]
    assert len(stored) == topics
    assert scenario.turn_cap == cap == settings["turn_budget"]
    assert [role.character.name for role in scenario.roles.order_by("position")] == list(case["names"])
    assert settings["parties"] + ["Mediator"] == list(case["names"])
    assert all(len(topic.options) >= 2 and all(option["text"] for option in topic.options) for topic in stored)
    assert (settings["issues"], settings["options"]) == (case["issues"], case["options"])
    assert set(settings["config"]) == set(case["names"])
    assert [name.casefold() for name in settings["config_order"]] == [name.casefold() for name in case["config"]]
    for name in settings["parties"]:
        assert settings["roles"][name]["opinions"] and settings["roles"][name]["main_goal"]
    # each party speaks to every topic in its brief, the Mediator to none
    preferences = Preference.objects.filter(topic__scenario=scenario)
    assert not preferences.filter(role__character__first_name="Mediator").exists()
    assert preferences.filter(text="").count() == 0


def test_the_topic_titles_come_from_the_list_the_table_or_the_issues_and_river_counts_three():
    for path in CASES:
        import_file(path)

    assert scenario_of(SHARED / "data" / "promediate" / "hmo.json").settings["promediate"]["topics_from"] == "topics"
    river = scenario_of(SHARED / "realdata" / "promediate" / "river.json")
    assert river.settings["promediate"]["topics_from"] == "table"
    assert [topic.title for topic in river.topics.all()] == [
        "Water Prediction and Audit of Water Withdrawal and Use",
        "Unused Water Allocations",
        "Environmental Flows",
    ]
    assert river.topics.get(position=0).option_keys() == ["a", "b", "c", "d"]  # "Option 1A" ... "Option 1D"
    assert river.turn_cap == 72  # was 4 x 6 x 1: its "## Issue N" headings were not counted


def test_ias_chung_keeps_the_whole_opinions_section_with_its_four_sub_sections():
    path = SHARED / "realdata" / "promediate" / "ias.json"

    import_file(path)

    opinions = scenario_of(path).settings["promediate"]["roles"]["Chung"]["opinions"]
    for heading in (
        "### A. Resource Allocation",
        "### B. IAS Architecture",
        "### C. IAS Organization",
        "### D. Time Frame",
    ):
        assert heading in opinions
    assert "## Strategy" not in opinions


def test_stated_choices_become_rankings_and_the_briefs_own_words_stay_with_them():
    import_file(HMO)

    scenario = scenario_of(HMO)
    formulary = scenario.topics.get(title="Formulary Status")
    assert formulary.options == [
        {"key": "a", "text": "Open"},
        {"key": "b", "text": "Dual"},
        {"key": "c", "text": "Exclusive"},
    ]
    alex = Preference.objects.get(topic=formulary, role__character__first_name="Alex")
    assert (alex.ranking, alex.unacceptable) == (["c", "b"], ["a"])
    assert "Unacceptable: a" in alex.text and "Market share" not in alex.text
    lee = Preference.objects.get(
        topic__title="Discount Pricing Schedule", role__scenario=scenario, role__character__first_name="Lee"
    )
    assert lee.ranking == ["a", "b", "c"]  # "Third choice: ((c) ..."
    jamie_term = Preference.objects.get(topic__title="Contract Term", role__scenario=scenario,
                                        role__character__first_name="Jamie")
    assert jamie_term.ranking == ["b"]  # "First choice: five-year contract", in the option's own words
    lee_formulary = Preference.objects.get(topic=formulary, role__character__first_name="Lee")
    assert lee_formulary.ranking == [] and "You prefer open formulary" in lee_formulary.text  # prose only


def test_choices_stated_option_first_by_number_or_in_the_options_own_words():
    ias = SHARED / "realdata" / "promediate" / "ias.json"
    flagship = SHARED / "realdata" / "promediate" / "flagship.json"
    import_file(ias)
    import_file(flagship)

    chung = Preference.objects.get(
        topic__scenario=scenario_of(ias), topic__position=1, role__character__first_name="Chung"
    )
    assert (chung.ranking, chung.unacceptable) == (["2", "4"], ["3"])  # "Option #2 is your first choice"
    atchison = Preference.objects.get(
        topic__scenario=scenario_of(flagship), topic__position=1, role__character__first_name="Atchison"
    )
    assert atchison.ranking == ["b", "a", "c"]  # "Half each of JX5 and C-323s is your first choice"


def test_a_choice_named_by_the_options_own_label_is_ranked():
    francis = SHARED / "data" / "promediate" / "francis.json"
    import_file(francis)

    budget = Preference.objects.get(topic__scenario=scenario_of(francis), topic__position=3,
                                    role__character__first_name="Bennett")
    assert budget.ranking == ["c", "a", "d", "b"]  # "Your first choice is Package 3." ... (C): Package 3


def test_francis_and_ias_report_the_respelled_config_names():
    francis = import_file(SHARED / "data" / "promediate" / "francis.json")
    ias = import_file(SHARED / "realdata" / "promediate" / "ias.json")

    assert any("'MacNamara'" in note and "'Macnamara'" in note for note in francis.notes)
    assert any("'McKenzie'" in note and "'Mckenzie'" in note for note in ias.notes)
    assert "MacNamara" in francis.summary()
    settings = scenario_of(SHARED / "data" / "promediate" / "francis.json").settings["promediate"]
    assert settings["respelled"] == {"MacNamara": "Macnamara"}
    assert settings["config"]["Macnamara"]["im_threshold"] == 3.0


def test_hmo_keeps_the_configs_party_order_apart_from_the_roles_order():
    import_file(HMO)

    settings = scenario_of(HMO).settings["promediate"]
    assert settings["parties"] == ["Alex", "Jamie", "Lee"]
    assert settings["config_order"] == ["Lee", "Alex", "Jamie", "Mediator"]
    assert settings["config"]["Mediator"] == {"im_threshold": 3.8, "interrupt_threshold": 3.8, "system1_prob": 0}


def test_importing_all_six_cases_twice_changes_nothing():
    for path in CASES:
        import_file(path)
    before = row_counts()

    again = [import_file(path) for path in CASES]

    assert row_counts() == before
    assert all(not result.created and result.unchanged["scenario"] == 1 for result in again)


def test_the_conflict_modes_are_built_in_barriers_with_a_persona_each():
    barriers = {barrier.key: barrier for barrier in Barrier.objects.filter(builtin=True, key__startswith="promediate")}

    assert set(barriers) == {
        "promediate-general",
        "promediate-competing",
        "promediate-avoiding",
        "promediate-accommodating",
        "promediate-compromising",
        "promediate-collaborating",
    }
    assert all(
        barrier.team_id is None and barrier.style_directive == PERSONAS[key] for key, barrier in barriers.items()
    )
    assert MODES["none"] == "promediate-general" and set(MODES.values()) == set(barriers)
    assert "second choice" in PERSONAS["promediate-competing"]  # softens when offered its second choice
    assert len(BARRIERS) == len(PERSONAS) == 6


def test_the_barriers_the_migration_seeded_are_the_modes_of_the_app():
    """Migration 0030 holds its own copy of the six barriers: an edit of ``promediate_modes`` since then
    shows here, and needs a data migration to reach databases."""
    seeded = {barrier.key: barrier for barrier in Barrier.objects.filter(builtin=True, key__startswith="promediate")}

    for spec in BARRIERS:
        differing = [name for name, value in spec.items() if getattr(seeded[spec["key"]], name) != value]
        assert not differing, f"{spec['key']}: {', '.join(differing)} differ from the migration's seed"


def test_every_mode_is_carried_by_the_party_seats_not_the_mediator():
    import_file(HMO)

    prompts = ScenarioBarrier.objects.filter(scenario=scenario_of(HMO)).select_related("barrier")
    assert sorted(prompt.barrier.key for prompt in prompts) == sorted(PERSONAS)
    assert all(prompt.barrier_positions == [0, 1, 2] for prompt in prompts)  # the Mediator is role 3
    assert all(prompt.style_directive == PERSONAS[prompt.barrier.key] for prompt in prompts)


def test_options_are_read_in_sequence_inline_or_one_a_line():
    assert read_options("4. Formulary status:\n(a) Open; (b) Dual; (c) Exclusive") == [
        {"key": "a", "text": "Open"},
        {"key": "b", "text": "Dual"},
        {"key": "c", "text": "Exclusive"},
    ]
    # a marker out of sequence is text: "(c)" before any "(b)" belongs to option a
    assert [o["key"] for o in read_options("1. X\n(a) one (c) aside\n(b) two")] == ["a", "b"]
    assert read_options("## Issue 2: Y\n- Option 2A: give.\n- Option 2B: keep.") == [
        {"key": "a", "text": "give."},
        {"key": "b", "text": "keep."},
    ]


def test_opinion_blocks_follow_sub_headings_or_numbered_lines_in_sequence():
    headed = "Intro\n### Top priorities:\n1. Win.\n### 1. Water\n- First choice: (1D) x\n### 2. Flows\nmore"
    assert list(opinion_blocks(headed, 2)) == [0, 1]
    assert opinion_blocks(headed, 2)[0].startswith("### 1. Water")
    numbered = "1) Tiers\nFirst choice: b\nB. not a topic\n2) Pricing\nFirst choice: c"
    assert opinion_blocks(numbered, 2) == {
        0: "1) Tiers\nFirst choice: b\nB. not a topic",
        1: "2) Pricing\nFirst choice: c",
    }


def test_a_condition_on_another_topic_is_not_read_as_a_choice():
    topic = TopicDraft("Tiers", options=[{"key": "a", "text": "No threshold"}, {"key": "b", "text": "Threshold"}])
    other = TopicDraft("Pricing", options=[{"key": "a", "text": "x"}, {"key": "b", "text": "y"}])

    found = read_preferences(
        "1) Tiers\nFirst choice: only if (2b), then (1b)\n2) Pricing\n", [topic, other], Origin("case.json")
    )

    assert found[0].ranking == ["b"]


def write_case(tmp_path: Path, change) -> Path:
    case = json.loads(HMO.read_text())
    change(case)
    path = tmp_path / "hmo.json"
    path.write_text(json.dumps(case))
    return path


def test_a_case_without_parties_is_refused(tmp_path):
    def only_the_mediator(case):
        case["names"] = {"Mediator": case["names"]["Mediator"]}

    assert_rejected(write_case(tmp_path, only_the_mediator), "hmo.json, field names: a case needs its parties")


def test_a_case_without_topics_is_refused(tmp_path):
    def no_topics(case):
        del case["topics"]
        case["issues"] = "The price, the term and the support."

    path = write_case(tmp_path, no_topics)
    (tmp_path / "mystery.json").write_text(path.read_text())  # not a stem of the built-in table either

    assert_rejected(tmp_path / "mystery.json", "mystery.json, field issues: no topics")


def test_a_topic_without_options_is_refused(tmp_path):
    def four_option_sections(case):
        case["options"] = case["options"].split("5. Contract term")[0]

    assert_rejected(
        write_case(tmp_path, four_option_sections), "hmo.json, field options: topic 5 ('Contract Term') has no options"
    )


def test_a_preference_naming_an_unknown_option_is_refused(tmp_path):
    def option_z(case):
        case["names"]["Alex"] = case["names"]["Alex"].replace(
            "First choice: c \nSecond choice: b", "First choice: (z) \nSecond choice: b"
        )

    assert_rejected(
        write_case(tmp_path, option_z),
        "hmo.json, field names.Alex.Opinions, topic 4 (Formulary Status): names option 'z'",
    )


def test_a_config_entry_for_no_party_is_refused(tmp_path):
    def stranger(case):
        case["config"]["Robin"] = case["config"].pop("Lee")

    assert_rejected(write_case(tmp_path, stranger), "hmo.json, field config.Robin: names no party of 'names'")


def test_a_threshold_that_is_not_a_number_is_refused(tmp_path):
    def word(case):
        case["config"]["Lee"]["im_threshold"] = "high"

    assert_rejected(
        write_case(tmp_path, word), "hmo.json, field config.Lee.im_threshold: expected a number, got string 'high'"
    )


def test_nothing_of_a_refused_case_is_saved(tmp_path):
    def option_z(case):
        case["names"]["Lee"] += "\n"
        case["names"]["Jamie"] = case["names"]["Jamie"].replace("Unacceptable: a", "Unacceptable: (q)")

    assert_rejected(write_case(tmp_path, option_z), "names option 'q'")
    assert not Topic.objects.exists() and not Scenario.objects.filter(source="promediate").exists()


# --- upstream run folders (PM-14) ------------------------------------------------------------------------


def imported_run(tmp_path, run=None, **names):
    from tests.benchmark.promediate_upstream import hmo_run, write_folder

    import_file(HMO)
    run = run or hmo_run()
    folder = write_folder(tmp_path / "output", run, **names)
    return run, folder, import_file(tmp_path / "output")


def test_a_run_folder_becomes_an_episode_of_the_case_with_seats_turns_and_the_mode(tmp_path):
    run, folder, result = imported_run(tmp_path)

    episode = Episode.objects.get(external_id="promediate-run-hmo-Social-gpt-4.1_separate_competing_less_1")
    seats = list(episode.seats.select_related("character").order_by("position"))
    turns = list(episode.turns.select_related("seat__character").order_by("index"))
    settings = episode.settings["promediate"]
    assert result.format == "promediate-run" and result.created["episode"] == 1
    assert episode.barrier.key == "promediate-competing" and episode.scenario.external_id == "promediate-hmo"
    assert [(s.character.name, s.carries_barrier) for s in seats] == [
        ("Alex", True),
        ("Jamie", True),
        ("Lee", True),
        ("Mediator", False),
    ]
    assert [(t.seat.character.name, t.content) for t in turns] == [(s, text) for s, text, _ in run.utterances]
    assert (settings["mediator"], settings["mediator_model"], settings["mode"], settings["run_id"]) == (
        "social",
        "gpt-4.1",
        "competing",
        "1",
    )
    assert settings["upstream_pairs"] == {
        "names_order": ["Alex", "Jamie", "Lee"],
        "config_order": ["Lee", "Alex", "Jamie"],
    }
    assert "mi" not in settings and settings["mediator_position"] == 3
    assert mi_answers(episode) == {
        6: {
            "perception_alignment": 4,
            "emotional_dynamics": None,
            "cognitive_challenges": None,
            "communication_breakdowns": 5,
        },
        13: dict.fromkeys(MI_KEYS),
        18: dict.fromkeys(MI_KEYS, 3),
    }
    assert result.created["answer"] == 12


def mi_answers(episode):
    """Turn index -> the upstream judge's four MI scores on the per-intervention instrument (None = N/A)."""
    found = {}
    answers = Answer.objects.filter(
        response__episode=episode, response__respondent__model="upstream", question__key__in=MI_KEYS
    ).select_related("question")
    for answer in answers:
        found.setdefault(answer.turn, {})[answer.question.key] = None if answer.number is None else int(answer.number)
    return found


def test_the_upstream_metric_row_is_kept_as_read(tmp_path):
    from tests.benchmark.promediate_upstream import consensus_pipeline, upstream_results

    run, folder, _result = imported_run(tmp_path)

    kept = Episode.objects.get().settings["promediate"]["upstream_results"]
    expected = upstream_results(run, consensus_pipeline(run)[1])
    assert set(kept) == set(expected)
    for name, value in expected.items():
        assert kept[name] == pytest.approx(value, abs=1e-12) if value is not None else kept[name] is None, name


def readings_of(episode):
    """The episode's upstream pair scores as the stats module's readings, by party name and topic title."""
    rows = episode.pair_agreements.filter(judge="upstream").select_related(
        "topic", "seat_a__character", "seat_b__character"
    )
    return [
        PairReading(
            row.point,
            row.topic.title,
            row.seat_a.character.name,
            row.seat_b.character.name,
            row.overall,
            tuple(row.dimensions()),
        )
        for row in rows
    ]


def test_pair_scores_are_kept_under_the_pair_they_score_and_replay_upstreams_slots(tmp_path):
    from tests.benchmark.promediate_upstream import aggregate, consensus_pipeline, pair_score

    run, folder, _result = imported_run(tmp_path)

    episode = Episode.objects.get()
    readings = readings_of(episode)
    # Lee speaks first (turn 1, point 2): its pairs are rescored from its new stance, under their own keys
    stance = run.utterances[1][2]
    topic = next(iter(stance))
    alex_lee = next(r for r in readings if (r.point, r.topic, set(r.pair)) == (2, topic, {"Alex", "Lee"}))
    assert alex_lee.overall == pair_score(topic, stance[topic], run.initial["Alex"][topic])["overall_consensus_score"]
    # upstream's series: the same readings put where upstream's slots hold them
    scores = consensus_pipeline(run)[1]
    upstream = aggregate(scores)
    replayed = consensus_series(
        run.names, run.topics, len(scores), upstream_slot_readings(readings, run.names, run.config)
    )
    own = consensus_series(run.names, run.topics, len(scores), readings)
    for topic in run.topics:
        assert replayed.topics[topic] == pytest.approx(upstream[topic], abs=1e-12)
        # under Parley's own keys a topic differs only until each of its pairs has been rescored
        assert own.topics[topic][-1] == pytest.approx(upstream[topic][-1], abs=1e-12)
    assert any(own.topics[t] != pytest.approx(upstream[t], abs=1e-12) for t in run.topics)
    assert episode.attitudes.filter(point=0).count() == 3 * 5


@pytest.mark.parametrize("method", ["Social", "NoAgent"])
def test_pm_a13_the_upstream_preset_reproduces_the_folders_results_summary(tmp_path, method):
    """PM-A13: hmo's party order (names Alex, Jamie, Lee; config Lee, Alex, Jamie); the CSV was computed the
    upstream way (tests/benchmark/promediate_upstream.py); Parley recomputes it from what it imported."""
    from tests.benchmark.promediate_upstream import hmo_run

    run = hmo_run(method)
    imported_run(tmp_path, run, name=f"gpt-4.1_separate_competing_less_{method}")
    episode = Episode.objects.get()
    settings = episode.settings["promediate"]
    turns = list(episode.turns.select_related("seat__character").order_by("index"))
    answers = mi_answers(episode)
    utterances = tuple(
        Utterance(
            speaker=turn.seat.character.name,
            mediator=turn.seat.character.name == "Mediator",
            mentions=frozenset(run.mentions[turn.index]),  # the J4 answers the fabricated run was scored with
            addressed=frozenset(run.addressed.get(turn.index) or ()),  # J5
            mi=tuple(answers[turn.index][key] for key in MI_KEYS) if turn.index in answers else None,
            text=f'🔄 Turn {turn.index + 1}: {turn.seat.character.name}: "{turn.content}"',  # the summary line
        )
        for turn in turns
    )
    pairs = settings["upstream_pairs"]
    trace = EpisodeTrace(
        parties=tuple(settings["upstream_pairs"]["names_order"]),
        topics=tuple(topic.title for topic in episode.scenario.topics.all()),
        utterances=utterances,
        readings=tuple(upstream_slot_readings(readings_of(episode), pairs["names_order"], pairs["config_order"])),
    )

    recomputed = upstream_results(trace, PRESETS["upstream_exact"])

    kept = settings["upstream_results"]
    assert set(recomputed) == set(kept)
    for name, value in kept.items():
        if isinstance(value, list):
            assert recomputed[name] == pytest.approx(value, abs=1e-12), name
        elif value is None:
            assert recomputed[name] is None, name
        else:
            assert abs(recomputed[name] - value) <= 1e-12, name
    assert pairs == {"names_order": ["Alex", "Jamie", "Lee"], "config_order": ["Lee", "Alex", "Jamie"]}


def test_importing_a_run_folder_twice_changes_nothing(tmp_path):
    imported_run(tmp_path)
    before = row_counts()

    again = import_file(tmp_path / "output")

    assert row_counts() == before and not again.created and again.unchanged["episode"] == 1


def test_a_mediators_text_running_over_lines_stays_one_turn(tmp_path):
    from tests.benchmark.promediate_upstream import hmo_run

    run = hmo_run()
    speaker, text, stances = run.utterances[6]
    run.utterances[6] = (speaker, "First point.\n\nSecond point: the term.", stances)
    _run, folder, _result = imported_run(tmp_path, run)

    turn = Episode.objects.get().turns.get(index=6)
    assert turn.content == "First point.\n\nSecond point: the term." and Episode.objects.get().turns.count() == 20


def test_a_no_agent_run_has_no_mediator_seat(tmp_path):
    from tests.benchmark.promediate_upstream import hmo_run

    imported_run(tmp_path, hmo_run("NoAgent"), name="gpt-4.1_separate_none_less_3")

    episode = Episode.objects.get()
    assert [seat.character.name for seat in episode.seats.order_by("position")] == ["Alex", "Jamie", "Lee"]
    assert episode.barrier.key == "promediate-general"
    assert (episode.settings["promediate"]["mediator"], episode.settings["promediate"]["mediator_model"]) == (
        "none",
        "",
    )


def fabricated(tmp_path, change=None):
    from tests.benchmark.promediate_upstream import hmo_run, write_folder

    import_file(HMO)
    folder = write_folder(tmp_path / "output", hmo_run())
    if change:
        change(folder)
    return tmp_path / "output"


def edit_json(folder, name, change):
    path = folder / name
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value))


RUN = "hmo/Social/gpt-4.1_separate_competing_less_1"


def test_a_run_whose_case_is_not_imported_is_refused(tmp_path):
    from tests.benchmark.promediate_upstream import hmo_run, write_folder

    write_folder(tmp_path / "output", hmo_run())

    assert_rejected(tmp_path / "output", f"{RUN}/: no scenario 'promediate-hmo' with its topics in this team")


def test_files_disagreeing_on_turns_are_refused(tmp_path):
    path = fabricated(tmp_path, lambda folder: edit_json(folder, "attitudes.json", lambda value: value.pop()))

    assert_rejected(path, f"{RUN}/attitudes.json: has 20 snapshots; conversation.txt has 20 turns, so 21 are expected")


def test_a_speaker_who_is_no_party_is_refused_naming_the_line(tmp_path):
    def stranger(folder):
        path = folder / "conversation.txt"
        path.write_text(path.read_text().replace("Turn 3: Alex:", "Turn 3: Robin:"))

    assert_rejected(fabricated(tmp_path, stranger), f"{RUN}/conversation.txt, line 9, field speaker: 'Robin'")


def test_files_disagreeing_on_parties_are_refused(tmp_path):
    def renamed(value):
        for snapshot in value:
            snapshot["Robin"] = snapshot.pop("Lee")

    path = fabricated(tmp_path, lambda folder: edit_json(folder, "attitudes.json", renamed))

    assert_rejected(path, f"{RUN}/attitudes.json, record 1: names the parties 'Alex', 'Jamie', 'Robin'")


def test_a_pair_score_changed_after_a_mediator_turn_is_refused(tmp_path):
    def changed(value):
        value[7]["Contract Term"][0]["overall_consensus_score"] = 0.99  # point 7: after the Mediator's turn 6

    path = fabricated(tmp_path, lambda folder: edit_json(folder, "agreement_scores.json", changed))

    assert_rejected(
        path,
        f"{RUN}/agreement_scores.json, record 8, field Contract Term[0]: changes a pair score "
        "after the Mediator's turn",
    )


def test_judge_answers_not_one_per_intervention_are_refused(tmp_path):
    path = fabricated(tmp_path, lambda folder: edit_json(folder, "behavior_score.json", lambda value: value.pop()))

    assert_rejected(path, f"{RUN}/behavior_score.json: has 2 judged turns; conversation.txt has 3 mediator turns")


def test_an_unknown_topic_in_the_scores_is_refused(tmp_path):
    def renamed(value):
        value[0]["Price"] = value[0].pop("Contract Term")

    path = fabricated(tmp_path, lambda folder: edit_json(folder, "agreement_scores.json", renamed))

    assert_rejected(path, f"{RUN}/agreement_scores.json, record 1: 'Price' is not a topic of promediate-hmo")


def test_a_run_of_the_modes_puts_the_barrier_on_the_party_seats():
    from benchmark.runs.planning import imported_barrier_seats

    import_file(HMO)
    scenario = scenario_of(HMO)
    modes = list(Barrier.objects.filter(key__in=["promediate-competing", "promediate-avoiding", "none"]))

    assert imported_barrier_seats([scenario], modes) == {scenario.pk: (0, 1, 2)}
