"""Importing SocialVeil's scenario files and barrier files, and playing the grid they describe.

The two real files are in ``shared/data/socialveil``; the other files of the repository are excerpts
in ``tests/data/socialveil`` (their first records, byte for byte as upstream wrote them).
"""

import io
import json
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.urls import reverse

from benchmark.agents.prompt import AgentContext, build_agent_messages
from benchmark.exporting import export_episodes, select_episodes
from benchmark.models import Barrier, Character, Episode, Probe, Response, Role, Scenario, ScenarioBarrier, Seat
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.runs.planning import plan_run, prepare_episodes, resolve_scenarios
from benchmark.runs.simulation import create_episode, run_episode
from benchmark.scenarios.library_export import select_library, write_library
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts
from tests.builders import default_team, make_team, make_user
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db

SOCIALVEIL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "socialveil"
HARD = SOCIALVEIL / "episode_hard.jsonl"
SEMANTIC = SOCIALVEIL / "episodes_all_semantic.json"
EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "socialveil"
CULTURAL = EXCERPTS / "episodes_all_cultural_first3.json"
EMOTIONAL = EXCERPTS / "episodes_all_emotional_first3.json"
COMPOSITE = EXCERPTS / "episodes_all_composite_emotional_semantic_first3.json"
ALL = EXCERPTS / "episode_all_first2.jsonl"
NEUTRALIZED = EXCERPTS / "episode_all_neutralized_first2.jsonl"
FREE_STUFF = "01H9KCPR1R7AK1CD4N7A0MPNYY"  # the first scenario of every file of the "all" set


def hard_records() -> list[dict]:
    return [json.loads(line) for line in HARD.read_text(encoding="utf-8").splitlines()]


def semantic_records() -> list[dict]:
    return json.loads(SEMANTIC.read_text(encoding="utf-8"))


def pks(records: list[dict]) -> set[str]:
    return {profile["pk"] for record in records for profile in record["agent_profiles"]}


def question_count(records: list[dict]) -> int:
    return sum(len(r["agent_goals_mcqas"]) + len(r["agent_reasons_mcqas"]) for r in records)


def counts() -> tuple[int, int, int, int]:
    return Scenario.objects.count(), Character.objects.count(), Probe.objects.count(), ScenarioBarrier.objects.count()


# --- the scenario files ---------------------------------------------------------------------------


def test_the_hard_file_imports_as_hard_scenarios_not_episodes():
    records = hard_records()

    result = import_file(HARD)

    assert result.format == "socialveil"
    assert counts() == (len(records), len(pks(records)), question_count(records), 0) == (28, 27, 112, 0)
    assert Episode.objects.count() == 0
    assert set(Scenario.objects.values_list("difficulty", "source").distinct()) == {("hard", "socialveil")}
    assert result.ignored == {"agent1_profile": 28, "agent2_profile": 28, "environment_id": 28}


def test_a_hard_scenario_has_its_cast_goals_private_knowledge_reasons_and_relationship():
    import_file(HARD)

    scenario = Scenario.objects.get(external_id="01H9KEYZ8RB0T5JKFD6F39P621")
    first, second = scenario.roles.order_by("position")
    assert scenario.codename == "revenge_plot"
    assert scenario.context == scenario.original_context
    assert scenario.get_relationship_display() == "acquaintances"
    assert (first.character.external_id, first.character.name) == ("01H5TNE5PDTDGA0BPYKBYFTHDY", "Oliver Smith")
    assert first.character.moral_values == "In-group Loyalty"
    assert second.character.moral_values == "Ingroup/Loyalty"  # the redis shape's list repr, unwrapped
    assert first.goal_text == "Injure the third person"
    assert first.private_knowledge.startswith("You have a deep-seated hatred for the third person")
    assert second.goal_text == (
        "Prevent physical harm but also express your dislike\n"
        "Hint: you can try to convince the other person about the potential consequences of engaging in violence"
    )
    assert first.reason.startswith("Oliver wants to injure the third person")


