"""Importing Sotopia's real files: every episode-log shape and both profile shapes."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

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

# The shapes this importer was built for. The folder has since gained Sotopia's human-evaluation
# variants, the env/agent combos and the early v1 transcripts: importing those is an issue of its own.
SUPPORTED_FILES = (
    "agent_profiles.json", "environment_profiles.json", "episodelog_native_01J0GZWDV6HMKQK4B3PTEZW5V8.json",
    "human_eval_01H7VM65KGGY7842XGE5A7PEK1.json", "human_eval_01HMN74FB8HVPT727QCV3SB27E.json",
    "relationship_profiles.json", "serialized_agent_profiles.jsonl", "serialized_environment_profiles.jsonl",
    "serialized_relationship_profiles.jsonl", "sotopia_episodes_v1_first5.jsonl",
)


def test_importing_every_supported_real_file_twice_changes_nothing_the_second_time():
    files = [SOTOPIA / name for name in SUPPORTED_FILES]
    for path in files:
        import_file(path)
    before = row_counts()

    results = [import_file(path) for path in files]

    assert row_counts() == before
    assert sum(result.created.total() for result in results) == 0
    assert sum(result.unchanged["episode"] for result in results) == 8


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
    log["rewards_prompt"] = log["rewards_prompt"].replace("\nTurn #2\n", "\nTurn #" + "9" * 40 + "\n", 1)
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
