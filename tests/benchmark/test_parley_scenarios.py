"""Parley JSON Lines for N-party scenarios: goals with tags, probes, turn-taking, turn caps, templates and
slot constraints; older files with one ``goal`` text still read; export, import, export is byte-identical."""

import json
import re
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from benchmark.agents import llm
from benchmark.demo.content import GROUP_SCENARIOS
from benchmark.demo.install import beats_of, install_scenario
from benchmark.evaluation.interviews.running import interview_episode
from benchmark.exporting import export_episodes, select_episodes
from benchmark.importing import ImportProblem
from benchmark.models import Answer, Character, Episode, Goal, Instrument, Probe, Response, Role, Scenario, Turn
from benchmark.runs.simulation import create_episode, run_episode
from benchmark.scenarios.templates import instantiate
from tests.benchmark.import_checks import assert_rejected, import_file
from tests.benchmark.test_import_parley import episode_record, write_lines
from tests.builders import default_team, get_barrier, make_character, make_episode, make_role, make_team

pytestmark = pytest.mark.django_db

SOCIALVEIL = Path(__file__).resolve().parents[3] / "shared" / "data" / "socialveil" / "episode_hard.jsonl"


def exported() -> str:
    lines: list[str] = []

    class Out:
        def write(self, text: str) -> None:
            lines.append(text)

    export_episodes(select_episodes(default_team()), Out())
    return "".join(lines)


def group_episode() -> Episode:
    """A three-party instance of a template, with tagged goals, probes, random order and two barrier seats."""
    team = default_team()
    template = Scenario.objects.create(
        team=team, codename="flat-meeting", is_template=True, context="{role0}, {role1} and {role2} meet.",
        turn_taking="random_after_greeting", greeter_position=2, turn_cap=15,
    )
    for position, job in enumerate(["nurse", "", ""]):
        make_role(template, position, goal=["Keep the big room.", "Stay friends."], occupation=job,
                  min_age=20 if position == 0 else None, max_age=40 if position == 0 else None,
                  gender="woman" if position == 0 else "")
    Goal.objects.filter(role__scenario=template, position=0).update(tags=["existence"])
    Goal.objects.filter(role__scenario=template, position=1).update(tags=["relatedness", "hidden"])
    Probe.objects.create(scenario=template, about=template.roles.get(position=1), position=0, topic="private_info",
                         text="What does {role1} know?", options=["Nothing", "The code", "The date"], correct=1,
                         asked_of="anyone")
    make_character(first_name="Nia", gender="woman", age=30, occupation="night nurse")
    make_character(first_name="Oli")
    make_character(first_name="Pat")
    instance = instantiate(template, count=1).created[0]
    episode = make_episode(scenario=instance, barrier="semantic", turns=5, external_id="group-1")
    episode.seats.filter(position__in=[0, 2]).update(carries_barrier=True)
    return episode


def test_a_group_episode_exports_imports_and_exports_again_byte_for_byte(tmp_path):
    group_episode()
    first = exported()
    record = json.loads(first)
    scenario = record["scenario"]
    assert (scenario["turn_taking"], scenario["greeter"], scenario["turn_cap"], scenario["is_template"]) == (
        "random_after_greeting", 2, 15, False
    )
    assert scenario["template"]["is_template"] and scenario["template"]["template"] is None
    assert scenario["template"]["roles"][0]["slot"] == {"min_age": 20, "max_age": 40, "gender": "woman",
                                                        "occupation": "nurse"}
    assert scenario["roles"][1]["goals"] == [{"text": "Keep the big room.", "tags": ["existence"]},
                                             {"text": "Stay friends.", "tags": ["relatedness", "hidden"]}]
    cast = scenario["roles"][1]["character"]["first_name"]
    assert scenario["probes"] == [{"about": 1, "topic": "private_info", "text": f"What does {cast} know?",
                                   "options": ["Nothing", "The code", "The date"], "correct": 1,
                                   "asked_of": "anyone"}]
    assert [seat["carries_barrier"] for seat in record["seats"]] == [True, False, True]

    Turn.objects.all().delete()
    Episode.objects.all().delete()
    Scenario.objects.filter(template__isnull=False).delete()
    Scenario.objects.all().delete()
    Character.objects.all().delete()
    path = tmp_path / "group.jsonl"
    path.write_text(first, encoding="utf-8")
    result = import_file(path)

    assert result.created["scenario"] == 2  # the instance and its template
    assert exported() == first
    instance = Scenario.objects.get(template__isnull=False)
    assert instance.template.is_template and instance.template.roles.get(position=0).occupation == "nurse"


