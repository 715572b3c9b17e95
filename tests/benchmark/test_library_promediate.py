"""A ProMediate scenario moved by the scenario library keeps what its negotiation and evaluation read: topics with
their options, each party's preferences, ``settings["promediate"]``, turn-taking, the greeter and the turn cap."""

import copy
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.models import Preference, Scenario, Team, Topic, TurnTaking
from benchmark.scenarios.library_export import select_library, write_library
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts
from tests.builders import default_team, make_team

pytestmark = pytest.mark.django_db

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
HMO = SHARED / "data" / "promediate" / "hmo.json"
# Every case upstream ships, each written its own way (topics, options and opinions in several shapes).
CASES = [
    HMO,
    SHARED / "data" / "promediate" / "francis.json",
    *(SHARED / "realdata" / "promediate" / f"{name}.json" for name in ("williams", "ias", "flagship", "river")),
]


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def library(team: Team) -> str:
    out = io.StringIO()
    write_library(select_library(team), out)
    return out.getvalue()


def write(tmp_path, text: str, name: str = "library.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def negotiation(team: Team, external_id: str = "promediate-hmo") -> dict:
    """What a negotiation of the team's scenario (HMO's unless named) reads, by role position and topic position."""
    scenario = Scenario.objects.of_team(team).get(external_id=external_id)
    return {
        "play": (scenario.turn_taking, scenario.greeter_position, scenario.turn_cap),
        "settings": scenario.settings,
        "topics": [(t.position, t.title, t.question, t.options) for t in Topic.objects.filter(scenario=scenario)],
        "preferences": sorted(
            (p.role.position, p.topic.position, p.ranking, p.unacceptable, p.text)
            for p in Preference.objects.filter(role__scenario=scenario).select_related("role", "topic")
        ),
        "roles": [
            (r.position, r.character.first_name, r.private_knowledge, [g.text for g in r.goals.all()])
            for r in scenario.roles.select_related("character").prefetch_related("goals")
        ],
        "barrier_prompts": sorted(
            (b.barrier.key, b.style_directive, list(b.barrier_positions))
            for b in scenario.barrier_prompts.select_related("barrier")
        ),
    }


def hmo_record(tmp_path) -> dict:
    """The HMO scenario's library record, exported from a fresh import of the case."""
    import_file(HMO)
    return next(json.loads(line) for line in library(default_team()).splitlines() if '"kind": "scenario"' in line)


def test_the_hmo_case_moves_to_another_team_with_everything_its_negotiation_reads(tmp_path):
    import_file(HMO)
    exported = library(default_team())
    other = make_team()

    result = import_file(write(tmp_path, exported), team=other)

    original, moved = negotiation(default_team()), negotiation(other)
    assert result.format == "library" and result.created["topic"] == 5
    assert moved == original
    assert moved["play"] == (TurnTaking.PROMEDIATE, 3, 60)
    assert len(moved["topics"]) == 5 and all(len(options) >= 2 for *_, options in moved["topics"])
    assert len(moved["preferences"]) >= 3 and any(ranking for _, _, ranking, _, _ in moved["preferences"])
    assert moved["settings"]["promediate"]["turn_budget"] == 60
    assert set(moved["settings"]["promediate"]["config"]) == {name for _, name, _, _ in moved["roles"]}
    assert library(other) == exported


def test_every_case_moves_to_another_team_and_exports_again_byte_for_byte(tmp_path):
    for path in CASES:
        import_file(path)
    exported = library(default_team())
    other = make_team()

    result = import_file(write(tmp_path, exported), team=other)

    assert result.created["scenario"] == len(CASES) and result.created["topic"] == 5 + 4 + 3 + 4 + 4 + 3
    for path in CASES:
        assert negotiation(other, f"promediate-{path.stem}") == negotiation(default_team(), f"promediate-{path.stem}")
    assert library(other) == exported


def test_the_commands_move_the_case_exported_by_its_source(tmp_path):
    call_command("import_episodes", str(HMO), stdout=io.StringIO())
    path = tmp_path / "design.jsonl"
    call_command("export_library", "--out", str(path), "--source", "promediate", stdout=io.StringIO())
    other = make_team(slug="elsewhere")
    imported = io.StringIO()

    call_command("import_episodes", str(path), "--team", "elsewhere", stdout=imported)

    assert "(library): created 1 scenario, 4 characters, 6 barrier prompts, 5 topics" in imported.getvalue()
    assert negotiation(other) == negotiation(default_team())


def test_the_exported_hmo_record_names_topics_by_index_and_keeps_settings_whole(tmp_path):
    record = hmo_record(tmp_path)
    case = json.loads(HMO.read_text())

    assert record["turn_taking"] == "promediate" and record["greeter"] == 3 and record["turn_cap"] == 60
    assert [topic["title"] for topic in record["topics"]] == case["topics"]
    assert record["settings"]["promediate"]["issues"] == case["issues"]
    assert "preferences" not in record["roles"][3]  # the Mediator states none
    assert all(0 <= p["topic"] < 5 for role in record["roles"][:3] for p in role.get("preferences", []))


def test_importing_the_library_twice_or_into_its_own_team_changes_nothing(tmp_path):
    import_file(HMO)
    path = write(tmp_path, library(default_team()))
    before = row_counts()

    again = import_file(path)

    assert row_counts() == before
    assert again.created["scenario"] == again.created["topic"] == 0 and again.notes == []
    other = make_team()
    import_file(path, team=other)
    moved = row_counts()
    import_file(path, team=other)
    assert row_counts() == moved


def test_a_stored_scenario_whose_topics_preferences_or_settings_differ_is_kept_and_named(tmp_path):
    record = hmo_record(tmp_path)
    changed = copy.deepcopy(record)
    changed["topics"][0]["title"] = "Something else"
    changed["roles"][0]["preferences"][0]["text"] = "Changed my mind."
    changed["settings"]["promediate"]["turn_budget"] = 61
    kept = negotiation(default_team())

    result = import_file(write(tmp_path, json.dumps(changed) + "\n"))

    assert negotiation(default_team()) == kept
    assert "'promediate-hmo' (settings, topics, preferences)" in " ".join(result.notes)


def test_an_older_library_record_without_the_new_keys_imports_as_before(tmp_path):
    record = {
        "format_version": 1,
        "kind": "scenario",
        "external_id": "old-1",
        "context": "A kitchen.",
        "turn_taking": "random_after_greeting",
        "greeter": 1,
        "turn_cap": 9,
        "roles": [{"position": 0, "goals": [{"text": "Talk."}]}, {"position": 1, "goals": [{"text": "Listen."}]}],
    }

    result = import_file(write(tmp_path, json.dumps(record) + "\n"))

    scenario = Scenario.objects.get(external_id="old-1")
    assert result.created["scenario"] == 1 and result.notes == []
    assert (scenario.settings, scenario.topics.count(), Preference.objects.filter(role__scenario=scenario).count()) == (
        {},
        0,
        0,
    )
    assert (scenario.turn_taking, scenario.greeter_position, scenario.turn_cap) == ("random_after_greeting", 1, 9)
    written = json.loads(library(default_team()).splitlines()[-1])
    assert not {"settings", "topics"} & written.keys() and all("preferences" not in r for r in written["roles"])


def broken(record: dict, change) -> dict:
    record = copy.deepcopy(record)
    record["external_id"] = record["codename"] = "hmo-copy"
    change(record)
    return record


def _set(path: list, value):
    def change(record: dict) -> None:
        target = record
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


BAD = [
    (
        _set(["roles", 0, "preferences", 0, "ranking"], ["z"]),
        "field roles[0].preferences[0].ranking[0]: names option 'z', which topic",
    ),
    (
        _set(["roles", 0, "preferences", 0, "topic"], 9),
        "field roles[0].preferences[0].topic: 9 is not a topic's index (0 to 4)",
    ),
    (
        _set(["roles", 0, "preferences", 1, "topic"], None),
        "field roles[0].preferences[1].topic: required field is null",
    ),
    (_set(["topics", 2, "options"], []), "field topics[2].options: topic"),
    (_set(["topics", 0, "title"], " "), "field topics[0].title: must not be empty"),
    (_set(["topics", 1, "options", 1, "key"], "a"), "field topics[1].options[1].key: option 'a' appears twice"),
    (_set(["settings"], ["not", "an", "object"]), "field settings: expected an object, got a list"),
    (
        _set(["settings", "promediate", "mediator_position"], 7),
        "field settings.promediate.mediator_position: no role at position 7 (roles: 0, 1, 2, 3)",
    ),
    (
        _set(["settings", "promediate", "config", "Mediator", "im_threshold"], "high"),
        "field settings.promediate.config.Mediator.im_threshold: expected a number, got string 'high'",
    ),
    (_set(["turn_taking"], "mediated"), "field turn_taking: 'mediated' is not one of"),
    (_set(["greeter"], 9), "field greeter: no role at position 9"),
]


@pytest.mark.parametrize(("change", "message"), BAD, ids=[message.split(":")[0] for _, message in BAD])
def test_bad_negotiation_fields_are_refused_naming_file_line_and_field_and_nothing_is_kept(tmp_path, change, message):
    record = hmo_record(tmp_path)
    character = {"format_version": 1, "kind": "character", "external_id": "c-new", "first_name": "New"}
    path = write(tmp_path, json.dumps(character) + "\n" + json.dumps(broken(record, change)) + "\n", "bad.jsonl")

    assert_rejected(path, f"bad.jsonl, line 2, {message}")


def test_a_duplicate_preference_on_one_topic_is_refused(tmp_path):
    record = hmo_record(tmp_path)
    first = record["roles"][0]["preferences"][0]
    bad = broken(record, lambda r: r["roles"][0]["preferences"].append(dict(first)))
    path = write(tmp_path, json.dumps(bad) + "\n", "bad.jsonl")

    assert_rejected(path, f"states a preference on topic {first['topic']} twice (first at preferences[0])")


def test_the_negotiation_example_in_the_format_documentation_imports(tmp_path):
    docs = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    section = docs.split("## Scenario library", 1)[1].split("\n## ", 1)[0]
    example = section.split("```json\n")[2].split("```", 1)[0]

    result = import_file(write(tmp_path, example))

    scenario = Scenario.objects.get(external_id="rota-talks")
    assert (result.created["scenario"], result.created["topic"]) == (1, 1)
    assert (scenario.turn_taking, scenario.greeter_position, scenario.turn_cap) == (TurnTaking.PROMEDIATE, 2, 8)
    assert scenario.settings["promediate"]["config"]["Bo"]["im_threshold"] == 3.5
    assert [o["key"] for o in scenario.topics.get().options] == ["a", "b", "c"]
    assert sorted(
        (p.role.position, p.ranking, p.unacceptable) for p in Preference.objects.filter(role__scenario=scenario)
    ) == [(0, ["a", "b"], ["c"]), (1, ["c"], ["a"])]