def test_goal_and_reason_questions_become_probes_about_the_agent_they_name():
    import_file(HARD)

    scenario = Scenario.objects.get(external_id="01H9KEYZ8RB0T5JKFD6F39P621")
    probes = list(scenario.probes.select_related("about").order_by("position"))
    assert [(p.about.position, p.topic) for p in probes] == [(1, "goal"), (0, "goal"), (1, "reason"), (0, "reason")]
    about_oliver = probes[1]
    assert about_oliver.text == "What is Agent 1's goal in this scenario?"
    assert about_oliver.options[0] == "Discuss the third person's flaws without taking action"
    assert about_oliver.correct == 2 and about_oliver.options[2].startswith("Injure the third person")
    assert {p.asked_of for p in probes} == {Probe.AskedOf.OTHERS}


def test_the_semantic_file_gives_every_scenario_its_barrier_prompt_for_the_first_role():
    records = semantic_records()

    result = import_file(SEMANTIC)

    assert counts() == (len(records), len(pks(records)), question_count(records), len(records)) == (180, 38, 720, 180)
    assert result.created["barrier prompt"] == 180
    prompt = ScenarioBarrier.objects.select_related("scenario", "barrier").get(scenario__external_id=FREE_STUFF)
    assert prompt.barrier.key == "semantic"
    assert prompt.style_directive == records[0]["barrier_prompts"]["agentA"]
    assert prompt.trait_note == "Tends to keep references implicit and lets others infer specifics."
    assert prompt.barrier_positions == [0]
    assert prompt.scenario.context == records[0]["scenario"]
    assert prompt.scenario.original_context == records[0]["scenario_detailed"]
    assert prompt.scenario.difficulty == "standard"


def test_both_real_files_together_share_characters_and_the_scenario_they_have_in_common():
    hard, semantic = hard_records(), semantic_records()
    common = {r["episode_id"] for r in hard} & {r["episode_id"].removesuffix("_semantic") for r in semantic}

    import_file(HARD)
    result = import_file(SEMANTIC)

    assert len(common) == 1
    assert result.changed["scenario"] == len(common)  # the hard scenario got its semantic prompt
    assert result.unchanged["character"] == len(pks(hard) & pks(semantic))
    assert counts() == (
        len(hard) + len(semantic) - len(common),
        len(pks(hard) | pks(semantic)),
        question_count(hard) + question_count(semantic) - 4 * len(common),
        len(semantic),
    )


def test_importing_both_files_twice_changes_nothing():
    import_file(HARD)
    import_file(SEMANTIC)
    before = row_counts()

    again = [import_file(HARD), import_file(SEMANTIC)]

    assert row_counts() == before
    assert again[1].unchanged["scenario"] == 180 and again[1].unchanged["barrier prompt"] == 180
    assert not again[0].created and not again[1].created and not again[1].changed


def test_a_profile_imported_from_sotopia_is_the_character_cast():
    sotopia_profiles = SOCIALVEIL.parent / "sotopia" / "agent_profiles.json"
    import_file(sotopia_profiles)
    known = set(Character.objects.values_list("external_id", flat=True))

    result = import_file(HARD)

    assert result.unchanged["character"] == len(known & pks(hard_records())) > 0
    assert Character.objects.count() == len(known | pks(hard_records()))


def test_the_plain_and_neutralized_files_are_the_same_scenarios():
    plain = import_file(ALL)
    neutral = import_file(NEUTRALIZED)

    assert plain.created["scenario"] == 2 and neutral.unchanged["scenario"] == 2  # the first import wins
    assert plain.ignored["agent1_profile"] == 2 and not neutral.created
    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    assert scenario.context.startswith("Two acquaintances run into each other at Target")


def test_a_neutralized_file_first_gives_the_neutral_context():
    import_file(NEUTRALIZED)

    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    assert scenario.context == (
        "Two acquaintances meet at a special event in Target where free samples are being distributed."
    )
    assert scenario.original_context.startswith("Two acquaintances run into each other at Target")