def test_an_older_file_with_one_goal_text_gets_one_goal_a_line(tmp_path):
    record = episode_record()
    record["scenario"]["roles"][0]["goal"] = "Agree on a rota.\n\n  Hint: offer to cook.  "
    import_file(write_lines(tmp_path, record))
    role = Role.objects.get(position=0)
    assert list(role.goals.values_list("position", "text", "tags")) == [
        (0, "Agree on a rota.", []), (1, "Hint: offer to cook.", [])
    ]
    scenario = Scenario.objects.get()
    assert (scenario.turn_taking, scenario.greeter_position, scenario.turn_cap) == ("round_robin", None, None)


def test_goals_given_as_a_list_keep_their_tags(tmp_path):
    record = episode_record()
    record["scenario"]["roles"][1] = {"position": 1, "goals": [{"text": "Do fewer dishes.", "tags": ["existence"]},
                                                                 {"text": "Be liked."}]}
    import_file(write_lines(tmp_path, record))
    assert list(Role.objects.get(position=1).goals.values_list("text", "tags")) == [
        ("Do fewer dishes.", ["existence"]), ("Be liked.", [])
    ]


def test_agentsense_labels_import_and_export_again_byte_for_byte(tmp_path):
    record = episode_record()
    record["scenario"]["category"] = "small_society"
    record["scenario"]["roles"][0].update(communication="sender", goal=None, goals=[
        {"text": "Learn the rota.", "tags": [], "goal_type": "information_acquisition"}, {"text": "Be liked."}
    ])
    record["scenario"]["roles"][1]["communication"] = "receiver"
    import_file(write_lines(tmp_path, record))
    scenario = Scenario.objects.get()
    assert scenario.category == "small_society"
    assert [role.communication for role in scenario.roles.order_by("position")] == ["sender", "receiver"]
    goals = list(Goal.objects.filter(role__position=0).order_by("position"))
    assert [(goal.goal_type, goal.erg) for goal in goals] == [("information_acquisition", "existence"), ("", "")]

    first = exported()
    written = json.loads(first)["scenario"]
    assert written["category"] == "small_society" and written["roles"][0]["communication"] == "sender"
    assert written["roles"][0]["goals"] == [
        {"text": "Learn the rota.", "tags": [], "goal_type": "information_acquisition"},
        {"text": "Be liked.", "tags": []},  # unset labels are left out, as in files from before them
    ]
    Episode.objects.all().delete()
    Scenario.objects.all().delete()
    Character.objects.all().delete()
    import_file(write_lines(tmp_path, json.loads(first)))
    assert exported() == first


def test_a_scenario_without_labels_exports_none_of_their_keys():
    make_episode()
    written = json.loads(exported())["scenario"]
    assert "category" not in written
    assert all("communication" not in role for role in written["roles"])
    assert all("goal_type" not in goal for role in written["roles"] for goal in role["goals"])


def test_several_barrier_seats_import(tmp_path):
    record = episode_record()
    record["seats"][1]["carries_barrier"] = True
    import_file(write_lines(tmp_path, record))
    assert Episode.objects.get().seats.filter(carries_barrier=True).count() == 2


def scenario_with(**changes):
    record = episode_record()
    record["scenario"].update(changes)
    return record


def role_with(index: int, **changes):
    record = episode_record()
    record["scenario"]["roles"][index].update(changes)
    return record


