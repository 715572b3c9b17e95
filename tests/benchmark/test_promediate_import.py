"""ProMediate cases imported complete (PM-1, acceptance check PM-A10), the conflict modes as built-in barriers
(PM-2), and bad cases refused whole, naming file, record and field."""

import json
from pathlib import Path

import pytest

from benchmark.importing.promediate_modes import BARRIERS, MODES, PERSONAS
from benchmark.importing.promediate_topics import opinion_blocks, read_options, read_preferences
from benchmark.importing.records import Origin, TopicDraft
from benchmark.models import Barrier, Preference, Scenario, ScenarioBarrier, Topic
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
        "Water Prediction and Audit of Water Withdrawal and Use", "Unused Water Allocations", "Environmental Flows",
    ]
    assert river.topics.get(position=0).option_keys() == ["a", "b", "c", "d"]  # "Option 1A" ... "Option 1D"
    assert river.turn_cap == 72  # was 4 x 6 x 1: its "## Issue N" headings were not counted


def test_ias_chung_keeps_the_whole_opinions_section_with_its_four_sub_sections():
    path = SHARED / "realdata" / "promediate" / "ias.json"

    import_file(path)

    opinions = scenario_of(path).settings["promediate"]["roles"]["Chung"]["opinions"]
    for heading in ("### A. Resource Allocation", "### B. IAS Architecture", "### C. IAS Organization",
                    "### D. Time Frame"):
        assert heading in opinions
    assert "## Strategy" not in opinions


def test_stated_choices_become_rankings_and_the_briefs_own_words_stay_with_them():
    import_file(HMO)

    scenario = scenario_of(HMO)
    formulary = scenario.topics.get(title="Formulary Status")
    assert formulary.options == [{"key": "a", "text": "Open"}, {"key": "b", "text": "Dual"},
                                 {"key": "c", "text": "Exclusive"}]
    alex = Preference.objects.get(topic=formulary, role__character__first_name="Alex")
    assert (alex.ranking, alex.unacceptable) == (["c", "b"], ["a"])
    assert "Unacceptable: a" in alex.text and "Market share" not in alex.text
    lee = Preference.objects.get(topic__title="Discount Pricing Schedule", role__scenario=scenario,
                                 role__character__first_name="Lee")
    assert lee.ranking == ["a", "b", "c"]  # "Third choice: ((c) ..."
    lee_formulary = Preference.objects.get(topic=formulary, role__character__first_name="Lee")
    assert lee_formulary.ranking == [] and "You prefer open formulary" in lee_formulary.text  # prose only


def test_choices_stated_option_first_by_number_or_in_the_options_own_words():
    ias = SHARED / "realdata" / "promediate" / "ias.json"
    flagship = SHARED / "realdata" / "promediate" / "flagship.json"
    import_file(ias)
    import_file(flagship)

    chung = Preference.objects.get(topic__scenario=scenario_of(ias), topic__position=1,
                                   role__character__first_name="Chung")
    assert (chung.ranking, chung.unacceptable) == (["2", "4"], ["3"])  # "Option #2 is your first choice"
    atchison = Preference.objects.get(topic__scenario=scenario_of(flagship), topic__position=1,
                                      role__character__first_name="Atchison")
    assert atchison.ranking == ["b", "a", "c"]  # "Half each of JX5 and C-323s is your first choice"


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
        "promediate-general", "promediate-competing", "promediate-avoiding", "promediate-accommodating",
        "promediate-compromising", "promediate-collaborating",
    }
    assert all(barrier.team_id is None and barrier.style_directive == PERSONAS[key]
               for key, barrier in barriers.items())
    assert MODES["none"] == "promediate-general" and set(MODES.values()) == set(barriers)
    assert "second choice" in PERSONAS["promediate-competing"]  # softens when offered its second choice
    assert len(BARRIERS) == len(PERSONAS) == 6