# --- the barrier files ------------------------------------------------------------------------------


def test_every_barrier_file_adds_its_condition_to_the_same_scenarios():
    for path in (SEMANTIC, CULTURAL, EMOTIONAL, COMPOSITE):
        import_file(path)

    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    prompts = {p.barrier.key: p for p in scenario.barrier_prompts.select_related("barrier")}
    assert set(prompts) == {"semantic", "sociocultural", "emotional", "composite_emotional_semantic"}
    assert prompts["sociocultural"].style_directive.startswith("You are under a high-context style constraint.")
    assert prompts["sociocultural"].trait_note == "Prefers harmony-first phrasing and avoids direct transactional talk."
    assert prompts["composite_emotional_semantic"].trait_note == (
        "Often leads with feelings and side impressions before addressing tasks. "
        "Exhibits both emotional instability and semantic vagueness in communication."
    )
    assert Scenario.objects.count() == 180


def test_the_composite_condition_becomes_one_team_barrier_with_both_parameterisations():
    team = make_team()
    first = import_file(COMPOSITE, team=team)
    second = import_file(COMPOSITE, team=team)

    composite = Barrier.objects.get(key="composite_emotional_semantic")
    assert composite.team == team and not composite.builtin
    assert first.created["barrier"] == 1 and not second.created
    semantic, emotional = Barrier.objects.get(key="semantic"), Barrier.objects.get(key="emotional")
    assert composite.cues.count() == semantic.cues.count() + emotional.cues.count() > 0
    assert set(composite.templates) == set(semantic.templates) | set(emotional.templates)
    assert any("composite_emotional_semantic" in note for note in first.notes)


# --- bad input ----------------------------------------------------------------------------------------


def with_second_record(tmp_path: Path, change) -> Path:
    records = json.loads(CULTURAL.read_text(encoding="utf-8"))
    change(records[1])
    path = tmp_path / "episodes_all_cultural.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("agent_profiles"), "record 2, field agent_profiles: required field is missing"),
        (lambda r: r.update(agent_relationship="cousin"), "record 2, field agent_relationship: string 'cousin' is not"),
        (lambda r: r["agent_goals"].append("A third goal"), "record 2, field agent_goals: 3 goals for 2 agents"),
        (lambda r: r.update(barrier_type="telepathy"),
         "record 2, field barrier_type: 'telepathy' is not one of semantic_structure"),
        (lambda r: r["agent_goals_mcqas"][1].update(correct_answer="E"),
         "record 2, field agent_goals_mcqas[1].correct_answer: 'E' is not one of the options A, B, C, D"),
        (lambda r: r["agent_reasons_mcqas"][0].update(question="Why?"),
         "record 2, field agent_reasons_mcqas[0].question: cannot tell which agent"),
        (lambda r: r["barrier_prompts"].update(agentC="Speak in riddles."),
         "record 2, field barrier_prompts.agentC: not one of agentA, agentB"),
        (lambda r: r["agent_profiles"][0].update(age="old"), "record 2, field agent_profiles[0].age"),
    ],
)
def test_a_bad_record_is_named_by_its_place_and_field_and_nothing_is_written(tmp_path, change, message):
    assert_rejected(with_second_record(tmp_path, change), message)


def test_an_unknown_json_shape_says_so_instead_of_naming_another_formats_field(tmp_path):
    path = tmp_path / "scenarios.json"
    path.write_text(json.dumps([{"scenario_name": "x", "people": ["a", "b"]}]), encoding="utf-8")

    assert_rejected(path, "scenarios.json, record 1: not a known format")


# --- playing them -------------------------------------------------------------------------------------


def messages_for(episode: Episode, position: int) -> list[dict[str, str]]:
    seats = list(episode.seats.select_related("role", "character").prefetch_related("role__goals"))
    seat = next(s for s in seats if s.position == position)
    return build_agent_messages(AgentContext.for_seat(episode, seat, [], seats=seats))


