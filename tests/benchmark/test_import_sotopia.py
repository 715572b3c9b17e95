"""Importing Sotopia's real files: every episode-log shape and both profile shapes."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmark.importing import ImportProblem
from benchmark.models import Answer, Character, Episode, Response, Role, Scenario, Seat, Turn
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts

pytestmark = pytest.mark.django_db

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
NATIVE = SOTOPIA / "episodelog_native_01J0GZWDV6HMKQK4B3PTEZW5V8.json"
V1 = SOTOPIA / "sotopia_episodes_v1_first5.jsonl"
HUMAN_EVAL_BED = SOTOPIA / "human_eval_01H7VM65KGGY7842XGE5A7PEK1.json"
HUMAN_EVAL_DISLIKE = SOTOPIA / "human_eval_01HMN74FB8HVPT727QCV3SB27E.json"


def v1_lines() -> list[dict]:
    return [json.loads(line) for line in V1.read_text().splitlines()]


# --- profiles -------------------------------------------------------------------------------------

def test_agent_profiles_in_redis_shape_become_characters():
    result = import_file(SOTOPIA / "agent_profiles.json")

    isabelle = Character.objects.get(external_id="01H5TNE5PDV7WZ0C5KTGGXX1NR")
    assert result.created["character"] == 40
    assert (isabelle.name, isabelle.age, isabelle.pronouns) == ("Isabelle Martinez", 22, "She/her")
    assert isabelle.decision_style == "Cautious"
    assert isabelle.personality.startswith("Isabelle Martinez, an imaginative")


def test_stringified_value_lists_of_the_redis_shape_are_joined_and_trimmed():
    import_file(SOTOPIA / "agent_profiles.json")

    amara = Character.objects.get(external_id="01H5TNE5PRCAF1CK5ERS5MVZ22")
    assert amara.moral_values == "Care, Fairness"
    assert amara.personal_values == "Universalism, Benevolence, Self-Direction"


def test_serialized_agent_profiles_trim_values_and_keep_mbti():
    import_file(SOTOPIA / "serialized_agent_profiles.jsonl")

    amara = Character.objects.get(external_id="01H5TNE5PRCAF1CK5ERS5MVZ22")
    assert amara.moral_values == "Care, Fairness"
    assert amara.mbti == "INFJ"


def test_the_same_agents_in_both_shapes_are_one_set_of_characters():
    import_file(SOTOPIA / "agent_profiles.json")

    result = import_file(SOTOPIA / "serialized_agent_profiles.jsonl")

    assert Character.objects.count() == 40
    assert result.unchanged["character"] == 40


def test_environment_profiles_become_scenarios_with_one_role_per_goal():
    result = import_file(SOTOPIA / "environment_profiles.json")

    scenario = Scenario.objects.get(external_id="01HER99VF9A47W18Y280CFS3BQ")
    assert result.created["scenario"] == 20
    assert (scenario.codename, scenario.source, scenario.relationship) == ("music_competition", "sotopia/hand-craft", 3)
    assert scenario.roles.count() == 2


def test_extra_info_becomes_private_knowledge_and_hints_stay_in_the_goal():
    import_file(SOTOPIA / "environment_profiles.json")

    first, second = Scenario.objects.get(codename="music_competition").roles.order_by("position")
    assert first.goal_text == "Convince your friend to let you take the last slot"
    assert first.private_knowledge.startswith("you have been preparing for this competition for months")
    assert second.goal_text.endswith("\nHint: you can suggest deciding through a fair method such as a coin toss, "
                                     "or you both could collaborate on a performance together")
    assert "<" not in second.goal_text + second.private_knowledge
    # the hint, on a line of its own, is a goal of its own
    assert [goal.text[:5] for goal in second.goals.all()] == [second.goal_text[:5], "Hint:"]


def test_serialized_environment_relationship_string_is_read_as_a_number():
    import_file(SOTOPIA / "serialized_environment_profiles.jsonl")

    assert Scenario.objects.get(external_id="01H7VFHN56ZT2Z4C0EFX79Q31F").relationship == 3


def test_sotopias_14_hard_environments_are_hard_scenarios():
    hard = set(json.loads((SOTOPIA.parents[1] / "realdata" / "socialveil" / "sotopia_hard_envs.json").read_text()))

    import_file(SOTOPIA / "serialized_environment_profiles.jsonl")

    assert set(Scenario.objects.filter(difficulty="hard").values_list("external_id", flat=True)) == hard
    assert Scenario.objects.filter(difficulty="standard").count() == 90 - 14


def test_environment_only_text_leaves_the_shared_context():
    import_file(SOTOPIA / "serialized_environment_profiles.jsonl")

    scenario = Scenario.objects.get(external_id="01H7VFHPQ1712DHGTMPQFTXH02")
    assert scenario.context == "2 strangers are meeting at a party."
    assert '<p viewer="environment">They have 1 common friends: Alvin.</p>' in scenario.original_context


def test_relationship_profiles_are_checked_and_counted_not_stored():
    before = row_counts()

    redis_shape = import_file(SOTOPIA / "relationship_profiles.json")
    serialized = import_file(SOTOPIA / "serialized_relationship_profiles.jsonl")

    assert (redis_shape.checked["relationship"], serialized.checked["relationship"]) == (20, 120)
    assert row_counts() == before


# --- v1 episode lines --------------------------------------------------------------------------

def test_v1_lines_import_with_turns_and_evaluations():
    result = import_file(V1)

    assert result.created["episode"] == 5
    assert result.created["turn"] == 56
    assert result.created["answer"] == 70


def test_v1_line_without_profiles_builds_scenario_and_characters_from_the_line():
    import_file(V1)

    episode = Episode.objects.get(external_id="01H8XWN5V57J20F3JG7WWQKDAC")
    samuel = episode.seats.get(position=0).character
    assert episode.scenario.external_id == "01H7VFHNSAKNYEHV7B1VA8R3J2"
    assert episode.scenario.codename == "financial_support"
    assert (samuel.external_id, samuel.name, samuel.age, samuel.occupation) == (
        "01H5TNE5PC2DP6RKG0KNQ4D5GE", "Samuel Anderson", 29, "software developer"
    )
    assert samuel.secret == "He was once a competitive figure skater."


def test_v1_line_uses_profiles_already_in_the_database():
    import_file(SOTOPIA / "serialized_agent_profiles.jsonl")
    import_file(SOTOPIA / "serialized_environment_profiles.jsonl")

    result = import_file(V1)

    assert result.created["scenario"] == result.created["character"] == 0
    assert result.unchanged["scenario"] == 5
    assert Episode.objects.get(external_id="01H8XWN5V57J20F3JG7WWQKDAC").seats.get(position=0).character.mbti == "ISTJ"


def test_round_robin_fillers_are_dropped_so_turn_index_is_sotopias_turn_number():
    import_file(V1)

    turns = Turn.objects.filter(episode__external_id="01H8XWN5V57J20F3JG7WWQKDAC").select_related("seat")
    assert [turn.seat.position for turn in turns] == [0, 1] * 5
    assert turns.get(index=2).content.startswith("Things have been well on my end, Ethan.")
    assert turns.get(index=9).action_type == "none"


def test_sotopia_actions_map_to_action_types():
    import_file(V1)

    roadtrip = Turn.objects.filter(episode__external_id="01H8FJCGCSNE1Q64ZZFXAC23VS")
    assert roadtrip.get(index=1).action_type == "non-verbal"
    assert roadtrip.get(index=1).content == "Shaking my head and raising my hand in a stopping motion"
    assert roadtrip.get(index=11).action_type == "action"
    assert Turn.objects.get(episode__external_id="01HB5JK0T3YNMBC5WMN6SDRRNF", index=10).action_type == "leave"


def test_speech_is_stored_without_the_quotes():
    import_file(V1)

    first = Turn.objects.get(episode__external_id="01H8XWN5V57J20F3JG7WWQKDAC", index=0)
    assert first.content.startswith("Hey Ethan, how's everything going")
    assert not first.content.endswith('"')


def test_empty_utterance_is_kept_as_silence_not_refused():
    from benchmark.importing.sotopia import parse_action

    assert parse_action('said: ""', origin=None) == ("none", "")


# --- the native EpisodeLog -------------------------------------------------------------------------

def test_native_double_encoded_log_imports_with_context_from_turn_zero():
    result = import_file(NATIVE)

    episode = Episode.objects.get(external_id="01J0GZWDV6HMKQK4B3PTEZW5V8")
    assert result.created["episode"] == 1
    assert episode.scenario.external_id == "01J0GZK3FGS50EHETXVR92TG9T"
    assert episode.scenario.context.startswith("This is for your own strategic planning")
    assert [seat.character.name for seat in episode.seats.all()] == ["Bob John", "Alice Smith"]
    assert episode.turns.count() == 12
    assert episode.turns.get(index=11).action_type == "leave"


def test_sotopia_episode_is_a_finished_import_under_no_barrier():
    import_file(NATIVE)

    episode = Episode.objects.get()
    assert (episode.barrier.key, episode.source, episode.status, episode.end_reason, episode.tag) == (
        "none", "imported", "finished", "imported", "sample"
    )


def test_models_go_to_the_judge_and_the_seats():
    import_file(NATIVE)

    episode = Episode.objects.get()
    assert list(episode.seats.values_list("model", flat=True)) == ["gpt-3.5-turbo", "gpt-3.5-turbo"]
    judges = Response.objects.filter(episode=episode).values_list("respondent__kind", "respondent__model",
                                                                  "respondent__prompt_version", "instrument__name")
    assert set(judges) == {("judge", "gpt-4", "sotopia", "Sotopia-EVAL judge")}


def test_rewards_become_one_row_per_seat_and_dimension_without_the_overall_score():
    import_file(NATIVE)

    answers = Answer.objects.filter(seat_position=0)
    assert sorted(answers.values_list("question__dimension", flat=True)) == sorted(
        ["believability", "relationship", "knowledge", "secret", "social_rules", "financial", "goal"]
    )
    assert answers.get(question__key="knowledge").number == 8.0


def test_reasoning_is_attributed_to_each_seat_and_dimension():
    import_file(NATIVE)

    alice = Answer.objects.get(seat_position=1, question__key="financial")
    assert alice.reasoning.startswith("The conversation does not directly contribute")
    assert "Alice Smith" in alice.reasoning and "Bob John" not in alice.reasoning


def test_environment_comment_is_kept_in_settings():
    import_file(NATIVE)

    assert Episode.objects.get().settings == {"environment_comments": "terminated: Agent 2 is leaving;"}


def test_created_at_is_the_time_inside_the_sotopia_ulid():
    import_file(NATIVE)

    assert Episode.objects.get().created_at == datetime(2024, 6, 16, 17, 0, 26, 854000, tzinfo=UTC)


# --- human-evaluation partial logs --------------------------------------------------------------------

def test_human_eval_log_reads_its_transcript_from_the_prompt():
    import_file(HUMAN_EVAL_DISLIKE)

    turns = Episode.objects.get(external_id="01HMN74FB8HVPT727QCV3SB27E").turns.all()
    assert len(turns) == 17
    assert turns[0].content.startswith("Hey Zane, have you heard")
    assert (turns[8].action_type, turns[8].content) == ("non-verbal", "nod")
    assert turns[16].action_type == "leave"


def test_human_eval_empty_last_turn_is_a_none_turn_of_the_next_speaker():
    import_file(HUMAN_EVAL_BED)

    last = Turn.objects.select_related("seat").get(index=7)
    assert (last.action_type, last.seat.position) == ("none", 1)


def test_human_eval_log_finds_its_people_by_name_and_its_environment_by_pk():
    import_file(SOTOPIA / "agent_profiles.json")
    import_file(SOTOPIA / "serialized_environment_profiles.jsonl")

    result = import_file(HUMAN_EVAL_BED)

    episode = Episode.objects.get()
    assert result.created["character"] == result.created["scenario"] == 0
    assert episode.scenario.codename == "sleep_arrangement"
    assert episode.seats.get(position=0).character.external_id == "01H5TNE5PJTHMQ1Q3T398YN990"


def test_human_eval_log_without_profiles_builds_people_from_the_prompt():
    import_file(HUMAN_EVAL_DISLIKE)

    zane = Seat.objects.get(position=1).character
    assert (zane.external_id, zane.age, zane.occupation) == ("sotopia-name:Zane Bennett", 38, "graphic designer")
    assert Role.objects.get(position=1).goal_text.endswith(
        "\nHint: you can try to convince the other person about the potential consequences of engaging in violence"
    )


# --- all files, and bad input ----------------------------------------------------------------------

# Every Sotopia file of the data folder but the castings and the GPT-4 judge scores, which have
# their own formats (test_castings_and_judge_scores_are_not_read_as_sotopia).
SUPPORTED_FILES = (
    "agent_profiles.json", "environment_profiles.json", "episodelog_native_01J0GZWDV6HMKQK4B3PTEZW5V8.json",
    "human_eval_01H7VM65KGGY7842XGE5A7PEK1.json", "human_eval_01HMN74FB8HVPT727QCV3SB27E.json",
    "relationship_profiles.json", "serialized_agent_profiles.jsonl", "serialized_environment_profiles.jsonl",
    "serialized_relationship_profiles.jsonl", "sotopia_episodes_v1_first5.jsonl",
    "sotopia_humaneval_agents_variant_01H7ZEPYE09RAC869ZJX93BA2Z.json",
    "sotopia_humaneval_context2_variant_01H87HF7X0SZS9Y5PJ2QER6H55.json",
    "sotopia_humaneval_empty_nonverbal_01HP5MDHPWQJX965B3VT5A6934.json",
    "sotopia_humaneval_turn_header_inside_utterance_01HNBCQQRFA7332019G6ABD7Y6.json",
    "sotopia_v1_transcript_only_30.jsonl",
)
EMPTY_NONVERBAL = SOTOPIA / "sotopia_humaneval_empty_nonverbal_01HP5MDHPWQJX965B3VT5A6934.json"
HEADER_INSIDE = SOTOPIA / "sotopia_humaneval_turn_header_inside_utterance_01HNBCQQRFA7332019G6ABD7Y6.json"
CONTEXT2 = SOTOPIA / "sotopia_humaneval_context2_variant_01H87HF7X0SZS9Y5PJ2QER6H55.json"
AGENTS_VARIANT = SOTOPIA / "sotopia_humaneval_agents_variant_01H7ZEPYE09RAC869ZJX93BA2Z.json"
V1_TRANSCRIPT = SOTOPIA / "sotopia_v1_transcript_only_30.jsonl"

# file -> (episodes, scenarios, characters, turns, answers) created when imported alone into an empty
# team, then the checked profiles and the ignored fields of its summary.
ALONE = {
    "agent_profiles.json": ((0, 0, 40, 0, 0), {}, {}),
    "environment_profiles.json": ((0, 20, 0, 0, 0), {}, {"age_constraint": 20, "occupation_constraint": 4}),
    "episodelog_native_01J0GZWDV6HMKQK4B3PTEZW5V8.json": ((1, 1, 2, 12, 14), {}, {"rewards_prompt": 1}),
    "human_eval_01H7VM65KGGY7842XGE5A7PEK1.json": ((1, 1, 2, 8, 0), {}, {}),
    "human_eval_01HMN74FB8HVPT727QCV3SB27E.json": ((1, 1, 2, 17, 0), {}, {}),
    "relationship_profiles.json": ((0, 0, 0, 0, 0), {"relationship": 20}, {}),
    "serialized_agent_profiles.jsonl": ((0, 0, 40, 0, 0), {}, {}),
    "serialized_environment_profiles.jsonl": ((0, 90, 0, 0, 0), {}, {"age_constraint": 90, "occupation_constraint": 1}),
    "serialized_relationship_profiles.jsonl": ((0, 0, 0, 0, 0), {"relationship": 120}, {}),
    "sotopia_episodes_v1_first5.jsonl": ((5, 5, 8, 56, 70), {}, {"raw_rewards_prompt": 5}),
    "sotopia_humaneval_agents_variant_01H7ZEPYE09RAC869ZJX93BA2Z.json": ((1, 1, 2, 10, 0), {}, {}),
    "sotopia_humaneval_context2_variant_01H87HF7X0SZS9Y5PJ2QER6H55.json": ((1, 1, 2, 4, 0), {}, {"context2": 1}),
    "sotopia_humaneval_empty_nonverbal_01HP5MDHPWQJX965B3VT5A6934.json": ((1, 1, 2, 15, 0), {}, {}),
    "sotopia_humaneval_turn_header_inside_utterance_01HNBCQQRFA7332019G6ABD7Y6.json": ((1, 1, 2, 7, 0), {}, {}),
    "sotopia_v1_transcript_only_30.jsonl": ((30, 30, 27, 282, 420), {}, {}),
}
KINDS = ("episode", "scenario", "character", "turn", "answer")


def test_the_count_table_covers_every_sotopia_file_of_the_data_folder():
    others = {"sotopia_env_agent_combos_450.jsonl", "sotopia_humaneval_gpt4_scores_140.json"}
    on_disk = {path.name for path in SOTOPIA.iterdir() if path.suffix in (".json", ".jsonl")}
    assert on_disk - others == set(ALONE) == set(SUPPORTED_FILES)


@pytest.mark.parametrize("name", sorted(ALONE))
def test_each_real_file_imports_alone_with_its_counts(name):
    created, checked, ignored = ALONE[name]

    result = import_file(SOTOPIA / name)

    assert tuple(result.created[kind] for kind in KINDS) == created
    assert dict(result.checked) == checked
    assert dict(result.ignored) == ignored
    assert (Episode.objects.count(), Turn.objects.count(), Answer.objects.count()) == (
        created[0], created[3], created[4]
    )


# file -> (episodes, turns, answers) created and (scenarios, characters) found after the serialized
# profiles, which the README says these logs' ids and names resolve in.
AFTER_PROFILES = {
    "human_eval_01H7VM65KGGY7842XGE5A7PEK1.json": ((1, 8, 0), (1, 2)),
    "human_eval_01HMN74FB8HVPT727QCV3SB27E.json": ((1, 17, 0), (1, 2)),
    "sotopia_episodes_v1_first5.jsonl": ((5, 56, 70), (5, 8)),
    "sotopia_humaneval_agents_variant_01H7ZEPYE09RAC869ZJX93BA2Z.json": ((1, 10, 0), (1, 2)),
    "sotopia_humaneval_context2_variant_01H87HF7X0SZS9Y5PJ2QER6H55.json": ((1, 4, 0), (1, 2)),
    "sotopia_humaneval_empty_nonverbal_01HP5MDHPWQJX965B3VT5A6934.json": ((1, 15, 0), (1, 2)),
    "sotopia_humaneval_turn_header_inside_utterance_01HNBCQQRFA7332019G6ABD7Y6.json": ((1, 7, 0), (1, 2)),
}


@pytest.mark.parametrize("name", sorted(AFTER_PROFILES))
def test_each_real_log_finds_its_scenario_and_people_among_the_profiles(name):
    import_file(SOTOPIA / "serialized_agent_profiles.jsonl")
    import_file(SOTOPIA / "serialized_environment_profiles.jsonl")
    created, found = AFTER_PROFILES[name]

    result = import_file(SOTOPIA / name)

    assert (result.created["episode"], result.created["turn"], result.created["answer"]) == created
    assert (result.unchanged["scenario"], result.unchanged["character"]) == found
    assert result.created["scenario"] == result.created["character"] == 0


def test_early_v1_lines_find_their_people_by_name_among_the_profiles():
    import_file(SOTOPIA / "serialized_agent_profiles.jsonl")

    result = import_file(V1_TRANSCRIPT)

    assert (result.created["character"], result.unchanged["character"]) == (0, 27)


def test_importing_every_supported_real_file_twice_changes_nothing_the_second_time():
    files = [SOTOPIA / name for name in SUPPORTED_FILES]
    for path in files:
        import_file(path)
    before = row_counts()

    results = [import_file(path) for path in files]

    assert row_counts() == before
    assert sum(result.created.total() for result in results) == 0
    assert sum(result.unchanged["episode"] for result in results) == 8 + 4 + 30


def test_unknown_environment_is_named_when_the_log_has_no_context(tmp_path):
    log = json.loads(json.loads(NATIVE.read_text()))
    log["messages"] = log["messages"][1:]  # drop the turn-0 context
    path = tmp_path / "log.json"
    path.write_text(json.dumps(json.dumps(log)))

    assert_rejected(path, "log.json, record 1, field environment: environment '01J0GZK3FGS50EHETXVR92TG9T' "
                          "is not in the database or in this file")


def test_unknown_agent_is_named_when_the_log_has_no_context(tmp_path):
    import_file(SOTOPIA / "serialized_environment_profiles.jsonl")
    line = v1_lines()[0]
    del line["agents_background"], line["social_goals"]
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(line) + "\n")

    assert_rejected(path, "line 1, field agent_ids[0]: agent '01H5TNE5PC2DP6RKG0KNQ4D5GE' is not in the database")


def test_unknown_speaker_is_rejected(tmp_path):
    line = v1_lines()[0]
    line["raw_messages"][3][2][0] = "Stranger Danger"
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(line) + "\n")

    assert_rejected(path, "line 1, field raw_messages[3][2][0]: unknown speaker 'Stranger Danger'")


def test_action_sotopia_does_not_know_is_rejected(tmp_path):
    line = v1_lines()[0]
    line["raw_messages"][1][3][2] = "shouted: 'hey'"
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(line) + "\n")

    assert_rejected(path, "field raw_messages[1][3][2]: string \"shouted: 'hey'\" is not a Sotopia action")


def test_sotopia_score_out_of_range_is_rejected(tmp_path):
    line = v1_lines()[0]
    line["raw_rewards"][1][1]["secret"] = 3.0
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(line) + "\n")

    assert_rejected(path, "field raw_rewards[1][1].secret: 3 is outside [-10, 0] for secret")


def test_environment_with_one_goal_is_rejected(tmp_path):
    environments = json.loads((SOTOPIA / "environment_profiles.json").read_text())
    environments[4]["agent_goals"] = environments[4]["agent_goals"][:1]
    path = tmp_path / "environments.json"
    path.write_text(json.dumps(environments))

    assert_rejected(path, "environments.json, record 5, field agent_goals: a scenario needs at least two roles, got 1")


def test_malformed_sotopia_json_names_the_line(tmp_path):
    path = tmp_path / "agents.json"
    path.write_text('[\n  {"pk": "x",\n  "first_name": }\n]')

    assert_rejected(path, "agents.json, line 3: not valid JSON")


def test_environment_and_agents_given_later_in_the_same_file_are_found(tmp_path):
    log = json.loads(json.loads(NATIVE.read_text()))
    log["messages"] = log["messages"][1:]  # no context: the profiles must be found
    environment = json.loads((SOTOPIA / "environment_profiles.json").read_text())[0]
    agents = json.loads((SOTOPIA / "agent_profiles.json").read_text())[:2]
    environment["pk"] = log["environment"]
    for agent, pk in zip(agents, log["agents"], strict=True):
        agent["pk"] = pk
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([log, environment, *agents]))

    result = import_file(path)

    assert result.created["episode"] == 1
    assert Episode.objects.get().scenario.codename == environment["codename"]


# --- input no database can store, or that would exhaust the importer ----------------------------


def write_v1(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_an_episode_repeated_in_the_file_is_refused_naming_both_lines(tmp_path):
    first, second = v1_lines()[:2]

    assert_rejected(
        write_v1(tmp_path, first, second, first),
        f"line 3, field episode_id: episode {first['episode_id']!r} appears twice in this file (first at line 1)",
    )


def test_a_profile_repeated_in_the_file_is_refused_naming_both_records(tmp_path):
    agents = json.loads((SOTOPIA / "agent_profiles.json").read_text())[:2]
    path = tmp_path / "agents.json"
    path.write_text(json.dumps([*agents, agents[0]]))

    assert_rejected(
        path, f"agents.json, record 3, field pk: character {agents[0]['pk']!r} appears twice in this file "
              "(first at record 1)"
    )


def test_a_key_repeated_in_a_record_is_refused(tmp_path):
    environment = json.loads((SOTOPIA / "environment_profiles.json").read_text())[0]
    path = tmp_path / "environments.json"
    path.write_text("[" + json.dumps(environment).replace('"codename": ', '"codename": "x", "codename": ', 1) + "]")

    assert_rejected(path, "environments.json, record 1, field codename: given twice in one object")


def test_nesting_far_beyond_the_cap_is_refused_without_a_traceback(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)

    assert_rejected(path, "deep.json: nested more than 64 levels deep")


def test_a_lone_surrogate_in_a_message_is_refused_naming_the_field(tmp_path):
    line = v1_lines()[0]
    line["raw_messages"][1][3][2] = 'said: "Hello \ud83d"'

    assert_rejected(write_v1(tmp_path, line), "line 1, field raw_messages[1][3][2]: holds a lone surrogate \\ud83d")


def test_a_nul_character_in_a_profile_is_refused_naming_the_field(tmp_path):
    agents = json.loads((SOTOPIA / "agent_profiles.json").read_text())
    agents[1]["occupation"] = "chef\u0000"
    path = tmp_path / "agents.json"
    path.write_text(json.dumps(agents))

    assert_rejected(path, "agents.json, record 2, field occupation: holds a NUL character")


def test_an_age_written_in_other_digits_is_refused(tmp_path):
    agents = json.loads((SOTOPIA / "agent_profiles.json").read_text())
    agents[0]["age"] = "²"
    path = tmp_path / "agents.json"
    path.write_text(json.dumps(agents))

    assert_rejected(path, "agents.json, record 1, field age: expected an integer, got string '²'")


def test_a_transcript_turn_number_beyond_the_index_column_is_refused(tmp_path):
    log = json.loads(HUMAN_EVAL_BED.read_text())
    log["rewards_prompt"] = log["rewards_prompt"].replace("\nTurn #1\n", "\nTurn #" + "9" * 40 + "\n", 1)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))

    assert_rejected(
        path, "log.json, record 1, field rewards_prompt: Turn #99999999999999999999... is above the maximum turn number"
    )


def test_a_score_too_large_for_a_float_is_refused_naming_the_field(tmp_path):
    line = v1_lines()[0]
    line["raw_rewards"][1][1]["secret"] = -(10**400)

    assert_rejected(
        write_v1(tmp_path, line), "field raw_rewards[1][1].secret: a 401-digit integer is too large for a number"
    )


def test_a_message_over_the_turn_size_cap_is_refused(tmp_path):
    line = v1_lines()[0]
    line["raw_messages"][1][3][2] = 'said: "' + "la " * 40_000 + '"'

    assert_rejected(
        write_v1(tmp_path, line), "line 1, field raw_messages[1][3][2]: is 120000 characters long; at most 100000 fit"
    )


# --- the human-evaluation study's odd exports ---------------------------------------------------------

def test_a_bare_non_verbal_turn_is_kept_as_a_silent_gesture():
    import_file(EMPTY_NONVERBAL)

    turns = list(Episode.objects.get().turns.order_by("index"))
    assert [(turn.index, turn.action_type, turn.content) for turn in turns if turn.index in (4, 6)] == [
        (4, "non-verbal", ""), (6, "non-verbal", ""),
    ]
    assert (turns[13].action_type, turns[13].content) == ("non-verbal", "[non-verbal communication] [smiles]")
    assert [turn.action_type for turn in turns if turn.index in (8, 10)] == ["none", "none"]


def test_a_silent_gesture_reads_as_undescribed_in_prompts():
    from benchmark.agents.prompt import HistoryEntry, describe_turn

    assert describe_turn(HistoryEntry("Hendrick Heinz", "non-verbal", "", 0)) == (
        "Hendrick Heinz [non-verbal communication], not described."
    )


def test_turn_headers_inside_an_utterance_stay_in_the_utterance():
    import_file(HEADER_INSIDE)

    turns = list(Episode.objects.get().turns.order_by("index"))
    assert [turn.index for turn in turns] == list(range(7))
    replay = turns[3].content
    assert replay.startswith("Strangely, you have exited the conversation.")
    assert "\n\nTurn #3: none\n\nTurn #4: Baxter Sterling said:" in replay and replay.endswith("Turn #6: leave\"")
    assert (turns[4].action_type, turns[4].content) == ("non-verbal", "Smile and nod at Baxter enthusiastically")
    assert turns[6].action_type == "leave"


def test_an_empty_physical_action_is_refused_naming_the_action_type_in_words(tmp_path):
    log = json.loads(HUMAN_EVAL_BED.read_text())
    prompt = log["rewards_prompt"]
    start = prompt.index("Turn #2\n") + len("Turn #2\n")
    log["rewards_prompt"] = prompt[:start] + "Hendrick Heinz [action] \n" + prompt[prompt.index("Turn #3\n"):]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))

    assert_rejected(path, "field rewards_prompt (Turn #2).content: a physical action turn needs content")


def test_the_export_with_agent_pks_finds_its_people_by_pk():
    import_file(SOTOPIA / "agent_profiles.json")

    result = import_file(AGENTS_VARIANT)

    seats = Seat.objects.select_related("character").order_by("position")
    assert [seat.character.external_id for seat in seats] == [
        "01H5TNE5PMBJ9VHH51YC0BB64C", "01H5TNE5Q1J7Z7Q12WA1W90MR9",
    ]
    assert result.unchanged["character"] == 2


def test_the_second_agents_view_of_the_context_is_reported_as_ignored():
    result = import_file(CONTEXT2)

    assert "ignored: context2 (in 1 record)" in result.summary()
    assert Episode.objects.get().turns.count() == 4


# --- the early v1 release -------------------------------------------------------------------------------

def test_early_v1_line_builds_its_scenario_people_turns_and_scores_from_the_text():
    import_file(V1_TRANSCRIPT)

    episode = Episode.objects.get(external_id="01HB5GHRZK82KZVHZVEAH9C81Q")
    scenario = episode.scenario
    assert scenario.codename == "play_hooky" and scenario.external_id.startswith("sotopia-text:play_hooky:")
    assert scenario.relationship is None
    ethan = episode.seats.get(position=0).character
    assert (ethan.external_id, ethan.age, ethan.occupation) == ("sotopia-name:Ethan Smith", 29, "software developer")
    first = episode.turns.order_by("index").first()
    assert (first.action_type, first.content) == (
        "speak", "Hey Noah, I noticed you've been around me all day. Is there something you need or is it just a "
        "coincidence?"
    )
    assert Answer.objects.filter(response__episode=episode).count() == 14
    goal = Answer.objects.get(response__episode=episode, question__key="goal", seat_position=0)
    assert goal.number == 10 and goal.reasoning.startswith("Ethan")


def test_early_v1_actions_of_every_kind_are_read():
    import_file(V1_TRANSCRIPT)

    kinds = set(Turn.objects.values_list("action_type", flat=True))
    assert kinds == {"speak", "non-verbal", "action", "leave"}
    assert Turn.objects.filter(action_type="leave").count() == 12


def test_a_paragraph_that_names_no_one_belongs_to_the_utterance_before_it():
    import_file(V1_TRANSCRIPT)

    turn = Turn.objects.get(content__contains="* speak: to express")
    assert turn.action_type == "speak" and "\n\n* speak: to express" in turn.content


def test_early_v1_lines_of_one_environment_share_its_scenario(tmp_path):
    first, second = (json.loads(line) for line in V1_TRANSCRIPT.read_text().splitlines()[:2])
    second.update(scenario=first["scenario"], codename=first["codename"], social_goals={
        name: goal for name, goal in zip(second["social_goals"], first["social_goals"].values(), strict=True)
    })
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")

    result = import_file(path)

    assert (result.created["episode"], result.created["scenario"]) == (2, 1)


def test_v1_rewards_that_differ_from_raw_rewards_are_reported_as_ignored(tmp_path):
    line = v1_lines()[0]
    line["rewards"][0]["goal"] = 0.0
    path = tmp_path / "v1.jsonl"
    path.write_text(json.dumps(line) + "\n")

    result = import_file(path)

    assert result.ignored == {"raw_rewards_prompt": 1, "rewards": 1}


def test_a_field_sotopia_never_wrote_is_reported_as_ignored(tmp_path):
    log = json.loads(HUMAN_EVAL_BED.read_text())
    log["scores"] = {"agent1": {"goal": 3}}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))

    assert "ignored: scores (in 1 record)" in import_file(path).summary()


# --- shapes that are not Sotopia's, and unknown relationships ---------------------------------------------

def test_castings_and_judge_scores_are_not_read_as_sotopia():
    from benchmark.importing import first_record, sotopia

    for name in ("sotopia_env_agent_combos_450.jsonl", "sotopia_humaneval_gpt4_scores_140.json"):
        path = SOTOPIA / name
        assert not sotopia.recognises(first_record(path, path.read_text()))


def test_a_record_of_no_sotopia_shape_says_so_and_lists_the_shapes(tmp_path):
    path = tmp_path / "combos.jsonl"
    path.write_text('{"combo_id": "c1", "env_id": "e1", "agent_ids": ["a", "b"]}\n')

    with pytest.raises(ImportProblem) as problem:
        import_file(path, format="sotopia")

    message = str(problem.value)
    assert message.startswith("combos.jsonl, line 1: not a known Sotopia shape (its keys: agent_ids, combo_id, env_id)")
    assert "an early v1 line (episode_id, social_interactions, agents_background)" in message


def test_a_scenario_from_a_log_has_an_unknown_relationship_and_the_summary_says_so():
    result = import_file(HUMAN_EVAL_DISLIKE)

    assert Scenario.objects.get().relationship is None
    assert any("1 scenario made from this file has an unknown relationship" in note for note in result.notes)


def test_the_note_on_unknown_relationships_says_what_to_do_without_sending_a_researcher_to_the_admin():
    result = import_file(HUMAN_EVAL_DISLIKE)

    note = next(note for note in result.notes if "unknown relationship" in note)
    assert "its relationship in the file before importing" in note
    assert "admin" not in note.lower()


def test_an_environment_profile_keeps_its_relationship_and_one_without_is_unknown(tmp_path):
    lines = (SOTOPIA / "serialized_environment_profiles.jsonl").read_text().splitlines()[:2]
    second = json.loads(lines[1])
    del second["relationship"]
    path = tmp_path / "envs.jsonl"
    path.write_text(lines[0] + "\n" + json.dumps(second) + "\n")

    import_file(path)

    assert Scenario.objects.get(external_id=json.loads(lines[0])["env_id"]).relationship == int(
        json.loads(lines[0])["relationship"]
    )
    assert Scenario.objects.get(external_id=second["env_id"]).relationship is None


def test_prompts_leave_an_unknown_relationship_out_and_the_judge_is_told_it_is_unknown():
    from benchmark.agents.prompt import AgentContext, build_agent_messages
    from benchmark.evaluation.judge_briefing import load_episode_for_judge, relationship_sentence

    import_file(HUMAN_EVAL_DISLIKE)
    episode = Episode.objects.get()
    seat = episode.seats.get(position=0)

    prompt = build_agent_messages(AgentContext.for_seat(episode, seat, []))[-1]["content"]
    facts = load_episode_for_judge(episode.pk)

    assert "your relationship" not in prompt and "Zane Bennett" in prompt
    assert facts.relationship == "unknown"
    assert relationship_sentence(facts.relationship).startswith("Relationship between the characters: not recorded")


def test_an_unknown_relationship_survives_export_and_import_into_another_team(tmp_path):
    import io

    from benchmark.exporting import export_episodes
    from tests.builders import make_team

    import_file(HUMAN_EVAL_DISLIKE)
    out = io.StringIO()
    export_episodes(Episode.objects.all(), out)
    path = tmp_path / "episodes.jsonl"
    path.write_text(out.getvalue())
    other = make_team()

    import_file(path, team=other)

    assert json.loads(out.getvalue())["scenario"]["relationship"] is None
    assert Scenario.objects.get(team=other).relationship is None