def test_every_mode_is_carried_by_the_party_seats_not_the_mediator():
    import_file(HMO)

    prompts = ScenarioBarrier.objects.filter(scenario=scenario_of(HMO)).select_related("barrier")
    assert sorted(prompt.barrier.key for prompt in prompts) == sorted(PERSONAS)
    assert all(prompt.barrier_positions == [0, 1, 2] for prompt in prompts)  # the Mediator is role 3
    assert all(prompt.style_directive == PERSONAS[prompt.barrier.key] for prompt in prompts)


def test_options_are_read_in_sequence_inline_or_one_a_line():
    assert read_options("4. Formulary status:\n(a) Open; (b) Dual; (c) Exclusive") == [
        {"key": "a", "text": "Open"}, {"key": "b", "text": "Dual"}, {"key": "c", "text": "Exclusive"}]
    # a marker out of sequence is text: "(c)" before any "(b)" belongs to option a
    assert [o["key"] for o in read_options("1. X\n(a) one (c) aside\n(b) two")] == ["a", "b"]
    assert read_options("## Issue 2: Y\n- Option 2A: give.\n- Option 2B: keep.") == [
        {"key": "a", "text": "give."}, {"key": "b", "text": "keep."}]


def test_opinion_blocks_follow_sub_headings_or_numbered_lines_in_sequence():
    headed = "Intro\n### Top priorities:\n1. Win.\n### 1. Water\n- First choice: (1D) x\n### 2. Flows\nmore"
    assert list(opinion_blocks(headed, 2)) == [0, 1]
    assert opinion_blocks(headed, 2)[0].startswith("### 1. Water")
    numbered = "1) Tiers\nFirst choice: b\nB. not a topic\n2) Pricing\nFirst choice: c"
    assert opinion_blocks(numbered, 2) == {0: "1) Tiers\nFirst choice: b\nB. not a topic",
                                           1: "2) Pricing\nFirst choice: c"}


def test_a_condition_on_another_topic_is_not_read_as_a_choice():
    topic = TopicDraft("Tiers", options=[{"key": "a", "text": "No threshold"}, {"key": "b", "text": "Threshold"}])
    other = TopicDraft("Pricing", options=[{"key": "a", "text": "x"}, {"key": "b", "text": "y"}])

    found = read_preferences("1) Tiers\nFirst choice: only if (2b), then (1b)\n2) Pricing\n", [topic, other],
                             Origin("case.json"))

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

    assert_rejected(write_case(tmp_path, four_option_sections),
                    "hmo.json, field options: topic 5 ('Contract Term') has no options")


def test_a_preference_naming_an_unknown_option_is_refused(tmp_path):
    def option_z(case):
        case["names"]["Alex"] = case["names"]["Alex"].replace("First choice: c \nSecond choice: b",
                                                              "First choice: (z) \nSecond choice: b")

    assert_rejected(write_case(tmp_path, option_z),
                    "hmo.json, field names.Alex.Opinions, topic 4 (Formulary Status): names option 'z'")


def test_a_config_entry_for_no_party_is_refused(tmp_path):
    def stranger(case):
        case["config"]["Robin"] = case["config"].pop("Lee")

    assert_rejected(write_case(tmp_path, stranger), "hmo.json, field config.Robin: names no party of 'names'")


def test_a_threshold_that_is_not_a_number_is_refused(tmp_path):
    def word(case):
        case["config"]["Lee"]["im_threshold"] = "high"

    assert_rejected(write_case(tmp_path, word),
                    "hmo.json, field config.Lee.im_threshold: expected a number, got string 'high'")


def test_nothing_of_a_refused_case_is_saved(tmp_path):
    def option_z(case):
        case["names"]["Lee"] += "\n"
        case["names"]["Jamie"] = case["names"]["Jamie"].replace("Unacceptable: a", "Unacceptable: (q)")

    assert_rejected(write_case(tmp_path, option_z), "names option 'q'")
    assert not Topic.objects.exists() and not Scenario.objects.filter(source="promediate").exists()
