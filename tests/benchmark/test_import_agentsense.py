"""Importing AgentSense's own files: scenes, templates, probes, a run's outputs as answers, bad input;
and an imported scene file simulates and evaluates offline."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.evaluation.interviews.instruments import GOALS_PRESET, PROBES_PRESET
from benchmark.exporting import export_episodes, select_episodes
from benchmark.importing import ImportProblem, detect_format
from benchmark.importing.agentsense import read_choice
from benchmark.models import Answer, Character, Episode, Goal, Probe, Response, Role, Scenario, Turn
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts
from tests.builders import make_team

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "agentsense"
SCENES = DATA / "scenes.jsonl"
WITH_OUTPUTS = DATA / "scene_with_outputs.jsonl"
JUDGES = ["gpt-4o", "qwen2.5-72b", "llama-3.1-70b"]


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def scenes() -> list[dict]:
    return [json.loads(line) for line in SCENES.read_text().splitlines()]


def write(tmp_path: Path, *records: dict, name: str = "scenes.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_the_format_is_detected_from_the_first_line():
    assert detect_format(SCENES, SCENES.read_text()) == "agentsense"
    assert detect_format(Path("run.jsonl"), WITH_OUTPUTS.read_text()) == "agentsense"


def test_an_unknown_shape_is_named_as_not_a_known_format():
    with pytest.raises(ImportProblem) as problem:
        detect_format(Path("x.jsonl"), '{"scene": 1, "people": []}\n')
    assert str(problem.value).startswith("x.jsonl, line 1: not a known format")
    assert "agent_ids" not in str(problem.value)


def test_each_scene_becomes_a_scenario_and_each_template_a_template():
    result = import_file(SCENES)
    assert (result.format, result.created["scenario"], result.created["character"]) == ("agentsense", 6, 10)
    instances = Scenario.objects.filter(is_template=False).order_by("external_id")
    assert [s.external_id for s in instances] == [
        "agentsense-101", "agentsense-102", "agentsense-201", "agentsense-202"
    ]
    assert {s.template.external_id for s in instances[:2]} == {"agentsense-template-0"}
    assert {s.template.external_id for s in instances[2:]} == {"agentsense-template-1"}
    assert Scenario.objects.get(external_id="agentsense-template-0").is_template
    first = instances[0]
    assert (first.source, first.turn_taking, first.turn_cap, first.greeter_position) == (
        "agentsense", "random_after_greeting", 15, None
    )
    assert first.context.startswith("A small neighbourhood bakery") and "Marta Ruiz owns the bakery" in first.context
    assert Scenario.objects.get(external_id="agentsense-201").category == "personal_domain"


def test_characters_roles_goals_and_private_information_map():
    import_file(SCENES)
    roles = list(Role.objects.filter(scenario__external_id="agentsense-101").order_by("position"))
    assert [role.character.name for role in roles] == ["Marta Ruiz", "Tom Okafor", "Lena Berg"]
    assert roles[0].character.personality.startswith("Marta Ruiz is a 58-year-old baker")
    assert roles[0].private_knowledge == "Marta Ruiz has already accepted an offer from a supermarket chain."
    assert roles[2].private_knowledge == ""  # null private_info
    assert [(g.text, g.goal_type) for g in roles[0].goals.order_by("position")] == [
        ("To persuade Tom Okafor to stay on after the sale.", "cooperation"),
        ("To keep the buyer's name from Lena Berg.", ""),
    ]
    assert roles[1].goals.get().erg == "existence"
    pair = Role.objects.filter(scenario__external_id="agentsense-201").order_by("position")
    assert [role.communication for role in pair] == ["sender", "receiver"]


def test_info_questions_become_probes_about_the_character_they_ask_after():
    import_file(SCENES)
    probes = list(Probe.objects.filter(scenario__external_id="agentsense-101").select_related("about__character"))
    # Marta's and Lena's question about Tom is one probe; Tom's and Lena's about the buyer another.
    assert [(p.about.character.name, p.topic, p.correct, p.asked_of) for p in probes] == [
        ("Tom Okafor", "private_info", 1, "others"), ("Marta Ruiz", "private_info", 1, "others")
    ]
    assert probes[1].options == ["The café owner", "A supermarket chain", "A cousin", "Nobody yet"]
    reason = Probe.objects.get(scenario__external_id="agentsense-201")
    assert (reason.about.character.name, reason.topic, reason.correct) == ("Sam Lee", "reason", 1)


def test_importing_the_same_file_again_changes_nothing():
    import_file(SCENES)
    before = row_counts()
    result = import_file(SCENES)
    assert result.created == {} and result.unchanged["scenario"] == 4  # the scenes (their templates not visited)
    assert row_counts() == before


def test_a_scene_with_outputs_becomes_an_episode_with_its_turns():
    import_file(SCENES)
    result = import_file(WITH_OUTPUTS)
    assert (result.created["episode"], result.created["turn"], result.unchanged["scenario"]) == (1, 8, 1)
    episode = Episode.objects.get()
    assert episode.external_id == "agentsense-101-openai/gpt-4o-mini"
    assert episode.scenario.external_id == "agentsense-101"
    seats = {seat.position: seat for seat in episode.seats.select_related("character")}
    assert [seats[n].character.name for n in range(3)] == ["Marta Ruiz", "Tom Okafor", "Lena Berg"]
    assert {seat.model for seat in seats.values()} == {"openai/gpt-4o-mini"}
    turns = list(episode.turns.order_by("index"))
    assert [turn.seat.position for turn in turns] == [1, 0, 2, 0, 1, 0, 2, 1]
    assert turns[0].content == "Hi, there!"  # the greeting AgentSense opens with
    assert (turns[-1].action_type, turns[-1].content) == ("none", "")


def test_goal_answers_are_stored_per_perspective():
    result = import_file(WITH_OUTPUTS)  # the scene itself comes with its outputs
    assert result.created["scenario"] == 2  # the scene and its template
    goals = Answer.objects.filter(response__instrument__preset=GOALS_PRESET).select_related(
        "response__respondent", "goal__role"
    )
    agents = [a for a in goals if a.response.respondent.kind == "agent"]
    judges = [a for a in goals if a.response.respondent.kind == "judge"]
    assert len(agents) == 4 * 3 and len(judges) == 4 * 3  # 4 goals; self + 2 others; 3 judges
    assert {a.response.respondent.model for a in agents} == {"openai/gpt-4o-mini"}
    self_view = [a for a in agents if a.response.seat_position == a.goal.role.position]
    assert len(self_view) == 4
    marta_first = Goal.objects.get(role__scenario__external_id="agentsense-101", role__position=0, position=0)
    assert [a.value for a in self_view if a.goal == marta_first] == ["yes"]
    others = sorted((a.response.seat_position, a.value) for a in agents if a.goal == marta_first and a not in self_view)
    assert others == [(1, "no"), (2, "no")]
    by_judge = {a.response.respondent.model: a.value for a in judges if a.goal == marta_first}
    assert by_judge == {"gpt-4o": "no", "qwen2.5-72b": "no", "llama-3.1-70b": "yes"}
    assert all(a.response.seat_position is None for a in judges)
    assert all(a.reasoning for a in goals)
    assert Response.objects.filter(respondent__kind="judge").count() == 3  # one response per judge


def test_probe_answers_are_stored_for_the_asking_seat_and_unreadable_ones_counted():
    result = import_file(WITH_OUTPUTS)
    assert "skipped 1 unreadable probe answer" in result.summary()
    answers = Answer.objects.filter(response__instrument__preset=PROBES_PRESET).select_related("question", "response")
    chosen = sorted((a.response.seat_position, a.question.key, a.value, a.question.options["correct"]) for a in answers)
    assert chosen == [(0, "probe_1", "1", "1"), (1, "probe_2", "1", "1"), (2, "probe_2", "1", "1")]


def test_probe_replies_are_read_as_agentsense_reads_them():
    options = ["A holiday abroad", "Opening a stall of their own", "Retiring"]
    assert read_choice("I think (C).", options) == 2
    assert read_choice("b.", options) == 1
    assert read_choice("Retiring", options) == 2
    assert read_choice("B) Opening a stall of their own", options) == 1
    assert read_choice("Maybe a holiday, maybe retiring", options) is None
    assert read_choice("(D)", options) is None  # not an option


def test_an_episode_imported_twice_is_unchanged():
    import_file(WITH_OUTPUTS)
    before = row_counts()
    result = import_file(WITH_OUTPUTS)
    assert result.unchanged["episode"] == 1 and row_counts() == before


def with_outputs() -> dict:
    return json.loads(WITH_OUTPUTS.read_text())


def edited(change) -> dict:
    record = with_outputs()
    change(record)
    return record


@pytest.mark.parametrize(("record", "message"), [
    (edited(lambda r: r["characters"][1]["goals"][0].pop("goal")),
     "line 1, field characters[1].goals[0].goal: required field is missing"),
    (edited(lambda r: r["characters"][0]["goals"][0].update(goal_type="winning")),
     "field characters[0].goals[0].goal_type: 'winning' is not one of information_acquisition"),
    (edited(lambda r: r["chat_history"][2].update(name="Ghost")),
     "field chat_history[2].name: string 'Ghost' is not a character of this scene (Marta Ruiz, Tom Okafor, Lena Berg)"),
    (edited(lambda r: r["goal_answer"]["Tom Okafor"]["To learn who is buying the bakery."]["judge"].pop()),
     "field goal_answer.Tom Okafor.To learn who is buying the bakery..judge: 2 answers, but the goal has 1 judge "
     "question(s) for 3 judge(s)"),
    (edited(lambda r: r["goal_answer"]["Lena Berg"].update({"To open a terrace.": {"self": ["Yes"]}})),
     "field goal_answer.Lena Berg.To open a terrace.: Lena Berg has no goal with this text"),
    (edited(lambda r: r["info_answer"]["Lena Berg"].pop()),
     "field info_answer.Lena Berg: 1 answers, but Lena Berg has 2 info_reason_questions"),
    (edited(lambda r: r.pop("goal_metrics")),
     "line 1, field goal_metrics: the judges are not named"),
    (edited(lambda r: r["goal_answer"]["Lena Berg"]["To win Marta Ruiz's support for a shared terrace."].update(
        self=[3])), "field goal_answer.Lena Berg.To win Marta Ruiz's support for a shared terrace..self[0]: expected a "
                    "string, got number 3"),
    (edited(lambda r: r.pop("model")),
     "field characters[0].model: the file does not say which model played Marta Ruiz"),
    (edited(lambda r: r["characters"][0]["info_reason_questions"][0].update(answer_label=4)),
     "field characters[0].info_reason_questions[0].correct: 4 is not an option's index (0 to 3)"),
    (edited(lambda r: r["characters"][2]["info_reason_questions"][0].update(role="Lena Berg")),
     "field characters[2].info_reason_questions[0].role: 'Lena Berg' is not one of Marta Ruiz, Tom Okafor"),
    (edited(lambda r: r["roles"].update({"Marta Ruiz": "talker"}) if "roles" in r else r.update(
        roles={"Marta Ruiz": "talker"})), "field roles.Marta Ruiz: 'talker' is not one of sender, receiver"),
])
def test_bad_input_is_refused_naming_line_and_field_and_nothing_is_written(tmp_path, record, message):
    assert_rejected(write(tmp_path, record), message)


def test_the_fixture_with_a_bad_field_names_its_line_and_field_and_writes_nothing():
    assert_rejected(DATA / "bad_field.jsonl",
                    "bad_field.jsonl, line 2, field characters[1].info_reason_questions[0].answer_label: expected an "
                    "integer, got string 'two'")


def test_a_question_about_an_unnamed_character_asks_for_role(tmp_path):
    record = scenes()[0]
    record["characters"][0]["info_reason_questions"][0]["question"] = "What has been planned for spring?"
    assert_rejected(write(tmp_path, record), "field characters[0].info_reason_questions[0].role: cannot tell whose")


def test_an_output_file_on_its_own_says_to_merge_it_into_its_scene(tmp_path):
    output = {key: with_outputs()[key] for key in ("chat_history", "goal_answer", "goal_metrics", "info_answer")}
    path = tmp_path / "101.json"
    path.write_text(json.dumps(output), encoding="utf-8")
    assert_rejected(path, "101.json, line 1: an AgentSense output on its own cannot be imported")


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # a run's chunk reads on a thread of its own
def test_an_imported_scene_file_simulates_and_evaluates_offline():
    assert "created 6 scenarios" in run("import_episodes", str(SCENES))
    run("simulate", "--scenarios", "agentsense-101,agentsense-201", "--conditions", "none", "--tag", "as",
        "--interview", "--seed", "1")
    episodes = Episode.objects.filter(tag="as").select_related("scenario")
    assert sorted(e.scenario.external_id for e in episodes) == ["agentsense-101", "agentsense-201"]
    assert all(e.status == "finished" and e.seats.count() == e.scenario.roles.count() for e in episodes)
    three = episodes.get(scenario__external_id="agentsense-101")
    assert Turn.objects.filter(episode=three).values("seat").distinct().count() >= 2
    assert three.turns.count() <= 15  # the scene's own turn cap
    interviewed = Answer.objects.filter(response__episode=three, response__respondent__kind="agent")
    assert interviewed.filter(response__instrument__preset=GOALS_PRESET).count() == 3 * 4  # 3 seats × 4 goals
    assert interviewed.filter(response__instrument__preset=PROBES_PRESET).exists()

    run("evaluate", "--tag", "as", "--model", "scripted")
    judged = Answer.objects.filter(response__episode__in=episodes, response__respondent__kind="judge")
    assert judged.exists()
    assert set(judged.values_list("response__episode", flat=True)) == {e.pk for e in episodes}
    assert Character.objects.filter(first_name="Marta").count() == 1


def test_an_imported_agentsense_episode_exports_to_parley_and_back_byte_for_byte(tmp_path):
    import_file(WITH_OUTPUTS)
    first = io.StringIO()
    export_episodes(select_episodes(Scenario.objects.first().team), first)
    record = json.loads(first.getvalue())
    assert record["scenario"]["roles"][0]["goals"][0]["goal_type"] == "cooperation"
    assert record["scenario"]["template"]["external_id"] == "agentsense-template-0"

    other = make_team()
    path = tmp_path / "parley.jsonl"
    path.write_text(first.getvalue(), encoding="utf-8")
    assert import_file(path, team=other).created["answer"] == 27
    again = io.StringIO()
    export_episodes(select_episodes(other), again)
    assert again.getvalue() == first.getvalue()
