"""The scenario library: a team's barriers, characters, templates and scenarios exported and imported on their own."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark.importing import detect_format
from benchmark.models import Barrier, BarrierCue, Cast, Character, Goal, Probe, Scenario, Team
from benchmark.scenarios.library_export import LibraryProblem, select_library, write_library
from benchmark.scenarios.templates import instantiate
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts
from tests.builders import default_team, make_cast, make_character, make_scenario, make_team

pytestmark = pytest.mark.django_db


def library(team: Team | None = None, **filters) -> str:
    out = io.StringIO()
    write_library(select_library(team or default_team(), **filters), out)
    return out.getvalue()


def records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def build_design(team: Team) -> None:
    """A lab's design: a custom barrier with cues, characters (one with an id of its own), a template with
    slots, goals and a probe, two instances of it, and a scenario with typed goals, labels and probes."""
    barrier = Barrier.objects.create(
        team=team, key="hedging", name="Hedging", definition="Never commits to a claim.",
        example="It could be, perhaps, in a sense.", style_directive="Qualify every statement.",
        narrative_stance="Tentative.", interaction_tactics="Stacked qualifiers.",
        confusion_mechanisms="No clear position.", exemplar_templates="Maybe {topic}?\nIn a way, {partner}.",
        position=7,
    )
    BarrierCue.objects.create(
        barrier=barrier, dimension="interaction_tactics", instruction="Add a hedge", rate=0.6, unit="of sentences"
    )
    BarrierCue.objects.create(
        barrier=barrier, dimension="narrative_stance", instruction="Avoid first person", rate=0.25, unit="of clauses"
    )
    make_character(team=team, external_id="char-ann", first_name="Ann", age=34, big_five="Openness - High",
                   secret="Owes rent.", mbti="INTJ")
    for age in (25, 41, 52):
        make_character(team=team, age=age, decision_style="Cautious", public_info="Lives upstairs.")

    template = make_scenario(
        team=team, is_template=True, codename="flat-template", category="personal_domain", relationship=3,
        context="Two flatmates, {role0} and {role1}, meet in the kitchen.",
        roles=[
            {"character": None, "goal": ["Agree on a rota with {role1}."], "min_age": 20, "max_age": 60,
             "gender": "woman", "communication": "sender"},
            {"character": None, "goal": ["Avoid a fixed rota."], "occupation": "teach", "reason": "Night shifts."},
        ],
    )
    Probe.objects.create(
        scenario=template, about=template.roles.get(position=1), position=0, topic="reason",
        text="Why does {role1} avoid the rota?", options=["Night shifts", "Laziness"], correct=0,
    )
    instantiate(template, count=2, seed=1)

    scenario = make_scenario(
        team=team, codename="bill", source="hand-written", difficulty="hard", turn_taking="random_after_greeting",
        greeter_position=1, turn_cap=12, original_context="The heating bill came.", relationship=2,
        roles=[{"goal": "Pay little."}, {"goal": "Split evenly.", "private_knowledge": "Works from home."}],
    )
    goal = Goal.objects.get(role__scenario=scenario, role__position=0)
    goal.goal_type, goal.tags = "competition", ["money"]
    goal.save()
    Goal.objects.create(role=goal.role, position=1, text="Stay friends.", goal_type="relationship_maintenance")
    Probe.objects.create(
        scenario=scenario, about=goal.role, position=0, topic="goal", text="What does role 1 want?",
        options=["To pay little", "To move out", "To cook"], correct=0, asked_of="anyone",
    )


def design(team: Team) -> dict:
    """Every field of the team's design, read from the models, objects by external id or key."""
    characters = {
        c.external_id: {f.name: getattr(c, f.name) for f in Character._meta.fields if f.name not in ("id", "team")}
        for c in Character.objects.of_team(team)
    }
    barriers = {
        b.key: (
            {f.name: getattr(b, f.name) for f in Barrier._meta.fields if f.name not in ("id", "team")},
            sorted((cue.dimension, cue.instruction, cue.rate, cue.unit) for cue in b.cues.all()),
        )
        for b in Barrier.objects.filter(team=team)
    }
    scenarios = {}
    for s in Scenario.objects.of_team(team).prefetch_related(
        "roles__goals", "probes__about", "roles__character", "casts__members__role", "casts__members__character"
    ):
        fields = {f.name: getattr(s, f.name) for f in Scenario._meta.fields if f.name not in ("id", "team", "template",
                                                                                               "created_at")}
        fields["template"] = s.template.external_id if s.template else None
        fields["roles"] = [
            (
                r.position, r.reason, r.private_knowledge, r.communication, r.min_age, r.max_age, r.gender,
                r.occupation, r.character.external_id if r.character else None,
                [(g.position, g.text, g.goal_type, g.tags) for g in r.goals.all()],
            )
            for r in s.roles.all()
        ]
        fields["probes"] = [
            (p.position, p.about.position, p.topic, p.text, p.options, p.correct, p.asked_of) for p in s.probes.all()
        ]
        fields["casts"] = {
            c.key: (c.label, {m.role.position: m.character.external_id for m in c.members.all()}) for c in s.casts.all()
        }
        scenarios[s.external_id] = fields
    return {"characters": characters, "barriers": barriers, "scenarios": scenarios}