PROBE = {"about": 1, "topic": "goal", "text": "What does Bea want?", "options": ["Rest", "Dishes"], "correct": 0}


@pytest.mark.parametrize(("record", "message"), [
    (scenario_with(probes=[{**PROBE, "correct": 2}]),
     "line 1, field scenario.probes[0].correct: 2 is not an option's index (0 to 1)"),
    (scenario_with(probes=[{**PROBE, "about": 5}]),
     "line 1, field scenario.probes[0].about: no role at position 5 (roles: 0, 1)"),
    (scenario_with(probes=[{**PROBE, "options": ["Only one"]}]),
     "field scenario.probes[0].options: a probe needs at least two options, got 1"),
    (scenario_with(probes=[{**PROBE, "options": ["Rest", ""]}]),
     "field scenario.probes[0].options[1]: must not be empty"),
    (scenario_with(probes=[{**PROBE, "topic": "mood"}]), "field scenario.probes[0].topic: 'mood' is not one of"),
    (scenario_with(probes=[{**PROBE, "asked_of": "everyone"}]), "field scenario.probes[0].asked_of: 'everyone'"),
    (scenario_with(greeter=1),
     "field scenario.greeter: only 'random_after_greeting' and 'promediate' turn-taking have a greeter"),
    (scenario_with(turn_taking="random_after_greeting", greeter=3),
     "field scenario.greeter: no role at position 3 (roles: 0, 1)"),
    (scenario_with(turn_taking="shouting"), "field scenario.turn_taking: 'shouting' is not one of"),
    (scenario_with(turn_cap=0), "field scenario.turn_cap: 0 is below the minimum 1"),
    (scenario_with(is_template=True), "field scenario.is_template: an episode cannot be played in a template"),
    (scenario_with(template={"external_id": "t", "context": "c", "roles": [{"position": 0, "goal": "g"},
                                                                          {"position": 1, "goal": "h"}]}),
     "field scenario.template.is_template: the scenario named as template is not a template"),
    (role_with(0, goal=None, goals=[]), "field scenario.roles[0].goals: a role needs a goal"),
    (role_with(0, goal=None, goals=[{"text": " "}]), "field scenario.roles[0].goals[0].text: must not be empty"),
    (role_with(0, goal=None, goals=[{"text": "Win.", "tags": [3]}]),
     "field scenario.roles[0].goals[0].tags[0]: expected a string, got number 3"),
    (role_with(0, slot={"min_age": 40, "max_age": 30}), "field scenario.roles[0].slot.max_age: 30 is below min_age 40"),
    (role_with(0, goal=None, goals=[{"text": "Win.", "goal_type": "winning"}]),
     "line 1, field scenario.roles[0].goals[0].goal_type: 'winning' is not one of information_acquisition, "
     "information_provision, relationship_building, relationship_maintenance, identity_recognition, cooperation, "
     "competition, conflict_resolution"),
    (scenario_with(category="village"),
     "field scenario.category: 'village' is not one of personal_domain, small_society, large_society"),
    (role_with(1, communication="listener"), "field scenario.roles[1].communication: 'listener' is not one of sender"),
    (role_with(0, slot={"min_age": 200}), "field scenario.roles[0].slot.min_age: 200 is above the maximum 130"),
])
def test_a_bad_scenario_is_refused_naming_the_field_and_nothing_is_written(tmp_path, record, message):
    assert_rejected(write_lines(tmp_path, record), message)


# --- SocialVeil's multiple-choice questions are probes ---------------------------------------------


def probes_from_socialveil(record: dict) -> list[dict]:
    """SocialVeil's goal and reason MCQs as Parley probes (the test's own mapping, not an importer)."""
    probes = []
    for topic, key in (("goal", "agent_goals_mcqas"), ("reason", "agent_reasons_mcqas")):
        for question in record[key]:
            letters = sorted(question["options"])
            probes.append({
                "about": int(re.search(r"Agent (\d)", question["question"]).group(1)) - 1,
                "topic": topic,
                "text": question["question"],
                "options": [question["options"][letter] for letter in letters],
                "correct": letters.index(question["correct_answer"]),
                "asked_of": "others",
            })
    return probes


