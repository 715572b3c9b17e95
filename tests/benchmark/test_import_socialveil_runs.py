"""Importing SocialVeil's run outputs: conversation_log.json and eval_result.json per condition and scenario.

The fixtures in tests/data/socialveil/runs/ follow ulab-uiuc/social-veil @ ed717a2 exactly:
``scripts/run.py`` (``run_experiment``: ``<results>/mode_<condition>/scenario_<N>/``),
``socialveil/communication.py`` (``run_single_scenario_simulation``: the keys of
``conversation_log.json``, the ``"Name: text"`` lines, ``_format_action_output``'s ``[nonverbal]``,
``[action]``, empty and leave lines) and ``socialveil/evaluate.py`` (``evaluate_conversation``:
``aggregated_scores``, 0 where the judge gave no score). The cast and scenario are the first record of
the real data/episodes_all_semantic.json; the conversations are our own.
"""

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.models import ActionType, Answer, Barrier, Episode, Scenario, Turn
from tests.benchmark.import_checks import import_file, row_counts
from tests.builders import default_team, make_character, make_scenario

pytestmark = pytest.mark.django_db

RUNS = Path(__file__).resolve().parents[1] / "data" / "socialveil" / "runs" / "results"
SEMANTIC = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "socialveil" / "episodes_all_semantic.json"
SCENARIO_ID = "01H9KCPR1R7AK1CD4N7A0MPNYY"


@pytest.fixture
def scenario() -> Scenario:
    """The scenario as the SocialVeil scenario importer makes it: the record's id without its barrier suffix."""
    record = json.loads(SEMANTIC.read_text())[0]
    team = default_team()
    roles = []
    for profile, goal in zip(record["agent_profiles"], record["agent_goals"], strict=True):
        character = make_character(team=team, external_id=profile["pk"], first_name=profile["first_name"],
                                   last_name=profile["last_name"])
        roles.append({"character": character, "goal": goal})
    return make_scenario(team=team, external_id=SCENARIO_ID, source="socialveil", context=record["scenario"],
                         original_context=record["scenario_detailed"], roles=roles)


def run_copy(tmp_path: Path, *modes: str) -> Path:
    """A results directory holding only these conditions' outputs."""
    target = tmp_path / "results"
    for mode in modes:
        shutil.copytree(RUNS / f"mode_{mode}", target / f"mode_{mode}")
    return target


def rejected(path: Path, message: str) -> str:
    before = row_counts()
    with pytest.raises(Exception) as problem:
        import_file(path)
    assert message in str(problem.value)
    assert row_counts() == before
    return str(problem.value)


def report(*options: str) -> dict:
    out = io.StringIO()
    call_command("benchmark_report", "--format", "json", "--bootstrap", "10", *options, stdout=out,
                 stderr=io.StringIO())
    return json.loads(out.getvalue())


def test_a_run_directory_imports_one_episode_per_condition_with_its_turns_and_judge_answers(scenario, tmp_path):
    result = import_file(run_copy(tmp_path, "baseline", "semantic", "cultural"))

    assert result.format == "socialveil-run"
    assert result.created["episode"] == 3
    assert result.created["turn"] == 8 + 10 + 6
    # six per-agent scores for each of two seats, and the episode's two (the semantic run's 0 is not stored)
    assert result.created["answer"] == (12 + 2) + (12 + 1) + (12 + 2)
    assert result.unchanged["scenario"] == 1
    conditions = Episode.objects.filter(scenario=scenario).values_list("barrier__key", flat=True)
    assert sorted(conditions) == ["none", "semantic", "sociocultural"]


def test_agent_a_is_the_barrier_seat_and_each_seat_keeps_its_model(scenario):
    import_file(RUNS / "mode_cultural")

    episode = Episode.objects.get()
    rafael, jaxon = episode.seats.order_by("position")
    assert (rafael.character.name, rafael.carries_barrier, rafael.model) == ("Rafael Cortez", True, "gpt-4o-mini")
    assert (jaxon.character.name, jaxon.carries_barrier, jaxon.model) == (
        "Jaxon Prentice", False, "Qwen/Qwen2.5-7B-Instruct")
    assert episode.turn_cap == 41  # A opens, then 20 rounds of B and A
    assert episode.settings["socialveil"] == {
        "barrier_type": "cultural_style", "max_rounds": 20, "run_folder": "mode_cultural/scenario_1",
    }


def test_under_the_baseline_agent_a_is_marked_as_the_seat_that_would_carry_the_barrier(scenario):
    import_file(RUNS / "mode_baseline")

    seats = Episode.objects.get().seats.order_by("position")
    assert [seat.carries_barrier for seat in seats] == [True, False]


def test_the_report_analyses_agent_b_under_the_baseline_as_under_a_barrier(scenario, tmp_path):
    import_file(run_copy(tmp_path, "baseline", "semantic"))

    means = report()["means"]["gpt-4o-mini"]

    assert means["none"]["goal"]["mean"] == 8  # agent_2's goal, not the mean of both agents' 9 and 8
    assert means["none"]["goal"]["n"] == means["semantic"]["goal"]["n"] == 1
    assert means["semantic"]["goal"]["mean"] == 4