def add_casts(team: Team) -> Character:
    """Two other casts of the scenario 'bill': one with an id and label naming Ann and a character that plays
    no role, one without an id that fills role 1 only; returns the character only a cast names."""
    bill = Scenario.objects.get(team=team, codename="bill")
    stand_in = make_character(team=team, first_name="Stand-in", age=60)
    make_cast(bill, [Character.objects.get(external_id="char-ann"), stand_in], external_id="combo-1",
              label="Ann and the stand-in")
    unnamed = make_cast(bill, [], external_id=None)
    unnamed.members.create(role=bill.roles.get(position=1), character=Character.objects.get(external_id="char-ann"))
    return stand_in


def write(tmp_path, text: str, name: str = "library.jsonl"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_round_trip_into_another_team_keeps_every_field_and_the_bytes(tmp_path):
    build_design(default_team())
    first = library()
    other = make_team()

    result = import_file(write(tmp_path, first), team=other)

    assert result.format == "library"
    assert (result.created["barrier"], result.created["character"], result.created["scenario"]) == (1, 6, 4)
    original, copy = design(default_team()), design(other)
    assert copy == original
    assert len(copy["scenarios"]) == 4 and None not in copy["scenarios"] and None not in copy["characters"]
    assert library(other) == first


def test_records_come_in_the_order_an_import_needs_them():
    build_design(default_team())

    kinds = [(record["kind"], record.get("is_template")) for record in records(library())]

    assert kinds == [("barrier", None), *[("character", None)] * 6, ("scenario", True), *[("scenario", False)] * 3]
    assert all(record["format_version"] == 1 for record in records(library()))


def test_characters_and_templates_are_named_by_their_stable_ids_which_export_saves():
    build_design(default_team())
    template = Scenario.objects.get(codename="flat-template")

    lines = records(library())

    instance = next(record for record in lines if record.get("template"))
    assert instance["template"] == f"parley-scenario-{template.pk}"
    assert all(isinstance(role["character"], str) for role in instance["roles"])
    assert Scenario.objects.get(pk=template.pk).external_id == f"parley-scenario-{template.pk}"
    assert not Character.objects.filter(external_id=None).exists()
    assert Character.objects.get(first_name="Ann").external_id == "char-ann"


def test_export_refuses_a_stable_id_that_another_object_already_has():
    unnamed = make_character()
    make_character(external_id=f"parley-character-{unnamed.pk}")

    with pytest.raises(LibraryProblem, match=f"parley-character-{unnamed.pk}"):
        library()

    assert Character.objects.get(pk=unnamed.pk).external_id is None


def test_importing_into_the_same_team_changes_nothing(tmp_path):
    build_design(default_team())
    path = write(tmp_path, library())
    before = row_counts()

    result = import_file(path)

    assert row_counts() == before
    assert not result.created and not result.notes
    assert (result.unchanged["barrier"], result.unchanged["character"], result.unchanged["scenario"]) == (1, 6, 4)


def test_dry_run_reports_and_writes_nothing(tmp_path):
    build_design(default_team())
    path = write(tmp_path, library())
    other = make_team()
    before = row_counts()

    result = import_file(path, team=other, dry_run=True)

    assert result.created["scenario"] == 4 and result.created["barrier"] == 1
    assert row_counts() == before


def test_a_changed_definition_is_left_as_stored_and_named_in_a_note(tmp_path):
    build_design(default_team())
    lines = records(library())
    for record in lines:
        if record["kind"] == "scenario" and record["codename"] == "bill":
            record["context"] = "A different bill."
            record["roles"][0]["goals"][0]["goal_type"] = "cooperation"
            record["probes"][0]["correct"] = 1
        if record["kind"] == "character" and record["external_id"] == "char-ann":
            record["age"] = 35
        if record["kind"] == "barrier":
            record["cues"][0]["rate"] = 0.9
    before = design(default_team())

    result = import_file(write(tmp_path, "".join(json.dumps(record) + "\n" for record in lines)))

    assert design(default_team()) == before
    assert not result.created
    bill = Scenario.objects.get(codename="bill").external_id
    assert any("1 scenario of the file differs" in note and f"'{bill}' (context, roles[0].goals, probes)" in note
               for note in result.notes), result.notes
    assert any("'char-ann' (age)" in note for note in result.notes)
    assert any("'hedging' (cues)" in note for note in result.notes)


def test_another_teams_objects_are_never_exported():
    build_design(default_team())
    other = make_team()
    make_scenario(team=other, codename="theirs", roles=[{"character": make_character(team=other, first_name="Zed")},
                                                        {"character": None}])
    Barrier.objects.create(team=other, key="theirs", name="Theirs", definition="Not ours.")

    text = library()

    assert "theirs" not in text and "Zed" not in text
    assert [record["codename"] for record in records(library(other)) if record["kind"] == "scenario"] == ["theirs"]


def test_built_in_barriers_are_not_written():
    build_design(default_team())

    barriers = [record["key"] for record in records(library()) if record["kind"] == "barrier"]

    assert barriers == ["hedging"]


def test_a_codename_brings_its_template_and_its_characters_only():
    build_design(default_team())
    instance = Scenario.objects.exclude(template=None).first()

    lines = records(library(codenames=[instance.codename]))

    scenarios = [record["codename"] for record in lines if record["kind"] == "scenario"]
    assert scenarios == ["flat-template", instance.codename]
    cast = {role.character.external_id for role in instance.roles.all()}
    assert {record["external_id"] for record in lines if record["kind"] == "character"} == cast


def test_source_filter_and_unknown_codename():
    build_design(default_team())

    assert [r["codename"] for r in records(library(source="hand-written")) if r["kind"] == "scenario"] == ["bill"]
    with pytest.raises(LibraryProblem, match="'nope'"):
        library(codenames=["nope"])


def test_a_library_is_recognised_by_its_kind(tmp_path):
    build_design(default_team())
    path = write(tmp_path, library())

    assert detect_format(path, path.read_text()) == "library"


def scenario_line(**changes) -> dict:
    record = {
        "format_version": 1, "kind": "scenario", "external_id": "s1", "context": "A kitchen.",
        "roles": [{"position": 0, "goals": [{"text": "Talk."}]}, {"position": 1, "goals": [{"text": "Listen."}]}],
    }
    record.update(changes)
    return record


def lines(*items: dict) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


@pytest.mark.parametrize(("items", "message"), [
    ([{"format_version": 1, "kind": "stage"}],
     "line 1, field kind: 'stage' is not one of barrier, character, scenario"),
    ([scenario_line(format_version=2)], "line 1, field format_version: this Parley reads format version 1, not 2"),
    ([scenario_line(), scenario_line(external_id="s2", template="s1")],
     "line 2, field template: 's1' is not a template given above this line"),
    ([scenario_line(external_id="s2", template="t1"), scenario_line(external_id="t1", is_template=True)],
     "line 1, field template: 't1' is not a template given above this line"),
    ([scenario_line(roles=[{"position": 0, "goals": [{"text": "a"}], "character": "ghost"},
                           {"position": 1, "goals": [{"text": "b"}]}])],
     "line 1, field roles[0].character: character 'ghost' is not in the database or in this file"),
    ([scenario_line(roles=[{"position": 0, "goals": [{"text": "a"}], "character": {"first_name": "A"}},
                           {"position": 1, "goals": [{"text": "b"}]}])],
     "line 1, field roles[0].character: expected a string, got an object"),
    ([{"format_version": 1, "kind": "barrier", "key": "semantic", "name": "S", "definition": "d"}],
     "line 1, field key: 'semantic' is a built-in barrier's key"),
    ([{"format_version": 1, "kind": "barrier", "key": "my key", "name": "S", "definition": "d"}],
     "line 1, field key: 'my key' is not a key"),
    ([{"format_version": 1, "kind": "barrier", "key": "k", "name": "S", "definition": "d",
       "cues": [{"dimension": "narrative_stance", "instruction": "x", "rate": 1.5, "unit": "u"}]}],
     "line 1, field cues[0].rate: 1.5 is not a share between 0 and 1"),
    ([{"format_version": 1, "kind": "barrier", "key": "k", "name": "S", "definition": "d"},
      {"format_version": 1, "kind": "barrier", "key": "k", "name": "T", "definition": "e"}],
     "line 2, field key: barrier 'k' appears twice in this file (first at line 1)"),
    ([{"format_version": 1, "kind": "character", "external_id": "c1"}],
     "line 1, field first_name: required field is missing"),
    ([scenario_line(), scenario_line()], "line 2, field external_id: scenario 's1' appears twice in this file"),
])
def test_bad_records_are_named_by_line_and_field(tmp_path, items, message):
    assert_rejected(write(tmp_path, lines(*items)), message)


def test_a_character_record_may_come_after_the_scenario_naming_it(tmp_path):
    character = {"format_version": 1, "kind": "character", "external_id": "c1", "first_name": "Ann"}
    scenario = scenario_line(roles=[{"position": 0, "goals": [{"text": "a"}], "character": "c1"},
                                    {"position": 1, "goals": [{"text": "b"}]}])

    import_file(write(tmp_path, lines(scenario, character)))

    assert Scenario.objects.get(external_id="s1").roles.get(position=0).character.first_name == "Ann"


def test_a_role_may_name_a_character_the_team_already_has(tmp_path):
    make_character(external_id="known", first_name="Kim")
    scenario = scenario_line(roles=[{"position": 0, "goals": [{"text": "a"}], "character": "known"},
                                    {"position": 1, "goals": [{"text": "b"}]}])

    result = import_file(write(tmp_path, lines(scenario)))

    assert result.unchanged["character"] == 1
    assert Scenario.objects.get(external_id="s1").roles.get(position=0).character.first_name == "Kim"


def test_an_episode_line_still_wants_its_characters_in_full(tmp_path):
    """Naming by external id belongs to the library; an episode line is read as before."""
    episode = {"format_version": 1, "external_id": "e1", "barrier": "none", "source": "imported",
               "status": "finished", "seats": [],
               "scenario": scenario_line(roles=[{"position": 0, "goals": [{"text": "a"}], "character": "c1"},
                                                {"position": 1, "goals": [{"text": "b"}]}])}

    assert_rejected(write(tmp_path, lines(episode)), "field scenario.roles[0].character: expected an object")


def test_commands_export_and_import_a_library(tmp_path):
    build_design(default_team())
    path = tmp_path / "design.jsonl"
    out = io.StringIO()

    call_command("export_library", "--out", str(path), stdout=out)
    other = make_team(slug="elsewhere")
    imported = io.StringIO()
    call_command("import_episodes", str(path), "--team", "elsewhere", stdout=imported)

    assert "Exported 1 barrier(s), 6 character(s) and 4 scenario(s)" in out.getvalue()
    assert "(library): created 4 scenarios, 6 characters, 1 barrier" in imported.getvalue()
    assert design(other) == design(default_team())


def test_command_writes_to_standard_output_and_names_an_unknown_codename():
    build_design(default_team())
    out, err = io.StringIO(), io.StringIO()

    call_command("export_library", "--out", "-", "--codename", "bill", stdout=out, stderr=err)

    assert [record["kind"] for record in records(out.getvalue())] == ["barrier", "character", "character", "scenario"]
    assert "Exported" in err.getvalue()
    with pytest.raises(CommandError, match="codename 'nope'"):
        call_command("export_library", "--out", "-", "--codename", "nope", stdout=io.StringIO())


def test_the_example_in_the_format_documentation_imports(tmp_path):
    docs = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    section = docs.split("## Scenario library", 1)[1].split("\n## ", 1)[0]
    example = section.split("```json\n", 1)[1].split("```", 1)[0]

    result = import_file(write(tmp_path, example))

    assert (result.created["barrier"], result.created["character"], result.created["scenario"]) == (1, 2, 1)
    assert Scenario.objects.get(external_id="flat-dishes").roles.get(position=0).character.first_name == "Ann"
    cast = Cast.objects.get(external_id="swapped").characters()
    assert (cast[0].first_name, cast[1].first_name) == ("Bo", "Ann")


def test_the_demo_design_moves_to_another_team_byte_for_byte(tmp_path, worlds):
    worlds.lay("demo-episodes")  # load_demo --skip-accounts, built once per session (tests/worlds.py)
    first = library()
    other = make_team()

    import_file(write(tmp_path, first), team=other)

    assert library(other) == first
    assert design(other) == design(default_team())


def test_casts_move_to_another_team_and_export_again_byte_for_byte(tmp_path):
    build_design(default_team())
    stand_in = add_casts(default_team())
    unnamed = Cast.objects.get(external_id=None)
    first = library()
    other = make_team()

    result = import_file(write(tmp_path, first), team=other)

    bill = next(record for record in records(first) if record.get("codename") == "bill")
    assert bill["casts"] == [
        {"external_id": str(unnamed.pk), "label": "", "members": {"1": "char-ann"}},
        {"external_id": "combo-1", "label": "Ann and the stand-in",
         "members": {"0": "char-ann", "1": f"parley-character-{stand_in.pk}"}},
    ]  # by key: the unnamed cast's is its primary key
    assert [record["kind"] for record in records(first) if "casts" in record] == ["scenario"]
    assert result.created["cast"] == 2 and result.created["character"] == 7
    assert design(other) == design(default_team())
    assert Cast.objects.of_team(other).get(external_id="combo-1").characters()[1].first_name == "Stand-in"
    assert library(other) == first


def test_a_codename_brings_the_characters_its_casts_name():
    build_design(default_team())
    stand_in = add_casts(default_team())

    lines = records(library(codenames=["bill"]))

    characters = {record["external_id"] for record in lines if record["kind"] == "character"}
    assert f"parley-character-{stand_in.pk}" in characters


def test_casts_import_back_into_the_same_team_unchanged(tmp_path):
    build_design(default_team())
    add_casts(default_team())
    path = write(tmp_path, library())
    before = row_counts()

    result = import_file(path)

    assert row_counts() == before
    assert not result.created and not result.notes


def test_a_stored_scenario_gets_no_casts_from_the_file_and_a_note_says_so(tmp_path):
    build_design(default_team())
    add_casts(default_team())
    lines = records(library())
    bill = next(record for record in lines if record.get("codename") == "bill")
    bill["casts"].append({"external_id": "combo-2", "label": "", "members": {"0": "char-ann"}})
    before = row_counts()

    result = import_file(write(tmp_path, "".join(json.dumps(record) + "\n" for record in lines)))

    assert row_counts() == before
    assert any(f"'{bill['external_id']}' (casts)" in note for note in result.notes), result.notes


def cast_line(*casts: dict) -> dict:
    return scenario_line(casts=list(casts))


@pytest.mark.parametrize(("items", "message"), [
    ([cast_line({"external_id": "c", "members": {"2": "ann"}})],
     "line 1, field casts[0].members.2: '2' is not a role position of scenario 's1' (positions: 0, 1)"),
    ([cast_line({"external_id": "c", "members": {"first": "ann"}})],
     "line 1, field casts[0].members.first: 'first' is not a role position of scenario 's1'"),
    ([cast_line({"external_id": "c", "members": {"0": "ghost"}})],
     "line 1, field casts[0].members.0: character 'ghost' is not in the database or in this file"),
    ([cast_line({"external_id": "c", "members": {"0": 7}})],
     "line 1, field casts[0].members.0: expected a string, got"),
    ([cast_line({"external_id": "c", "members": {"0": "ann", "1": "ann"}})],
     "line 1, field casts[0].members.1: character 'ann' plays two roles of this cast"),
    ([cast_line({"members": {"0": "ann"}})], "line 1, field casts[0].external_id: required field is missing"),
    ([cast_line({"external_id": "c", "members": ["ann"]})], "line 1, field casts[0].members: expected an object"),
    ([cast_line({"external_id": "c", "members": {}}, {"external_id": "c", "members": {}})],
     "line 1, field casts[1].external_id: cast 'c' appears twice in this scenario (first at casts[0])"),
])
def test_bad_casts_are_named_by_line_and_field(tmp_path, items, message):
    ann = {"format_version": 1, "kind": "character", "external_id": "ann", "first_name": "Ann"}
    assert_rejected(write(tmp_path, lines(*items, ann)), message)


def test_a_cast_may_name_a_character_the_team_already_has_and_leave_a_role_open(tmp_path):
    make_character(external_id="known", first_name="Kim")
    line = cast_line({"external_id": "c", "label": "Kim", "members": {"1": "known"}})

    result = import_file(write(tmp_path, lines(line)))

    cast = Cast.objects.get(scenario__external_id="s1")
    assert (cast.external_id, cast.label, result.created["cast"]) == ("c", "Kim", 1)
    assert {position: character.first_name for position, character in cast.characters().items()} == {1: "Kim"}