def test_the_imported_prompt_and_trait_note_reach_the_barrier_seat_only():
    import_file(CULTURAL)
    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    sociocultural = Barrier.objects.get(key="sociocultural")
    prompt = scenario.barrier_prompts.get()

    episode = create_episode(scenario, sociocultural, barrier_seats=prompt.barrier_positions)
    barrier_seat, partner = messages_for(episode, 0), messages_for(episode, 1)

    assert prompt.style_directive in barrier_seat[0]["content"]
    assert sociocultural.style_directive not in barrier_seat[0]["content"]
    assert prompt.trait_note in barrier_seat[1]["content"]
    assert prompt.style_directive not in partner[0]["content"] and prompt.trait_note not in partner[1]["content"]


def test_a_barrier_without_a_prompt_for_the_scenario_keeps_its_own_directive():
    import_file(CULTURAL)
    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    emotional = Barrier.objects.get(key="emotional")

    system = messages_for(create_episode(scenario, emotional), 0)[0]["content"]

    assert emotional.style_directive in system and "high-context" not in system


def test_a_model_playing_the_barrier_seat_is_sent_the_imported_prompt(fake_llm):
    fake_llm.reply_when("What does", '{"action_type": "speak", "argument": "Well, about that thing."}')
    import_file(SEMANTIC)
    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    episode = create_episode(scenario, Barrier.objects.get(key="semantic"), models={0: FAKE_MODEL, 1: FAKE_MODEL},
                             turn_cap=2)

    async_to_sync(run_episode)(episode)

    directive = scenario.barrier_prompts.get().style_directive
    assert directive in fake_llm.requests[0]["messages"][0]["content"]  # seat 0 opens, under the barrier
    assert directive not in fake_llm.requests[1]["messages"][0]["content"]


def test_the_file_decides_the_barrier_seat_in_every_condition_of_its_scenario():
    import_file(CULTURAL)
    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    scenario.barrier_prompts.update(barrier_positions=[1])
    options = RunOptions(scenarios=(FREE_STUFF,), conditions=("none", "sociocultural"), barrier_seats=("0",))

    prepare_episodes(plan_run(options, default_team(), "seats"))

    marked = set(Seat.objects.filter(episode__tag="seats", carries_barrier=True).values_list("position", flat=True))
    assert marked == {1} and Episode.objects.filter(tag="seats").count() == 2


def test_prompts_that_disagree_on_the_barrier_seat_are_refused_by_the_plan():
    import_file(CULTURAL)
    import_file(EMOTIONAL)
    ScenarioBarrier.objects.filter(scenario__external_id=FREE_STUFF, barrier__key="emotional").update(
        barrier_positions=[1]
    )
    options = RunOptions(scenarios=(FREE_STUFF,), conditions=("sociocultural", "emotional"))

    with pytest.raises(RunOptionsError, match="name different barrier seats") as refused:
        plan_run(options, default_team(), "clash")
    assert "admin" not in str(refused.value)  # researchers cannot open it: the message says what they can do


def test_scenarios_are_chosen_by_external_id_and_an_unknown_one_is_named():
    import_file(ALL)

    chosen = resolve_scenarios(default_team(), [FREE_STUFF])

    assert [s.external_id for s in chosen] == [FREE_STUFF]
    with pytest.raises(RunOptionsError, match="'01NOPE'"):
        resolve_scenarios(default_team(), [FREE_STUFF, "01NOPE"])
    with pytest.raises(RunOptionsError):
        resolve_scenarios(make_team(), [FREE_STUFF])  # another team's scenario is unknown there