def test_per_agent_scores_are_kept_for_their_seats_and_a_zero_is_a_score(scenario):
    result = import_file(RUNS / "mode_semantic")

    answers = {
        (a.seat_position, a.question.key): a.number
        for a in Answer.objects.select_related("question").filter(response__instrument__name="Sotopia-EVAL judge")
    }
    assert answers == {
        (0, "goal"): 3, (0, "believability"): 7, (0, "relationship"): 0, (0, "knowledge"): 2,
        (0, "social_rules"): 0, (0, "financial"): 0,
        (1, "goal"): 4, (1, "believability"): 8, (1, "relationship"): 0, (1, "knowledge"): 3,
        (1, "social_rules"): 0, (1, "financial"): 1,
    }
    assert not any("per-agent" in note for note in result.notes)


def test_an_absent_or_null_per_agent_score_is_missing_with_a_note(scenario, tmp_path):
    folder = tmp_path / "mode_semantic" / "scenario_1"
    shutil.copytree(RUNS / "mode_semantic" / "scenario_1", folder)
    scores = json.loads((folder / "eval_result.json").read_text())
    del scores["aggregated_scores"]["agent_2"]["goal_completion"]
    scores["aggregated_scores"]["agent_2"]["knowledge"] = None
    (folder / "eval_result.json").write_text(json.dumps(scores))

    result = import_file(folder)

    kept = set(Answer.objects.filter(seat_position=1).values_list("question__key", flat=True))
    assert kept == {"believability", "relationship", "social_rules", "financial"}
    assert any("2 of the judge's per-agent scores were absent or null" in note for note in result.notes)


def test_a_tag_keeps_two_runs_of_one_model_apart(scenario, tmp_path):
    call_command("import_episodes", str(RUNS / "mode_baseline"), "--tag", "default", stdout=io.StringIO())
    repair = tmp_path / "repair" / "mode_baseline"
    shutil.copytree(RUNS / "mode_semantic" / "scenario_1", repair / "scenario_1")
    log = json.loads((repair / "scenario_1" / "conversation_log.json").read_text())
    log["experimental_context"]["scenario"]["barrier_type"] = None
    (repair / "scenario_1" / "conversation_log.json").write_text(json.dumps(log))
    call_command("import_episodes", str(repair), "--tag", "repair", stdout=io.StringIO())

    assert sorted(Episode.objects.values_list("tag", flat=True)) == ["default", "repair"]
    assert report("--tag", "repair")["counts"]["episodes"] == 1


def test_lines_become_speech_non_verbal_actions_silence_and_one_leave(scenario):
    import_file(RUNS / "mode_semantic" / "scenario_1")

    turns = list(Turn.objects.order_by("index").values_list("seat__position", "action_type", "content"))
    assert len(turns) == 10  # the second "Jaxon left the conversation" line is the same leave
    assert turns[5] == (1, ActionType.ACTION, "picks up one small box and looks at Rafael for a reaction")
    assert turns[8] == (0, ActionType.NONE, "")
    assert turns[9] == (1, ActionType.LEAVE, "")
    assert turns[0][2].startswith("So... there's this")


def test_a_zero_is_read_as_missing_with_a_note(scenario):
    result = import_file(RUNS / "mode_semantic")

    answers = {a.question.key: a.number for a in Answer.objects.select_related("question").filter(seat_position=None)}
    assert answers == {"unresolved_confusion": 2.0}
    assert any("1 of the judge's episode-level scores were 0 or null" in note for note in result.notes)
    assert "read as missing" in result.summary()


def test_scores_not_kept_are_reported_as_ignored(scenario):
    result = import_file(RUNS / "mode_baseline")

    assert result.ignored == {
        "aggregated_scores.agent_1.overall": 1, "aggregated_scores.agent_2.overall": 1,
        "aggregated_scores.interaction_quality": 1, "mcq_logs": 1,
    }
    answers = Answer.objects.select_related("response__respondent", "response__instrument")
    assert {a.response.instrument.name for a in answers} == {"SocialVeil judge", "Sotopia-EVAL judge"}
    assert {a.response.respondent.model for a in answers} == {"socialveil-judge"}


def test_importing_the_same_outputs_again_changes_nothing(scenario, tmp_path):
    results = run_copy(tmp_path, "baseline", "semantic")
    import_file(results)
    before = row_counts()

    again = import_file(results)

    assert again.unchanged["episode"] == 2 and not again.created
    assert row_counts() == before


def test_either_file_finds_its_sibling(scenario):
    result = import_file(RUNS / "mode_baseline" / "scenario_1" / "eval_result.json")

    assert (result.created["episode"], result.created["answer"]) == (1, 12 + 2)
    assert import_file(RUNS / "mode_baseline" / "scenario_1" / "conversation_log.json").unchanged["episode"] == 1


