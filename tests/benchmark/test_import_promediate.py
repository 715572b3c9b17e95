"""Importing ProMediate's real negotiation cases (microsoft/ProMediate-Eval cases/), one scenario each."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.importing.promediate_topics import sections
from benchmark.models import Episode, Scenario, TurnTaking
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts

pytestmark = pytest.mark.django_db

PROMEDIATE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "promediate"
HMO = PROMEDIATE / "hmo.json"
FRANCIS = PROMEDIATE / "francis.json"
REAL_PROMEDIATE = PROMEDIATE.parent.parent / "realdata" / "promediate"
# Every case of microsoft/ProMediate-Eval: (parties with the Mediator, issues as the case writes them).
ALL_CASES = {
    PROMEDIATE / "francis.json": (6, 4),  # "1. EXPANSION OF ...", capitals
    PROMEDIATE / "hmo.json": (4, 5),  # a topics list, and numbered lines
    REAL_PROMEDIATE / "flagship.json": (7, 4),
    REAL_PROMEDIATE / "ias.json": (5, 4),
    REAL_PROMEDIATE / "river.json": (7, 3),  # "## Issue 1: ..." headings
    REAL_PROMEDIATE / "williams.json": (6, 3),  # items running over several lines
}


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def test_the_hmo_case_is_one_scenario_with_a_role_per_party_and_the_mediator_opening():
    result = import_file(HMO)

    scenario = Scenario.objects.get(external_id="promediate-hmo")
    roles = list(scenario.roles.select_related("character").prefetch_related("goals"))
    assert result.format == "promediate"
    assert (result.created["scenario"], result.created["character"]) == (1, 4)
    assert [role.character.name for role in roles] == ["Alex", "Jamie", "Lee", "Mediator"]
    assert [role.goals.count() for role in roles] == [1, 1, 1, 1]
    assert roles[0].goal_text == "Close the deal and secure market share for Profelice."
    assert roles[2].character.occupation == "Pharmacy Director, Hopkins HMO"
    assert (scenario.source, scenario.turn_taking, scenario.greeter_position) == (
        "promediate", TurnTaking.PROMEDIATE, 3)
    assert scenario.turn_cap == 4 * 3 * 5  # the script's 4 x (parties - 1) x issues


@pytest.mark.parametrize("path", ALL_CASES, ids=lambda path: path.stem)
def test_every_real_case_gets_a_topic_per_issue_and_the_scripts_turn_cap(path):
    parties, issues = ALL_CASES[path]
    case = json.loads(path.read_text())

    import_file(path)

    scenario = Scenario.objects.get(external_id=f"promediate-{path.stem}")
    assert scenario.roles.count() == len(case["names"]) == parties
    assert len(sections(case["issues"])) == len(sections(case["options"])) == scenario.topics.count() == issues
    assert scenario.turn_cap == 4 * (parties - 1) * issues


def test_issue_sections_are_numbered_in_sequence_in_either_shape():
    assert len(sections("## Issue 1: Water\n- who?\n\n## issue 2: Flows\nKey concerns:\n1. a sub-point")) == 2
    assert len(sections("1. Price: how much?\n2. Term\n2. Term again\nIn 2024. the rest\n4. Skipped")) == 2
    assert sections("Price, term and support.") == []


def test_the_shared_instruction_gets_the_issues_and_options_and_each_prompt_stays_private():
    import_file(HMO)

    scenario = Scenario.objects.get(external_id="promediate-hmo")
    alex, jamie, lee, mediator = scenario.roles.order_by("position")
    assert "{issues}" not in scenario.context and "{options}" not in scenario.context
    assert "1. Market Share Target Tiers" in scenario.context
    assert "(c) Exclusive" in scenario.context
    assert "{issues}" in scenario.original_context
    assert "First choice: c" in alex.private_knowledge and "First choice: c" not in scenario.context
    assert jamie.private_knowledge.startswith("## Background\nYou are Jamie Seymour")
    assert "## Strategy" in lee.private_knowledge
    assert "5. Contract Term" in mediator.private_knowledge and "{issues}" not in mediator.private_knowledge
    assert mediator.goal_text.startswith("You are the Mediator of the negotiation.")


def test_the_francis_case_reads_goal_lines_written_either_way():
    result = import_file(FRANCIS)

    scenario = Scenario.objects.get(external_id="promediate-francis")
    roles = list(scenario.roles.select_related("character").prefetch_related("goals"))
    assert result.created["character"] == 6
    assert [role.character.name for role in roles] == ["Bennett", "Macnamara", "Marshall", "Mason", "Parker",
                                                       "Mediator"]
    assert sum(role.goals.count() for role in roles) == 6
    assert roles[1].goal_text.startswith("Advocate for a collaborative professional partnership")  # "Goal:"
    assert (scenario.greeter_position, scenario.turn_cap) == (5, 4 * 5 * 4)


def test_the_agents_proactivity_config_is_kept_not_ignored():
    result = import_file(HMO)

    scenario = Scenario.objects.get(external_id="promediate-hmo")
    assert not result.ignored
    assert scenario.settings["promediate"]["config"]["Lee"] == {
        "im_threshold": 3.0, "interrupt_threshold": 2.5, "system1_prob": 0.4}


def test_importing_a_case_again_changes_nothing():
    import_file(HMO)
    before = row_counts()

    again = import_file(HMO)

    assert (again.unchanged["scenario"], again.created["scenario"]) == (1, 0)
    assert row_counts() == before


def test_a_party_without_a_main_goal_is_named(tmp_path):
    case = json.loads(HMO.read_text())
    case["names"]["Lee"] = case["names"]["Lee"].replace("Main Goal:", "Aim:")
    bad = tmp_path / "hmo.json"
    bad.write_text(json.dumps(case))

    assert_rejected(bad, "hmo.json, field names.Lee: no 'Main Goal:' (or 'Goal:') line")


def test_a_prompt_that_is_not_text_is_named(tmp_path):
    case = json.loads(HMO.read_text())
    case["names"]["Alex"] = ["not", "a", "prompt"]
    bad = tmp_path / "hmo.json"
    bad.write_text(json.dumps(case))

    assert_rejected(bad, "hmo.json, field names.Alex.prompt: expected a string, got a list")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # a run's chunk reads on a thread of its own
def test_an_imported_case_plays_offline_with_the_mediator_opening():
    import_file(HMO)
    out = io.StringIO()

    call_command("simulate", "--preset", "promediate", "--scenarios", "promediate-hmo", "--conditions",
                 "promediate-general", "--mediator", "social", "--runs", "1", "--model", "scripted",
                 "--run-name", "promediate", stdout=out, stderr=io.StringIO())

    episode = Episode.objects.get(scenario__external_id="promediate-hmo")
    turns = list(episode.turns.select_related("seat__role").order_by("index"))
    assert episode.status == Episode.Status.FINISHED
    assert episode.seats.count() == 4
    assert turns[0].seat.role.position == 3  # the Mediator greets
    assert 4 <= len(turns) <= 1 + 60  # the opening line and the case's budget of 4 x 3 parties x 5 topics
    assert len({turn.seat.position for turn in turns}) >= 3  # the parties take the floor
    assert all(turn.content.strip() for turn in turns if turn.action_type == "speak")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # a run's chunk reads on a thread of its own
def test_a_conflict_mode_plays_offline_on_the_party_seats_only():
    import_file(HMO)

    call_command("simulate", "--preset", "promediate", "--scenarios", "promediate-hmo", "--conditions",
                 "promediate-competing", "--mediator", "social", "--model", "scripted", "--judge-model", "none",
                 "--tag", "competing", stdout=io.StringIO(), stderr=io.StringIO())

    episode = Episode.objects.get(tag="competing")
    seats = {seat.character.name: seat.carries_barrier for seat in episode.seats.select_related("character")}
    assert episode.status == Episode.Status.FINISHED and episode.barrier.key == "promediate-competing"
    assert seats == {"Alex": True, "Jamie": True, "Lee": True, "Mediator": False}