def test_the_prompts_travel_with_the_scenario_in_a_parley_export(tmp_path):
    import_file(CULTURAL)
    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    create_episode(scenario, Barrier.objects.get(key="sociocultural"), external_id="sv-export")
    first = io.StringIO()
    export_episodes(select_episodes(default_team()), first, format="parley")
    path = tmp_path / "export.jsonl"
    path.write_text(first.getvalue(), encoding="utf-8")
    other = make_team()

    import_file(path, team=other)

    copied = ScenarioBarrier.objects.get(scenario__team=other)
    original = scenario.barrier_prompts.get()
    assert (copied.style_directive, copied.trait_note, copied.barrier_positions) == (
        original.style_directive, original.trait_note, original.barrier_positions
    )
    again = io.StringIO()
    export_episodes(select_episodes(other), again, format="parley")
    assert again.getvalue() == first.getvalue()


def test_the_episode_page_shows_the_scenarios_own_prompt(client):
    import_file(CULTURAL)
    scenario = Scenario.objects.get(external_id=FREE_STUFF)
    episode = create_episode(scenario, Barrier.objects.get(key="sociocultural"))
    client.force_login(make_user(staff=True))

    page = client.get(reverse("benchmark:episode", args=[episode.pk]))

    assert page.status_code == 200
    assert "own prompt under Sociocultural mismatch (role 1)" in page.text
    assert "Prefers harmony-first phrasing" in page.text


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # a run's chunk reads on a thread of its own
def test_a_socialveil_grid_runs_offline_through_simulate_evaluate_and_report():
    for path in (HARD, SEMANTIC, CULTURAL, EMOTIONAL):
        import_file(path)
    chosen = [FREE_STUFF, "01H9HH1S3BQMETK25N54X8X275", "01H9KEYZ8RB0T5JKFD6F39P621"]  # two of the grid, one hard
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}

    call_command("simulate", "--scenarios", ",".join(chosen), "--conditions", "none,semantic,sociocultural,emotional",
                 "--run-name", "veil", "--turn-cap", "41", "--judge-model", "none", **quiet)
    call_command("evaluate", "--tag", "veil", **quiet)
    out = io.StringIO()
    call_command("benchmark_report", "--tag", "veil", "--format", "json", "--bootstrap", "0", stdout=out,
                 stderr=io.StringIO())

    episodes = Episode.objects.filter(tag="veil")
    assert episodes.count() == 3 * 4
    assert not episodes.exclude(status=Episode.Status.FINISHED).exists()
    assert all(0 < episode.turns.count() <= 41 for episode in episodes)
    barrier_seats = Seat.objects.filter(episode__in=episodes, carries_barrier=True)
    assert set(barrier_seats.values_list("position", flat=True)) == {0}  # agentA, as the files say
    played = episodes.get(scenario__external_id=FREE_STUFF, barrier__key="sociocultural")
    directive = ScenarioBarrier.objects.get(scenario=played.scenario, barrier=played.barrier).style_directive
    assert directive in messages_for(played, 0)[0]["content"]
    judged = Response.objects.filter(episode__in=episodes).values_list("instrument__name", flat=True)
    assert len(judged) == 2 * 12 and len(set(judged)) == 2  # Sotopia-EVAL and SocialVeil's two dimensions
    report = json.loads(out.getvalue())
    assert set(report["means"]["scripted"]) == {"none", "semantic", "sociocultural", "emotional"}
    assert report["means"]["scripted"]["semantic"]["goal"]["n"] == 3
    assert Role.objects.filter(scenario__external_id__in=chosen, character__isnull=True).count() == 0


def test_a_library_export_carries_the_prompts_and_the_composite_barrier_to_another_team(tmp_path):
    import_file(COMPOSITE)
    path = tmp_path / "design.jsonl"
    with path.open("w", encoding="utf-8") as out:
        write_library(select_library(default_team()), out)
    other = make_team()

    result = import_file(path, team=other)

    assert result.created["barrier"] == 1 and result.created["barrier prompt"] == 3
    copied = ScenarioBarrier.objects.select_related("barrier").filter(scenario__team=other)
    assert {prompt.barrier.team for prompt in copied} == {other}
    assert sorted(p.style_directive for p in copied) == sorted(
        ScenarioBarrier.objects.filter(scenario__team=default_team()).values_list("style_directive", flat=True)
    )