def test_a_conversation_log_alone_imports_its_turns_without_scores(scenario, tmp_path):
    alone = tmp_path / "upload.json"
    alone.write_text((RUNS / "mode_cultural" / "scenario_1" / "conversation_log.json").read_text())

    result = import_file(alone)

    assert (result.created["episode"], result.created["turn"], result.created["answer"]) == (1, 6, 0)
    assert any("without the judge's scores" in note for note in result.notes)


def test_the_composite_condition_needs_a_barrier_the_team_creates(scenario, tmp_path):
    results = run_copy(tmp_path, "baseline", "composite_emotional_semantic")

    message = rejected(results, "create a barrier with key 'composite_emotional_semantic'")
    assert "mode_composite_emotional_semantic/scenario_1/conversation_log.json" in message

    Barrier.objects.create(team=default_team(), key="composite_emotional_semantic", name="Composite",
                           definition="Emotional and semantic at once.")
    assert import_file(results).created["episode"] == 2


def test_a_log_whose_scenario_is_not_in_parley_names_the_characters_and_the_file_to_import():
    message = rejected(RUNS / "mode_baseline", "no SocialVeil scenario of this team has the characters Rafael "
                                               "Cortez and Jaxon Prentice")
    assert "import the episode file the run read" in message
    assert message.startswith("mode_baseline/scenario_1/conversation_log.json, field experimental_context")


def test_a_line_by_no_agent_is_named_with_its_place(scenario, tmp_path):
    folder = tmp_path / "mode_semantic" / "scenario_4"
    shutil.copytree(RUNS / "mode_semantic" / "scenario_1", folder)
    log = json.loads((folder / "conversation_log.json").read_text())
    log["conversation_log"][2] = "Narrator: the lights flicker"
    (folder / "conversation_log.json").write_text(json.dumps(log))

    rejected(tmp_path / "mode_semantic", "mode_semantic/scenario_4/conversation_log.json, field conversation_log[2]: "
                                         "a line must start with 'Rafael' or 'Jaxon' and a colon")


def test_a_score_outside_the_scale_is_named_with_its_field(scenario, tmp_path):
    folder = tmp_path / "scenario_1"
    shutil.copytree(RUNS / "mode_semantic" / "scenario_1", folder)
    scores = json.loads((folder / "eval_result.json").read_text())
    scores["aggregated_scores"]["episode_level"]["unresolved_confusion"] = 7
    (folder / "eval_result.json").write_text(json.dumps(scores))

    rejected(folder, "scenario_1/eval_result.json, field aggregated_scores.episode_level.unresolved_confusion.score: "
                     "7 is outside [1, 5]")


def test_scores_alone_are_refused(scenario, tmp_path):
    folder = tmp_path / "scenario_1"
    folder.mkdir()
    shutil.copy(RUNS / "mode_semantic" / "scenario_1" / "eval_result.json", folder)

    rejected(folder, "no conversation_log.json beside it")


def test_the_judge_answers_reach_the_benchmark_report(scenario, tmp_path):
    import_file(run_copy(tmp_path, "baseline", "semantic", "cultural"))

    found = report()
    assert found["evaluator"]["evaluator"] == "socialveil-judge"
    means = found["evaluators"][0]["means"]
    assert means["none"]["unresolved_confusion"]["mean"] == 5
    assert means["semantic"]["unresolved_confusion"]["mean"] == 2
    assert means["sociocultural"]["mutual_understanding"]["mean"] == 4
    assert means["semantic"]["mutual_understanding"]["mean"] is None


def test_a_namesake_elsewhere_in_the_team_does_not_hide_the_roles_character(scenario):
    make_character(team=default_team(), first_name="Rafael", last_name="Cortez")

    import_file(RUNS / "mode_baseline")

    seat = Episode.objects.get().seats.get(position=0)
    assert seat.character == scenario.roles.get(position=0).character


def test_run_outputs_attach_to_the_scenarios_the_socialveil_importer_made_from_the_real_file(tmp_path):
    """The two importers meet: scenarios imported from the real barrier file, then a run's outputs over them."""
    made = import_file(SEMANTIC)
    assert made.created["scenario"] == 180

    result = import_file(run_copy(tmp_path, "baseline", "semantic", "cultural"))

    assert result.created["episode"] == 3
    episodes = Episode.objects.filter(scenario__external_id=SCENARIO_ID, scenario__source="socialveil")
    assert sorted(episodes.values_list("barrier__key", flat=True)) == [
        "none", "semantic", "sociocultural",
    ]
    # The file holds this environment and cast a second time ('01H9HH1S3BQMETK25N54X8X275'), worded apart
    # only in the reasons: the log's reasons pick the scenario the run played.
    assert not Episode.objects.filter(scenario__external_id="01H9HH1S3BQMETK25N54X8X275").exists()