def test_every_socialveil_goal_and_reason_question_is_representable_as_a_probe(tmp_path):
    lines = [json.loads(line) for line in SOCIALVEIL.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = []
    for number, source in enumerate(lines):
        record = episode_record(f"sv-{number}")
        record["scenario"]["external_id"] = f"sv-scenario-{number}"
        record["scenario"]["probes"] = probes_from_socialveil(source)
        records.append(record)
    import_file(write_lines(tmp_path, *records))

    probes = Probe.objects.all()
    assert probes.count() == sum(len(s["agent_goals_mcqas"]) + len(s["agent_reasons_mcqas"]) for s in lines)
    for probe in probes.select_related("about", "scenario"):
        probe.full_clean()
        assert probe.options[probe.correct]


# --- interviews travel with their episodes -------------------------------------------------------


def interviewed_group_episode() -> Episode:
    spec = GROUP_SCENARIOS[0]
    scenario = install_scenario(spec, default_team())
    episode = create_episode(scenario, get_barrier("semantic"), models=dict.fromkeys(range(3), llm.SCRIPTED),
                             turn_cap=scenario.turn_cap, external_id="interviewed")
    async_to_sync(run_episode)(episode, seed=2, beats=beats_of(spec))
    async_to_sync(interview_episode)(episode.pk)
    return episode


def test_interviews_and_the_probes_instrument_export_and_import_byte_for_byte(tmp_path):
    interviewed_group_episode()
    first = exported()
    record = json.loads(first)
    probes = [r for r in record["responses"] if r["instrument"]["name"].startswith("Probes of")]
    goals = [r for r in record["responses"] if r["instrument"]["name"] == "AgentSense goals"]
    assert len(probes) == 3 and len(goals) == 3
    assert probes[0]["instrument"]["name"] == "Probes of demo-scenario-heating-bill"
    assert probes[0]["instrument"]["questions"][0]["kind"] == "multiple_choice"
    assert "questions" not in goals[0]["instrument"]  # a preset, named only
    assert {a["goal"]["role"] for a in goals[0]["answers"]} == {0, 1, 2}

    Answer.objects.all().delete()
    Response.objects.all().delete()
    Instrument.objects.filter(team__isnull=False).delete()
    Turn.objects.all().delete()
    Episode.objects.all().delete()
    Scenario.objects.all().delete()
    Character.objects.all().delete()
    path = tmp_path / "interviewed.jsonl"
    path.write_text(first, encoding="utf-8")
    result = import_file(path)

    assert result.created["instrument"] == 1 and result.created["answer"] > 0
    assert exported() == first
    rebuilt = Instrument.objects.get(team__isnull=False)
    assert rebuilt.frozen and rebuilt.scenario == Scenario.objects.get()


def test_another_team_imports_the_same_interviews_with_an_instrument_of_its_own(tmp_path):
    interviewed_group_episode()
    path = tmp_path / "interviewed.jsonl"
    path.write_text(exported(), encoding="utf-8")
    other = make_team()
    import_file(path, team=other)
    assert Instrument.objects.filter(name="Probes of demo-scenario-heating-bill").count() == 2
    assert Response.objects.filter(episode__team=other).count() == 6


def test_a_teams_instrument_of_the_same_name_with_other_questions_is_refused(tmp_path):
    interviewed_group_episode()
    path = tmp_path / "interviewed.jsonl"
    path.write_text(exported(), encoding="utf-8")
    other = make_team()
    clash = Instrument.objects.create(team=other, name="Probes of demo-scenario-heating-bill", version=1)
    clash.questions.create(key="something_else", position=0, kind="text", prompt="Anything?")
    with pytest.raises(ImportProblem, match="asks other questions than the file's"):
        import_file(path, team=other)
